/* loom-mf.c — SGD matrix factorization (seed 000 Algorithm 7) on the ring
 * schedule: the serial SGD loop over ratings, made serializable by
 * loom_for.
 *
 * Layout over R ranks x T threads:
 *   - each rank keeps the ratings of one block of users (its own data:
 *     nobody else reads them), and the rows W[u] of those users in a
 *     "local" allocation;
 *   - H (one row per item) is a "ring" allocation: its R partitions
 *     rotate, so in each of an epoch's R sub-epochs a rank owns one
 *     partition and updates the ratings whose item falls in it;
 *   - loom_for(.schedule = LOOM_SERIALIZABLE, .local = 1) plans each
 *     rank's ratings into cells (user block x item sub-block) once and
 *     runs the same plan every epoch (.repeated), so the result equals
 *     some serial order of the updates.
 * After an epoch every rank gathers H (loom_ring_collect) and the train
 * objective and test RMSE are summed over ranks (loom_allreduce); then
 * loom_clock, so LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs and a
 * restarted job (loomrun --restart) resumes after the last one.
 *
 *   loom-mf --train FILE --test FILE [--rank K] [--epochs N] [--step G]
 *           [--decay D] [--lambda L] [--seed S] [--log FILE.csv]
 *           [--model DIR] [--serial]
 * FILE: MovieLens triples or MatrixMarket coordinate (docs/data.md).
 * docs/loom-mf.md has the flags, output and figures. */
#include <loom.h>

#include <errno.h>
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernels/mf.h"
#include "../kernels/ratings.h"
#include "../kernels/flags.h"
#include "../kernels/report.h"

struct opts {
    const char *train, *test, *log, *model;
    int K, epochs, serial;
    double step, decay, lambda;
    unsigned long long seed;
};

/* What the loop body reads: the ratings, the model and this epoch's step. */
struct job {
    const loom_rating *v;
    float *W, *H;
    int K;
    float step, lambda;
};

static void sgd(long k, void *ctx)
{
    struct job *j = ctx;
    const loom_rating *x = &j->v[k];
    loom_mf_update(j->W + (size_t)x->u * j->K, j->H + (size_t)x->i * j->K, j->K, x->r, j->step,
                   j->lambda);
    loom_report_tick(1);
}

static void sgd_deps(long k, loom_deps *d, void *ctx)
{
    struct job *j = ctx;
    loom_writes(d, j->W, (size_t)j->v[k].u);
    loom_writes(d, j->H, (size_t)j->v[k].i);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: loom-mf --train FILE --test FILE [--rank K] [--epochs N] [--step G]\n"
            "               [--decay D] [--lambda L] [--seed S] [--log FILE.csv]\n"
            "               [--model DIR] [--serial]\n"
            "  --rank K      factors per row (default 20)\n"
            "  --epochs N    passes over the training ratings (default 30)\n"
            "  --step G      SGD step size (default 0.02); epoch e uses G * D^(e-1)\n"
            "  --decay D     step decay per epoch, 0 < D <= 1 (default 0.9)\n"
            "  --lambda L    L2 regularization (default 0.08)\n"
            "  --seed S      model initialization seed (default 1)\n"
            "  --log FILE    CSV log: iter,samples,seconds,train_obj,train_rmse,test_rmse\n"
            "  --model DIR   save W.txt (users) and H.txt (items) there\n"
            "  --serial      run the serial twin (one rank): the plain loop, in file order\n");
}

/* Parses argv into o; on a bad argument prints why (rank 0) and returns
 * -1; 1 after --help. */
