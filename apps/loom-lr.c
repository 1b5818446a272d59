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
 *     every --sync-every samples of each rank.
 * After an epoch, every rank evaluates its blocks against its view of W
 * (loom_row_get) and the sums meet in one loom_allreduce; then a
 * loom_clock, so LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs and a
 * restarted job (loomrun --restart) resumes after the last one (W comes
 * back; the step and every sample's order follow from the epoch).
 *
 *   loom-lr [--fashion-mnist DIR | --train-images F --train-labels F
 *            --test-images F --test-labels F] [--epochs N] [--step G]
 *           [--decay D] [--lambda L] [--sync hybrid|bsp|ssp]
 *           [--staleness S] [--sync-every M] [--log FILE.csv]
 *           [--model FILE] [--serial]
 * docs/loom-lr.md has the flags, formats and figures. */
#include <loom.h>

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/idx.h"
#include "../kernels/libsvm.h"
#include "../kernels/lr.h"
#include "../kernels/flags.h"
#include "../kernels/report.h"

#define FMNIST "/usr/share/datasets/fashion-mnist"

struct opts {
    const char *img[2], *lab[2], *svm[2], *log, *model, *sync;
    int epochs, staleness, serial, zero_based;
    long long sync_every;
    double step, decay, lambda;
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
    *o = (struct opts){.epochs = 7, .step = 0.02, .decay = 0.5, .lambda = 1e-5,
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
         "LIBSVM training file: the sparse binary model\n(label > 0: class 1)"},
        {"test", LOOM_FLAG_STR, &o->svm[1], "FILE", 0, 0, "LIBSVM test file"},
        {"zero-based", LOOM_FLAG_SET, &o->zero_based, NULL, 0, 0,
         "the LIBSVM files' indices start at 0 (as\nscikit-learn's dump_svmlight_file writes)"},
        {"epochs", LOOM_FLAG_INT, &o->epochs, "N", 1, HUGE_VAL,
         "passes over the training samples (default 7)"},
        {"step", LOOM_FLAG_NUM, &o->step, "G", 0, 0,
         "SGD step size (default 0.02); epoch e uses\nG * D^(e-1)"},
        {"decay", LOOM_FLAG_NUM, &o->decay, "D", 0, 0,
         "step decay per epoch, 0 < D <= 1 (default 0.5)"},
        {"lambda", LOOM_FLAG_NUM, &o->lambda, "L", 0, HUGE_VAL,
         "L2 regularization (default 1e-5)"},
        {"sync", LOOM_FLAG_STR, &o->sync, "MODE", 0, 0,
         "hybrid (default), bsp or ssp: how workers'\nupdates meet"},
        {"staleness", LOOM_FLAG_INT, &o->staleness, "S", 0, 1000,
         "clocks a read may lag (ssp model; default 0 =\nbsp)"},
        {"sync-every", LOOM_FLAG_LONG, &o->sync_every, "M", 1, HUGE_VAL,
         "samples of each rank between sync points\n(default 20 / (ranks - 1), rounded up:\n"
         "~20 unseen samples of others)"},
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
        .about = "Logistic regression by data-parallel SGD: multinomial on IDX images,\n"
                 "binary on LIBSVM files.  Runs on the ranks loomrun starts.",
        .flags = flags,
        .more = "Threads: OMP_NUM_THREADS.  See docs/loom-lr.md."};
    int rc = loom_flags_parse(&cli, argc, argv, 1);
    if (rc)
        return rc;
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
                      : !(o->step > 0) ? "--step must be > 0"
                      : !(o->decay > 0 && o->decay <= 1) ? "--decay must be in (0, 1]"
                      : strcmp(o->sync, "hybrid") && strcmp(o->sync, "bsp") && strcmp(o->sync, "ssp")
                          ? "--sync must be hybrid, bsp or ssp"
                          : NULL;
    if (bad) {
        loom_flags_complain("loom-lr", bad);
        return -1;
    }
    return 0;
}

/* Loads one images/labels pair and keeps this rank's block (rank `me` of
 * R).  Collective: a bad file ends the job with one message. */
