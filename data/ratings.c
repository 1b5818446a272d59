/* ratings.c — the ratings loader: MovieLens-style triples and MatrixMarket
 * coordinate files into an array of (user, item, rating), with the
 * user-block filter.  Hand parsing over lines.c's reader (no stdio scanf):
 * about 10^7 lines per second or two per thread.  A large triples file is
 * read whole and parsed by every OpenMP thread at once, each over one
 * slice of whole lines (parallel_triples). */
#include "ratings.h"
#include "grow.h"
#include "lines.h"

#include <loom.h>

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define TRIPLES_SHAPE "'user item rating [timestamp]'"

/* How ids are kept (loom_ratings_read_raw): IDS_INT32 reads ids up to
 * 2^63 - 1 and keeps them in u and i while they fit an int32, flagging
 * `big` when one does not; IDS_RAW keeps every rating's ids as read in
 * raw (two int64 a rating). */
enum { IDS_CHECKED = 0, IDS_INT32 = 1, IDS_RAW = 2 };

/* The growing output array, and with want_raw == IDS_RAW the ids as read. */
struct sink {
    loom_rating *v;
    int64_t *raw;
    int64_t n, cap;
    double sum;
    int want_raw;
    int big; /* IDS_INT32: an id past INT32_MAX was read */
};

/* Room for cap ratings (cap >= n). */
static int resize(struct sink *s, int64_t cap)
{
    loom_rating *v = realloc(s->v, (size_t)(cap ? cap : 1) * sizeof *v);
    if (!v)
        return -1;
    s->v = v;
    if (s->want_raw == IDS_RAW) {
        int64_t *raw = realloc(s->raw, (size_t)(cap ? cap : 1) * 2 * sizeof *raw);
        if (!raw)
            return -1;
        s->raw = raw;
    }
    s->cap = cap;
    return 0;
}

static int grow(struct sink *s) { return resize(s, s->cap ? 2 * s->cap : 4096); }

static inline int push(struct sink *s, int32_t u, int32_t i, int64_t ru, int64_t ri, float r)
{
    if (s->n == s->cap && grow(s))
        return -1;
    if (s->want_raw == IDS_RAW)
        s->raw[2 * s->n] = ru, s->raw[2 * s->n + 1] = ri;
    s->v[s->n++] = (loom_rating){u, i, r};
    s->sum += r;
    return 0;
}

/* Bytes that may end a number in a triples line. */
static inline int stop(char c) { return loom_blank(c) || c == ',' || c == ':'; }

/* A triples separator: blanks, then at most one ',' or "::", then blanks. */
static inline const char *skip_sep(const char *p, const char *e)
{
    p = loom_skip_blanks(p, e);
    if (p < e && *p == ',')
        p++;
    else if (p + 1 < e && p[0] == ':' && p[1] == ':')
        p += 2;
    return loom_skip_blanks(p, e);
}

/* An id field ending at a separator: an integer from 1 to max, or from 0
 * to max - 1 in a 0-based file (shift 1); *id is 1-based.  max is
 * INT32_MAX, or INT64_MAX for raw ids. */
static inline const char *scan_id(const char *p, const char *e, int sep_ok(char), int shift,
                                  int64_t max, int64_t *id)
{
    int64_t v;
    const char *q = loom_scan_i64(p, e, &v);
    if (!q || (q < e && !sep_ok(*q)) || v < 1 - shift || v > max - shift)
        return NULL;
    *id = v + shift;
    return q;
}

/* A value field: a finite number ending at a separator. */
static inline const char *scan_value(const char *p, const char *e, int sep_ok(char), float *r)
{
    const char *q = loom_scan_f32(p, e, r);
    return q && (q == e || sep_ok(*q)) ? q : NULL;
}

struct ctx {
    loom_lines *in;
    struct sink *out;
    int32_t lo, hi;
    char *err;
    size_t errlen;
    int shift; /* 1 for a 0-based triples file, else 0 */
};

/* The error for a field that does not parse: "FILE:LINE: bad WHAT 'TOKEN'
 * (expected EXPECT)"; returns LOOM_ERR_FORMAT. */
static int bad_field(const struct ctx *c, const char *what, const char *p, const char *e,
                     const char *expect)
{
    char tok[32];
    return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT, "%s:%ld: bad %s '%s' (expected %s)",
                     c->in->path, c->in->lineno, what, loom_token(p, e, tok, sizeof tok), expect);
}

