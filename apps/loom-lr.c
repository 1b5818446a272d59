/* loom-lr.c — logistic regression by data-parallel SGD (STRADS-AP
 * SyncFor, seed 000 ch. 7) with bsp, ssp or hybrid consistency: the
 * command line around kernels/lr_dist.h, which holds the three models'
 * Loom loops beside their serial twins (allocations, merge, sync points).
 * Here: the flags, the input (IDX images, LIBSVM files), the step's
 * schedule, the epoch loop's report (apps/common/report.h) and --tol.
 * After an epoch the ranks' scores meet in one loom_allreduce; then a
 * loom_clock, so LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs and a
 * restarted job (loomrun --restart) resumes after the last one (the model
 * comes back; the step and every sample's order follow from the epoch).
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
#include "../kernels/lr_dist.h"
#include "common/flags.h"
#include "common/report.h"
#include "common/start.h"

#define FMNIST "/usr/share/datasets/fashion-mnist"

struct opts {
    const char *img[2], *lab[2], *svm[2], *log, *model, *sync, *merge;
    int epochs, staleness, serial, zero_based;
    long long sync_every;
    double step, decay, lambda, tol;
};

/* Fills o from argv; returns 0, 1 after --help/--version, -1 after saying
 * what is wrong (rank 0). */
