/* loom-lr.c — multinomial logistic regression by data-parallel SGD
 * (STRADS-AP SyncFor, seed 000 ch. 7) with bsp, ssp or hybrid
 * consistency.
 *
 * Layout over R ranks x T threads:
 *   - each rank keeps one block of the training and test samples;
 *   - the model W (C rows of D floats: one per class, the last feature a
 *     constant 1 for the bias) is one row allocation with additive merge,
 *     "bsp" (staleness 0) or "ssp" (--staleness s > 0);
 *   - an epoch is loom_for(static, .local) over the rank's samples with
 *     .sync = hybrid (threads share the rank's copy, Hogwild; ranks meet
 *     at sync points), bsp (private copies, summed, barrier) or ssp
 *     (private copies, a clock: reads may lag s clocks), a sync point
 *     every --sync-every samples of each rank, where the ranks' changes
 *     are averaged with block momentum (--merge avg, the multinomial
 *     model's default) or add up (--merge sum, the sparse binary model's).
 * After an epoch, every rank evaluates its blocks against its view of W
 * (loom_row_get) and the sums meet in one loom_allreduce; then a
 * loom_clock, so LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs and a
 * restarted job (loomrun --restart) resumes after the last one (W comes
 * back; the step and every sample's order follow from the epoch).
 *
 *   loom-lr [--fashion-mnist DIR | --train-images F --train-labels F
 *            --test-images F --test-labels F] [--epochs N] [--step G]
 *           [--decay D] [--lambda L] [--sync hybrid|bsp|ssp]
 *           [--staleness S] [--sync-every M] [--merge sum|avg] [--log FILE.csv]
 *           [--model FILE] [--serial]
 * docs/loom-lr.md has the flags, formats and figures. */
#include <loom.h>

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../data/idx.h"
#include "../data/libsvm.h"
#include "../kernels/lr.h"
#include "common/flags.h"
#include "common/report.h"

#define FMNIST "/usr/share/datasets/fashion-mnist"

struct opts {
    const char *img[2], *lab[2], *svm[2], *log, *model, *sync, *merge;
    int epochs, staleness, serial, zero_based;
    long long sync_every;
    double step, decay, lambda, tol;
};

/* One block of samples: n rows of D floats (features in [0, 1], then 1). */
struct data {
    float *X;
    int32_t *y;
    int64_t n, first, total;
    int D, C;
    int present; /* distinct labels in the file */
};

struct job {
    const struct data *d;
    float *W;
    float step, lambda;
};


static void sgd(long i, void *ctx)
{
    struct job *j = ctx;
    const struct data *d = j->d;
    float *rows[LOOM_LR_MAXC], p[LOOM_LR_MAXC];
    for (int c = 0; c < d->C; c++)
        rows[c] = loom_at(j->W, (size_t)c);
    const float *x = d->X + (int64_t)i * d->D;
    loom_lr_softmax(rows, d->C, x, d->D, d->y[i], p);
    loom_lr_softmax_step(rows, d->C, x, d->D, d->y[i], p, j->step, j->lambda);
    loom_report_tick(1);
}

/* Fills o from argv; returns 0, 1 after --help/--version, -1 after saying
 * what is wrong (rank 0). */