static int missing(const struct ctx *c, const char *what)
{
    return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT, "%s:%ld: missing the %s (expected %s)",
                     c->in->path, c->in->lineno, what, TRIPLES_SHAPE);
}

static int nomem(const struct ctx *c)
{
    return loom_errf(c->err, c->errlen, LOOM_ERR_NOMEM, "%s:%ld: out of memory after %lld ratings",
                     c->in->path, c->in->lineno, (long long)c->out->n);
}

/* A first line with a comma and no digit is a CSV header (MovieLens 20M's
 * "userId,movieId,rating,timestamp"). */
static int csv_header(const char *p, const char *e)
{
    if (!memchr(p, ',', (size_t)(e - p)))
        return 0;
    for (; p < e; p++)
        if ((unsigned)(*p - '0') < 10)
            return 0;
    return 1;
}

#define ONE_BASED_ID "an integer from 1 to 2147483647; --zero-based reads ids from 0"
#define ZERO_BASED_ID "an integer from 0 to 2147483646 (--zero-based)"
#define ONE_BASED_RAW "an integer from 1 to 9223372036854775807; --zero-based reads ids from 0"
#define ZERO_BASED_RAW "an integer from 0 to 9223372036854775806 (--zero-based)"

/* Triples: "user item rating [timestamp]", '#' comments and blank lines
 * skipped.  line/len is the first line, already read (have == 1). */
static int triples(struct ctx *c, int have, char *line, size_t len, loom_ratings *out)
{
    int32_t maxu = 0, maxi = 0;
    int64_t nfile = 0, max = c->out->want_raw ? INT64_MAX : INT32_MAX;
    const char *expect = c->out->want_raw ? (c->shift ? ZERO_BASED_RAW : ONE_BASED_RAW)
                                          : (c->shift ? ZERO_BASED_ID : ONE_BASED_ID);
    for (; have == 1; have = loom_lines_next(c->in, &line, &len)) {
        const char *e = line + len, *p = loom_skip_blanks(line, e), *q;
        if (p == e || *p == '#' || (c->in->lineno == 1 && csv_header(p, e)))
            continue;
        int64_t ru, ri;
        float r;
        if (!(q = scan_id(p, e, stop, c->shift, max, &ru)))
            return bad_field(c, "user id", p, e, expect);
        if ((p = skip_sep(q, e)) == e)
            return missing(c, "item id");
        if (!(q = scan_id(p, e, stop, c->shift, max, &ri)))
            return bad_field(c, "item id", p, e, expect);
        /* raw ids: the int32 fields are filled in later (dense ids) */
        int32_t u = 1, i = 1;
        if (c->out->want_raw == IDS_RAW)
            ;
        else if (ru > INT32_MAX || ri > INT32_MAX)
            c->out->big = 1; /* IDS_INT32 only: read again with IDS_RAW */
        else
            u = (int32_t)ru, i = (int32_t)ri;
        if ((p = skip_sep(q, e)) == e)
            return missing(c, "rating");
        if (!(q = scan_value(p, e, stop, &r)))
            return bad_field(c, "rating", p, e, "a finite number");
        if ((p = skip_sep(q, e)) < e) {
            int64_t ts;
            q = loom_scan_i64(p, e, &ts);
            if (!q || (q < e && !stop(*q)))
                return bad_field(c, "timestamp", p, e, "an integer");
            if ((p = skip_sep(q, e)) < e) {
                char tok[32];
                return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                                 "%s:%ld: unexpected '%s' after the timestamp (expected %s)",
                                 c->in->path, c->in->lineno, loom_token(p, e, tok, sizeof tok),
                                 TRIPLES_SHAPE);
            }
        }
        nfile++;
        if (u > maxu)
            maxu = u;
        if (i > maxi)
            maxi = i;
        if (u - 1 >= c->lo && u - 1 < c->hi && push(c->out, u - 1, i - 1, ru - 1, ri - 1, r))
            return nomem(c);
    }
    if (have < 0)
        return loom_lines_error(c->in, c->err, c->errlen);
    out->nfile = nfile;
    out->nusers = maxu;
    out->nitems = maxi;
    out->format = LOOM_RATINGS_TRIPLES;
    return LOOM_OK;
}

