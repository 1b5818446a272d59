/* lines.c — the line reader, number scanners and error formatting that
 * the data loaders share (see lines.h). */
#include "lines.h"
#include "grow.h"

#include <loom.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINES_BUF ((size_t)4 << 20) /* 4 MiB reads: a few syscalls per 100 MB */

int loom_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int loom_lines_open(loom_lines *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->size = -1;
    r->fd = !strcmp(path, "-") ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0)
        return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(r->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            loom_lines_close(r);
            return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(EISDIR));
        }
        if (S_ISREG(st.st_mode)) {
            r->size = (int64_t)st.st_size;
            posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        }
    }
    /* A small file gets a small buffer; anything else the full size. */
    r->cap = r->size >= 0 && (uint64_t)r->size < LINES_BUF ? (size_t)r->size + 64 : LINES_BUF;
    r->buf = malloc(r->cap + 1);
    if (!r->buf) {
        loom_lines_close(r);
        return loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
    }
    return LOOM_OK;
}

/* Hands out buf[beg, nl) as the current line. */
static int take(loom_lines *r, char *nl, char **line, size_t *len)
{
    char *s = r->buf + r->beg;
    size_t n = (size_t)(nl - s);
    *nl = '\0';
    if (n && s[n - 1] == '\r')
        s[--n] = '\0';
    r->beg = (size_t)(nl - r->buf) + (nl < r->buf + r->end);
    r->lineno++;
    *line = s;
    *len = n;
    return 1;
}

int loom_lines_next(loom_lines *r, char **line, size_t *len)
{
    size_t scanned = 0; /* bytes after beg known to hold no '\n' */
    for (;;) {
        char *nl = memchr(r->buf + r->beg + scanned, '\n', r->end - r->beg - scanned);
        if (nl)
            return take(r, nl, line, len);
        if (r->eof) {
            if (r->beg == r->end)
                return 0;
            return take(r, r->buf + r->end, line, len); /* last line, no '\n' */
        }
        scanned = r->end - r->beg;
        if (r->beg) {
            memmove(r->buf, r->buf + r->beg, scanned);
            r->end = scanned;
            r->beg = 0;
        }
        if (r->end == r->cap) { /* cap bytes and the terminator */
            size_t room = r->cap + 1;
            char *b = loom_rt_grow(r->buf, &room, room + 1, 1);
            if (!b) {
                r->err = ENOMEM;
                return -1;
            }
            r->buf = b;
            r->cap = room - 1;
        }
        ssize_t k = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            r->err = errno;
            return -1;
        }
        if (k == 0)
            r->eof = 1;
        r->end += (size_t)k;
    }
}

int loom_lines_error(const loom_lines *r, char *err, size_t errlen)
{
    if (r->err == ENOMEM)
        return loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s:%ld: out of memory reading a line",
                         r->path, r->lineno + 1);
    return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", r->path, strerror(r->err));
}

void loom_lines_close(loom_lines *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    free(r->buf);
    r->buf = NULL;
}

const char *loom_scan_i64(const char *s, const char *end, int64_t *v)
{
    const char *p = s;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, m = 0;
    const char *digits = p;
    for (; p < end && (unsigned)(*p - '0') < 10; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (m > (lim - d) / 10)
            return NULL;
        m = m * 10 + d;
    }
    if (p == digits)
        return NULL;
    *v = neg ? (m ? -(int64_t)(m - 1) - 1 : 0) : (int64_t)m;
    return p;
}

const char *loom_scan_f32(const char *s, const char *end, float *v)
{
    static const float p10[8] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f};
    const char *p = s;
    int neg = 0, nd = 0, nf = 0;
    uint32_t m = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    for (; p < end && (unsigned)(*p - '0') < 10; p++, nd++)
        m = m * 10 + (uint32_t)(*p - '0') * (nd < 8);
    if (p < end && *p == '.')
        for (p++; p < end && (unsigned)(*p - '0') < 10; p++, nd++, nf++)
            m = m * 10 + (uint32_t)(*p - '0') * (nd < 8);
    int more = p < end && (*p == 'e' || *p == 'E' || *p == 'x' || *p == 'X' || *p == 'p' ||
                           *p == 'P');
    if (nd > 0 && nd <= 7 && !more) {
        /* m < 10^7 < 2^24 and 10^nf are exact floats: one rounding. */
        float x = (float)m / p10[nf];
        *v = neg ? -x : x;
        return p;
    }
    if (s >= end || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\v' || *s == '\f' ||
        *s == '\r')
        return NULL;
    char *q;
    errno = 0;
    float x = strtof(s, &q);
    if (q == s || q > end || !isfinite(x))
        return NULL;
    *v = x;
    return q;
}

const char *loom_scan_f64(const char *s, const char *end, double *v)
{
    if (s >= end || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\v' || *s == '\f' ||
        *s == '\r')
        return NULL;
    char *q;
    double x = strtod(s, &q);
    if (q == s || q > end || !isfinite(x))
        return NULL;
    *v = x;
    return q;
}

const char *loom_token(const char *s, const char *end, char *buf, size_t n)
{
    size_t k = 0;
    if (!n)
        return buf;
    for (; s < end && (k == 0 || (*s != ' ' && *s != '\t' && *s != ',')) && k + 1 < n; s++) {
        if (k == 24) {
            snprintf(buf + k, n - k, "...");
            return buf;
        }
        buf[k++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    }
    buf[k] = '\0';
    return buf;
}

const char *loom_excerpt(const char *s, size_t len, char *buf, size_t n)
{
    size_t k = 0;
    if (n < 4)
        return n ? (buf[0] = 0, buf) : buf;
    for (; k < len && k + 4 < n; k++)
        buf[k] = (s[k] >= 0x20 && s[k] < 0x7f) ? s[k] : '?';
    if (k < len)
        memcpy(buf + k, "...", 3), k += 3;
    buf[k] = 0;
    return buf;
}