static int parse(int argc, char **argv, struct opts *o)
{
    static char paths[4][4096];
    *o = (struct opts){.epochs = -1, .step = NAN, .decay = NAN, .lambda = 1e-5, .tol = 1e-4,
                       .sync = "hybrid", .sync_every = -1};
    const char *dir = NULL;
    const loom_flag flags[] = {
        {"fashion-mnist", LOOM_FLAG_STR, &dir, "DIR", 0, 0,
         "the four IDX files of DIR (default\n" FMNIST ")"},
        {"train-images", LOOM_FLAG_STR, &o->img[0], "FILE", 0, 0, "IDX training images (bytes)"},
        {"train-labels", LOOM_FLAG_STR, &o->lab[0], "FILE", 0, 0, "IDX training labels"},
        {"test-images", LOOM_FLAG_STR, &o->img[1], "FILE", 0, 0, "IDX test images"},
        {"test-labels", LOOM_FLAG_STR, &o->lab[1], "FILE", 0, 0, "IDX test labels"},
        {"train", LOOM_FLAG_STR, &o->svm[0], "FILE", 0, 0,
         "LIBSVM training file: the sparse binary model\n(label > 0: class 1); indices up to 2^63 - 1\n(past 2^24 the weights go to a distributed map)"},
        {"test", LOOM_FLAG_STR, &o->svm[1], "FILE", 0, 0, "LIBSVM test file"},
        {"zero-based", LOOM_FLAG_SET, &o->zero_based, NULL, 0, 0,
         "the LIBSVM files' indices start at 0 (as\nscikit-learn's dump_svmlight_file writes)"},
        {"epochs", LOOM_FLAG_INT, &o->epochs, "N", 1, HUGE_VAL,
         "passes over the training samples at most\n(default 100; --tol stops sooner)"},
        {"step", LOOM_FLAG_NUM, &o->step, "G", 0, 0,
         "SGD step size; epoch e uses G * D^(e-1)\n(default: 3.3 / the samples' mean squared\n"
         "length, features scaled, 1 for the bias)"},
        {"decay", LOOM_FLAG_NUM, &o->decay, "D", 0, 0,
         "step decay per epoch, 0 < D <= 1 (default: the\nstep halves every 60 000 samples, at most\n"
         "once an epoch)"},
        {"lambda", LOOM_FLAG_NUM, &o->lambda, "L", 0, HUGE_VAL,
         "L2 regularization (default 1e-5)"},
        {"tol", LOOM_FLAG_NUM, &o->tol, "T", 0, HUGE_VAL,
         "stop after the epoch whose training loss fell by\nless than T relatively "
         "(default 1e-4; 0: run\nall --epochs)"},
        {"sync", LOOM_FLAG_STR, &o->sync, "MODE", 0, 0,
         "hybrid (default), bsp or ssp: how workers'\nupdates meet"},
        {"staleness", LOOM_FLAG_INT, &o->staleness, "S", 0, 1000,
         "clocks a read may lag (ssp model; default 0 =\nbsp)"},
        {"sync-every", LOOM_FLAG_LONG, &o->sync_every, "M", 1, HUGE_VAL,
         "samples of each rank between sync points\n(default, --merge avg: 100, fewer when a rank's\n"
         "samples / (3 x ranks) is less, so that an epoch\nhas 3 x ranks sync points; --merge sum:\n"
         "40 / ((ranks - 1)(staleness + 1) p), rounded up:\n~40 unseen updates of a weight; p = 1, or in the\n"
         "sparse binary model the busiest feature's share\nof the samples)"},
        {"merge", LOOM_FLAG_STR, &o->merge, "HOW", 0, 0,
         "avg or sum: at a sync point each weight becomes\nthe mean of the ranks' versions plus block\n"
         "momentum (default for images and several\nclasses), or the ranks' changes add up (default\n"
         "for the sparse binary model)"},
        {"log", LOOM_FLAG_STR, &o->log, "FILE.csv", 0, 0,
         "CSV: iter,samples,seconds,train_logloss,\ntest_accuracy"},
        {"model", LOOM_FLAG_STR, &o->model, "FILE", 0, 0,
         "save the model (format in docs/loom-lr.md)"},
        {"serial", LOOM_FLAG_SET, &o->serial, NULL, 0, 0,
         "the serial twin (one rank): the plain loop, in\nfile order"},
        {0}};
    const loom_cli cli = {
        .app = "loom-lr",
        .usage = "loom-lr [--fashion-mnist DIR] [OPTION]...\n"
                 "loom-lr --train-images F --train-labels F --test-images F --test-labels F ...\n"
                 "loom-lr --train F.svm --test F.svm [OPTION]...",
        .about = "Logistic regression by data-parallel SGD: multinomial on IDX images;\n"
                 "on LIBSVM files binary for two classes, sparse multinomial for more.\n"
                 "Runs on the ranks loomrun starts.",
        .flags = flags,
        .more = "Threads: OMP_NUM_THREADS.  See docs/loom-lr.md."};
    int rc = loom_flags_parse(&cli, argc, argv, 1);
    if (rc)
        return rc;
    /* --step and --decay follow from the data when not given (schedule());
     * every format stops on --tol */
    o->epochs = o->epochs > 0 ? o->epochs : 100;
    if (!o->img[0] && !o->lab[0] && !o->img[1] && !o->lab[1] && !o->svm[0] && !o->svm[1]) {
        const char *names[4] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
        for (int k = 0; k < 4; k++)
            snprintf(paths[k], sizeof paths[k], "%s/%s", dir ? dir : FMNIST, names[k]);
        o->img[0] = paths[0], o->lab[0] = paths[1], o->img[1] = paths[2], o->lab[1] = paths[3];
    }
    const char *bad = (o->svm[0] || o->svm[1]) && (!o->svm[0] || !o->svm[1] || o->img[0] ||
                                                   o->lab[0] || o->img[1] || o->lab[1])
                          ? "the sparse binary model takes --train and --test (LIBSVM) only"
                      : o->zero_based && !o->svm[0] ? "--zero-based goes with --train and --test"
                      : !o->svm[0] && (!o->img[0] || !o->lab[0] || !o->img[1] || !o->lab[1])
                          ? "give all four of --train-images, --train-labels, --test-images, "
                            "--test-labels (or --fashion-mnist DIR)"
                      : !isnan(o->step) && !(o->step > 0) ? "--step must be > 0"
                      : !isnan(o->decay) && !(o->decay > 0 && o->decay <= 1)
                          ? "--decay must be in (0, 1]"
                      : strcmp(o->sync, "hybrid") && strcmp(o->sync, "bsp") && strcmp(o->sync, "ssp")
                          ? "--sync must be hybrid, bsp or ssp"
                      : o->merge && strcmp(o->merge, "sum") && strcmp(o->merge, "avg")
                          ? "--merge must be sum or avg"
                          : NULL;
    return bad ? loom_flags_complain("loom-lr", bad) : 0;
}

/* Loads one images/labels pair and keeps this rank's block (rank `me` of
 * R), each pixel divided by its largest byte in the training images (1
 * when always 0), so that every feature reaches [0, 1] as LIBSVM input's
 * do: training images (*scale NULL) set *scale (the file's pixels, on
 * every rank alike), test images use it (or 255 where their size
 * differs: the caller refuses them).  Collective: a bad file ends the job
 * with one message. */
