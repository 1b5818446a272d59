/* lines.h — fast text input shared by the data loaders (ratings.c,
 * corpus.c, gen.c, matrixmarket.c, libsvm.c): a line reader over one
 * large read(2) buffer, the number scanners that replace strtol/strtof on
 * the hot path, the "FILE:LINE: what is wrong" error formatting, and the
 * per-rank row share.  Nothing here exits or prints: errors go into a
 * caller's buffer. */
#ifndef LOOM_LINES_H
#define LOOM_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* A file read line by line.  Fields are read-only for callers. */
typedef struct loom_lines {
    const char *path;  /* as given to loom_lines_open, for messages */
    int fd;
    int eof;           /* the last read(2) returned 0 */
    int err;           /* errno of a failed read(2), else 0 */
    char *buf;         /* cap + 1 bytes: a NUL always fits after a line */
    size_t cap, beg, end;
    long lineno;       /* 1-based number of the line last returned */
    int64_t size;      /* the file's size when it is a regular file, else -1 */
} loom_lines;

/* Open path for reading ("-" is standard input).  Returns LOOM_OK, or
 * LOOM_ERR_IO with "PATH: strerror" in err (LOOM_ERR_NOMEM likewise). */
int loom_lines_open(loom_lines *r, const char *path, char *err, size_t errlen);

/* The next line, without its '\n' (and without a '\r' before it), NUL-
 * terminated in place and writable until the next call; *len is its
 * length (a line may hold NUL bytes, so parsers should stop at line+len).
 * Returns 1 for a line, 0 at end of file, or -1 if reading failed (then
 * r->err holds errno; loom_lines_error formats it).  Lines of any length
 * are read whole: the buffer grows. */
int loom_lines_next(loom_lines *r, char **line, size_t *len);

/* Formats the read error of r ("PATH: strerror", or out of memory) into
 * err and returns the matching LOOM_ERR_*. */
int loom_lines_error(const loom_lines *r, char *err, size_t errlen);

/* Close the file and free the buffer; safe on a reader that failed to open. */
void loom_lines_close(loom_lines *r);

/* Writes printf-style text into err (when err and errlen are non-zero),
 * truncating if need be, and returns code: `return loom_errf(...)`. */
__attribute__((format(printf, 4, 5)))
int loom_errf(char *err, size_t errlen, int code, const char *fmt, ...);

/* Scans an optionally signed ('-' or '+') decimal integer starting at s
 * and ending at or before end.  Returns the first byte after its digits,
 * or NULL when s holds no digit or the value overflows int64_t.  What
 * follows the digits is not checked: callers test for a separator. */
const char *loom_scan_i64(const char *s, const char *end, int64_t *v);

/* Scans a finite decimal number ("5", "-3.25", ".5", "1e-3", "4.") into
 * *v with the same rounding as strtof: up to 7 digits take a fast path
 * (one exact float division), longer ones go through strtof.  The text
 * must be followed by a non-number byte before any NUL-less end (lines
 * from loom_lines_next are NUL-terminated).  Returns the first byte after
 * the number, or NULL when there is none or it is infinite or NaN. */
const char *loom_scan_f32(const char *s, const char *end, float *v);

/* Scans a finite decimal number into *v as strtod does (correctly
 * rounded: a value printed with "%.17g" reads back bit for bit).  The same
 * contract as loom_scan_f32 otherwise: NULL when there is no number or it
 * is infinite, NaN or out of range (overflows). */
const char *loom_scan_f64(const char *s, const char *end, double *v);

/* One rank's share of a data file's rows (samples), for the loaders that
 * split by row (matrixmarket.h, libsvm.h): row i (0-based, in file order)
 * is kept when i % parts == part, and becomes local row i / parts.  Cyclic,
 * so a loader needs not know the number of rows before it reads them.
 * parts = 1 (or a NULL share) keeps every row. */
typedef struct loom_rows {
    int part, parts;
} loom_rows;

/* Field separators inside a line: space and tab. */
static inline int loom_blank(char c) { return c == ' ' || c == '\t'; }

/* The first byte of [p, e) that is not a blank (e if none). */
static inline const char *loom_skip_blanks(const char *p, const char *e)
{
    while (p < e && loom_blank(*p))
        p++;
    return p;
}

/* The next blank-separated word of [*p, e): its start in *w, its length
 * returned; *p moves past it. */
static inline size_t loom_word(const char **p, const char *e, const char **w)
{
    const char *s = loom_skip_blanks(*p, e), *t = s;
    while (t < e && !loom_blank(*t))
        t++;
    *w = s;
    *p = t;
    return (size_t)(t - s);
}

/* 1 if the n bytes at w are the word `want`, ignoring ASCII case. */
static inline int loom_is_word(const char *w, size_t n, const char *want)
{
    return n == strlen(want) && !strncasecmp(w, want, n);
}

/* Copies the token starting at s (its first byte, then up to a blank, ','
 * or end) into buf: a short excerpt for error messages ("" at end of line,
 * cut with "..." after 24 bytes, non-printing bytes shown as '?').
 * Returns buf. */
const char *loom_token(const char *s, const char *end, char *buf, size_t n);

/* Copies the first bytes of the len at s (a whole line, blanks and all)
 * into buf for an error message: at most n - 4 of them, non-printing
 * bytes shown as '?', "..." after a cut.  Returns buf. */
const char *loom_excerpt(const char *s, size_t len, char *buf, size_t n);

#endif
