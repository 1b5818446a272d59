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
 * (loom_row_get) and the sums meet in one loom_allreduce.
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
#include "../kernels/lr.h"
#include "../kernels/report.h"

#define FMNIST "/usr/share/datasets/fashion-mnist"

struct opts {
    const char *img[2], *lab[2], *log, *model, *sync;
    int epochs, staleness, serial;
    long sync_every;
    double step, decay, lambda;
};

/* One block of samples: n rows of D floats (features in [0, 1], then 1). */
struct data {
    float *X;
    int32_t *y;
    int64_t n, first, total;
    int D, C;
};

struct job {
    const struct data *d;
    float *W;
    float step, lambda;
};

#define complain(...) (loom_rank() == 0 ? fprintf(stderr, __VA_ARGS__) : 0)

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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: loom-lr [--fashion-mnist DIR | --train-images F --train-labels F\n"
            "                --test-images F --test-labels F] [--epochs N] [--step G]\n"
            "               [--decay D] [--lambda L] [--sync hybrid|bsp|ssp] [--staleness S]\n"
            "               [--sync-every M] [--log FILE.csv] [--model FILE] [--serial]\n"
            "  --fashion-mnist DIR  the four IDX files of DIR (default " FMNIST ")\n"
            "  --epochs N      passes over the training samples (default 7)\n"
            "  --step G        SGD step size (default 0.02); epoch e uses G * D^(e-1)\n"
            "  --decay D       step decay per epoch, 0 < D <= 1 (default 0.5)\n"
            "  --lambda L      L2 regularization (default 1e-5)\n"
            "  --sync MODE     hybrid (default), bsp or ssp: how workers' updates meet\n"
            "  --staleness S   clocks a read may lag (ssp model; default 0 = bsp model)\n"
            "  --sync-every M  samples of each rank between sync points (default 20)\n"
            "  --log FILE      CSV: iter,samples,seconds,train_logloss,test_accuracy\n"
            "  --model FILE    save W (one line per class, bias last)\n"
            "  --serial        the serial twin (one rank): the plain loop, in file order\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
    static char paths[4][4096];
    *o = (struct opts){.epochs = 7, .step = 0.02, .decay = 0.5, .lambda = 1e-5,
                       .sync = "hybrid", .sync_every = 20};
    const char *dir = NULL;
    for (int a = 1; a < argc; a++) {
        const char *f = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        char *end = NULL;
        errno = 0;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            if (loom_rank() == 0)
                usage(stdout);
            return 1;
        } else if (!strcmp(f, "--serial")) {
            o->serial = 1;
            continue;
        } else if (!v) {
            complain("loom-lr: %s needs a value (or is unknown); try --help\n", f);
            return -1;
        } else if (!strcmp(f, "--fashion-mnist")) dir = v;
        else if (!strcmp(f, "--train-images")) o->img[0] = v;
        else if (!strcmp(f, "--train-labels")) o->lab[0] = v;
        else if (!strcmp(f, "--test-images")) o->img[1] = v;
        else if (!strcmp(f, "--test-labels")) o->lab[1] = v;
        else if (!strcmp(f, "--log")) o->log = v;
        else if (!strcmp(f, "--model")) o->model = v;
        else if (!strcmp(f, "--sync")) o->sync = v;
        else if (!strcmp(f, "--epochs")) o->epochs = (int)strtol(v, &end, 10);
        else if (!strcmp(f, "--staleness")) o->staleness = (int)strtol(v, &end, 10);
        else if (!strcmp(f, "--sync-every")) o->sync_every = strtol(v, &end, 10);
        else if (!strcmp(f, "--step")) o->step = strtod(v, &end);
        else if (!strcmp(f, "--decay")) o->decay = strtod(v, &end);
        else if (!strcmp(f, "--lambda")) o->lambda = strtod(v, &end);
        else {
            complain("loom-lr: unknown flag '%s'; try --help\n", f);
            return -1;
        }
        if (end && (*end || errno || end == v)) {
            complain("loom-lr: %s: '%s' is not a number\n", f, v);
            return -1;
        }
        a++;
    }
    if (!o->img[0] && !o->lab[0] && !o->img[1] && !o->lab[1]) {
        const char *names[4] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
        for (int k = 0; k < 4; k++)
            snprintf(paths[k], sizeof paths[k], "%s/%s", dir ? dir : FMNIST, names[k]);
        o->img[0] = paths[0], o->lab[0] = paths[1], o->img[1] = paths[2], o->lab[1] = paths[3];
    }
    const char *bad = !o->img[0] || !o->lab[0] || !o->img[1] || !o->lab[1]
                          ? "give all four of --train-images, --train-labels, --test-images, "
                            "--test-labels (or --fashion-mnist DIR)"
                      : o->epochs < 1 ? "--epochs must be >= 1"
                      : !(o->step > 0) ? "--step must be > 0"
                      : !(o->decay > 0 && o->decay <= 1) ? "--decay must be in (0, 1]"
                      : !(o->lambda >= 0) ? "--lambda must be >= 0"
                      : o->staleness < 0 || o->staleness > 1000 ? "--staleness must be in 0..1000"
                      : o->sync_every < 1 ? "--sync-every must be >= 1"
                      : strcmp(o->sync, "hybrid") && strcmp(o->sync, "bsp") && strcmp(o->sync, "ssp")
                          ? "--sync must be hybrid, bsp or ssp"
                          : NULL;
    if (bad) {
        complain("loom-lr: %s; try --help\n", bad);
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
    }
    int C = 0;
    for (int64_t i = 0; !rc && i < yi.n; i++)
        C = yi.data[i] + 1 > C ? yi.data[i] + 1 : C;
    snprintf(msg, sizeof msg, "loom-lr: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
    int64_t N = xi.dim[0], F = xi.n / N;
    d->first = N * me / R;
    d->n = N * (me + 1) / R - d->first;
    d->total = N;
    d->D = (int)F + 1;
    d->C = C;
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
    struct data tr, te;
    load(o.img[0], o.lab[0], me, R, &tr);
    load(o.img[1], o.lab[1], me, R, &te);
    char msg[200];
    snprintf(msg, sizeof msg, "loom-lr: the training and test images differ in size (%d and %d "
             "features) or the test labels exceed the training classes", tr.D - 1, te.D - 1);
    loom_report_agree(te.D != tr.D || te.C > tr.C, msg);
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
    double busy = 0, acc = 0;
    for (int e = 1; e <= o.epochs; e++) {
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
        loom_report_row(rep, (double[]){e, (double)tr.total * e, busy, s[0] / (double)tr.total,
                                        acc});
        if (e == o.epochs && o.model && me == 0) {
            FILE *f = fopen(o.model, "w");
            for (int c = 0; f && c < C; c++)
                for (int x = 0; x < D; x++)
                    fprintf(f, "%.7g%c", rows[c][x], x + 1 < D ? ' ' : '\n');
            if (!f || fclose(f))
                loom_abort(1, "loom-lr: %s: %s", o.model, strerror(errno));
        }
    }
    if (me == 0)
        printf("loom-lr: %.0f samples/s over %d epochs (%.3f s training)\n",
               (double)tr.total * o.epochs / busy, o.epochs, busy);
    loom_report_final(rep, "test_accuracy", acc);
    loom_report_close(rep);
    free(Wserial);
    free(tr.X), free(tr.y), free(te.X), free(te.y);
    loom_free(W);
    return loom_finalize();
}
