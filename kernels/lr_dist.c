/* lr_dist.c — distributed logistic regression (lr_dist.h): the three
 * models' Loom loops beside their serial twins, their allocations, merge
 * choices and sync intervals, scoring and model files. */
#include "lr_dist.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the multinomial model on dense rows (IDX images) ---------------- */

struct job {
    const loom_lr_dense *d;
    float *W;
    float step, lambda;
    void (*tick)(int64_t n);
};

static void sgd(long i, void *ctx)
{
    struct job *j = ctx;
    const loom_lr_dense *d = j->d;
    float *rows[LOOM_LR_MAXC], p[LOOM_LR_MAXC];
    for (int c = 0; c < d->C; c++)
        rows[c] = loom_at(j->W, (size_t)c);
    const float *x = d->X + (int64_t)i * d->D;
    loom_lr_softmax(rows, d->C, x, d->D, d->y[i], p);
    loom_lr_softmax_step(rows, d->C, x, d->D, d->y[i], p, j->step, j->lambda);
    j->tick(1);
}


/* Summed loss and correct predictions of block d against W's rows. */
static void evaluate(const loom_lr_dense *d, float *const *rows, double *loss, double *right)
{
    double l = 0, r = 0;
#pragma omp parallel for schedule(static) reduction(+ : l, r)
    for (int64_t i = 0; i < d->n; i++) {
        float p[LOOM_LR_MAXC];
        const float *x = d->X + i * d->D;
        l += loom_lr_softmax(rows, d->C, x, d->D, d->y[i], p);
        r += loom_lr_predict(rows, d->C, x, d->D) == d->y[i];
    }
    *loss = l, *right = r;
}

/* ---- the sparse binary model (LIBSVM input) ------------------------- */

#define WROW 64                      /* floats per row of the dense weights */
#define LOOM_LR_DENSE_MAX ((int64_t)1 << 24) /* larger feature indices: the map */

/* The weights of the sparse binary model as "slots": slot s is float
 * s & mask of row s >> shift of the row allocation w, and the samples'
 * feature indices are slots.  Dense (the largest index <= LOOM_LR_DENSE_MAX):
 * slot f is feature f, 64 floats a row.  Map (a sparse key space such as
 * hashed feature ids): w holds the values of a loom_dmap keyed by feature
 * index, one float a row, and the samples' indices are rewritten to the
 * rows of their keys.  The bias is an allocation of its own, b, one float
 * whose ranks' changes are averaged (see loom_lr_binary_new()); the plain copies
 * (the serial twin's model, a rank's view for evaluation) keep it at
 * slot `bias`, after the features. */
struct weights {
    float *w, *b;
    loom_dmap *map;      /* NULL: dense */
    int shift;           /* log2 of the floats per row */
    int64_t nslots, bias;
    size_t *need, nneed; /* the rows this rank's evaluation reads */
    float *scale;        /* per slot: the largest training |value| (else 1) */
    int64_t *key;        /* map, with keys (the model saved): per slot the file index + 1 (0: none) */
};

struct sjob {
    const loom_libsvm *d;
    float *w, *b; /* the features' weights and the bias */
    int shift;
    int64_t mask, bias;
    float step, lambda;
    int plain;    /* the serial twin: w is plain memory */
    void (*tick)(int64_t n);
};

/* Slot s: at b + s where the weights are plain addresses (b not NULL),
 * else float s & mask of row s >> shift through loom_at. */
static inline float *wat(const struct sjob *j, float *b, int64_t s)
{
    return b ? b + s : (float *)loom_at(j->w, (size_t)(s >> j->shift)) + (s & j->mask);
}

/* One SGD step per sample of [lo, hi), in order: the serial twin's whole
 * epoch, or a thread's part of a round (loom_for_range). */
static void sgd_sparse(long lo, long hi, void *ctx)
{
    struct sjob *j = ctx;
    const loom_libsvm *d = j->d;
    /* the serial twin's memory, or Loom rows where loom_at is address
     * arithmetic for this part (one rank, or a round staged whole): one
     * lookup a part instead of one a feature; the bias's row stays put
     * for the part too */
    float *b = j->plain ? j->w : loom_at_base(j->w);
    float *bias = j->plain ? j->w + j->bias : loom_at(j->b, 0);
    for (long i = lo; i < hi; i++) {
        float z = *bias;
        for (int64_t k = d->ptr[i]; k < d->ptr[i + 1]; k++)
            z += *wat(j, b, d->idx[k]) * (float)d->val[k];
        float g = loom_lr_sigmoid(z) - (d->y[i] > 0);
        for (int64_t k = d->ptr[i]; k < d->ptr[i + 1]; k++) {
            float *wf = wat(j, b, d->idx[k]);
            *wf -= j->step * (g * (float)d->val[k] + j->lambda * *wf);
        }
        *bias -= j->step * g;
        if (!((i - lo + 1) & 4095)) /* the progress line, while an epoch runs long */
            j->tick(4096);
    }
    j->tick((hi - lo) & 4095);
}