/* The banner "%%MatrixMarket matrix coordinate real|integer|double general". */
static int mm_banner(const struct ctx *c, const char *line, size_t len)
{
    char shown[84];
    const char *p = line + 14, *e = line + len, *w[4];
    size_t n[4];
    for (int k = 0; k < 4; k++)
        n[k] = loom_word(&p, e, &w[k]);
    if (loom_is_word(w[0], n[0], "matrix") && loom_is_word(w[1], n[1], "coordinate") &&
        (loom_is_word(w[2], n[2], "real") || loom_is_word(w[2], n[2], "integer") ||
         loom_is_word(w[2], n[2], "double")) &&
        loom_is_word(w[3], n[3], "general") && loom_skip_blanks(p, e) == e)
        return LOOM_OK;
    return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                     "%s:%ld: unsupported MatrixMarket header '%s' (expected "
                     "'%%%%MatrixMarket matrix coordinate real general'; integer and double "
                     "values are read too)",
                     c->in->path, c->in->lineno, loom_excerpt(line, len, shown, sizeof shown));
}

/* A row or column index in 1..size into *id, *q after it; a message naming
 * the declared size (from size_line) when it is beyond. */
static int mm_index(const struct ctx *c, const char *what, const char *p, const char *e,
                    int64_t size, long size_line, const char *plural, int32_t *id,
                    const char **q)
{
    int64_t v;
    *q = loom_scan_i64(p, e, &v);
    if (!*q || (*q < e && !loom_blank(**q)) || v < 1) {
        char expect[64];
        snprintf(expect, sizeof expect, "an integer from 1 to %lld", (long long)size);
        return bad_field(c, what, p, e, expect);
    }
    if (v > size)
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: %s %lld is beyond the %lld %s declared on line %ld",
                         c->in->path, c->in->lineno, what, (long long)v, (long long)size,
                         plural, size_line);
    *id = (int32_t)v;
    return LOOM_OK;
}

/* MatrixMarket coordinate: banner (already read), '%' comments, the size
 * line "rows cols entries", then exactly `entries` lines "i j value". */
static int matrixmarket(struct ctx *c, char *line, size_t len, loom_ratings *out)
{
    int rc = mm_banner(c, line, len), have;
    if (rc)
        return rc;
    int64_t size[3] = {-1, -1, -1}, nfile = 0;
    long size_line = 0;
    static const char *const size_names[3] = {"number of rows", "number of columns",
                                              "number of entries"};
    while ((have = loom_lines_next(c->in, &line, &len)) == 1) {
        const char *e = line + len, *p = loom_skip_blanks(line, e), *q;
        if (p == e || *p == '%')
            continue;
        if (!size_line) {
            for (int k = 0; k < 3; k++) {
                if (p == e)
                    return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                                     "%s:%ld: missing the %s (expected 'rows columns entries')",
                                     c->in->path, c->in->lineno, size_names[k]);
                q = loom_scan_i64(p, e, &size[k]);
                if (!q || (q < e && !loom_blank(*q)) || size[k] < 0 || (k < 2 && size[k] > INT32_MAX))
                    return bad_field(c, size_names[k], p, e,
                                     k < 2 ? "an integer from 0 to 2147483647"
                                           : "an integer >= 0");
                p = loom_skip_blanks(q, e);
            }
            if (p < e) {
                char tok[32];
                return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                                 "%s:%ld: unexpected '%s' after the size line (expected "
                                 "'rows columns entries')",
                                 c->in->path, c->in->lineno, loom_token(p, e, tok, sizeof tok));
            }
            size_line = c->in->lineno;
            continue;
        }
        if (nfile == size[2])
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: more entries than the %lld declared on line %ld",
                             c->in->path, c->in->lineno, (long long)size[2], size_line);
        int32_t u, i;
        float r;
        if ((rc = mm_index(c, "row", p, e, size[0], size_line, "rows", &u, &q)))
            return rc;
        if ((p = loom_skip_blanks(q, e)) == e)
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: missing the column (expected 'row column value')",
                             c->in->path, c->in->lineno);
        if ((rc = mm_index(c, "column", p, e, size[1], size_line, "columns", &i, &q)))
            return rc;
        if ((p = loom_skip_blanks(q, e)) == e)
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: missing the value (expected 'row column value')",
                             c->in->path, c->in->lineno);
        if (!(q = scan_value(p, e, loom_blank, &r)))
            return bad_field(c, "value", p, e, "a finite number");
        if ((p = loom_skip_blanks(q, e)) < e) {
            char tok[32];
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: unexpected '%s' after the value (expected 'row column "
                             "value')",
                             c->in->path, c->in->lineno, loom_token(p, e, tok, sizeof tok));
        }
        nfile++;
        if (u - 1 >= c->lo && u - 1 < c->hi && push(c->out, u - 1, i - 1, u - 1, i - 1, r))
            return nomem(c);
    }
    if (have < 0)
        return loom_lines_error(c->in, c->err, c->errlen);
    if (!size_line)
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: no size line 'rows columns entries' before the end of the file",
                         c->in->path, c->in->lineno);
    if (nfile < size[2])
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: the file ends after %lld of the %lld entries declared on "
                         "line %ld",
                         c->in->path, c->in->lineno, (long long)nfile, (long long)size[2],
                         size_line);
    out->nfile = nfile;
    out->nusers = (int32_t)size[0];
    out->nitems = (int32_t)size[1];
    out->format = LOOM_RATINGS_MATRIXMARKET;
    return LOOM_OK;
}