static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.K = 20, .epochs = 30, .step = 0.02, .decay = 0.9, .lambda = 0.08,
                       .seed = 1};
    const loom_flag flags[] = {
        {"--train", LOOM_FLAG_STR, &o->train},   {"--test", LOOM_FLAG_STR, &o->test},
        {"--log", LOOM_FLAG_STR, &o->log},       {"--model", LOOM_FLAG_STR, &o->model},
        {"--rank", LOOM_FLAG_INT, &o->K},        {"--epochs", LOOM_FLAG_INT, &o->epochs},
        {"--seed", LOOM_FLAG_ULONG, &o->seed},   {"--step", LOOM_FLAG_NUM, &o->step},
        {"--decay", LOOM_FLAG_NUM, &o->decay},   {"--lambda", LOOM_FLAG_NUM, &o->lambda},
        {"--serial", LOOM_FLAG_SET, &o->serial}, {0}};
    int rc = loom_flags_parse("loom-mf", argc, argv, 1, flags, usage);
    if (rc)
        return rc;
    const char *bad = !o->train ? "--train is required"
                      : !o->test ? "--test is required"
                      : o->K < 1 || o->K > 4096 ? "--rank must be in 1..4096"
                      : o->epochs < 1 ? "--epochs must be >= 1"
                      : !(o->step > 0) ? "--step must be > 0"
                      : !(o->decay > 0 && o->decay <= 1) ? "--decay must be in (0, 1]"
                      : !(o->lambda >= 0) ? "--lambda must be >= 0"
                      : NULL;
    if (bad) {
        loom_flags_complain("loom-mf", bad);
        return -1;
    }
    return 0;
}

/* Loads path keeping users in keep (NULL: all).  Collective: if any rank
 * fails, the job ends with its "FILE:LINE: ..." message. */