/* Summed log loss and correct predictions of block d against the plain
 * weight vector w (bias at w[bias]). */
static void evaluate_sparse(const loom_libsvm *d, const float *w, int64_t bias, double *loss,
                            double *right)
{
    double l = 0, r = 0;
#pragma omp parallel for schedule(static) reduction(+ : l, r)
    for (int64_t i = 0; i < d->n; i++) {
        float z = w[bias];
        for (int64_t k = d->ptr[i]; k < d->ptr[i + 1]; k++)
            z += w[d->idx[k]] * (float)d->val[k];
        int y = d->y[i] > 0;
        float p = loom_lr_sigmoid(z);
        l -= log(fmax(y ? p : 1 - p, 1e-30));
        r += (p > 0.5f) == y;
    }
    *loss = l, *right = r;
}


/* Contract: lr_dist.h; the saved model is in the file's units again
 * (weight / scale). */
float *loom_lr_scales(loom_libsvm *d, int64_t F)
{
    float *s = calloc((size_t)F, sizeof *s);
    if (!s)
        loom_abort(1, "loom-lr: out of memory for %lld feature scales", (long long)F);
    for (int64_t k = 0; k < d->nnz; k++)
        s[d->idx[k]] = fmaxf(s[d->idx[k]], fabsf((float)d->val[k]));
    loom_allreduce(LOOM_IN_PLACE, s, (size_t)F, LOOM_FLOAT, LOOM_MAX);
    for (int64_t f = 0; f < F; f++)
        s[f] = s[f] > 0 ? s[f] : 1;
    return s;
}

/* Contract: lr_dist.h (this rank's values only). */
void loom_lr_rescale(loom_libsvm *d, const float *s)
{
    for (int64_t k = 0; k < d->nnz; k++)
        d->val[k] /= s[d->idx[k]];
}

/* Contract: lr_dist.h. */
double loom_lr_sumsq_dense(const loom_lr_dense *d)
{
    double s = 0;
    for (int64_t i = 0; i < d->n * d->D; i++)
        s += (double)d->X[i] * d->X[i];
    return s;
}

/* Contract: lr_dist.h: the bias's 1 counts once a sample. */
double loom_lr_sumsq_sparse(const loom_libsvm *d)
{
    double s = (double)d->n;
    for (int64_t k = 0; k < d->nnz; k++)
        s += d->val[k] * d->val[k];
    return s;
}

/* The data-parallel loop's options for an epoch (every model's). */
static loom_for_opts epoch_opts(loom_sync mode, long long every)
{
    return (loom_for_opts){.schedule = LOOM_STATIC, .local = 1, .sync = mode,
                           .sync_every = every, .repeated = 1, .accessor_reads = 1};
}

/* Contract: lr_dist.h. */
long long loom_lr_sync_every(const loom_lr_cfg *o, double p, int64_t n)
{
    if (o->sync_every > 0)
        return o->sync_every;
    if (o->average) {
        long long m = (long long)(n / (3 * (int64_t)loom_size()));
        return m > 100 ? 100 : m > 1 ? m : 1;
    }
    double unseen = (double)(loom_size() > 1 ? loom_size() - 1 : 1) * (o->staleness + 1) * p,
           m = unseen > 0 ? ceil(40 / unseen) : (double)n;
    return m < (double)n ? (long long)m : n > 1 ? (long long)n : 1;
}

/* The largest fraction of d's samples (all ranks) in which one of its F
 * features occurs.  Collective. */
static double busiest(const loom_libsvm *d, int64_t F)
{
    double *c = calloc((size_t)F, sizeof *c), top = 0;
    if (!c)
        loom_abort(1, "loom-lr: out of memory counting %lld features", (long long)F);
    for (int64_t k = 0; k < d->nnz; k++)
        c[d->idx[k]]++;
    loom_allreduce(LOOM_IN_PLACE, c, (size_t)F, LOOM_DOUBLE, LOOM_SUM);
    for (int64_t f = 0; f < F; f++)
        top = fmax(top, c[f]);
    free(c);
    return d->nfile ? top / (double)d->nfile : 0;
}

/* The options of a model's allocation (rows of row_size bytes, or 0 for
 * a dmap's values): summed or averaged float changes, bsp or ssp. */
static loom_alloc_opts weight_opts(const loom_lr_cfg *o, const char *name, size_t row_size)
{
    return (loom_alloc_opts){.name = name, .unit = row_size ? LOOM_UNIT_ROW : LOOM_UNIT_PAGE,
                             .row_size = row_size, .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT,
                             .coherence = o->staleness ? "ssp" : "bsp",
                             .staleness = o->staleness, .staleness_set = 1,
                             .average = o->average,
                             .momentum = o->average};
}

/* Dense weights for features 0..F-1, the bias's plain slot F (in w, that
 * float is never used).  Collective. */
