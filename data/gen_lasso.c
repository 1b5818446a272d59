/* gen_lasso.c — the planted sparse regression generator (gen_lasso.h).
 * X is drawn column by column (each column its own random stream, so a
 * column is the same for any size of the rest), standardized, kept as
 * compressed columns, and written three ways. */
#include "gen_lasso.h"
#include "grow.h"
#include "lines.h"
#include "rng.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_BETA  ((uint64_t)1)
#define TAG_NOISE ((uint64_t)2)
#define TAG_COL   ((uint64_t)1 << 40)

void loom_gen_lasso_defaults(loom_gen_lasso_opts *o)
{
    memset(o, 0, sizeof *o);
    o->noise = 0.5;
    o->density = 1.0;
    o->seed = 1;
}

struct csc {
    int64_t *ptr;
    int32_t *row;
    double *val;
    int64_t nnz, cap;
};

static int csc_push(struct csc *x, int32_t i, double v)
{
    if (x->nnz == x->cap) { /* the two arrays grow alike */
        size_t cr = (size_t)x->cap, cv = cr, need = (size_t)x->nnz + 1;
        int32_t *row = loom_rt_grow(x->row, &cr, need, sizeof *row);
        if (row)
            x->row = row;
        double *val = loom_rt_grow(x->val, &cv, need, sizeof *val);
        if (val)
            x->val = val;
        if (!row || !val)
            return -1;
        x->cap = (int64_t)cr;
    }
    x->row[x->nnz] = i;
    x->val[x->nnz++] = v;
    return 0;
}

/* Column j: dense (prev holds the previous raw column, for the
 * correlation) or sparse, then standardized. */
static int column(const loom_gen_lasso_opts *o, int64_t j, double *prev, struct csc *x)
{
    loom_rng g = loom_rng_stream(o->seed, TAG_COL + (uint64_t)j);
    int64_t n = o->samples, b = x->nnz;
    if (o->density >= 1) {
        double c = j ? o->correlation : 0, s = sqrt(1 - c * c);
        for (int64_t i = 0; i < n; i++) {
            prev[i] = c * prev[i] + s * loom_rng_normal(&g);
            if (csc_push(x, (int32_t)i, prev[i]))
                return -1;
        }
        double mean = 0;
        for (int64_t k = b; k < x->nnz; k++)
            mean += x->val[k];
        mean /= (double)n;
        for (int64_t k = b; k < x->nnz; k++)
            x->val[k] -= mean;
    } else {
        /* rows at geometric gaps: each row is present with probability d */
        double lq = log1p(-o->density);
        for (int64_t i = (int64_t)floor(log(loom_rng_uniform_pos(&g)) / lq); i < n;
             i += 1 + (int64_t)floor(log(loom_rng_uniform_pos(&g)) / lq))
            if (csc_push(x, (int32_t)i, loom_rng_normal(&g)))
                return -1;
    }
    double ss = 0;
    for (int64_t k = b; k < x->nnz; k++)
        ss += x->val[k] * x->val[k];
    double scale = ss > 0 ? sqrt((double)n / ss) : 0;
    for (int64_t k = b; k < x->nnz; k++)
        x->val[k] *= scale;
    return 0;
}

/* k distinct coordinates of p (partial Fisher-Yates), each ±U[1, 2]. */
static int planted(const loom_gen_lasso_opts *o, double *beta)
{
    int64_t p = o->features, *perm = malloc((size_t)p * sizeof *perm);
    if (!perm)
        return -1;
    for (int64_t j = 0; j < p; j++)
        perm[j] = j;
    loom_rng g = loom_rng_stream(o->seed, TAG_BETA);
    for (int64_t t = 0; t < o->nonzeros; t++) {
        int64_t u = t + (int64_t)(loom_rng_uniform(&g) * (double)(p - t));
        int64_t swap = perm[t];
        perm[t] = perm[u];
        perm[u] = swap;
        double m = 1 + loom_rng_uniform(&g);
        beta[perm[t]] = loom_rng_uniform(&g) < 0.5 ? -m : m;
    }
    free(perm);
    return 0;
}

/* Opens PREFIX SUFFIX for writing with a large buffer. */
static FILE *create(const char *prefix, const char *suffix, char *path, size_t n, char *err,
                    size_t errlen, int *rc)
{
    snprintf(path, n, "%s%s", prefix, suffix);
    FILE *f = fopen(path, "w");
    if (!f)
        *rc = loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(errno));
    else
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

static int finish(FILE *f, const char *path, char *err, size_t errlen)
{
    int bad = ferror(f), e = errno;
    if (fclose(f) || bad)
        return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(bad ? e : errno));
    return LOOM_OK;
}

