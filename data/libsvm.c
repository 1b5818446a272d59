/* libsvm.c — the LIBSVM reader (libsvm.h): one row per line, label then
 * index:value pairs, every field checked and a bad one named FILE:LINE,
 * with the cyclic row filter.  Hand parsing over lines.c's reader. */
#include "libsvm.h"
#include "grow.h"

#include <loom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHAPE "'label index:value index:value ...'"

struct ctx {
    loom_lines *in;
    loom_libsvm *out;
    int64_t ycap, vcap;
    char *err;
    size_t errlen;
    int shift; /* 1 for a 0-based file: index j is feature j + 1 */
};

static int bad_field(const struct ctx *c, const char *what, const char *p, const char *e,
                     const char *expect)
{
    char tok[32];
    return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT, "%s:%ld: bad %s '%s' (expected %s)",
                     c->in->path, c->in->lineno, what, loom_token(p, e, tok, sizeof tok), expect);
}

static int nomem(const struct ctx *c)
{
    return loom_errf(c->err, c->errlen, LOOM_ERR_NOMEM, "%s:%ld: out of memory after %lld rows",
                     c->in->path, c->in->lineno, (long long)c->out->n);
}

/* Room for one more kept row (y and ptr). */
static int room_row(struct ctx *c)
{
    loom_libsvm *o = c->out;
    if (o->n + 1 < c->ycap)
        return 0;
    /* both hold ycap + 1 entries (y one spare) and grow alike */
    size_t cy = (size_t)c->ycap + 1, cp = cy, need = (size_t)o->n + 3;
    double *y = loom_rt_grow(o->y, &cy, need, sizeof *y);
    if (y)
        o->y = y;
    int64_t *ptr = loom_rt_grow(o->ptr, &cp, need, sizeof *ptr);
    if (ptr)
        o->ptr = ptr;
    if (!y || !ptr)
        return -1;
    c->ycap = (int64_t)cy - 1;
    return 0;
}

/* Room for one more kept value. */
static int room_value(struct ctx *c)
{
    loom_libsvm *o = c->out;
    if (o->nnz < c->vcap)
        return 0;
    size_t ci = (size_t)c->vcap, cv = ci, need = (size_t)o->nnz + 1; /* they grow alike */
    int64_t *idx = loom_rt_grow(o->idx, &ci, need, sizeof *idx);
    if (idx)
        o->idx = idx;
    double *val = loom_rt_grow(o->val, &cv, need, sizeof *val);
    if (val)
        o->val = val;
    if (!idx || !val)
        return -1;
    c->vcap = (int64_t)ci;
    return 0;
}

/* One row; kept (stored) when keep is 1.  The file's largest index goes
 * into *maxcol either way. */
static int row(struct ctx *c, const char *p, const char *e, int keep, int64_t *maxcol)
{
    loom_libsvm *o = c->out;
    const char *q;
    double label;
    if (!(q = loom_scan_f64(p, e, &label)) || (q < e && !loom_blank(*q)))
        return bad_field(c, "label", p, e, "a finite number");
    if (keep) {
        if (room_row(c))
            return nomem(c);
        o->y[o->n] = label;
        o->ptr[o->n] = o->nnz;
    }
    int64_t prev = 0;
    for (p = loom_skip_blanks(q, e); p < e && *p != '#'; p = loom_skip_blanks(q, e)) {
        if (prev == 0 && e - p >= 4 && !memcmp(p, "qid:", 4)) {
            int64_t qid;
            q = loom_scan_i64(p + 4, e, &qid);
            if (!q || (q < e && !loom_blank(*q)))
                return bad_field(c, "qid", p, e, "'qid:' and an integer");
            continue;
        }
        int64_t j;
        q = loom_scan_i64(p, e, &j);
        if (q && c->shift)
            j = j >= 0 && j < INT64_MAX ? j + 1 : -1; /* from here on 1-based */
        if (!q || q == e || *q != ':' || j < 1) {
            if (q && q < e && *q == ':' && j == 0 && !c->shift)
                return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                                 "%s:%ld: feature index 0 (indices start at 1; --zero-based "
                                 "reads a file whose indices start at 0)", c->in->path,
                                 c->in->lineno);
            return bad_field(c, "feature", p, e, c->shift
                             ? "index:value with an index from 0 to 9223372036854775806 "
                               "(--zero-based)"
                             : "index:value with an index from 1 to 9223372036854775807");
        }
        if (j <= prev)
            return loom_errf(c->err, c->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: feature index %lld after %lld (indices must increase)",
                             c->in->path, c->in->lineno, (long long)(j - c->shift),
                             (long long)(prev - c->shift));
        double v;
        const char *vs = q + 1;
        if (!(q = loom_scan_f64(vs, e, &v)) || (q < e && !loom_blank(*q)))
            return bad_field(c, "value of feature", p, e, "index:value with a finite value");
        prev = j;
        if (keep) {
            if (room_value(c))
                return nomem(c);
            o->idx[o->nnz] = j - 1;
            o->val[o->nnz++] = v;
        }
    }
    if (prev > *maxcol)
        *maxcol = prev;
    if (keep)
        o->ptr[++o->n] = o->nnz;
    return LOOM_OK;
}

int loom_libsvm_load(const char *path, const loom_rows *share, loom_libsvm *out, char *err,
                     size_t errlen)
{
    return loom_libsvm_read(path, share, 1, out, err, errlen);
}

int loom_libsvm_read(const char *path, const loom_rows *share, int first_index, loom_libsvm *out,
                     char *err, size_t errlen)
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
    struct ctx c = {.in = &in, .out = out, .err = err, .errlen = errlen,
                    .shift = first_index == 0};
    char *line;
    size_t len;
    int have;
    int64_t nfile = 0, maxcol = 0;
    while ((have = loom_lines_next(&in, &line, &len)) == 1) {
        const char *e = line + len, *p = loom_skip_blanks(line, e);
        if (p == e || *p == '#')
            continue;
        if ((rc = row(&c, p, e, nfile % parts == part, &maxcol)))
            break;
        nfile++;
    }
    if (!rc && have < 0)
        rc = loom_lines_error(&in, err, errlen);
    if (!rc && !out->ptr && !(out->ptr = calloc(1, sizeof *out->ptr)))
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
    loom_lines_close(&in);
    if (rc) {
        loom_libsvm_free(out);
        return rc;
    }
    out->nfile = nfile;
    out->cols = maxcol;
    return LOOM_OK;
}

void loom_libsvm_free(loom_libsvm *out)
{
    free(out->y);
    free(out->ptr);
    free(out->idx);
    free(out->val);
    memset(out, 0, sizeof *out);
}