static int parse(int argc, char **argv, void *opts)
{
    struct opts *o = opts;
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
static void load(const char *img, const char *lab, int me, int R, loom_lr_dense *d, float **scale,
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

static void load_svm(const char *path, int zero_based, int me, int R, loom_libsvm *d)
{
    char err[600] = "", msg[700];
    int rc = loom_libsvm_read(path, &(loom_rows){me, R}, !zero_based, d, err, sizeof err);
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
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

/* Epochs from the one after a restart's last (the model came back) to
 * --epochs or the first --tol stop: each reported, a run away stopped
 * before anything is saved, then a loom_clock (LOOM_CHECKPOINT_EVERY=N: a
 * checkpoint every N epochs).  Rank 0 prints the speed and its peak
 * memory.  Returns the last epoch's test accuracy.  Collective. */
static double train(const struct opts *o, loom_lr_model *m)
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
        loom_lr_score(m, s);
        loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
        prev = s[0] / (double)m->ntrain;
    }
    for (int e = done + 1; e <= o->epochs && !stop; e++) {
        loom_report_begin(rep, e, m->nlocal);
        double t0 = loom_wtime();
        loom_lr_epoch(m, (float)(o->step * pow(o->decay, e - 1)));
        busy += loom_wtime() - t0;
        loom_lr_score(m, s);
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

/* The models' options from the flags. */
static loom_lr_cfg cfg_of(const struct opts *o)
{
    return (loom_lr_cfg){.serial = o->serial, .staleness = o->staleness,
                         .average = !strcmp(o->merge, "avg"), .sync_every = o->sync_every,
                         .lambda = (float)o->lambda, .tick = loom_report_tick,
                         .sync = !strcmp(o->sync, "bsp")   ? LOOM_BSP
                                 : !strcmp(o->sync, "ssp") ? LOOM_SSP
                                                           : LOOM_HYBRID};
}

/* Rank 0 says how often the ranks meet (several ranks), trains m
 * (train()), saves it with --model and frees it.  Collective. */
static int fit(const struct opts *o, loom_lr_model *m, const float *scale)
{
    char why[200] = "changes summed";
    if (!strcmp(o->merge, "avg"))
        snprintf(why, sizeof why, "weights averaged, block momentum");
    else if (m->features && m->own)
        snprintf(why, sizeof why, "summed; threads with copies of their own add their changes "
                 "to the bias");
    else if (m->features)
        snprintf(why, sizeof why, "features summed, the busiest in %.3g%% of the samples; the "
                 "bias averaged", 100 * m->busy_share);
    if (loom_rank() == 0 && loom_size() > 1 && !o->serial)
        printf("loom-lr: a sync point every %lld samples of each rank (%s)\n", m->every, why);
    train(o, m);
    if (o->model)
        loom_lr_save(m, o->model, scale, o->zero_based);
    loom_lr_model_free(m);
    return 0;
}

/* LIBSVM input: classes from the training labels, features scaled to
 * [-1, 1]; two classes train the sparse binary model, more the sparse
 * multinomial one (kernels/lr_dist.h).  Collective. */
static int svm(const struct opts *o)
{
    int R = loom_size(), me = loom_rank();
    loom_libsvm tr, te;
    double label[LOOM_LR_MAXC];
    load_svm(o->svm[0], o->zero_based, me, R, &tr);
    load_svm(o->svm[1], o->zero_based, me, R, &te);
    int C = loom_lr_classes(o->svm[0], &tr, label, loom_report_agree);
    char msg[1100];
    snprintf(msg, sizeof msg, "loom-lr: %s has no samples", o->svm[1]);
    loom_report_agree(!te.nfile, msg);
    loom_lr_relabel(o->svm[0], &tr, label, C, loom_report_agree);
    loom_lr_relabel(o->svm[1], &te, label, C, loom_report_agree);
    if (me == 0) {
        printf("loom-lr: %d classes, labels", C);
        for (int c = 0; c < C && c < 12; c++)
            printf(" %g", label[c]);
        printf("%s\n", C > 12 ? " ..." : "");
    }
    int64_t F = tr.cols > te.cols ? tr.cols : te.cols;
    struct opts m = *o; /* the merge's default follows the model (docs/loom-lr.md) */
    m.merge = o->merge ? o->merge : C == 2 ? "sum" : "avg";
    loom_lr_cfg cfg = cfg_of(&m);
    const char *mode = o->serial ? "serial twin" : o->sync;
    if (C == 2) {
        loom_lr_model *b = loom_lr_binary_new(&tr, &te, F, o->model != NULL, &cfg);
        schedule(&m, b->sumsq, b->ntrain);
        if (me == 0)
            printf("loom-lr: %lld training and %lld test samples, %lld features (sparse, "
                   "binary%s), %d rank(s) x %d thread(s), %s\n", (long long)b->ntrain,
                   (long long)b->ntest, (long long)b->features,
                   b->map ? "; indices up to 2^63, a distributed map" : "", R,
                   omp_get_max_threads(), mode);
        return fit(&m, b, NULL);
    }
    snprintf(msg, sizeof msg, "loom-lr: %s: feature index %lld: the multinomial model (%d "
             "classes) keeps a row of weights for every index up to %lld; two classes take any index",
             tr.cols > te.cols ? o->svm[0] : o->svm[1], (long long)F, C,
             (long long)LOOM_LR_DENSE_MAX);
    loom_report_agree(F > LOOM_LR_DENSE_MAX, msg);
    float *scale = loom_lr_scales(&tr, F);
    loom_lr_rescale(&tr, scale);
    loom_lr_rescale(&te, scale);
    schedule(&m, loom_lr_sumsq_sparse(&tr), tr.nfile);
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %lld features (sparse), %d classes, "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr.nfile, (long long)te.nfile,
               (long long)F, C, R, omp_get_max_threads(), mode);
    int rc = fit(&m, loom_lr_multi_new(&tr, &te, F, C, scale, &cfg), NULL);
    loom_libsvm_free(&tr);
    loom_libsvm_free(&te);
    free(scale);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    int rc = loom_app_start("loom-lr", &argc, &argv, parse, &o, &o.serial);
    if (rc != LOOM_APP_GO)
        return rc;
    int R = loom_size(), me = loom_rank();
    if (o.svm[0])
        return svm(&o) ? 1 : loom_finalize();
    o.merge = o.merge ? o.merge : "avg";
    loom_lr_dense tr, te;
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
    schedule(&o, loom_lr_sumsq_dense(&tr), tr.total);
    if (tr.C > LOOM_LR_MAXC)
        loom_abort(1, "loom-lr: %d classes (at most %d)", tr.C, LOOM_LR_MAXC);
    if (me == 0)
        printf("loom-lr: %lld training and %lld test samples, %d features, %d classes, "
               "%d rank(s) x %d thread(s), %s\n", (long long)tr.total, (long long)te.total,
               tr.D - 1, tr.C, R, omp_get_max_threads(), o.serial ? "serial twin" : o.sync);
    loom_lr_cfg cfg = cfg_of(&o);
    rc = fit(&o, loom_lr_dense_new(&tr, &te, &cfg), scale);
    free(tr.X), free(tr.y), free(te.X), free(te.y);
    free(scale);
    return rc ? 1 : loom_finalize();
}
