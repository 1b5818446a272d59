/* lasso.c — the Lasso coordinate-descent kernel and its serial twin
 * (lasso.h): building the column-major local matrix from MatrixMarket or
 * LIBSVM input, the update (soft threshold, residual kept current), the
 * serial pass, objective, duality gap, and the model file. */
#include "lasso.h"
#include "../data/libsvm.h"
#include "../data/matrixmarket.h"
#include "../data/mem.h"
#include "../data/rng.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building the local matrix ------------------------------------------- */

/* Rows of the file kept by share: those i < total with i % parts == part. */
static int64_t kept_rows(int64_t total, int part, int parts)
{
    return total > part ? (total - part + parts - 1) / parts : 0;
}

struct rowval {
    int32_t row;
    double v;
};

static int by_row(const void *a, const void *b)
{
    int32_t x = ((const struct rowval *)a)->row, y = ((const struct rowval *)b)->row;
    return (x > y) - (x < y);
}

/* Sorts every column by row and sums duplicate rows; compacts colptr. */
static int sort_columns(loom_lasso *l)
{
    int64_t out = 0;
    struct rowval *tmp = NULL;
    size_t tmpcap = 0;
    for (int64_t j = 0; j < l->p; j++) {
        int64_t b = l->colptr[j], e = l->colptr[j + 1];
        int sorted = 1;
        for (int64_t k = b + 1; k < e && sorted; k++)
            sorted = l->row[k - 1] < l->row[k];
        if (!sorted) {
            if ((size_t)(e - b) > tmpcap) {
                tmpcap = (size_t)(e - b);
                struct rowval *t = realloc(tmp, tmpcap * sizeof *t);
                if (!t) {
                    free(tmp);
                    return LOOM_ERR_NOMEM;
                }
                tmp = t;
            }
            for (int64_t k = b; k < e; k++)
                tmp[k - b] = (struct rowval){l->row[k], l->val[k]};
            qsort(tmp, (size_t)(e - b), sizeof *tmp, by_row);
            for (int64_t k = b; k < e; k++) {
                l->row[k] = tmp[k - b].row;
                l->val[k] = tmp[k - b].v;
            }
        }
        l->colptr[j] = out;
        for (int64_t k = b; k < e; k++) {
            if (out > l->colptr[j] && l->row[out - 1] == l->row[k]) {
                l->val[out - 1] += l->val[k];
                continue;
            }
            l->row[out] = l->row[k];
            l->val[out++] = l->val[k];
        }
    }
    l->colptr[l->p] = out;
    free(tmp);
    return LOOM_OK;
}

/* Allocates the model part of l (y, r, beta, norm2) and sets β = 0, r = y. */
static int model_arrays(loom_lasso *l, const double *y)
{
    size_t n = (size_t)(l->n ? l->n : 1), p = (size_t)(l->p ? l->p : 1);
    l->y = malloc(n * sizeof *l->y);
    l->r = malloc(n * sizeof *l->r);
    l->beta = calloc(p, sizeof *l->beta);
    l->norm2 = calloc(p, sizeof *l->norm2);
    if (!l->y || !l->r || !l->beta || !l->norm2)
        return LOOM_ERR_NOMEM;
    if (l->n)
        memcpy(l->y, y, (size_t)l->n * sizeof *l->y);
    if (l->n)
        memcpy(l->r, y, (size_t)l->n * sizeof *l->r);
    loom_lasso_norms_local(l);
    return LOOM_OK;
}

/* The CSC matrix from triplets read with strides (so that an array of
 * loom_mm_entry can be read in place): local row = rows[k*rs] / rdiv.
 * Zeros are dropped. */
