/* matrixmarket.c — the MatrixMarket reader (matrixmarket.h): banner, size
 * line, then coordinate triples or array values column by column, each
 * line checked and named FILE:LINE when it is wrong, with the cyclic row
 * filter.  Hand parsing over lines.c's reader. */
#include "matrixmarket.h"
#include "grow.h"

#include <loom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ctx {
    loom_lines *in;
    loom_mm *out;
    int64_t cap;
    int part, parts;
    int pattern;
    long size_line;
    char *err;
    size_t errlen;
};

/* "FILE:LINE: bad WHAT 'TOKEN' (expected EXPECT)"; LOOM_ERR_FORMAT. */
static int bad_field(const struct ctx *c, const char *what, const char *p, const char *e,
                     const char *expect)
{
    char tok[32];
    return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT, "%s:%ld: bad %s '%s' (expected %s)",
                     c->in->path, c->in->lineno, what, loom_token(p, e, tok, sizeof tok), expect);
}

static int push(struct ctx *c, int64_t row, int64_t col, double v)
{
    if (row % c->parts != c->part)
        return LOOM_OK;
    loom_mm *o = c->out;
    if (o->n == c->cap) {
        size_t cap = (size_t)c->cap;
        loom_mm_entry *e = loom_rt_grow(o->e, &cap, (size_t)o->n + 1, sizeof *e);
        if (!e)
            return loom_errf(c->err, c->errlen, LOOM_ERR_NOMEM,
                             "%s:%ld: out of memory after %lld entries", c->in->path,
                             c->in->lineno, (long long)o->n);
        o->e = e;
        c->cap = (int64_t)cap;
    }
    o->e[o->n++] = (loom_mm_entry){row, col, v};
    return LOOM_OK;
}

/* The banner: object, format, field, symmetry.  Sets out->array,
 * out->vector and c->pattern. */
static int banner(struct ctx *c, const char *line, size_t len)
{
    char shown[84];
    const char *p = line + 14, *e = line + len, *w[4];
    size_t n[4];
    for (int k = 0; k < 4; k++)
        n[k] = loom_word(&p, e, &w[k]);
    int obj = loom_is_word(w[0], n[0], "matrix") ? 1 : loom_is_word(w[0], n[0], "vector") ? 2 : 0;
    int fmt = loom_is_word(w[1], n[1], "coordinate") ? 1 : loom_is_word(w[1], n[1], "array") ? 2 : 0;
    int field = loom_is_word(w[2], n[2], "real") || loom_is_word(w[2], n[2], "integer") ||
                        loom_is_word(w[2], n[2], "double")
                    ? 1
                : loom_is_word(w[2], n[2], "pattern") ? 2
                                                 : 0;
    int sym = loom_is_word(w[3], n[3], "general") || (obj == 2 && n[3] == 0);
    if (!obj || !fmt || !field || !sym || (field == 2 && fmt == 2) || loom_skip_blanks(p, e) < e)
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: unsupported MatrixMarket header '%s' (expected "
                         "'%%%%MatrixMarket matrix coordinate real general', or array instead "
                         "of coordinate, vector instead of matrix; integer, double and "
                         "(coordinate) pattern values are read too)",
                         c->in->path, c->in->lineno, loom_excerpt(line, len, shown, sizeof shown));
    c->out->vector = obj == 2;
    c->out->array = fmt == 2;
    c->pattern = field == 2;
    return LOOM_OK;
}

/* The size line: its count of integers depends on the object and format. */
static int size_line(struct ctx *c, const char *p, const char *e, int64_t size[3])
{
    loom_mm *o = c->out;
    static const char *const names[3] = {"number of rows", "number of columns",
                                         "number of entries"};
    const char *shape = o->vector ? (o->array ? "'rows'" : "'rows entries'")
                                  : (o->array ? "'rows columns'" : "'rows columns entries'");
    int want[3] = {1, !o->vector, !o->array};
    size[0] = size[2] = 0;
    size[1] = 1;
    for (int k = 0; k < 3; k++) {
        if (!want[k])
            continue;
        if (p == e)
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: missing the %s (expected %s)", c->in->path,
                             c->in->lineno, names[k], shape);
        const char *q = loom_scan_i64(p, e, &size[k]);
        if (!q || (q < e && !loom_blank(*q)) || size[k] < 0 || (k == 1 && size[k] > INT32_MAX))
            return bad_field(c, names[k], p, e,
                             k == 1 ? "an integer from 0 to 2147483647" : "an integer >= 0");
        p = loom_skip_blanks(q, e);
    }
    if (p < e) {
        char tok[32];
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: unexpected '%s' after the size line (expected %s)",
                         c->in->path, c->in->lineno, loom_token(p, e, tok, sizeof tok), shape);
    }
    if (o->array) {
        if (size[1] && size[0] > INT64_MAX / size[1])
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: %lld x %lld values are too many", c->in->path,
                             c->in->lineno, (long long)size[0], (long long)size[1]);
        size[2] = size[0] * size[1];
    }
    c->size_line = c->in->lineno;
    return LOOM_OK;
}