size_t loom_ratings_window = (size_t)64 << 20;

/* Fills buf[*have..cap) from in at file offset *off (fewer bytes at the
 * end of the file).  0, or -1 with errno set. */
static int fill(loom_lines *in, char *buf, size_t cap, size_t *have, int64_t *off)
{
    while (*have < cap && *off < in->size) {
        size_t want = cap - *have;
        if ((int64_t)want > in->size - *off)
            want = (size_t)(in->size - *off);
        ssize_t k = pread(in->fd, buf + *have, want, (off_t)*off);
        if (k <= 0) {
            if (k == 0)
                errno = EIO; /* the file shrank while read */
            return -1;
        }
        *have += (size_t)k;
        *off += k;
    }
    return 0;
}

/* Appends part's ratings (and ids) to s.  0, or -1 out of memory. */
static int append(struct sink *s, const struct sink *part)
{
    if (s->n + part->n > s->cap) {
        int64_t cap = s->cap ? s->cap : 4096;
        while (cap < s->n + part->n)
            cap *= 2;
        if (resize(s, cap))
            return -1;
    }
    memcpy(s->v + s->n, part->v, (size_t)part->n * sizeof *s->v);
    if (s->want_raw == IDS_RAW)
        memcpy(s->raw + 2 * s->n, part->raw, (size_t)part->n * 2 * sizeof *s->raw);
    s->n += part->n;
    s->sum += part->sum;
    s->big |= part->big;
    return 0;
}

/* Contract: parses the triples file in (already open, a regular file)
 * with every OpenMP thread into *out and s (s may hold room already),
 * exactly as triples() over the whole file would: the same ratings in
 * file order, and the first error in file order, with its line number.
 * The file is read a window of loom_ratings_window bytes (whole lines,
 * more for a line longer than that) at a time, each
 * window cut into one slice of whole lines per thread, so memory beyond
 * the ratings is the window and one window's ratings.  Returns LOOM_OK or
 * the error (message in c->err). */
