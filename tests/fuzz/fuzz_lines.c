/* fuzz_lines.c — the text input every loader stands on (data/lines.c):
 * the line reader, the number scanners and the token excerpt.
 * Invariants: the lines read back are exactly the file cut at '\n' (one
 * '\r' before a '\n' or the end dropped), each NUL-terminated with no '\n'
 * inside; at the start of every field loom_scan_i64 agrees with strtoll
 * (value and end; NULL only where strtoll finds no digits or overflows)
 * and loom_scan_f32 with strtof, bit for bit (NULL only where strtof finds
 * no number or an infinite or NaN one); loom_token stays in its buffer
 * and writes printable bytes only. */
#include "fuzz.h"
#include "lines.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void scan_fields(const char *line, size_t len)
{
    const char *end = line + len;
    for (const char *s = line; s < end; s++) {
        if (s > line && s[-1] != ' ' && s[-1] != '\t' && s[-1] != ',' && s[-1] != ':')
            continue; /* not the start of a field */
        if (isspace((unsigned char)*s))
            continue; /* strtoll/strtof would skip it; the scanners must not */
        int64_t v;
        const char *q = loom_scan_i64(s, end, &v);
        char *e;
        errno = 0;
        long long ll = strtoll(s, &e, 10);
        if (q)
            FUZZ_CHECK(e == q && ll == v && errno == 0, "scan_i64 '%.40s': %lld (%td bytes), "
                       "strtoll %lld (%td bytes)", s, (long long)v, q - s, ll, e - s);
        else
            FUZZ_CHECK(e == s || errno == ERANGE, "scan_i64 refused '%.40s', strtoll read %td "
                       "bytes", s, e - s);
        float f;
        q = loom_scan_f32(s, end, &f);
        errno = 0;
        float x = strtof(s, &e);
        if (q)
            FUZZ_CHECK(e == q && !memcmp(&x, &f, sizeof x), "scan_f32 '%.40s': %a (%td bytes), "
                       "strtof %a (%td bytes)", s, f, q - s, x, e - s);
        else
            FUZZ_CHECK(e == s || !isfinite(x), "scan_f32 refused '%.40s', strtof read %a "
                       "(%td bytes)", s, x, e - s);
        char tok[32];
        loom_token(s, end, tok, sizeof tok);
        size_t tl = strnlen(tok, sizeof tok);
        FUZZ_CHECK(tl < sizeof tok, "%s", "token excerpt not terminated");
        for (size_t k = 0; k < tl; k++)
            FUZZ_CHECK(tok[k] >= 0x20 && tok[k] < 0x7f, "token byte 0x%02x", (unsigned char)tok[k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    loom_lines r;
    char err[256], *line;
    size_t len, pos = 0;
    FUZZ_CHECK(loom_lines_open(&r, fuzz_file(0, d, n), err, sizeof err) == LOOM_OK, "%s", err);
    int have;
    long count = 0;
    while ((have = loom_lines_next(&r, &line, &len)) == 1) {
        count++;
        FUZZ_CHECK(r.lineno == count, "line number %ld, expected %ld", r.lineno, count);
        FUZZ_CHECK(line[len] == '\0' && !memchr(line, '\n', len), "line %ld not cut at '\\n'",
                   count);
        FUZZ_CHECK(pos + len <= n && !memcmp(d + pos, line, len), "line %ld differs from the file",
                   count);
        pos += len;
        if (pos < n && d[pos] == '\r' && (pos + 1 == n || d[pos + 1] == '\n'))
            pos++; /* the '\r' the reader drops */
        if (pos < n) {
            FUZZ_CHECK(d[pos] == '\n', "line %ld ends at byte 0x%02x", count, d[pos]);
            pos++;
        }
        scan_fields(line, len);
    }
    FUZZ_CHECK(have == 0 && pos == n, "reader stopped (%d) at byte %zu of %zu", have, pos, n);
    loom_lines_close(&r);
    return 0;
}