static void dense_weights(const loom_lr_cfg *o, int64_t F, struct weights *ws)
{
    int64_t rows = (F + 1 + WROW - 1) / WROW;
    loom_alloc_opts ao = weight_opts(o, "w", WROW * sizeof(float));
    *ws = (struct weights){.shift = 6, .nslots = rows * WROW, .bias = F, .nneed = (size_t)rows};
    ws->w = loom_alloc((size_t)rows * WROW * sizeof(float), &ao);
    ws->need = malloc((size_t)rows * sizeof *ws->need);
    if (!ws->w || !ws->need)
        loom_abort(1, "loom-lr: cannot allocate %lld weights", (long long)F + 1);
    for (int64_t r = 0; r < rows; r++)
        ws->need[r] = (size_t)r;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The distinct feature indices of tr and te, sorted, into *keys; returns
 * how many. */
static size_t distinct(const loom_libsvm *tr, const loom_libsvm *te, int64_t **keys)
{
    size_t n = (size_t)(tr->nnz + te->nnz), m = 0;
    int64_t *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        loom_abort(1, "loom-lr: out of memory for %zu feature indices", n);
    memcpy(k, tr->idx, (size_t)tr->nnz * sizeof *k);
    memcpy(k + tr->nnz, te->idx, (size_t)te->nnz * sizeof *k);
    qsort(k, n, sizeof *k, cmp_i64);
    for (size_t i = 0; i < n; i++)
        if (!m || k[i] != k[m - 1])
            k[m++] = k[i];
    *keys = k;
    return m;
}

/* Map weights: a loom_dmap from feature index to one float, holding every
 * index of this rank's training and test rows, whose rows replace the
 * indices in tr and te; the bias's plain slot follows the map's rows.
 * Its capacity is the sum of the ranks' distinct indices, which bounds
 * the job's.
 * With keys (rank 0 saves the model) *keys gets the index of every slot.
 * Collective; returns the number of distinct features in the job. */
static int64_t map_weights(const loom_lr_cfg *o, loom_libsvm *tr, loom_libsvm *te,
                           struct weights *ws, int keys)
{
    int64_t *idx;
    size_t n = distinct(tr, te, &idx);
    int64_t cap = n ? (int64_t)n : 1;
    loom_allreduce(LOOM_IN_PLACE, &cap, 1, LOOM_INT64, LOOM_SUM);
    loom_alloc_opts ao = weight_opts(o, "w", 0);
    loom_dmap *m = loom_dmap_create((size_t)cap, sizeof(float), &ao);
    uint64_t *k = malloc((n ? n : 1) * sizeof *k);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows), nrows;
    if (!m || !k || !rows)
        loom_abort(1, "loom-lr: cannot make the map of %lld weights", (long long)cap);
    for (size_t i = 0; i < n; i++)
        k[i] = (uint64_t)idx[i];
    if (loom_dmap_rows(m, k, n, 1, rows))
        loom_abort(1, "loom-lr: out of memory placing %zu feature indices", n);
    *ws = (struct weights){.w = loom_dmap_values(m, &nrows), .map = m, .need = rows, .nneed = n};
    ws->bias = (int64_t)nrows;
    ws->nslots = (int64_t)nrows + 1;
    for (int part = 0; part < 2; part++) { /* feature index -> slot */
        loom_libsvm *d = part ? te : tr;
        for (int64_t j = 0; j < d->nnz; j++) {
            const int64_t *at = bsearch(&d->idx[j], idx, n, sizeof *idx, cmp_i64);
            d->idx[j] = (int64_t)rows[at - idx];
        }
    }
    if (keys) {
        ws->key = calloc(nrows + 1, sizeof *ws->key);
        if (!ws->key)
            loom_abort(1, "loom-lr: out of memory for %zu feature indices", nrows);
        for (size_t i = 0; i < n; i++)
            ws->key[rows[i]] = idx[i] + 1;
        loom_allreduce(LOOM_IN_PLACE, ws->key, nrows, LOOM_INT64, LOOM_MAX);
    }
    free(idx);
    free(k);
    loom_barrier(); /* every rank's keys are in: count them */
    int64_t features = (int64_t)loom_dmap_shard(m, NULL, 0);
    loom_allreduce(LOOM_IN_PLACE, &features, 1, LOOM_INT64, LOOM_SUM);
    return features;
}

/* plain = this rank's view of the weights it evaluates against. */
static void refresh(const struct weights *ws, float *plain)
{
    size_t row = (size_t)1 << ws->shift;
    loom_row_prefetch(ws->w, ws->need, ws->nneed);
    for (size_t i = 0; i < ws->nneed; i++)
        memcpy(plain + ws->need[i] * row, loom_row_get(ws->w, ws->need[i]), row * sizeof(float));
    plain[ws->bias] = *(const float *)loom_row_get(ws->b, 0);
}