static void load(const char *img, const char *lab, int me, int R, struct data *d, float **scale,
                 int64_t *nscale)
{
    char err[600] = "", msg[700];
    loom_idx xi, yi;
    int rc = loom_idx_load(img, &xi, err, sizeof err);
    if (!rc && (rc = loom_idx_load(lab, &yi, err, sizeof err)))
        loom_idx_free(&xi);
    if (!rc && (xi.rank < 2 || yi.rank != 1 || yi.dim[0] != xi.dim[0])) {
        snprintf(err, sizeof err, "%s and %s: expected N images and N labels (got %lld and %lld)",
                 img, lab, (long long)xi.dim[0], (long long)yi.dim[0]);
        rc = LOOM_ERR_FORMAT;
    } else if (!rc && (!xi.dim[0] || xi.n == 0)) {
        snprintf(err, sizeof err, "%s has no images (or images of no pixels)", img);
        rc = LOOM_ERR_FORMAT;
    }
    int C = 0, present = 0;
    uint8_t seen[256] = {0};
    for (int64_t i = 0; !rc && i < yi.n; i++) {
        C = yi.data[i] + 1 > C ? yi.data[i] + 1 : C;
        present += !seen[yi.data[i]];
        seen[yi.data[i]] = 1;
    }
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
    int64_t N = xi.dim[0], F = xi.n / N;
    d->first = N * me / R;
    d->n = N * (me + 1) / R - d->first;
    d->total = N;
    d->D = (int)F + 1;
    d->C = C;
    d->present = present;
    d->X = malloc((size_t)(d->n ? d->n : 1) * (size_t)d->D * sizeof *d->X);
    d->y = malloc((size_t)(d->n ? d->n : 1) * sizeof *d->y);
    float *inv = malloc((size_t)F * sizeof *inv);
    if (!d->X || !d->y || !inv)
        loom_abort(1, "loom-lr: out of memory for %lld samples", (long long)d->n);
    if (!*scale) { /* training: the largest byte of each pixel over the whole file */
        uint8_t *top = calloc((size_t)F, 1);
        if (!top || !(*scale = malloc((size_t)F * sizeof **scale)))
            loom_abort(1, "loom-lr: out of memory for %lld pixels", (long long)F);
        for (int64_t i = 0; i < N; i++)
            for (int64_t f = 0; f < F; f++)
                top[f] = xi.data[i * F + f] > top[f] ? xi.data[i * F + f] : top[f];
        for (int64_t f = 0; f < F; f++)
            (*scale)[f] = top[f] ? top[f] : 1;
        *nscale = F;
        free(top);
    }
    for (int64_t f = 0; f < F; f++)
        inv[f] = 1.0f / (*nscale == F ? (*scale)[f] : 255);
    for (int64_t i = 0; i < d->n; i++) {
        const uint8_t *src = xi.data + (d->first + i) * F;
        float *x = d->X + i * d->D;
        for (int64_t f = 0; f < F; f++)
            x[f] = src[f] * inv[f];
        x[F] = 1;
        d->y[i] = yi.data[d->first + i];
    }
    free(inv);
    loom_idx_free(&xi);
    loom_idx_free(&yi);
}

/* Summed loss and correct predictions of block d against W's rows. */
static void evaluate(const struct data *d, float *const *rows, double *loss, double *right)
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
#define DENSE_MAX ((int64_t)1 << 24) /* larger feature indices: the map */

/* The weights of the sparse binary model as "slots": slot s is float
 * s & mask of row s >> shift of the row allocation w, and the samples'
 * feature indices are slots.  Dense (the largest index <= DENSE_MAX):
 * slot f is feature f, 64 floats a row.  Map (a sparse key space such as
 * hashed feature ids): w holds the values of a loom_dmap keyed by feature
 * index, one float a row, and the samples' indices are rewritten to the
 * rows of their keys.  The bias is an allocation of its own, b, one float
 * whose ranks' changes are averaged (see binary()); the plain copies
 * (the serial twin's model, a rank's view for evaluation) keep it at
 * slot `bias`, after the features. */
struct weights {
    float *w, *b;
    loom_dmap *map;      /* NULL: dense */
    int shift;           /* log2 of the floats per row */
    int64_t nslots, bias;
    size_t *need, nneed; /* the rows this rank's evaluation reads */
    float *scale;        /* per slot: the largest training |value| (else 1) */
    int64_t *key;        /* map, with --model: per slot the file index + 1 (0: none) */
};

struct sjob {
    const loom_libsvm *d;
    float *w, *b; /* the features' weights and the bias (binary()) */
    int shift;
    int64_t mask, bias;
    float step, lambda;
    int plain;    /* the serial twin: w is plain memory */
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
            loom_report_tick(4096);
    }
    loom_report_tick((hi - lo) & 4095);
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

static void load_svm(const char *path, int zero_based, int me, int R, loom_libsvm *d)
{
    char err[600] = "", msg[700];
    int rc = loom_libsvm_read(path, &(loom_rows){me, R}, !zero_based, d, err, sizeof err);
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
}

/* The classes of LIBSVM training data d (this rank's share; path names
 * it): its distinct labels, which must be integers, class c being the
 * c-th smallest, into label[] (at most LOOM_LR_MAXC); returns how many.
 * Refuses, with one message, data the model cannot learn from: no rows,
 * no features, one class, labels that are not class ids.  Collective. */
static int classes(const char *path, const loom_libsvm *d, double *label)
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
    loom_report_agree(!span || !d->cols, msg);
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
    loom_report_agree(C < 2 || C > LOOM_LR_MAXC, msg);
    return C;
}

/* Rewrites d's labels as class ids (0..C-1) by label[]; a label that is
 * not a class of the training data is refused.  Collective. */
static void relabel(const char *path, loom_libsvm *d, const double *label, int C)
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
    loom_report_agree(bad >= 0, msg);
}

/* scale[f] = the largest |value| of feature f in d over all ranks (1 when
 * none), f < F (features, or the slots of the sparse binary model), and
 * d's values divided by it, so that every feature lies in [-1, 1] as the
 * IDX images' bytes / 255 do and one step size fits any data; the saved
 * model is in the file's units again (weight / scale).  Collective. */