static int parallel_triples(struct ctx *c, loom_ratings *out, struct sink *s)
{
    int nt = omp_get_max_threads();
    size_t cap = loom_ratings_window ? loom_ratings_window : 1, have = 0;
    int64_t off = 0;
    long lineno = 0; /* lines before the window */
    char *buf = malloc(cap + 1);
    size_t *cut = malloc((size_t)(nt + 1) * sizeof *cut);
    long *lines = calloc((size_t)nt + 1, sizeof *lines);
    struct sink *part = calloc((size_t)nt, sizeof *part);
    loom_ratings *res = calloc((size_t)nt, sizeof *res);
    int *rc = calloc((size_t)nt, sizeof *rc);
    char (*msg)[512] = calloc((size_t)nt, sizeof *msg);
    int ret = LOOM_OK;
    if (!buf || !cut || !lines || !part || !res || !rc || !msg) {
        ret = loom_errf(c->err, c->errlen, LOOM_ERR_NOMEM, "%s: out of memory", c->in->path);
        goto out;
    }
    for (;;) {
        if (fill(c->in, buf, cap, &have, &off)) {
            ret = loom_errf(c->err, c->errlen, LOOM_ERR_IO, "%s: %s", c->in->path,
                            strerror(errno));
            break;
        }
        int last = off == c->in->size;
        if (!have && last)
            break;
        size_t size = have; /* whole lines: up to the window's last newline */
        if (!last) {
            const char *nl = memrchr(buf, '\n', have);
            if (!nl) { /* one line fills the window: a larger window (and its terminator) */
                size_t room = cap + 1;
                char *b = loom_rt_grow(buf, &room, room + 1, 1);
                if (!b) {
                    ret = loom_errf(c->err, c->errlen, LOOM_ERR_NOMEM, "%s: out of memory",
                                    c->in->path);
                    break;
                }
                buf = b;
                cap = room - 1;
                continue;
            }
            size = (size_t)(nl - buf) + 1;
        }
        cut[0] = 0;
        cut[nt] = size;
        for (int t = 1; t < nt; t++) { /* each slice starts after a newline */
            size_t at = size * (size_t)t / (size_t)nt;
            const char *nl = at > cut[t - 1] ? memchr(buf + at - 1, '\n', size - at + 1) : NULL;
            cut[t] = at <= cut[t - 1] ? cut[t - 1] : nl ? (size_t)(nl - buf) + 1 : size;
        }
        memset(lines, 0, (size_t)(nt + 1) * sizeof *lines);
#pragma omp parallel for schedule(static, 1) num_threads(nt)
        for (int t = 0; t < nt; t++) { /* lines in each slice, for the line numbers */
            for (const char *p = buf + cut[t], *e = buf + cut[t + 1];
                 (p = memchr(p, '\n', (size_t)(e - p))); p++)
                lines[t + 1]++;
        }
        lines[0] = lineno;
        for (int t = 0; t < nt; t++)
            lines[t + 1] += lines[t];
#pragma omp parallel for schedule(static, 1) num_threads(nt)
        for (int t = 0; t < nt; t++) {
            loom_lines r = {.path = c->in->path, .fd = -1, .eof = 1, .buf = buf + cut[t],
                            .cap = cut[t + 1] - cut[t], .end = cut[t + 1] - cut[t],
                            .lineno = lines[t], .size = c->in->size};
            part[t].want_raw = s->want_raw;
            part[t].n = 0;
            part[t].sum = 0;
            part[t].big = 0;
            if (part[t].cap < (int64_t)r.cap / 12 + 16 && resize(&part[t], (int64_t)r.cap / 12 + 16))
                part[t].cap = 0;
            res[t] = (loom_ratings){0};
            struct ctx ct = {&r, &part[t], c->lo, c->hi, msg[t], sizeof msg[t], c->shift};
            char *line = NULL;
            size_t len = 0;
            int got = loom_lines_next(&r, &line, &len);
            rc[t] = triples(&ct, got, line, len, &res[t]);
        }
        for (int t = 0; t < nt && ret == LOOM_OK; t++) {
            if (rc[t]) {
                ret = loom_errf(c->err, c->errlen, rc[t], "%s", msg[t]);
                break;
            }
            if (append(s, &part[t])) {
                ret = loom_errf(c->err, c->errlen, LOOM_ERR_NOMEM, "%s: out of memory after "
                                "%lld ratings", c->in->path, (long long)s->n);
                break;
            }
            out->nfile += res[t].nfile;
            out->nusers = res[t].nusers > out->nusers ? res[t].nusers : out->nusers;
            out->nitems = res[t].nitems > out->nitems ? res[t].nitems : out->nitems;
        }
        if (ret != LOOM_OK)
            break;
        lineno = lines[nt];
        memmove(buf, buf + size, have - size);
        have -= size;
        if (last && !have)
            break;
    }
    if (ret == LOOM_OK)
        out->format = LOOM_RATINGS_TRIPLES;
out:
    for (int t = 0; part && t < nt; t++)
        free(part[t].v), free(part[t].raw);
    free(buf);
    free(cut);
    free(lines);
    free(part);
    free(res);
    free(rc);
    free(msg);
    return ret;
}

int loom_ratings_load(const char *path, const loom_user_range *keep, loom_ratings *out,
                      char *err, size_t errlen)
{
    return loom_ratings_read(path, keep, 1, out, err, errlen);
}