static void load(const char *img, const char *lab, int me, int R, struct data *d)
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
    if (!d->X || !d->y)
        loom_abort(1, "loom-lr: out of memory for %lld samples", (long long)d->n);
    for (int64_t i = 0; i < d->n; i++) {
        const uint8_t *src = xi.data + (d->first + i) * F;
        float *x = d->X + i * d->D;
        for (int64_t f = 0; f < F; f++)
            x[f] = src[f] * (1.0f / 255);
        x[F] = 1;
        d->y[i] = yi.data[d->first + i];
    }
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

#define WROW 64 /* floats per row of the weight vector's allocation */

struct sjob {
    const loom_libsvm *d;
    float *w;
    int64_t bias; /* index of the bias weight: the number of features */
    float step, lambda;
    int plain;    /* the serial twin: w is plain memory */
};

static inline float *wat(const struct sjob *j, int64_t f)
{
    return j->plain ? j->w + f : (float *)loom_at(j->w, (size_t)(f / WROW)) + f % WROW;
}

static void sgd_sparse(long i, void *ctx)
{
    struct sjob *j = ctx;
    const loom_libsvm *d = j->d;
    float z = *wat(j, j->bias);
    for (int64_t k = d->ptr[i]; k < d->ptr[i + 1]; k++)
        z += *wat(j, d->idx[k]) * (float)d->val[k];
    float g = loom_lr_sigmoid(z) - (d->y[i] > 0);
    for (int64_t k = d->ptr[i]; k < d->ptr[i + 1]; k++) {
        float *wf = wat(j, d->idx[k]);
        *wf -= j->step * (g * (float)d->val[k] + j->lambda * *wf);
    }
    *wat(j, j->bias) -= j->step * g;
    loom_report_tick(1);
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

/* Refuses training data the sparse binary model cannot learn from (no
 * rows, no features, one class), with one message; warns, on rank 0, when
 * it holds more than two labels (they are split into label > 0 against
 * the rest).  Collective. */
static void check_svm(const char *path, const loom_libsvm *d, int me)
{
    double lo = INFINITY, hi = -INFINITY, c[3] = {0, 0, 0}; /* positives, at lo or hi, all */
    for (int64_t i = 0; i < d->n; i++)
        lo = fmin(lo, d->y[i]), hi = fmax(hi, d->y[i]), c[0] += d->y[i] > 0;
    loom_allreduce(LOOM_IN_PLACE, &lo, 1, LOOM_DOUBLE, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, &hi, 1, LOOM_DOUBLE, LOOM_MAX);
    for (int64_t i = 0; i < d->n; i++)
        c[1] += d->y[i] == lo || d->y[i] == hi;
    c[2] = (double)d->n;
    loom_allreduce(LOOM_IN_PLACE, c, 3, LOOM_DOUBLE, LOOM_SUM);
    char msg[1200];
    snprintf(msg, sizeof msg, "loom-lr: %s has %s", path,
             !d->nfile ? "no samples"
             : !d->cols ? "no features (every line is a label alone)"
             : c[0] == 0 || c[0] == c[2] ? "one class only (every label is > 0, or none is): "
                                           "nothing to learn"
                                         : "");
    loom_report_agree(!d->nfile || !d->cols || c[0] == 0 || c[0] == c[2], msg);
    if (me == 0 && c[1] < c[2])
        fprintf(stderr, "loom-lr: warning: %s has more than two labels; the sparse model is "
                "binary and learns label > 0 against the rest\n", path);
}

/* Sparse binary logistic regression: the weight vector (features + bias)
 * is a row allocation of WROW floats per row; otherwise as the
 * multinomial model.  Collective. */
static int binary(const struct opts *o)
{
    int R = loom_size(), me = loom_rank();
    char err_empty[1100];
    loom_libsvm tr, te;
    load_svm(o->svm[0], o->zero_based, me, R, &tr);
    load_svm(o->svm[1], o->zero_based, me, R, &te);
    check_svm(o->svm[0], &tr, me);
    snprintf(err_empty, sizeof err_empty, "loom-lr: %s has no samples", o->svm[1]);
    loom_report_agree(!te.nfile, err_empty);
    int64_t F = tr.cols > te.cols ? tr.cols : te.cols, rows = (F + 1 + WROW - 1) / WROW;
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %lld features (sparse, binary), "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr.nfile, (long long)te.nfile,
               (long long)F, R, omp_get_max_threads(), o->serial ? "serial twin" : o->sync);
    float *w = loom_alloc((size_t)rows * WROW * sizeof(float), &(loom_alloc_opts){.name = "w",
                          .unit = LOOM_UNIT_ROW, .row_size = WROW * sizeof(float),
                          .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT,
                          .coherence = o->staleness ? "ssp" : "bsp",
                          .staleness = o->staleness, .staleness_set = 1});
    float *plain = calloc((size_t)rows * WROW, sizeof(float));
    if (!w || !plain)
        loom_abort(1, "loom-lr: cannot allocate %lld weights", (long long)F + 1);
    char err[512] = "", msg[600];
    loom_report *rep = loom_report_open("loom-lr", o->log,
                                        "iter,samples,seconds,train_logloss,test_accuracy", err,
                                        sizeof err);
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(!rep, msg);
    loom_sync mode = !strcmp(o->sync, "bsp") ? LOOM_BSP : !strcmp(o->sync, "ssp") ? LOOM_SSP
                                                                                 : LOOM_HYBRID;
    /* the serial twin runs the same body over plain memory, in order */
    struct sjob j = {&tr, o->serial ? plain : w, F, 0, (float)o->lambda, o->serial};
    double busy = 0, acc = 0, loss = 0;
    int done = o->serial ? 0 : (int)loom_clock_now(); /* epochs before a restart: w came back */
    for (int e = done + 1; e <= o->epochs; e++) {
        j.step = (float)(o->step * pow(o->decay, e - 1));
        loom_report_begin(rep, e, tr.n);
        double t0 = loom_wtime();
        if (o->serial)
            for (int64_t i = 0; i < tr.n; i++)
                sgd_sparse((long)i, &j);
        else if (loom_for(0, tr.n, sgd_sparse, &j, &(loom_for_opts){.schedule = LOOM_STATIC,
                          .local = 1, .sync = mode, .sync_every = o->sync_every}))
            loom_abort(1, "loom-lr: the SGD loop failed in epoch %d", e);
        busy += loom_wtime() - t0;
        for (int64_t r = 0; !o->serial && r < rows; r++)
            memcpy(plain + r * WROW, loom_row_get(w, (size_t)r), WROW * sizeof(float));
        double s[2], unused;
        evaluate_sparse(&tr, plain, F, &s[0], &unused);
        evaluate_sparse(&te, plain, F, &unused, &s[1]);
        loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
        acc = s[1] / (double)te.nfile;
        loss = s[0] / (double)tr.nfile;
        loom_report_row(rep, (double[]){e, (double)tr.nfile * e, busy, loss, acc});
        if (!o->serial)
            loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N epochs */
    }
    if (me == 0)
        printf("loom-lr: %.0f samples/s over %d epochs (%.3f s training)\n",
               (double)tr.nfile * (o->epochs - done) / busy, o->epochs - done, busy);
    if (o->model && me == 0) {
        FILE *f = fopen(o->model, "w");
        for (int64_t x = 0; f && x <= F; x++)
            fprintf(f, "%.7g\n", plain[x]);
        if (!f || fclose(f))
            loom_abort(1, "loom-lr: %s: %s", o->model, strerror(errno));
    }
    if (!isfinite(loss))
        loom_abort(1, "loom-lr: training diverged (training loss %g): lower --step", loss);
    loom_report_final(rep, "test_accuracy", acc);
    loom_report_close(rep);
    free(plain);
    loom_libsvm_free(&tr);
    loom_libsvm_free(&te);
    loom_free(w);
    return 0;
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
    if (o.sync_every < 0) /* summed deltas: keep what a rank has not seen small */
        o.sync_every = R > 1 ? (20 + R - 2) / (R - 1) : 20;
    if (o.svm[0])
        return binary(&o) ? 1 : loom_finalize();
    struct data tr, te;
    load(o.img[0], o.lab[0], me, R, &tr);
    load(o.img[1], o.lab[1], me, R, &te);
    char msg[200];
    snprintf(msg, sizeof msg, "loom-lr: the training and test images differ in size (%d and %d "
             "features) or the test labels exceed the training classes", tr.D - 1, te.D - 1);
    loom_report_agree(te.D != tr.D || te.C > tr.C, msg);
    snprintf(msg, sizeof msg, "loom-lr: %s holds one class only (label %d): nothing to learn",
             o.lab[0], tr.C - 1);
    loom_report_agree(tr.present < 2, msg);
    int C = tr.C, D = tr.D;
    if (C > LOOM_LR_MAXC)
        loom_abort(1, "loom-lr: %d classes (at most %d)", C, LOOM_LR_MAXC);
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %d features, %d classes, "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr.total, (long long)te.total, D - 1,
               C, R, omp_get_max_threads(), o.serial ? "serial twin" : o.sync);

    /* The model: C rows of D floats, summed when workers' changes meet. */
    float *W = loom_alloc((size_t)C * D * sizeof(float), &(loom_alloc_opts){.name = "W",
                          .unit = LOOM_UNIT_ROW, .row_size = (size_t)D * sizeof(float),
                          .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT,
                          .coherence = o.staleness ? "ssp" : "bsp",
                          .staleness = o.staleness, .staleness_set = 1});
    float *Wserial = o.serial ? calloc((size_t)C * D, sizeof(float)) : NULL;
    if (!W || (o.serial && !Wserial))
        loom_abort(1, "loom-lr: cannot allocate the model (%d x %d floats)", C, D);
    char err[512] = "";
    loom_report *rep = loom_report_open("loom-lr", o.log,
                                        "iter,samples,seconds,train_logloss,test_accuracy", err,
                                        sizeof err);
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(!rep, msg);
    loom_sync mode = !strcmp(o.sync, "bsp") ? LOOM_BSP : !strcmp(o.sync, "ssp") ? LOOM_SSP
                                                                                     : LOOM_HYBRID;
    struct job j = {&tr, W, 0, (float)o.lambda};
    double busy = 0, acc = 0, loss = 0;
    int done = o.serial ? 0 : (int)loom_clock_now(); /* epochs before a restart: W came back */
    for (int e = done + 1; e <= o.epochs; e++) {
        j.step = (float)(o.step * pow(o.decay, e - 1));
        loom_report_begin(rep, e, tr.n);
        double t0 = loom_wtime();
        if (o.serial)
            loom_lr_softmax_epoch(tr.X, tr.y, tr.n, Wserial, C, D, j.step, j.lambda);
        else if (loom_for(0, tr.n, sgd, &j, &(loom_for_opts){.schedule = LOOM_STATIC,
                          .local = 1, .sync = mode, .sync_every = o.sync_every}))
            loom_abort(1, "loom-lr: the SGD loop failed in epoch %d", e);
        busy += loom_wtime() - t0;
        float *rows[LOOM_LR_MAXC];
        for (int c = 0; c < C; c++)
            rows[c] = o.serial ? Wserial + (size_t)c * D : (float *)loom_row_get(W, (size_t)c);
        double s[2], unused;
        evaluate(&tr, rows, &s[0], &unused); /* s: training loss, correct test predictions */
        evaluate(&te, rows, &unused, &s[1]);
        loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
        acc = s[1] / (double)te.total;
        loss = s[0] / (double)tr.total;
        loom_report_row(rep, (double[]){e, (double)tr.total * e, busy, loss, acc});
        if (e == o.epochs && o.model && me == 0) {
            FILE *f = fopen(o.model, "w");
            for (int c = 0; f && c < C; c++)
                for (int x = 0; x < D; x++)
                    fprintf(f, "%.7g%c", rows[c][x], x + 1 < D ? ' ' : '\n');
            if (!f || fclose(f))
                loom_abort(1, "loom-lr: %s: %s", o.model, strerror(errno));
        }
        if (!o.serial)
            loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N epochs */
    }
    if (me == 0)
        printf("loom-lr: %.0f samples/s over %d epochs (%.3f s training)\n",
               (double)tr.total * (o.epochs - done) / busy, o.epochs - done, busy);
    if (!isfinite(loss))
        loom_abort(1, "loom-lr: training diverged (training loss %g): lower --step", loss);
    loom_report_final(rep, "test_accuracy", acc);
    loom_report_close(rep);
    free(Wserial);
    free(tr.X), free(tr.y), free(te.X), free(te.y);
    loom_free(W);
    return loom_finalize();
}