static int build_strided(loom_lasso *l, int64_t n, int64_t ntotal, int64_t p, int64_t nnz,
                         const int64_t *rows, size_t rs, int64_t rdiv, const int64_t *cols,
                         size_t cs, const double *vals, size_t vs, const double *y)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    l->ntotal = ntotal;
    l->p = p;
    if (n < 0 || n > INT32_MAX || p < 0)
        return LOOM_ERR_ARG;
    int64_t kept = 0;
    if (!(l->colptr = calloc((size_t)p + 2, sizeof *l->colptr)))
        return LOOM_ERR_NOMEM;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t i = rows[(size_t)k * rs] / rdiv, j = cols[(size_t)k * cs];
        if (i < 0 || i >= n || j < 0 || j >= p)
            return LOOM_ERR_ARG;
        if (vals[(size_t)k * vs] != 0) {
            l->colptr[j + 2]++;
            kept++;
        }
    }
    for (int64_t j = 0; j < p; j++)
        l->colptr[j + 2] += l->colptr[j + 1];
    l->row = malloc((size_t)(kept ? kept : 1) * sizeof *l->row);
    l->val = malloc((size_t)(kept ? kept : 1) * sizeof *l->val);
    if (!l->row || !l->val)
        return LOOM_ERR_NOMEM;
    for (int64_t k = 0; k < nnz; k++) { /* colptr[j + 1] is column j's fill point */
        double v = vals[(size_t)k * vs];
        if (v == 0)
            continue;
        int64_t j = cols[(size_t)k * cs], at = l->colptr[j + 1]++;
        l->row[at] = (int32_t)(rows[(size_t)k * rs] / rdiv);
        l->val[at] = v;
    }
    int rc = sort_columns(l);
    return rc ? rc : model_arrays(l, y);
}

int loom_lasso_build(loom_lasso *l, int64_t n, int64_t ntotal, int64_t p, int64_t nnz,
                     const int64_t *rows, const int64_t *cols, const double *vals,
                     const double *y)
{
    int rc = build_strided(l, n, ntotal, p, nnz, rows, 1, 1, cols, 1, vals, 1, y);
    if (rc)
        loom_lasso_free(l);
    return rc;
}

/* The CSC matrix from LIBSVM's compressed rows (a transpose). */
static int build_libsvm(loom_lasso *l, const loom_libsvm *s)
{
    memset(l, 0, sizeof *l);
    l->n = s->n;
    l->ntotal = s->nfile;
    l->p = s->cols;
    if (s->n > INT32_MAX)
        return LOOM_ERR_ARG;
    if (!(l->colptr = calloc((size_t)l->p + 2, sizeof *l->colptr)))
        return LOOM_ERR_NOMEM;
    for (int64_t k = 0; k < s->nnz; k++)
        l->colptr[s->idx[k] + 2] += s->val[k] != 0;
    for (int64_t j = 0; j < l->p; j++)
        l->colptr[j + 2] += l->colptr[j + 1];
    int64_t kept = l->colptr[l->p + 1];
    l->row = malloc((size_t)(kept ? kept : 1) * sizeof *l->row);
    l->val = malloc((size_t)(kept ? kept : 1) * sizeof *l->val);
    if (!l->row || !l->val)
        return LOOM_ERR_NOMEM;
    for (int64_t i = 0; i < s->n; i++)
        for (int64_t k = s->ptr[i]; k < s->ptr[i + 1]; k++) {
            if (s->val[k] == 0)
                continue;
            int64_t at = l->colptr[s->idx[k] + 1]++;
            l->row[at] = (int32_t)i;
            l->val[at] = s->val[k];
        }
    return model_arrays(l, s->y);
}

/* Bytes a problem of p features, n rows here and nnz values costs the
 * solver and loom-lasso: per feature its column pointer, coefficient,
 * norm and the app's up to seven dense vectors (means, scales, X'r, deltas,
 * the path's saved betas), per row y and r, per value its row and value. */
static double need_bytes(int64_t p, int64_t n, int64_t nnz)
{
    return (double)p * 80 + (double)n * 16 + (double)nnz * 16;
}