static float *scales(loom_libsvm *d, int64_t F)
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

static void rescale(loom_libsvm *d, const float *s)
{
    for (int64_t k = 0; k < d->nnz; k++)
        d->val[k] /= s[d->idx[k]];
}

/* The schedule's defaults (docs/loom-lr.md, "Step and decay"): unless
 * given, the step is 3.3 over the training samples' mean squared length
 * (features scaled, plus 1 for the bias: sumsq is this rank's samples'
 * sum of them), the step that suits Fashion-MNIST's 0.02 and a 30-feature
 * set's 1.4 alike; and it halves every 60 000 samples of the job's N, at
 * most once an epoch: D = max(0.5, 0.5^(N / 60000)), so a set of a few
 * hundred samples takes its many epochs and Fashion-MNIST its few.
 * Collective; rank 0 says what it chose. */
static void schedule(struct opts *o, double sumsq, int64_t N)
{
    int step = isnan(o->step), decay = isnan(o->decay);
    loom_allreduce(LOOM_IN_PLACE, &sumsq, 1, LOOM_DOUBLE, LOOM_SUM);
    double len = N > 0 && sumsq > 0 ? sumsq / (double)N : 1;
    if (step)
        o->step = 3.3 / len;
    if (decay)
        o->decay = fmax(0.5, pow(0.5, (double)N / 60000));
    char a[120] = "", b[120] = "";
    if (step)
        snprintf(a, sizeof a, " (3.3 / %.4g, the samples' mean squared length)", len);
    if (decay)
        snprintf(b, sizeof b, " (the step halves every 60 000 samples)");
    if (loom_rank() == 0 && (step || decay))
        printf("loom-lr: step %.4g%s, decay %.4g an epoch%s\n", o->step, a, o->decay, b);
}

/* Summed squared lengths of block d's samples (the bias's 1 included). */
static double sumsq_dense(const struct data *d)
{
    double s = 0;
    for (int64_t i = 0; i < d->n * d->D; i++)
        s += (double)d->X[i] * d->X[i];
    return s;
}

static double sumsq_sparse(const loom_libsvm *d)
{
    double s = (double)d->n;
    for (int64_t k = 0; k < d->nnz; k++)
        s += d->val[k] * d->val[k];
    return s;
}

/* After an epoch with training loss `loss` (the same on every rank): 1
 * when it improved on *prev by less than --tol relatively (the run has
 * converged), else 0 (a loss that rose is a step too large for now: the
 * decay shrinks it); *prev becomes loss. */
static int converged(const struct opts *o, double *prev, double loss)
{
    int done = o->tol > 0 && *prev - loss >= 0 && *prev - loss < o->tol * fabs(*prev);
    *prev = loss;
    return done;
}

/* Epoch e's training loss against an untrained model's, ln C for C
 * classes (every class at 1/C): a run away ends the job (report.h).
 * Collective. */
static void runaway(const struct opts *o, double loss, int C, int e)
{
    loom_report_runaway("loom-lr", e, loss, log((double)C),
                        loom_size() > 1 && strcmp(o->merge, "avg")
                            ? "Use --merge avg, a shorter --sync-every or a smaller --step"
                            : "Use a smaller --step");
}

/* ---- the training loop the three models share ----------------------- */

/* A model's part of train(); ctx is the model's own. */
struct model {
    void *ctx;
    /* one epoch at step: the serial twin's loop or the Loom loop (a
     * failure ends the job) */
    void (*epoch)(void *ctx, float step);
    /* s[0] = this rank's training samples' summed loss, s[1] its test
     * samples' correct predictions, against its view of the model (made
     * current first) */
    void (*score)(void *ctx, double s[2]);
    int64_t ntrain, ntest, nlocal; /* the job's samples; this rank's training samples */
    int C;                         /* classes: an untrained model scores ln C */
};

/* The data-parallel loop's options for an epoch (every model's). */
static loom_for_opts epoch_opts(loom_sync mode, long long every)
{
    return (loom_for_opts){.schedule = LOOM_STATIC, .local = 1, .sync = mode,
                           .sync_every = every, .repeated = 1, .accessor_reads = 1};
}

/* Epochs from the one after a restart's last (the model came back) to
 * --epochs or the first --tol stop: each reported, a run away stopped
 * before anything is saved, then a loom_clock (LOOM_CHECKPOINT_EVERY=N: a
 * checkpoint every N epochs).  Rank 0 prints the speed and its peak
 * memory.  Returns the last epoch's test accuracy.  Collective. */