static int write_files(const loom_gen_lasso_opts *o, const char *prefix, const struct csc *x,
                       const double *y, const double *beta, char *err, size_t errlen)
{
    int64_t n = o->samples, p = o->features;
    char path[4096];
    int rc = LOOM_OK;
    FILE *f = create(prefix, ".X.mtx", path, sizeof path, err, errlen, &rc);
    if (!f)
        return rc;
    if (o->density >= 1) {
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld %lld\n", (long long)n,
                (long long)p);
        for (int64_t k = 0; k < x->nnz; k++)
            fprintf(f, "%.17g\n", x->val[k]);
    } else {
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n",
                (long long)n, (long long)p, (long long)x->nnz);
        for (int64_t j = 0; j < p; j++)
            for (int64_t k = x->ptr[j]; k < x->ptr[j + 1]; k++)
                fprintf(f, "%d %lld %.17g\n", x->row[k] + 1, (long long)j + 1, x->val[k]);
    }
    if ((rc = finish(f, path, err, errlen)))
        return rc;
    if (!(f = create(prefix, ".y.mtx", path, sizeof path, err, errlen, &rc)))
        return rc;
    fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld 1\n", (long long)n);
    for (int64_t i = 0; i < n; i++)
        fprintf(f, "%.17g\n", y[i]);
    if ((rc = finish(f, path, err, errlen)))
        return rc;
    if (!(f = create(prefix, ".beta.txt", path, sizeof path, err, errlen, &rc)))
        return rc;
    for (int64_t j = 0; j < p; j++)
        fprintf(f, "%.17g\n", beta[j]);
    if ((rc = finish(f, path, err, errlen)))
        return rc;
    /* LIBSVM wants rows: transpose the columns (row-major positions). */
    int64_t *rp = calloc((size_t)n + 2, sizeof *rp), *col = malloc((size_t)(x->nnz + 1) * sizeof *col);
    double *val = malloc((size_t)(x->nnz + 1) * sizeof *val);
    if (!rp || !col || !val) {
        free(rp);
        free(col);
        free(val);
        return loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory");
    }
    for (int64_t k = 0; k < x->nnz; k++)
        rp[x->row[k] + 2]++;
    for (int64_t i = 0; i < n; i++)
        rp[i + 2] += rp[i + 1];
    for (int64_t j = 0; j < p; j++) /* rp[i + 1] is row i's fill point */
        for (int64_t k = x->ptr[j]; k < x->ptr[j + 1]; k++) {
            int64_t at = rp[x->row[k] + 1]++;
            col[at] = j;
            val[at] = x->val[k];
        }
    if ((f = create(prefix, ".svm", path, sizeof path, err, errlen, &rc))) {
        for (int64_t i = 0; i < n; i++) {
            fprintf(f, "%.17g", y[i]);
            for (int64_t k = rp[i]; k < rp[i + 1]; k++)
                if (val[k] != 0)
                    fprintf(f, " %lld:%.17g", (long long)col[k] + 1, val[k]);
            fputc('\n', f);
        }
        rc = finish(f, path, err, errlen);
    }
    free(rp);
    free(col);
    free(val);
    return rc;
}

int loom_gen_lasso(const loom_gen_lasso_opts *o, const char *prefix, loom_gen_lasso_stats *st,
                   char *err, size_t errlen)
{
    if (o->samples < 1 || o->samples > INT32_MAX || o->features < 1 || o->features > INT32_MAX)
        return loom_errf(err, errlen, LOOM_ERR_ARG,
                         "the sample and feature counts must be from 1 to 2147483647");
    if (o->nonzeros < 0 || o->nonzeros > o->features)
        return loom_errf(err, errlen, LOOM_ERR_ARG,
                         "--nonzeros must be from 0 to the number of features (%lld)",
                         (long long)o->features);
    if (!(o->noise >= 0) || !isfinite(o->noise))
        return loom_errf(err, errlen, LOOM_ERR_ARG, "--noise must be a finite number >= 0");
    if (!(o->correlation >= 0 && o->correlation < 1))
        return loom_errf(err, errlen, LOOM_ERR_ARG, "--correlation must be in [0, 1)");
    if (!(o->density > 0 && o->density <= 1))
        return loom_errf(err, errlen, LOOM_ERR_ARG, "--density must be in (0, 1]");
    if (o->correlation > 0 && o->density < 1)
        return loom_errf(err, errlen, LOOM_ERR_ARG, "--correlation needs --density 1 (dense X)");
    int64_t n = o->samples, p = o->features;
    struct csc x = {0};
    double *beta = calloc((size_t)p, sizeof *beta), *y = calloc((size_t)n, sizeof *y);
    double *prev = calloc((size_t)n, sizeof *prev);
    x.ptr = malloc((size_t)(p + 1) * sizeof *x.ptr);
    int rc = LOOM_OK;
    if (!beta || !y || !prev || !x.ptr || planted(o, beta))
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory");
    for (int64_t j = 0; !rc && j < p; j++) {
        x.ptr[j] = x.nnz;
        if (column(o, j, prev, &x))
            rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory after %lld values",
                           (long long)x.nnz);
        else if (beta[j] != 0)
            for (int64_t k = x.ptr[j]; k < x.nnz; k++)
                y[x.row[k]] += x.val[k] * beta[j];
    }
    if (!rc) {
        x.ptr[p] = x.nnz;
        double sig = 0, eps = 0;
        loom_rng g = loom_rng_stream(o->seed, TAG_NOISE);
        for (int64_t i = 0; i < n; i++) {
            double e = o->noise * loom_rng_normal(&g);
            sig += y[i] * y[i];
            eps += e * e;
            y[i] += e;
        }
        if (st)
            *st = (loom_gen_lasso_stats){x.nnz, sig, eps};
        rc = write_files(o, prefix, &x, y, beta, err, errlen);
    }
    free(x.ptr);
    free(x.row);
    free(x.val);
    free(beta);
    free(y);
    free(prev);
    return rc;
}