static int load_mm(const loom_lasso_files *f, int part, int parts, loom_lasso *l, char *err,
                   size_t errlen)
{
    loom_rows share = {part, parts};
    loom_mm X, Y;
    int rc = loom_mm_load(f->x_path, &share, &X, err, errlen);
    if (rc)
        return rc;
    if ((rc = loom_mm_load(f->y_path, &share, &Y, err, errlen))) {
        loom_mm_free(&X);
        return rc;
    }
    double *y = NULL;
    int64_t n = kept_rows(X.rows, part, parts);
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld (declared on its size line)", (long long)X.rows,
             (long long)X.cols);
    if ((rc = loom_mem_check(f->x_path, what, need_bytes(X.cols, n, X.n), err, errlen)))
        ;
    else if (Y.cols != 1)
        rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                       "%s: y has %lld columns (expected one column of %lld responses)",
                       f->y_path, (long long)Y.cols, (long long)X.rows);
    else if (Y.rows != X.rows)
        rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                       "%s: y has %lld rows, but X (%s) has %lld", f->y_path, (long long)Y.rows,
                       f->x_path, (long long)X.rows);
    else if (X.rows / parts > INT32_MAX)
        rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                       "%s: %lld rows are too many for one rank (at most 2^31 - 1 each)",
                       f->x_path, (long long)X.rows);
    else if (!(y = calloc((size_t)(n ? n : 1), sizeof *y)))
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", f->y_path);
    if (!rc) {
        for (int64_t k = 0; k < Y.n; k++)
            y[Y.e[k].row / parts] += Y.e[k].v;
        rc = build_strided(l, n, X.rows, X.cols, X.n, &X.e[0].row, 3, parts, &X.e[0].col, 3,
                           &X.e[0].v, 3, y);
        if (rc)
            rc = loom_errf(err, errlen, rc, "%s: out of memory for %lld values", f->x_path,
                           (long long)X.n);
    }
    free(y);
    loom_mm_free(&X);
    loom_mm_free(&Y);
    return rc;
}

int loom_lasso_load(const loom_lasso_files *f, const loom_rows *share, loom_lasso *l,
                    char *err, size_t errlen)
{
    _Static_assert(sizeof(loom_mm_entry) == 3 * sizeof(int64_t) &&
                       sizeof(double) == sizeof(int64_t),
                   "loom_mm_entry is read with a stride of three words");
    memset(l, 0, sizeof *l);
    int part = share ? share->part : 0, parts = share ? share->parts : 1;
    int rc;
    if (f->libsvm_path) {
        loom_libsvm s;
        if ((rc = loom_libsvm_read(f->libsvm_path, share, f->zero_based ? 0 : 1, &s, err,
                                   errlen)))
            return rc;
        char what[64];
        snprintf(what, sizeof what, "feature index %lld", (long long)s.cols);
        if (s.cols > INT32_MAX) /* the coefficients are dense: one per index */
            rc = loom_errf(err, errlen, LOOM_ERR_FORMAT, "%s: feature index %lld: loom-lasso "
                           "keeps one coefficient per index, up to 2147483647",
                           f->libsvm_path, (long long)s.cols);
        else if ((rc = loom_mem_check(f->libsvm_path, what,
                                      need_bytes(s.cols, s.n, s.nnz), err, errlen)))
            ;
        else if ((rc = build_libsvm(l, &s)))
            rc = loom_errf(err, errlen, rc, "%s: out of memory for %lld values",
                           f->libsvm_path, (long long)s.nnz);
        loom_libsvm_free(&s);
    } else {
        rc = load_mm(f, part, parts, l, err, errlen);
    }
    if (rc)
        loom_lasso_free(l);
    else
        l->spread = parts;
    return rc;
}

void loom_lasso_free(loom_lasso *l)
{
    free(l->colptr);
    free(l->row);
    free(l->val);
    free(l->y);
    free(l->r);
    free(l->beta);
    free(l->norm2);
    memset(l, 0, sizeof *l);
}

/* ---- the update ------------------------------------------------------------ */

/* Column j's entries [*a, *b) whose rows lie in [lo, hi): rows increase
 * down a column, so two binary searches (none for all the rows). */
static void entries(const loom_lasso *l, int64_t j, int64_t lo, int64_t hi, int64_t *a,
                    int64_t *b)
{
    if (lo <= 0 && hi >= l->n) {
        *a = l->colptr[j], *b = l->colptr[j + 1];
        return;
    }
    int64_t bound[2] = {lo, hi}, out[2];
    for (int e = 0; e < 2; e++) {
        int64_t x = l->colptr[j], y = l->colptr[j + 1]; /* first entry with row >= bound */
        while (x < y) {
            int64_t mid = x + (y - x) / 2;
            if (l->row[mid] < bound[e])
                x = mid + 1;
            else
                y = mid;
        }
        out[e] = x;
    }
    *a = out[0], *b = out[1];
}