/* loom_ratings_read, and with raw set loom_ratings_read_raw. */
static int read_file(const char *path, const loom_user_range *keep, int first_id, int raw,
                     loom_ratings *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    if (keep && (keep->lo < 0 || keep->hi < keep->lo))
        return loom_errf(err, errlen, LOOM_ERR_ARG, "%s: bad user range [%d, %d)", path,
                         (int)keep->lo, (int)keep->hi);
    loom_lines in;
    int rc = loom_lines_open(&in, path, err, errlen);
    if (rc)
        return rc;
    struct sink s = {.want_raw = raw};
    /* Most files have lines of 12 bytes or more: one allocation, trimmed
     * at the end (pages never written cost nothing). */
    if (in.size > 0 && resize(&s, in.size / 12 + 16))
        s.cap = 0;
    struct ctx c = {&in, &s, keep ? keep->lo : 0, keep ? keep->hi : INT32_MAX, err, errlen,
                    first_id == 0};
    char *line = NULL;
    size_t len = 0;
    int have = loom_lines_next(&in, &line, &len);
    if (have == 1 && len >= 14 && !memcmp(line, "%%MatrixMarket", 14))
        rc = matrixmarket(&c, line, len, out);
    else if (in.size >= (1 << 22) && omp_get_max_threads() > 1)
        rc = parallel_triples(&c, out, &s);
    else
        rc = triples(&c, have, line, len, out);
    loom_lines_close(&in);
    if (rc || s.big) {
        free(s.v);
        free(s.raw);
        memset(out, 0, sizeof *out);
        /* an id past INT32_MAX: again, keeping every rating's ids as read */
        return rc ? rc : read_file(path, keep, first_id, IDS_RAW, out, err, errlen);
    }
    if (s.n < s.cap) {
        loom_rating *v = s.n ? realloc(s.v, (size_t)s.n * sizeof *v) : NULL;
        if (v || !s.n) {
            if (!s.n)
                free(s.v);
            s.v = v;
        }
        int64_t *r = s.n && s.raw ? realloc(s.raw, (size_t)s.n * 2 * sizeof *r) : NULL;
        if (r || !s.n) {
            if (!s.n)
                free(s.raw);
            s.raw = r;
        }
    }
    out->v = s.v;
    out->raw = s.raw;
    out->n = s.n;
    out->sum = s.sum;
    return LOOM_OK;
}

int loom_ratings_read(const char *path, const loom_user_range *keep, int first_id,
                      loom_ratings *out, char *err, size_t errlen)
{
    return read_file(path, keep, first_id, IDS_CHECKED, out, err, errlen);
}

int loom_ratings_read_raw(const char *path, int first_id, loom_ratings *out, char *err,
                          size_t errlen)
{
    return read_file(path, NULL, first_id, IDS_INT32, out, err, errlen);
}

void loom_ratings_free(loom_ratings *out)
{
    free(out->v);
    free(out->raw);
    memset(out, 0, sizeof *out);
}

void loom_ratings_block(int32_t n, int rank, int nranks, loom_user_range *range)
{
    range->lo = (int32_t)((int64_t)n * rank / nranks);
    range->hi = (int32_t)((int64_t)n * (rank + 1) / nranks);
}

void loom_ratings_split(const loom_ratings *r, int32_t nusers, int rank, int nranks,
                        loom_user_range *range)
{
    int64_t *c = calloc((size_t)nusers + 1, sizeof *c);
    if (!c) { /* no room to count: the even split */
        loom_ratings_block(nusers, rank, nranks, range);
        return;
    }
    for (int64_t k = 0; k < r->n; k++)
        if (r->v[k].u >= 0 && r->v[k].u < nusers)
            c[r->v[k].u + 1]++;
    for (int32_t u = 0; u < nusers; u++)
        c[u + 1] += c[u]; /* c[u]: ratings of users before u */
    int32_t b[2];
    for (int e = 0; e < 2; e++) { /* the first user whose prefix reaches the target */
        int64_t target = (int64_t)((__int128)c[nusers] * (rank + e) / nranks);
        int32_t lo = 0, hi = nusers;
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (c[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        b[e] = rank + e == nranks ? nusers : lo;
    }
    range->lo = b[0];
    range->hi = b[1];
    free(c);
}

void loom_ratings_keep(loom_ratings *r, const loom_user_range *keep)
{
    int64_t n = 0;
    double sum = 0;
    for (int64_t k = 0; k < r->n; k++)
        if (r->v[k].u >= keep->lo && r->v[k].u < keep->hi) {
            sum += r->v[k].r;
            r->v[n++] = r->v[k];
        }
    loom_rating *v = n ? realloc(r->v, (size_t)n * sizeof *v) : NULL;
    if (v || !n) {
        if (!n)
            free(r->v);
        r->v = v;
    }
    r->n = n;
    r->sum = sum;
}