/* An index in 1..size; a message naming the declared size when beyond. */
static int index_field(const struct ctx *c, const char *what, const char *p, const char *e,
                       int64_t size, const char *plural, int64_t *id, const char **q)
{
    *q = loom_scan_i64(p, e, id);
    if (!*q || (*q < e && !loom_blank(**q)) || *id < 1) {
        char expect[64];
        snprintf(expect, sizeof expect, "an integer from 1 to %lld", (long long)size);
        return bad_field(c, what, p, e, expect);
    }
    if (*id > size)
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: %s %lld is beyond the %lld %s declared on line %ld",
                         c->in->path, c->in->lineno, what, (long long)*id, (long long)size,
                         plural, c->size_line);
    return LOOM_OK;
}

/* One data line: "row col value", "row value" (vector), "value" (array),
 * without the value for pattern.  k is the 0-based entry number. */
static int entry(struct ctx *c, const char *p, const char *e, const int64_t size[3], int64_t k)
{
    loom_mm *o = c->out;
    const char *shape = o->array ? "'value'"
                        : o->vector ? (c->pattern ? "'row'" : "'row value'")
                                    : (c->pattern ? "'row column'" : "'row column value'");
    int64_t row, col = 1;
    double v = 1;
    const char *q;
    int rc;
    if (o->array) {
        row = k % (size[0] ? size[0] : 1) + 1;
        col = k / (size[0] ? size[0] : 1) + 1;
    } else {
        if ((rc = index_field(c, "row", p, e, size[0], "rows", &row, &q)))
            return rc;
        p = loom_skip_blanks(q, e);
        if (!o->vector) {
            if (p == e)
                return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                                 "%s:%ld: missing the column (expected %s)", c->in->path,
                                 c->in->lineno, shape);
            if ((rc = index_field(c, "column", p, e, size[1], "columns", &col, &q)))
                return rc;
            p = loom_skip_blanks(q, e);
        }
    }
    if (!c->pattern) {
        if (p == e)
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: missing the value (expected %s)", c->in->path,
                             c->in->lineno, shape);
        if (!(q = loom_scan_f64(p, e, &v)) || (q < e && !loom_blank(*q)))
            return bad_field(c, "value", p, e, "a finite number");
        p = loom_skip_blanks(q, e);
    }
    if (p < e) {
        char tok[32];
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: unexpected '%s' after the %s (expected %s)", c->in->path,
                         c->in->lineno, loom_token(p, e, tok, sizeof tok),
                         c->pattern ? (o->vector ? "row" : "column") : "value", shape);
    }
    return push(c, row - 1, col - 1, v);
}

static int parse(struct ctx *c)
{
    char *line;
    size_t len;
    int have = loom_lines_next(c->in, &line, &len), rc;
    if (have < 0)
        return loom_lines_error(c->in, c->err, c->errlen);
    if (have == 0)
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:1: empty file (expected a '%%%%MatrixMarket' banner)", c->in->path);
    if (len < 14 || memcmp(line, "%%MatrixMarket", 14))
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:1: not a MatrixMarket file (the first line must start with "
                         "'%%%%MatrixMarket')",
                         c->in->path);
    if ((rc = banner(c, line, len)))
        return rc;
    int64_t size[3] = {0, 0, 0}, k = 0;
    while ((have = loom_lines_next(c->in, &line, &len)) == 1) {
        const char *e = line + len, *p = loom_skip_blanks(line, e);
        if (p == e || *p == '%')
            continue;
        if (!c->size_line) {
            if ((rc = size_line(c, p, e, size)))
                return rc;
            continue;
        }
        if (k == size[2])
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: more entries than the %lld declared on line %ld",
                             c->in->path, c->in->lineno, (long long)size[2], c->size_line);
        if ((rc = entry(c, p, e, size, k)))
            return rc;
        k++;
    }
    if (have < 0)
        return loom_lines_error(c->in, c->err, c->errlen);
    if (!c->size_line)
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: no size line before the end of the file", c->in->path,
                         c->in->lineno);
    if (k < size[2])
        return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: the file ends after %lld of the %lld %s declared on line %ld",
                         c->in->path, c->in->lineno, (long long)k, (long long)size[2],
                         c->out->array ? "values" : "entries", c->size_line);
    c->out->rows = size[0];
    c->out->cols = size[1];
    c->out->nfile = k;
    return LOOM_OK;
}

int loom_mm_load(const char *path, const loom_rows *share, loom_mm *out, char *err,
                 size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    int part = share ? share->part : 0, parts = share ? share->parts : 1;
    if (parts < 1 || part < 0 || part >= parts)
        return loom_errf(err, errlen, LOOM_ERR_ARG, "%s: bad row share %d of %d", path, part,
                         parts);
    loom_lines in;
    int rc = loom_lines_open(&in, path, err, errlen);
    if (rc)
        return rc;
    struct ctx c = {.in = &in, .out = out, .part = part, .parts = parts, .err = err,
                    .errlen = errlen};
    rc = parse(&c);
    loom_lines_close(&in);
    if (rc)
        loom_mm_free(out);
    return rc;
}

void loom_mm_free(loom_mm *out)
{
    free(out->e);
    memset(out, 0, sizeof *out);
}