static double dot_entries(const loom_lasso *l, int64_t a, int64_t b)
{
    double s = 0;
    for (int64_t k = a; k < b; k++)
        s += l->val[k] * l->r[l->row[k]];
    return s;
}

static void residual_entries(loom_lasso *l, int64_t a, int64_t b, double d)
{
    for (int64_t k = a; k < b; k++)
        l->r[l->row[k]] -= l->val[k] * d;
}

double loom_lasso_dot_local(const loom_lasso *l, int64_t j)
{
    return dot_entries(l, l->colptr[j], l->colptr[j + 1]);
}

double loom_lasso_dot_rows(const loom_lasso *l, int64_t j, int64_t lo, int64_t hi)
{
    int64_t a, b;
    entries(l, j, lo, hi, &a, &b);
    return dot_entries(l, a, b);
}

double loom_lasso_decide(loom_lasso *l, int64_t j, double z, double lambda)
{
    double c = l->norm2[j];
    if (!(c > 0))
        return 0;
    double old = l->beta[j], now = loom_lasso_soft(z + c * old, lambda) / c;
    l->beta[j] = now;
    return now - old;
}

void loom_lasso_residual_rows(loom_lasso *l, int64_t j, double d, int64_t lo, int64_t hi)
{
    int64_t a, b;
    if (d == 0)
        return;
    entries(l, j, lo, hi, &a, &b);
    residual_entries(l, a, b, d);
}

double loom_lasso_apply(loom_lasso *l, int64_t j, double z, double lambda)
{
    double d = loom_lasso_decide(l, j, z, lambda);
    if (d != 0)
        residual_entries(l, l->colptr[j], l->colptr[j + 1], d);
    return d;
}

double loom_lasso_pass(loom_lasso *l, double lambda, loom_lasso_order order, uint64_t *rng)
{
    double dmax = 0;
    for (int64_t t = 0; t < l->p; t++) {
        int64_t j = t;
        if (order == LOOM_LASSO_RANDOM)
            j = (int64_t)(((loom_mix64((*rng)++) >> 32) * (uint64_t)l->p) >> 32);
        double d = fabs(loom_lasso_apply(l, j, loom_lasso_dot_local(l, j), lambda));
        if (d > dmax)
            dmax = d;
    }
    return dmax;
}

/* ---- whole-matrix sums ------------------------------------------------------ */

void loom_lasso_norms_local(loom_lasso *l)
{
    for (int64_t j = 0; j < l->p; j++) {
        double s = 0;
        for (int64_t k = l->colptr[j]; k < l->colptr[j + 1]; k++)
            s += l->val[k] * l->val[k];
        l->norm2[j] = s;
    }
}

void loom_lasso_xtv_local(const loom_lasso *l, const double *v, double *g)
{
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t j = 0; j < l->p; j++) {
        double s = 0;
        for (int64_t k = l->colptr[j]; k < l->colptr[j + 1]; k++)
            s += l->val[k] * v[l->row[k]];
        g[j] = s;
    }
}

void loom_lasso_sums_x_local(const loom_lasso *l, double *s)
{
    for (int64_t j = 0; j < l->p; j++) {
        double t = 0;
        for (int64_t k = l->colptr[j]; k < l->colptr[j + 1]; k++)
            t += l->val[k];
        s[j] = t;
    }
    double t = 0;
    for (int64_t i = 0; i < l->n; i++)
        t += l->y[i];
    s[l->p] = t;
}

void loom_lasso_spread_local(const loom_lasso *l, const double *mean, double *s)
{
    for (int64_t j = 0; j < l->p; j++) {
        double t = 0, m = mean[j];
        for (int64_t k = l->colptr[j]; k < l->colptr[j + 1]; k++)
            t += (l->val[k] - m) * (l->val[k] - m);
        s[j] = t + (double)(l->n - (l->colptr[j + 1] - l->colptr[j])) * m * m;
    }
}