static void load(const char *path, const loom_user_range *keep, loom_ratings *out)
{
    char err[512], msg[600];
    int rc = loom_ratings_load(path, keep, out, err, sizeof err);
    snprintf(msg, sizeof msg, "loom-mf: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
}

/* W (all users, this rank's block filled) and H gathered onto rank 0 and
 * written to DIR/W.txt and DIR/H.txt.  Collective. */
static void save_model(const char *dir, float *W, const float *H, int32_t nu, int32_t ni,
                       int K, const loom_user_range *mine)
{
    size_t nw = (size_t)nu * (size_t)K;
    float *all = calloc(nw ? nw : 1, sizeof *all);
    if (!all)
        loom_abort(1, "loom-mf: out of memory saving the model");
    memcpy(all + (size_t)mine->lo * K, W + (size_t)mine->lo * K,
           (size_t)(mine->hi - mine->lo) * K * sizeof *all);
    loom_allreduce(LOOM_IN_PLACE, all, nw, LOOM_FLOAT, LOOM_SUM); /* others' rows are 0 */
    if (loom_rank() == 0) {
        char p[4096];
        if (mkdir(dir, 0777) && errno != EEXIST)
            loom_abort(1, "loom-mf: %s: %s", dir, strerror(errno));
        snprintf(p, sizeof p, "%s/W.txt", dir);
        if (loom_mf_save(p, all, nu, K))
            loom_abort(1, "loom-mf: %s: %s", p, strerror(errno));
        snprintf(p, sizeof p, "%s/H.txt", dir);
        if (loom_mf_save(p, H, ni, K))
            loom_abort(1, "loom-mf: %s: %s", p, strerror(errno));
        printf("loom-mf: model saved to %s/W.txt (%d x %d) and %s/H.txt (%d x %d)\n", dir, nu,
               K, dir, ni, K);
    }
    free(all);
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
        loom_abort(2, "loom-mf: --serial runs on one rank (got %d)", R);

    /* Pass 1 sizes the model; pass 2 keeps this rank's block of users. */
    loom_ratings tr, te;
    loom_user_range none = {0, 0}, mine;
    load(o.train, &none, &tr);
    load(o.test, &none, &te);
    int32_t nu = tr.nusers > te.nusers ? tr.nusers : te.nusers;
    int32_t ni = tr.nitems > te.nitems ? tr.nitems : te.nitems;
    int64_t ntrain = tr.nfile, ntest = te.nfile;
    loom_ratings_block(nu, me, R, &mine);
    load(o.train, &mine, &tr);
    load(o.test, &mine, &te);
    double mean[2] = {tr.sum, (double)tr.n};
    loom_allreduce(LOOM_IN_PLACE, mean, 2, LOOM_DOUBLE, LOOM_SUM);
    if (ntrain == 0 || ntest == 0)
        loom_abort(1, "loom-mf: %s has no ratings", ntrain ? o.test : o.train);
    if (me == 0)
        printf("loom-mf: %lld training and %lld test ratings, %d users x %d items, rank %d, "
               "%d rank(s) x %d thread(s)%s\n", (long long)ntrain, (long long)ntest, nu, ni, o.K,
               R, omp_get_max_threads(), o.serial ? ", serial twin" : "");

    /* The model: W local to each rank, H rotating on the ring. */
    size_t row = (size_t)o.K * sizeof(float);
    float *W = loom_alloc((size_t)nu * row, &(loom_alloc_opts){.name = "W",
                          .unit = LOOM_UNIT_ROW, .row_size = row, .coherence = "local"});
    float *H = loom_alloc((size_t)ni * row, &(loom_alloc_opts){.name = "H",
                          .unit = LOOM_UNIT_ROW, .row_size = row, .coherence = "ring"});
    if (!W || !H)
        loom_abort(1, "loom-mf: cannot allocate the model (%d + %d rows of %d floats)", nu, ni,
                   o.K);
    size_t hfirst, hn;
    loom_ring_part(H, NULL, NULL, &hfirst, &hn);
    int done = (int)loom_clock_now(); /* epochs before a restart: W and H came back */
    if (!loom_restarted()) {
        loom_mf_init_rows(W + (size_t)mine.lo * o.K, mine.lo, mine.hi - mine.lo, o.K,
                          mean[0] / mean[1], o.seed);
        loom_mf_init_rows(H + hfirst * o.K, (int64_t)hfirst, (int64_t)hn, o.K,
                          mean[0] / mean[1], o.seed ^ 0x9e3779b97f4a7c15ULL);
    }

    char err[512] = "", msg[600];
    loom_report *rep = loom_report_open("loom-mf", o.log,
                                        "iter,samples,seconds,train_obj,train_rmse,test_rmse",
                                        err, sizeof err);
    snprintf(msg, sizeof msg, "loom-mf: %s", err);
    loom_report_agree(!rep, msg);
    struct job j = {tr.v, W, H, o.K, (float)o.step, (float)o.lambda};
    double busy = 0, test_rmse = NAN;
    for (int e = done + 1; e <= o.epochs; e++) {
        j.step = (float)(o.step * pow(o.decay, e - 1));
        loom_report_begin(rep, e, tr.n);
        double t0 = loom_wtime();
        if (o.serial)
            loom_mf_epoch(tr.v, tr.n, W, H, o.K, j.step, j.lambda);
        else if (loom_for(0, tr.n, sgd, &j, &(loom_for_opts){.schedule = LOOM_SERIALIZABLE,
                          .deps = sgd_deps, .local = 1, .repeated = 1}))
            loom_abort(1, "loom-mf: the SGD loop failed in epoch %d", e);
        busy += loom_wtime() - t0;
        loom_ring_collect(H);
        double hnorm = loom_mf_sq_norm(H, ni, o.K); /* now: after the allreduce, the next
                                                       epoch's ring hand-offs may land in H */
        double s[3] = {loom_mf_sq_error(tr.v, tr.n, W, H, o.K),
                       loom_mf_sq_error(te.v, te.n, W, H, o.K),
                       loom_mf_sq_norm(W + (size_t)mine.lo * o.K, mine.hi - mine.lo, o.K)};
        loom_allreduce(LOOM_IN_PLACE, s, 3, LOOM_DOUBLE, LOOM_SUM);
        double obj = s[0] + o.lambda * (s[2] + hnorm);
        test_rmse = sqrt(s[1] / (double)ntest);
        loom_report_row(rep, (double[]){e, (double)ntrain * e, busy, obj,
                                        sqrt(s[0] / (double)ntrain), test_rmse});
        loom_clock(); /* one per epoch: LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs */
    }
    if (me == 0 && busy > 0)
        printf("loom-mf: %.0f updates/s over %d epochs (%.3f s training)\n",
               (double)ntrain * (o.epochs - done) / busy, o.epochs - done, busy);
    if (o.model)
        save_model(o.model, W, H, nu, ni, o.K, &mine);
    loom_report_final(rep, "test_rmse", test_rmse);
    loom_report_close(rep);
    loom_ratings_free(&tr);
    loom_ratings_free(&te);
    loom_free(W);
    loom_free(H);
    return loom_finalize();
}