/* ---- the sparse multinomial model (LIBSVM input, three classes or more) ---- */

#define CHUNK 256 /* feature rows a step gathers at a time */

/* Row f of the model is feature f's C weights (row F: the bias, a value
 * of 1 in every sample): a Loom row allocation, or the serial twin's plain
 * memory. */
struct mjob {
    const loom_libsvm *d;
    float *W;
    int64_t F;
    int C, G, plain; /* G: features a row */
    float step, lambda;
    void (*tick)(int64_t n);
};

/* Row f: by address where the weights are plain (base not NULL), else
 * through loom_at. */
static inline float *mrow(const struct mjob *j, float *base, int64_t f)
{
    return base ? base + f * j->C : (float *)loom_at(j->W, (size_t)(f / j->G)) + f % j->G * j->C;
}

/* z += the sample's features' rows times their values, CHUNK rows at a
 * time; with g, the step instead (kernels/lr.c). */
static void sample_rows(const struct mjob *j, float *base, long i, float *z, const float *g)
{
    const loom_libsvm *d = j->d;
    float *rows[CHUNK];
    for (int64_t k = d->ptr[i]; k < d->ptr[i + 1]; k += CHUNK) {
        int64_t m = d->ptr[i + 1] - k < CHUNK ? d->ptr[i + 1] - k : CHUNK;
        for (int64_t t = 0; t < m; t++)
            rows[t] = mrow(j, base, d->idx[k + t]);
        if (g)
            loom_lr_sparse_step(rows, d->val + k, m, j->C, g, j->step, j->lambda);
        else
            loom_lr_sparse_logits(z, rows, d->val + k, m, j->C);
    }
}

/* One SGD step per sample of [lo, hi), in order: the serial twin's whole
 * epoch, or a thread's part of a round (loom_for_range); the same body. */
static void sgd_multi(long lo, long hi, void *ctx)
{
    struct mjob *j = ctx;
    float *base = j->plain ? j->W : loom_at_base(j->W);
    float z[LOOM_LR_MAXC];
    static const double one = 1;
    for (long i = lo; i < hi; i++) {
        float *bias = mrow(j, base, j->F);
        memcpy(z, bias, (size_t)j->C * sizeof *z);
        sample_rows(j, base, i, z, NULL);
        int y = (int)j->d->y[i];
        loom_lr_softmax_z(z, j->C, y);
        z[y] -= 1; /* the gradient's class factors, p - onehot(y) */
        sample_rows(j, base, i, NULL, z);
        loom_lr_sparse_step(&bias, &one, 1, j->C, z, j->step, j->lambda);
        if (!((i - lo + 1) & 4095))
            j->tick(4096);
    }
    j->tick((hi - lo) & 4095);
}

/* Summed loss and correct predictions of block d against the plain model
 * W (F + 1 rows of C floats, the bias last). */
static void evaluate_multi(const loom_libsvm *d, const float *W, int64_t F, int C, double *loss,
                           double *right)
{
    double l = 0, r = 0;
#pragma omp parallel for schedule(static) reduction(+ : l, r)
    for (int64_t i = 0; i < d->n; i++) {
        float z[LOOM_LR_MAXC];
        memcpy(z, W + F * C, (size_t)C * sizeof *z);
        loom_lr_sparse_logits_plain(z, W, d->idx + d->ptr[i], d->val + d->ptr[i],
                                    d->ptr[i + 1] - d->ptr[i], C);
        int best = 0;
        for (int c = 1; c < C; c++)
            best = z[c] > z[best] ? c : best;
        r += best == (int)d->y[i];
        l += loom_lr_softmax_z(z, C, (int)d->y[i]);
    }
    *loss = l, *right = r;
}

/* The rows this rank's evaluation reads: the features of its training and
 * test samples, and the bias; into *need, returns how many. */
static size_t used_rows(const loom_libsvm *tr, const loom_libsvm *te, int64_t F, int G,
                        size_t **need)
{
    int64_t rows = F / G + 1;
    uint8_t *seen = calloc((size_t)rows, 1);
    size_t n = 0;
    if (!seen)
        loom_abort(1, "loom-lr: out of memory for %lld features", (long long)F);
    for (int64_t k = 0; k < tr->nnz; k++)
        seen[tr->idx[k] / G] = 1;
    for (int64_t k = 0; k < te->nnz; k++)
        seen[te->idx[k] / G] = 1;
    seen[F / G] = 1;
    for (int64_t r = 0; r < rows; r++)
        n += seen[r];
    *need = malloc(n * sizeof **need);
    if (!*need)
        loom_abort(1, "loom-lr: out of memory for %zu feature rows", n);
    n = 0;
    for (int64_t r = 0; r < rows; r++)
        if (seen[r])
            (*need)[n++] = (size_t)r;
    free(seen);
    return n;
}