int loom_lasso_standardize(loom_lasso *l, const double *mean, const double *scale, double ymean)
{
    size_t n = (size_t)l->n, all = n * (size_t)l->p;
    int64_t *colptr = malloc(((size_t)l->p + 1) * sizeof *colptr);
    int32_t *row = malloc((all ? all : 1) * sizeof *row);
    double *val = malloc((all ? all : 1) * sizeof *val), *x = malloc((n ? n : 1) * sizeof *x);
    if (!colptr || !row || !val || !x) {
        free(colptr);
        free(row);
        free(val);
        free(x);
        return LOOM_ERR_NOMEM;
    }
    for (int64_t j = 0; j < l->p; j++) {
        for (size_t i = 0; i < n; i++)
            x[i] = 0;
        for (int64_t k = l->colptr[j]; k < l->colptr[j + 1]; k++)
            x[l->row[k]] = l->val[k];
        double inv = scale[j] > 0 ? 1 / scale[j] : 0;
        colptr[j] = (int64_t)(n * (size_t)j);
        for (size_t i = 0; i < n; i++) {
            row[n * (size_t)j + i] = (int32_t)i;
            val[n * (size_t)j + i] = (x[i] - mean[j]) * inv;
        }
    }
    colptr[l->p] = (int64_t)all;
    free(x);
    free(l->colptr);
    free(l->row);
    free(l->val);
    l->colptr = colptr;
    l->row = row;
    l->val = val;
    for (size_t i = 0; i < n; i++) {
        l->y[i] -= ymean;
        l->r[i] = l->y[i];
    }
    for (int64_t j = 0; j < l->p; j++)
        l->beta[j] = 0;
    loom_lasso_norms_local(l);
    return LOOM_OK;
}

void loom_lasso_residual(loom_lasso *l)
{
    if (l->n)
        memcpy(l->r, l->y, (size_t)l->n * sizeof *l->r);
    for (int64_t j = 0; j < l->p; j++)
        if (l->beta[j] != 0)
            for (int64_t k = l->colptr[j]; k < l->colptr[j + 1]; k++)
                l->r[l->row[k]] -= l->val[k] * l->beta[j];
}

double loom_lasso_cross_local(const loom_lasso *l, int64_t j, int64_t k)
{
    int64_t a = l->colptr[j], ae = l->colptr[j + 1], b = l->colptr[k], be = l->colptr[k + 1];
    double s = 0;
    while (a < ae && b < be) {
        int32_t ra = l->row[a], rb = l->row[b];
        if (ra == rb)
            s += l->val[a++] * l->val[b++];
        else if (ra < rb)
            a++;
        else
            b++;
    }
    return s;
}

double loom_lasso_l1(const loom_lasso *l)
{
    double s = 0;
    for (int64_t j = 0; j < l->p; j++)
        s += fabs(l->beta[j]);
    return s;
}

int64_t loom_lasso_nnz(const loom_lasso *l)
{
    int64_t k = 0;
    for (int64_t j = 0; j < l->p; j++)
        k += l->beta[j] != 0;
    return k;
}

void loom_lasso_sums_local(const loom_lasso *l, double s[3])
{
    double rr = 0, ry = 0, yy = 0;
    for (int64_t i = 0; i < l->n; i++) {
        rr += l->r[i] * l->r[i];
        ry += l->r[i] * l->y[i];
        yy += l->y[i] * l->y[i];
    }
    s[0] = rr;
    s[1] = ry;
    s[2] = yy;
}

double loom_lasso_objective(const loom_lasso *l, double rr, double lambda)
{
    return 0.5 * rr + lambda * loom_lasso_l1(l);
}

double loom_lasso_gap(const loom_lasso *l, double rr, double ry, double xtr_max, double lambda)
{
    double s = xtr_max > lambda ? lambda / xtr_max : 1.0;
    double dual = s * ry - 0.5 * s * s * rr;
    return loom_lasso_objective(l, rr, lambda) - dual;
}

int loom_lasso_save(const char *path, const double *beta, int64_t p)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (int64_t j = 0; j < p; j++)
        fprintf(f, "%.17g\n", beta[j]);
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        errno = e ? e : EIO;
        return -1;
    }
    return fclose(f) ? -1 : 0;
}