static double train(const struct opts *o, const struct model *m)
{
    char err[512] = "", msg[600];
    loom_report *rep = loom_report_open("loom-lr", o->log,
                                        "iter,samples,seconds,train_logloss,test_accuracy", err,
                                        sizeof err);
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(!rep, msg);
    double busy = 0, acc = 0, s[2];
    int done = o->serial ? 0 : (int)loom_clock_now(), last = done, stop = 0;
    double prev = INFINITY; /* resumed: the last epoch's loss, for --tol as if uninterrupted */
    if (done) {
        m->score(m->ctx, s);
        loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
        prev = s[0] / (double)m->ntrain;
    }
    for (int e = done + 1; e <= o->epochs && !stop; e++) {
        loom_report_begin(rep, e, m->nlocal);
        double t0 = loom_wtime();
        m->epoch(m->ctx, (float)(o->step * pow(o->decay, e - 1)));
        busy += loom_wtime() - t0;
        m->score(m->ctx, s);
        loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
        double loss = s[0] / (double)m->ntrain;
        acc = s[1] / (double)m->ntest;
        loom_report_row(rep, (double[]){e, (double)m->ntrain * e, busy, loss, acc});
        runaway(o, loss, m->C, e); /* before the checkpoint and the save */
        stop = converged(o, &prev, loss);
        last = e;
        if (!o->serial)
            loom_clock();
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (loom_rank() == 0 && busy > 0)
        printf("loom-lr: %.0f samples/s over %d epochs (%.3f s training)%s; rank 0's peak "
               "memory %.0f MB\n", (double)m->ntrain * (last - done) / busy, last - done, busy,
               stop ? ", converged (--tol)" : "", ru.ru_maxrss / 1024.0);
    loom_report_final(rep, "test_accuracy", acc);
    loom_report_close(rep);
    return acc;
}

/* The sync interval (--sync-every, else the default: docs/loom-lr.md,
 * "How often ranks meet"), n a rank's samples an epoch.  Averaging with
 * block momentum, 100 samples, whatever the ranks: each sync point costs a
 * rank about two model's worth of bytes, so adding ranks takes syncs away;
 * but at most n / 3R, since the momentum (1 - 1/R) needs about R sync
 * points to build up and an epoch should hold several times that.
 * Summing, the default keeps the updates of one weight that a rank may not
 * have seen from the others at about 40: M (R - 1)(S + 1) p <= 40 for R
 * ranks at staleness S, p the largest fraction of the samples that update
 * one summed weight (1 where every sample updates every weight, as in the
 * multinomial model), and M at most n. */
static long long sync_every(const struct opts *o, double p, int64_t n)
{
    if (o->sync_every > 0)
        return o->sync_every;
    if (!strcmp(o->merge, "avg")) {
        long long m = (long long)(n / (3 * (int64_t)loom_size()));
        return m > 100 ? 100 : m > 1 ? m : 1;
    }
    double unseen = (double)(loom_size() > 1 ? loom_size() - 1 : 1) * (o->staleness + 1) * p,
           m = unseen > 0 ? ceil(40 / unseen) : (double)n;
    return m < (double)n ? (long long)m : n > 1 ? (long long)n : 1;
}

/* The loop mode --sync names. */
static loom_sync sync_mode(const struct opts *o)
{
    return !strcmp(o->sync, "bsp") ? LOOM_BSP : !strcmp(o->sync, "ssp") ? LOOM_SSP : LOOM_HYBRID;
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
static loom_alloc_opts weight_opts(const struct opts *o, const char *name, size_t row_size)
{
    return (loom_alloc_opts){.name = name, .unit = row_size ? LOOM_UNIT_ROW : LOOM_UNIT_PAGE,
                             .row_size = row_size, .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT,
                             .coherence = o->staleness ? "ssp" : "bsp",
                             .staleness = o->staleness, .staleness_set = 1,
                             .average = !strcmp(o->merge, "avg"),
                             .momentum = !strcmp(o->merge, "avg")};
}

/* Dense weights for features 0..F-1, the bias's plain slot F (in w, that
 * float is never used).  Collective. */
static void dense_weights(const struct opts *o, int64_t F, struct weights *ws)
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
static int64_t map_weights(const struct opts *o, loom_libsvm *tr, loom_libsvm *te,
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

/* Rank 0: the model file, in the file's units (docs/loom-lr.md).  Dense:
 * one weight per line for features 1..F, then the bias; map: "INDEX
 * WEIGHT" per feature in index order (the file's numbering), then "bias
 * WEIGHT".  plain holds the weights this rank evaluated against (all of
 * them in the serial twin); the map's other rows are read here. */
static void save_sparse(const struct opts *o, const struct weights *ws, float *plain, int64_t F)
{
    FILE *f = fopen(o->model, "w");
    if (ws->map) {
        size_t n = 0, *row = malloc((size_t)ws->nslots * sizeof *row);
        int64_t (*kv)[2] = malloc((size_t)ws->nslots * sizeof *kv);
        if (!row || !kv)
            loom_abort(1, "loom-lr: out of memory saving the model");
        for (int64_t s = 0; s < ws->nslots; s++)
            if (ws->key[s])
                kv[n][0] = ws->key[s] - 1, kv[n][1] = s, row[n++] = (size_t)s;
        if (!o->serial) {
            loom_row_prefetch(ws->w, row, n);
            for (size_t i = 0; i < n; i++)
                plain[row[i]] = *(const float *)loom_row_get(ws->w, row[i]);
        }
        qsort(kv, n, sizeof *kv, cmp_i64); /* by index: the first of the pair */
        for (size_t i = 0; f && i < n; i++)
            fprintf(f, "%lld %.7g\n", (long long)kv[i][0] + !o->zero_based,
                    plain[kv[i][1]] / ws->scale[kv[i][1]]);
        if (f)
            fprintf(f, "bias %.7g\n", plain[ws->bias]);
        free(row);
        free(kv);
    } else {
        for (int64_t x = 0; f && x <= F; x++)
            fprintf(f, "%.7g\n", plain[x] / ws->scale[x]);
    }
    if (!f || fclose(f))
        loom_abort(1, "loom-lr: %s: %s", o->model, strerror(errno));
}

/* The sparse binary model's part of train(). */
struct bctx {
    struct sjob j;
    const struct opts *o;
    loom_for_opts fo;
    struct weights *ws;
    float *plain; /* this rank's view (the serial twin's model) */
    const loom_libsvm *tr, *te;
};

static void binary_epoch(void *ctx, float step)
{
    struct bctx *b = ctx;
    b->j.step = step;
    if (b->o->serial)
        sgd_sparse(0, (long)b->tr->n, &b->j);
    else if (loom_for_range(0, b->tr->n, sgd_sparse, &b->j, &b->fo))
        loom_abort(1, "loom-lr: the SGD loop failed");
}

static void binary_score(void *ctx, double s[2])
{
    struct bctx *b = ctx;
    double unused;
    if (!b->o->serial)
        refresh(b->ws, b->plain);
    evaluate_sparse(b->tr, b->plain, b->ws->bias, &s[0], &unused);
    evaluate_sparse(b->te, b->plain, b->ws->bias, &unused, &s[1]);
}

/* Sparse binary logistic regression over F features (the largest index
 * + 1): weights dense or in a map (struct weights); otherwise as the
 * multinomial model.  Collective. */
static int binary(const struct opts *o, loom_libsvm *trp, loom_libsvm *tep, int64_t F)
{
    int R = loom_size(), me = loom_rank();
    loom_libsvm tr = *trp, te = *tep;
    struct weights ws;
    int64_t features = F;
    if (F > DENSE_MAX)
        features = map_weights(o, &tr, &te, &ws, o->model != NULL);
    else
        dense_weights(o, F, &ws);
    /* The bias: every sample updates it, so at an interval long enough to
     * pay, the ranks' summed changes overshoot (each rank's M steps on it
     * land on top of the others'); their mean cannot.  The features stay
     * summed, and the interval follows from the busiest one's share of the
     * samples (sync_every): on data without frequent features it grows
     * with the features' sparsity. */
    loom_alloc_opts bo = weight_opts(o, "bias", sizeof(float));
    bo.average = 1;
    if (!(ws.b = loom_alloc(sizeof(float), &bo)))
        loom_abort(1, "loom-lr: cannot allocate the bias");
    loom_sync mode = sync_mode(o);
    /* under bsp and ssp each thread has a copy of its own, and a rank's
     * threads' changes to the bias add up before the ranks' mean: there
     * the interval stays that of dense data (p = 1), as on one rank */
    int own = mode != LOOM_HYBRID && omp_get_max_threads() > 1;
    double busy_share = own || R == 1 ? 1 : busiest(&tr, ws.nslots);
    long long every = sync_every(o, busy_share, (tr.nfile + R - 1) / R);
    ws.scale = scales(&tr, ws.nslots);
    ws.scale[ws.bias] = 1;
    rescale(&tr, ws.scale);
    rescale(&te, ws.scale);
    struct opts m = *o;
    schedule(&m, sumsq_sparse(&tr), tr.nfile);
    o = &m;
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %lld features (sparse, binary%s), "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr.nfile, (long long)te.nfile,
               (long long)features, ws.map ? "; indices up to 2^63, a distributed map" : "", R,
               omp_get_max_threads(), o->serial ? "serial twin" : o->sync);
    if (me == 0 && R > 1 && !strcmp(o->merge, "avg"))
        printf("loom-lr: a sync point every %lld samples of each rank (weights averaged, block "
               "momentum)\n", every);
    else if (me == 0 && R > 1 && own)
        printf("loom-lr: a sync point every %lld samples of each rank (summed; threads with "
               "copies of their own add their changes to the bias)\n", every);
    else if (me == 0 && R > 1)
        printf("loom-lr: a sync point every %lld samples of each rank (features summed, the "
               "busiest in %.3g%% of the samples; the bias averaged)\n", every, 100 * busy_share);
    float *plain = calloc((size_t)ws.nslots, sizeof(float));
    if (!plain)
        loom_abort(1, "loom-lr: cannot allocate %lld weights", (long long)ws.nslots);
    /* the serial twin runs the same body over plain memory, in order */
    struct bctx b = {.j = {.d = &tr, .w = o->serial ? plain : ws.w, .b = ws.b, .shift = ws.shift,
                           .mask = ((int64_t)1 << ws.shift) - 1, .bias = ws.bias,
                           .lambda = (float)o->lambda, .plain = o->serial},
                     .o = o, .fo = epoch_opts(mode, every), .ws = &ws, .plain = plain,
                     .tr = &tr, .te = &te};
    train(o, &(struct model){.ctx = &b, .epoch = binary_epoch, .score = binary_score,
                             .ntrain = tr.nfile, .ntest = te.nfile, .nlocal = tr.n, .C = 2});
    if (o->model && me == 0)
        save_sparse(o, &ws, plain, F);
    free(plain);
    free(ws.need);
    free(ws.scale);
    free(ws.key);
    loom_libsvm_free(&tr);
    loom_libsvm_free(&te);
    if (ws.map)
        loom_dmap_free(ws.map);
    else
        loom_free(ws.w);
    loom_free(ws.b);
    return 0;
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
            loom_report_tick(4096);
    }
    loom_report_tick((hi - lo) & 4095);
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
struct mctx {
    struct mjob j;
    const struct opts *o;
    loom_for_opts fo;
    float *W, *plain; /* the Loom rows; this rank's view (the serial twin's model) */
    const size_t *need;
    size_t nneed;
    const loom_libsvm *tr, *te;
};

static void multi_epoch(void *ctx, float step)
{
    struct mctx *x = ctx;
    x->j.step = step;
    if (x->o->serial)
        sgd_multi(0, (long)x->tr->n, &x->j);
    else if (loom_for_range(0, x->tr->n, sgd_multi, &x->j, &x->fo))
        loom_abort(1, "loom-lr: the SGD loop failed");
}

static void multi_score(void *ctx, double s[2])
{
    struct mctx *x = ctx;
    double unused;
    if (!x->o->serial)
        refresh_multi(x->W, x->need, x->nneed, x->j.G * x->j.C, x->plain);
    evaluate_multi(x->tr, x->plain, x->j.F, x->j.C, &s[0], &unused);
    evaluate_multi(x->te, x->plain, x->j.F, x->j.C, &unused, &s[1]);
}

/* The multinomial model on sparse rows (LIBSVM, C >= 3 classes, features
 * scaled by scale[]): memory for the samples' non-zeros and (F + 1) x C
 * weights, twice (the Loom rows and the plain view evaluation reads), no
 * dense rows.  Trains, reports, saves.  Collective. */
static int sparse_multi(const struct opts *o, loom_libsvm *tr, loom_libsvm *te, int64_t F, int C,
                        const float *scale)
{
    int R = loom_size(), me = loom_rank();
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %lld features (sparse), %d classes, "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr->nfile, (long long)te->nfile,
               (long long)F, C, R, omp_get_max_threads(), o->serial ? "serial twin" : o->sync);
    /* G features a row, about 640 bytes: rows of one feature's C floats
     * (80 bytes for 20 classes) made a round's merge cost ~6x the
     * arithmetic in per-row records (docs/loom-lr.md) */
    int G = C < 160 ? 160 / C : 1;
    int64_t nrows = F / G + 1;
    loom_alloc_opts wo = weight_opts(o, "W", (size_t)G * C * sizeof(float));
    size_t cells = (size_t)nrows * G * (size_t)C;
    float *W = o->serial ? NULL : loom_alloc(cells * sizeof(float), &wo);
    float *plain = calloc(cells, sizeof(float));
    if ((!o->serial && !W) || !plain)
        loom_abort(1, "loom-lr: cannot allocate the model (%lld x %d floats)", (long long)F + 1, C);
    size_t *need, nneed = used_rows(tr, te, F, G, &need);
    loom_sync mode = sync_mode(o);
    /* averaging, one sync point an epoch: a round's sparse samples reach
     * most of the rows, so each sync point moves about the whole model
     * (docs/loom-lr.md, "The sparse multinomial model") */
    int64_t n = (tr->nfile + R - 1) / R;
    long long every = o->sync_every <= 0 && !strcmp(o->merge, "avg") ? (n > 1 ? n : 1)
                                                                       : sync_every(o, 1, n);
    if (me == 0 && R > 1 && !o->serial)
        printf("loom-lr: a sync point every %lld samples of each rank (%s)\n", every,
               !strcmp(o->merge, "avg") ? "weights averaged, block momentum" : "changes summed");
    struct mctx x = {.j = {.d = tr, .W = o->serial ? plain : W, .F = F, .C = C, .G = G,
                           .plain = o->serial, .lambda = (float)o->lambda},
                     .o = o, .fo = epoch_opts(mode, every), .W = W, .plain = plain, .need = need,
                     .nneed = nneed, .tr = tr, .te = te};
    train(o, &(struct model){.ctx = &x, .epoch = multi_epoch, .score = multi_score,
                             .ntrain = tr->nfile, .ntest = te->nfile, .nlocal = tr->n, .C = C});
    if (o->model) { /* rank 0 reads every row; the others' views are not needed */
        if (!o->serial && me == 0) {
            size_t *all = malloc((size_t)nrows * sizeof *all);
            if (!all)
                loom_abort(1, "loom-lr: out of memory saving the model");
            for (int64_t r = 0; r < nrows; r++)
                all[r] = (size_t)r;
            refresh_multi(W, all, (size_t)nrows, G * C, plain);
            free(all);
        }
        if (me == 0)
            save_multi(o->model, plain, F, C, scale);
    }
    free(plain);
    free(need);
    if (W)
        loom_free(W);
    return 0;
}

/* The dense multinomial model's part of train(). */
struct dctx {
    struct job j;
    const struct opts *o;
    loom_for_opts fo;
    float *Wserial; /* the serial twin's model */
    struct data *tr, *te;
};

/* This rank's view of the C rows of D floats. */
static void dense_rows(const struct dctx *x, float **rows)
{
    for (int c = 0; c < x->tr->C; c++)
        rows[c] = x->o->serial ? x->Wserial + (size_t)c * x->tr->D
                               : (float *)loom_row_get(x->j.W, (size_t)c);
}

static void dense_epoch(void *ctx, float step)
{
    struct dctx *x = ctx;
    x->j.step = step;
    if (x->o->serial)
        loom_lr_softmax_epoch(x->tr->X, x->tr->y, x->tr->n, x->Wserial, x->tr->C, x->tr->D, step,
                              x->j.lambda);
    else if (loom_for(0, x->tr->n, sgd, &x->j, &x->fo))
        loom_abort(1, "loom-lr: the SGD loop failed");
}

static void dense_score(void *ctx, double s[2])
{
    struct dctx *x = ctx;
    float *rows[LOOM_LR_MAXC];
    double unused;
    dense_rows(x, rows);
    evaluate(x->tr, rows, &s[0], &unused);
    evaluate(x->te, rows, &unused, &s[1]);
}

/* The multinomial model over dense rows (IDX images, pixel f divided by
 * scale[f]): trains, reports, saves (weights for pixels / 255).  Frees the
 * rows.  Collective. */
static int multinomial(const struct opts *o, struct data *tr, struct data *te, const float *scale)
{
    int R = loom_size(), me = loom_rank();
    int C = tr->C, D = tr->D;
    if (C > LOOM_LR_MAXC)
        loom_abort(1, "loom-lr: %d classes (at most %d)", C, LOOM_LR_MAXC);
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %d features, %d classes, "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr->total, (long long)te->total, D - 1,
               C, R, omp_get_max_threads(), o->serial ? "serial twin" : o->sync);

    /* The model: C rows of D floats, summed when workers' changes meet. */
    loom_alloc_opts wo = weight_opts(o, "W", (size_t)D * sizeof(float));
    float *W = loom_alloc((size_t)C * D * sizeof(float), &wo);
    float *Wserial = o->serial ? calloc((size_t)C * D, sizeof(float)) : NULL;
    if (!W || (o->serial && !Wserial))
        loom_abort(1, "loom-lr: cannot allocate the model (%d x %d floats)", C, D);
    loom_sync mode = sync_mode(o);
    long long every = sync_every(o, 1, (tr->total + R - 1) / R);
    if (me == 0 && R > 1 && !o->serial)
        printf("loom-lr: a sync point every %lld samples of each rank (%s)\n", every,
               !strcmp(o->merge, "avg") ? "weights averaged, block momentum" : "changes summed");
    struct dctx x = {.j = {tr, W, 0, (float)o->lambda}, .o = o, .fo = epoch_opts(mode, every),
                     .Wserial = Wserial, .tr = tr, .te = te};
    train(o, &(struct model){.ctx = &x, .epoch = dense_epoch, .score = dense_score,
                             .ntrain = tr->total, .ntest = te->total, .nlocal = tr->n, .C = C});
    if (o->model && me == 0) { /* the model after the last epoch (its checkpoint taken) */
        float *rows[LOOM_LR_MAXC];
        dense_rows(&x, rows);
        FILE *f = fopen(o->model, "w");
        for (int c = 0; f && c < C; c++)
            for (int k = 0; k < D; k++)
                fprintf(f, "%.7g%c", rows[c][k] * (k + 1 < D ? 255 / scale[k] : 1),
                        k + 1 < D ? ' ' : '\n');
        if (!f || fclose(f))
            loom_abort(1, "loom-lr: %s: %s", o->model, strerror(errno));
    }
    free(Wserial);
    free(tr->X), free(tr->y), free(te->X), free(te->y);
    loom_free(W);
    return 0;
}