/* plain's rows need[0..n) = this rank's view of the model's. */
static void refresh_multi(float *W, const size_t *need, size_t n, int C, float *plain)
{
    loom_row_prefetch(W, need, n);
    for (size_t i = 0; i < n; i++)
        memcpy(plain + need[i] * (size_t)C, loom_row_get(W, need[i]), (size_t)C * sizeof(float));
}

/* Rank 0: the model file as the dense model's (docs/loom-lr.md): line c =
 * class c, the F weights in the file's units, then the bias. */
static void save_multi(const char *path, const float *W, int64_t F, int C, const float *scale)
{
    FILE *f = fopen(path, "w");
    for (int c = 0; f && c < C; c++)
        for (int64_t x = 0; x <= F; x++)
            fprintf(f, "%.7g%c", W[x * C + c] / (x < F ? scale[x] : 1), x < F ? ' ' : '\n');
    if (!f || fclose(f))
        loom_abort(1, "loom-lr: %s: %s", path, strerror(errno));
}

/* The sparse multinomial model's part of train(). */

/* ---- the classes of LIBSVM input ------------------------------------ */

/* Contract: lr_dist.h. */
int loom_lr_classes(const char *path, const loom_libsvm *d, double *label,
                    void (*agree)(int failed, const char *msg))
{
    double r[3] = {INFINITY, -INFINITY, 0}; /* smallest, largest, non-integers */
    for (int64_t i = 0; i < d->n; i++)
        r[0] = fmin(r[0], d->y[i]), r[1] = fmax(r[1], d->y[i]), r[2] += d->y[i] != floor(d->y[i]);
    loom_allreduce(LOOM_IN_PLACE, &r[0], 1, LOOM_DOUBLE, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, &r[1], 1, LOOM_DOUBLE, LOOM_MAX);
    loom_allreduce(LOOM_IN_PLACE, &r[2], 1, LOOM_DOUBLE, LOOM_SUM);
    char msg[1200];
    int span = d->nfile && !r[2] && r[1] - r[0] < 1 << 20 ? (int)(r[1] - r[0]) + 1 : 0;
    snprintf(msg, sizeof msg, "loom-lr: %s %s", path,
             !d->nfile ? "has no samples"
             : !d->cols ? "has no features (every line is a label alone)"
             : r[2] ? "has labels that are not integers: a label is a class id"
                    : "has labels spanning more than 2^20 values: a label is a class id");
    agree(!span || !d->cols, msg);
    int32_t *seen = calloc((size_t)span, sizeof *seen);
    if (!seen)
        loom_abort(1, "loom-lr: out of memory");
    for (int64_t i = 0; i < d->n; i++)
        seen[(int64_t)(d->y[i] - r[0])] = 1;
    loom_allreduce(LOOM_IN_PLACE, seen, (size_t)span, LOOM_INT32, LOOM_MAX);
    int C = 0;
    for (int k = 0; k < span; k++)
        if (seen[k] && C++ < LOOM_LR_MAXC)
            label[C - 1] = r[0] + k;
    free(seen);
    snprintf(msg, sizeof msg, "loom-lr: %s has %s", path,
             C < 2 ? "one class only (every label is the same): nothing to learn"
                   : "more classes than 1024");
    agree(C < 2 || C > LOOM_LR_MAXC, msg);
    return C;
}

/* Contract: lr_dist.h. */
void loom_lr_relabel(const char *path, loom_libsvm *d, const double *label, int C,
                     void (*agree)(int failed, const char *msg))
{
    int64_t bad = -1;
    for (int64_t i = 0; i < d->n && bad < 0; i++) {
        int lo = 0, hi = C - 1; /* label[] is sorted */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (label[mid] < d->y[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (label[lo] == d->y[i])
            d->y[i] = lo;
        else
            bad = i;
    }
    char msg[1200];
    snprintf(msg, sizeof msg, "loom-lr: %s has label %g, which is not a class of the training "
             "data", path, bad >= 0 ? d->y[bad] : 0);
    agree(bad >= 0, msg);
}

/* ---- the models: what a loom_lr_model holds, and the three kinds ----- */

enum { DENSE, BINARY, MULTI };

struct loom_lr_impl {
    int kind;
    loom_lr_cfg cfg;
    loom_for_opts fo;
    float *plain; /* this rank's view of the model (the serial twin's model) */
    /* the multinomial model on dense rows */
    struct job dj;
    float *W; /* its Loom rows (the sparse multinomial model's too) */
    const loom_lr_dense *dtr, *dte;
    /* the sparse binary model */
    struct sjob bj;
    struct weights ws;
    loom_libsvm tr, te; /* the model's own (the indices are slots) */
    int64_t F;          /* features (both sparse models) */
    /* the sparse multinomial model */
    struct mjob mj;
    size_t *need, nneed; /* the rows this rank's scoring reads */
    int64_t nrows;
    const loom_libsvm *mtr, *mte;
    const float *scale; /* the file's units: weight / scale */
};

/* Rank 0: the model file, in the file's units (docs/loom-lr.md).  Dense:
 * one weight per line for features 1..F, then the bias; map: "INDEX
 * WEIGHT" per feature in index order (the file's numbering), then "bias
 * WEIGHT".  plain holds the weights this rank evaluated against (all of
 * them in the serial twin); the map's other rows are read here. */
static void save_sparse(const struct loom_lr_impl *x, const char *path, int zero_based)
{
    const struct weights *ws = &x->ws;
    float *plain = x->plain;
    int64_t F = x->F;
    FILE *f = fopen(path, "w");
    if (ws->map) {
        size_t n = 0, *row = malloc((size_t)ws->nslots * sizeof *row);
        int64_t (*kv)[2] = malloc((size_t)ws->nslots * sizeof *kv);
        if (!row || !kv)
            loom_abort(1, "loom-lr: out of memory saving the model");
        for (int64_t s = 0; s < ws->nslots; s++)
            if (ws->key[s])
                kv[n][0] = ws->key[s] - 1, kv[n][1] = s, row[n++] = (size_t)s;
        if (!x->cfg.serial) {
            loom_row_prefetch(ws->w, row, n);
            for (size_t i = 0; i < n; i++)
                plain[row[i]] = *(const float *)loom_row_get(ws->w, row[i]);
        }
        qsort(kv, n, sizeof *kv, cmp_i64); /* by index: the first of the pair */
        for (size_t i = 0; f && i < n; i++)
            fprintf(f, "%lld %.7g\n", (long long)kv[i][0] + !zero_based,
                    plain[kv[i][1]] / ws->scale[kv[i][1]]);
        if (f)
            fprintf(f, "bias %.7g\n", plain[ws->bias]);
        free(row);
        free(kv);
    } else {
        for (int64_t s = 0; f && s <= F; s++)
            fprintf(f, "%.7g\n", plain[s] / ws->scale[s]);
    }
    if (!f || fclose(f))
        loom_abort(1, "loom-lr: %s: %s", path, strerror(errno));
}


static void no_tick(int64_t n) { (void)n; }

/* The model record: cfg copied (tick defaulted), the epoch's loop options. */
static loom_lr_model *model_new(int kind, const loom_lr_cfg *cfg, long long every)
{
    loom_lr_model *m = calloc(1, sizeof *m);
    struct loom_lr_impl *x = calloc(1, sizeof *x);
    if (!m || !x)
        loom_abort(1, "loom-lr: out of memory");
    x->kind = kind;
    x->cfg = *cfg;
    x->cfg.tick = cfg->tick ? cfg->tick : no_tick;
    x->fo = epoch_opts(cfg->sync, every);
    m->every = every;
    m->impl = x;
    return m;
}

/* Contract: lr_dist.h.  The model: C rows of D floats, summed (or
 * averaged) when workers' changes meet; the serial twin's own plain copy
 * beside it. */
loom_lr_model *loom_lr_dense_new(const loom_lr_dense *tr, const loom_lr_dense *te,
                                 const loom_lr_cfg *cfg)
{
    int R = loom_size(), C = tr->C, D = tr->D;
    if (C > LOOM_LR_MAXC)
        loom_abort(1, "loom-lr: %d classes (at most %d)", C, LOOM_LR_MAXC);
    loom_alloc_opts wo = weight_opts(cfg, "W", (size_t)D * sizeof(float));
    float *W = loom_alloc((size_t)C * D * sizeof(float), &wo);
    float *Wserial = cfg->serial ? calloc((size_t)C * D, sizeof(float)) : NULL;
    if (!W || (cfg->serial && !Wserial))
        loom_abort(1, "loom-lr: cannot allocate the model (%d x %d floats)", C, D);
    loom_lr_model *m = model_new(DENSE, cfg, loom_lr_sync_every(cfg, 1, (tr->total + R - 1) / R));
    struct loom_lr_impl *x = m->impl;
    x->dj = (struct job){tr, W, 0, cfg->lambda, x->cfg.tick};
    x->W = W, x->plain = Wserial, x->dtr = tr, x->dte = te;
    m->ntrain = tr->total, m->ntest = te->total, m->nlocal = tr->n, m->C = C;
    return m;
}

/* This rank's view of the dense model's C rows of D floats. */
static void dense_rows(const struct loom_lr_impl *x, float **rows)
{
    for (int c = 0; c < x->dtr->C; c++)
        rows[c] = x->cfg.serial ? x->plain + (size_t)c * x->dtr->D
                                : (float *)loom_row_get(x->W, (size_t)c);
}

/* Contract: lr_dist.h.  The bias: every sample updates it, so at an
 * interval long enough to pay, the ranks' summed changes overshoot (each
 * rank's M steps on it land on top of the others'); their mean cannot.
 * The features stay summed, and the interval follows from the busiest
 * one's share of the samples (loom_lr_sync_every): on data without
 * frequent features it grows with the features' sparsity. */
loom_lr_model *loom_lr_binary_new(loom_libsvm *trp, loom_libsvm *tep, int64_t F, int keys,
                                  const loom_lr_cfg *cfg)
{
    int R = loom_size();
    loom_libsvm tr = *trp, te = *tep;
    struct weights ws;
    int64_t features = F;
    if (F > LOOM_LR_DENSE_MAX)
        features = map_weights(cfg, &tr, &te, &ws, keys);
    else
        dense_weights(cfg, F, &ws);
    loom_alloc_opts bo = weight_opts(cfg, "bias", sizeof(float));
    bo.average = 1;
    if (!(ws.b = loom_alloc(sizeof(float), &bo)))
        loom_abort(1, "loom-lr: cannot allocate the bias");
    /* under bsp and ssp each thread has a copy of its own, and a rank's
     * threads' changes to the bias add up before the ranks' mean: there
     * the interval stays that of dense data (p = 1), as on one rank */
    int own = cfg->sync != LOOM_HYBRID && omp_get_max_threads() > 1;
    double busy_share = own || R == 1 ? 1 : busiest(&tr, ws.nslots);
    long long every = loom_lr_sync_every(cfg, busy_share, (tr.nfile + R - 1) / R);
    ws.scale = loom_lr_scales(&tr, ws.nslots);
    ws.scale[ws.bias] = 1;
    loom_lr_rescale(&tr, ws.scale);
    loom_lr_rescale(&te, ws.scale);
    float *plain = calloc((size_t)ws.nslots, sizeof(float));
    if (!plain)
        loom_abort(1, "loom-lr: cannot allocate %lld weights", (long long)ws.nslots);
    loom_lr_model *m = model_new(BINARY, cfg, every);
    struct loom_lr_impl *x = m->impl;
    x->tr = tr, x->te = te, x->ws = ws, x->plain = plain, x->F = F;
    /* the serial twin runs the same body over plain memory, in order */
    x->bj = (struct sjob){.d = &x->tr, .w = cfg->serial ? plain : ws.w, .b = ws.b,
                          .shift = ws.shift, .mask = ((int64_t)1 << ws.shift) - 1,
                          .bias = ws.bias, .lambda = cfg->lambda, .plain = cfg->serial,
                          .tick = x->cfg.tick};
    m->ntrain = tr.nfile, m->ntest = te.nfile, m->nlocal = tr.n, m->C = 2;
    m->features = features, m->map = ws.map != NULL, m->own = own, m->busy_share = busy_share;
    m->sumsq = loom_lr_sumsq_sparse(&x->tr);
    return m;
}

/* Contract: lr_dist.h.  G features a row, about 640 bytes: rows of one
 * feature's C floats (80 bytes for 20 classes) made a round's merge cost
 * ~6x the arithmetic in per-row records (docs/loom-lr.md). */
loom_lr_model *loom_lr_multi_new(const loom_libsvm *tr, const loom_libsvm *te, int64_t F, int C,
                                 const float *scale, const loom_lr_cfg *cfg)
{
    int R = loom_size();
    int G = C < 160 ? 160 / C : 1;
    int64_t nrows = F / G + 1;
    loom_alloc_opts wo = weight_opts(cfg, "W", (size_t)G * C * sizeof(float));
    size_t cells = (size_t)nrows * G * (size_t)C;
    float *W = cfg->serial ? NULL : loom_alloc(cells * sizeof(float), &wo);
    float *plain = calloc(cells, sizeof(float));
    if ((!cfg->serial && !W) || !plain)
        loom_abort(1, "loom-lr: cannot allocate the model (%lld x %d floats)", (long long)F + 1, C);
    size_t *need, nneed = used_rows(tr, te, F, G, &need);
    /* averaging, one sync point an epoch: a round's sparse samples reach
     * most of the rows, so each sync point moves about the whole model
     * (docs/loom-lr.md, "The sparse multinomial model") */
    int64_t n = (tr->nfile + R - 1) / R;
    long long every = cfg->sync_every <= 0 && cfg->average ? (n > 1 ? n : 1)
                                                           : loom_lr_sync_every(cfg, 1, n);
    loom_lr_model *m = model_new(MULTI, cfg, every);
    struct loom_lr_impl *x = m->impl;
    x->mj = (struct mjob){.d = tr, .W = cfg->serial ? plain : W, .F = F, .C = C, .G = G,
                          .plain = cfg->serial, .lambda = cfg->lambda, .tick = x->cfg.tick};
    x->W = W, x->plain = plain, x->need = need, x->nneed = nneed, x->nrows = nrows;
    x->mtr = tr, x->mte = te, x->scale = scale, x->F = F;
    m->ntrain = tr->nfile, m->ntest = te->nfile, m->nlocal = tr->n, m->C = C;
    return m;
}

/* Contract: lr_dist.h.  The dense model's Loom loop takes a sample an
 * iteration (loom_for), the sparse ones a range (loom_for_range: one
 * loom_at_base a part); the serial twins the same bodies in order. */
void loom_lr_epoch(loom_lr_model *m, float step)
{
    struct loom_lr_impl *x = m->impl;
    int rc = 0;
    if (x->kind == DENSE) {
        x->dj.step = step;
        if (x->cfg.serial)
            loom_lr_softmax_epoch(x->dtr->X, x->dtr->y, x->dtr->n, x->plain, x->dtr->C,
                                  x->dtr->D, step, x->dj.lambda);
        else
            rc = loom_for(0, x->dtr->n, sgd, &x->dj, &x->fo);
    } else if (x->kind == BINARY) {
        x->bj.step = step;
        if (x->cfg.serial)
            sgd_sparse(0, (long)x->tr.n, &x->bj);
        else
            rc = loom_for_range(0, x->tr.n, sgd_sparse, &x->bj, &x->fo);
    } else {
        x->mj.step = step;
        if (x->cfg.serial)
            sgd_multi(0, (long)x->mtr->n, &x->mj);
        else
            rc = loom_for_range(0, x->mtr->n, sgd_multi, &x->mj, &x->fo);
    }
    if (rc)
        loom_abort(1, "loom-lr: the SGD loop failed");
}

/* Contract: lr_dist.h.  The sparse models copy this rank's rows into the
 * plain view first (loom_row_prefetch, loom_row_get). */
void loom_lr_score(loom_lr_model *m, double s[2])
{
    struct loom_lr_impl *x = m->impl;
    double unused;
    if (x->kind == DENSE) {
        float *rows[LOOM_LR_MAXC];
        dense_rows(x, rows);
        evaluate(x->dtr, rows, &s[0], &unused);
        evaluate(x->dte, rows, &unused, &s[1]);
    } else if (x->kind == BINARY) {
        if (!x->cfg.serial)
            refresh(&x->ws, x->plain);
        evaluate_sparse(&x->tr, x->plain, x->ws.bias, &s[0], &unused);
        evaluate_sparse(&x->te, x->plain, x->ws.bias, &unused, &s[1]);
    } else {
        if (!x->cfg.serial)
            refresh_multi(x->W, x->need, x->nneed, x->mj.G * x->mj.C, x->plain);
        evaluate_multi(x->mtr, x->plain, x->F, x->mj.C, &s[0], &unused);
        evaluate_multi(x->mte, x->plain, x->F, x->mj.C, &unused, &s[1]);
    }
}

/* Contract: lr_dist.h.  Rank 0 reads the rows it needs (every row of the
 * sparse multinomial model; the map's keyed rows); the other ranks' views
 * are not needed. */
void loom_lr_save(loom_lr_model *m, const char *path, const float *dense_scale, int zero_based)
{
    struct loom_lr_impl *x = m->impl;
    if (loom_rank() != 0)
        return;
    if (x->kind == DENSE) { /* the model after the last epoch (its checkpoint taken) */
        float *rows[LOOM_LR_MAXC];
        int C = x->dtr->C, D = x->dtr->D;
        dense_rows(x, rows);
        FILE *f = fopen(path, "w");
        for (int c = 0; f && c < C; c++)
            for (int k = 0; k < D; k++)
                fprintf(f, "%.7g%c", rows[c][k] * (k + 1 < D ? 255 / dense_scale[k] : 1),
                        k + 1 < D ? ' ' : '\n');
        if (!f || fclose(f))
            loom_abort(1, "loom-lr: %s: %s", path, strerror(errno));
    } else if (x->kind == BINARY) {
        save_sparse(x, path, zero_based);
    } else {
        if (!x->cfg.serial) {
            size_t *all = malloc((size_t)x->nrows * sizeof *all);
            if (!all)
                loom_abort(1, "loom-lr: out of memory saving the model");
            for (int64_t r = 0; r < x->nrows; r++)
                all[r] = (size_t)r;
            refresh_multi(x->W, all, (size_t)x->nrows, x->mj.G * x->mj.C, x->plain);
            free(all);
        }
        save_multi(path, x->plain, x->F, x->mj.C, x->scale);
    }
}

/* Contract: lr_dist.h.  Collective (loom_free, loom_dmap_free). */
void loom_lr_model_free(loom_lr_model *m)
{
    if (!m)
        return;
    struct loom_lr_impl *x = m->impl;
    free(x->plain);
    if (x->kind == BINARY) {
        free(x->ws.need);
        free(x->ws.scale);
        free(x->ws.key);
        loom_libsvm_free(&x->tr);
        loom_libsvm_free(&x->te);
        if (x->ws.map)
            loom_dmap_free(x->ws.map);
        else
            loom_free(x->ws.w);
        loom_free(x->ws.b);
    } else {
        free(x->need);
        if (x->W)
            loom_free(x->W);
    }
    free(x);
    free(m);
}