/* LIBSVM input: classes from the training labels, features scaled to
 * [-1, 1]; two classes train the sparse binary model, more the
 * multinomial one over dense rows.  Collective. */
static int svm(const struct opts *o)
{
    int R = loom_size(), me = loom_rank();
    loom_libsvm tr, te;
    double label[LOOM_LR_MAXC];
    load_svm(o->svm[0], o->zero_based, me, R, &tr);
    load_svm(o->svm[1], o->zero_based, me, R, &te);
    int C = classes(o->svm[0], &tr, label);
    char msg[1100];
    snprintf(msg, sizeof msg, "loom-lr: %s has no samples", o->svm[1]);
    loom_report_agree(!te.nfile, msg);
    relabel(o->svm[0], &tr, label, C);
    relabel(o->svm[1], &te, label, C);
    if (me == 0) {
        printf("loom-lr: %d classes, labels", C);
        for (int c = 0; c < C && c < 12; c++)
            printf(" %g", label[c]);
        printf("%s\n", C > 12 ? " ..." : "");
    }
    int64_t F = tr.cols > te.cols ? tr.cols : te.cols;
    struct opts m = *o; /* the merge's default follows the model (docs/loom-lr.md) */
    m.merge = o->merge ? o->merge : C == 2 ? "sum" : "avg";
    o = &m;
    if (C == 2)
        return binary(o, &tr, &te, F);
    snprintf(msg, sizeof msg, "loom-lr: %s: feature index %lld: the multinomial model (%d "
             "classes) keeps a row of weights for every index up to %lld; two classes take any index",
             tr.cols > te.cols ? o->svm[0] : o->svm[1], (long long)F, C, (long long)DENSE_MAX);
    loom_report_agree(F > DENSE_MAX, msg);
    float *scale = scales(&tr, F);
    rescale(&tr, scale);
    rescale(&te, scale);
    schedule(&m, sumsq_sparse(&tr), tr.nfile);
    int rc = sparse_multi(o, &tr, &te, F, C, scale);
    loom_libsvm_free(&tr);
    loom_libsvm_free(&te);
    free(scale);
    return rc;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 2;
    struct opts o;
    int rc = parse(argc, argv, &o);
    if (rc) {
        loom_finalize();
        return rc < 0 ? 2 : 0;
    }
    int R = loom_size(), me = loom_rank();
    if (o.serial && R > 1)
        loom_abort(2, "loom-lr: --serial runs on one rank (got %d)", R);
    if (o.svm[0])
        return svm(&o) ? 1 : loom_finalize();
    o.merge = o.merge ? o.merge : "avg";
    struct data tr, te;
    float *scale = NULL;
    int64_t nscale = 0;
    load(o.img[0], o.lab[0], me, R, &tr, &scale, &nscale);
    load(o.img[1], o.lab[1], me, R, &te, &scale, &nscale);
    char msg[200];
    snprintf(msg, sizeof msg, "loom-lr: the training and test images differ in size (%d and %d "
             "features) or the test labels exceed the training classes", tr.D - 1, te.D - 1);
    loom_report_agree(te.D != tr.D || te.C > tr.C, msg);
    snprintf(msg, sizeof msg, "loom-lr: %s holds one class only (label %d): nothing to learn",
             o.lab[0], tr.C - 1);
    loom_report_agree(tr.present < 2, msg);
    schedule(&o, sumsq_dense(&tr), tr.total);
    rc = multinomial(&o, &tr, &te, scale);
    free(scale);
    return rc ? 1 : loom_finalize();
}
