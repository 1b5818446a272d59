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
 * (The Loom version lives in kernels/mf_dist.c, beside the serial twin.)
 * After an epoch every rank gathers H (loom_ring_collect) and the train
 * objective and test RMSE are summed over ranks (loom_allreduce); then
 * loom_clock, so LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs and a
 * restarted job (loomrun --restart) resumes after the last one.
 *
 *   loom-mf --train FILE --test FILE [--rank K] [--epochs N] [--step G]
 *           [--decay D] [--lambda L] [--lambda-bias B] [--seed S] [--log FILE.csv]
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
#include <sys/resource.h>
#include <sys/stat.h>

#include "../kernels/mf_dist.h"
#include "../data/mem.h"
#include "../data/ratings.h"
#include "common/flags.h"
#include "common/report.h"
#include "common/start.h"

struct opts {
    const char *train, *test, *log, *model;
    int K, epochs, serial, ordered, zero_based;
    double step, decay, lambda, lambda_bias;
    unsigned long long seed;
};

/* Parses argv into o; on a bad argument prints why (rank 0) and returns
 * -1; 1 after --help or --version. */
static int parse(int argc, char **argv, void *opts)
{
    struct opts *o = opts;
    *o = (struct opts){.K = 20, .epochs = 30, .step = 0.03, .decay = 0.95, .lambda = 0.08,
                       .lambda_bias = 6, .seed = 1};
    const loom_flag flags[] = {
        {"train", LOOM_FLAG_STR, &o->train, "FILE", 0, 0,
         "training ratings: MovieLens triples or\nMatrixMarket coordinate (docs/data.md)"},
        {"test", LOOM_FLAG_STR, &o->test, "FILE", 0, 0, "test ratings, the same formats"},
        {"zero-based", LOOM_FLAG_SET, &o->zero_based, NULL, 0, 0,
         "the triples' ids start at 0 (LIBMF's files);\nMatrixMarket is 1-based regardless"},
        {"rank", LOOM_FLAG_INT, &o->K, "K", 1, 4096, "factors per row (default 20)"},
        {"epochs", LOOM_FLAG_INT, &o->epochs, "N", 1, HUGE_VAL,
         "passes over the training ratings (default 30)"},
        {"step", LOOM_FLAG_NUM, &o->step, "G", 0, 0,
         "SGD step size (default 0.03); epoch e uses\nG * D^(e-1)"},
        {"decay", LOOM_FLAG_NUM, &o->decay, "D", 0, 0,
         "step decay per epoch, 0 < D <= 1 (default 0.95)"},
        {"lambda", LOOM_FLAG_NUM, &o->lambda, "L", 0, HUGE_VAL,
         "L2 regularization of the factors, per rating\n(default 0.08)"},
        {"lambda-bias", LOOM_FLAG_NUM, &o->lambda_bias, "B", 0, HUGE_VAL,
         "L2 regularization of the biases, per row\n(B / its ratings per rating; default 6)"},
        {"seed", LOOM_FLAG_ULONG, &o->seed, "S", 0, 0, "model initialization seed (default 1)"},
        {"log", LOOM_FLAG_STR, &o->log, "FILE.csv", 0, 0,
         "CSV log: iter,samples,seconds,train_obj,\ntrain_rmse,test_rmse"},
        {"model", LOOM_FLAG_STR, &o->model, "DIR", 0, 0,
         "save W.txt (users), H.txt (items), the biases\nand the mean there"},
        {"serial", LOOM_FLAG_SET, &o->serial, NULL, 0, 0,
         "run the serial twin (one rank): the plain loop,\nin file order"},
        {"ordered", LOOM_FLAG_SET, &o->ordered, NULL, 0, 0,
         "keep the file's order of ratings that share a\nuser or an item (Orion's ordered schedule):\n"
         "the serial twin's model, bitwise; the file must\nbe sorted by user, then item"},
        {0}};
    const loom_cli cli = {
        .app = "loom-mf",
        .usage = "loom-mf --train FILE --test FILE [OPTION]...",
        .about = "Matrix factorization by SGD on the ring schedule: the serial loop over\n"
                 "the ratings, made serializable.  Runs on the ranks loomrun starts.",
        .flags = flags,
        .more = "Threads: OMP_NUM_THREADS.  See docs/loom-mf.md."};
    int rc = loom_flags_parse(&cli, argc, argv, 1);
    if (rc)
        return rc;
    const char *bad = !o->train ? "--train is required"
                      : !o->test ? "--test is required"
                      : !(o->step > 0) ? "--step must be > 0"
                      : !(o->decay > 0 && o->decay <= 1) ? "--decay must be in (0, 1]"
                      : NULL;
    return bad ? loom_flags_complain("loom-mf", bad) : 0;
}

/* Loads all of path (triples with ids from first_id, or MatrixMarket),
 * with the ids as read (for dense_ids).
 * Collective: if any rank fails, the job ends with its "FILE:LINE: ..."
 * message. */
static void load(const char *path, int first_id, loom_ratings *out)
{
    char err[512], msg[600];
    int rc = loom_ratings_read_raw(path, first_id, out, err, sizeof err);
    snprintf(msg, sizeof msg, "loom-mf: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Rating x's id of field `item` (0 users, 1 items) as read: raw when the
 * file had an id past INT32_MAX (loom_ratings_read_raw), else u or i. */
static inline int64_t id_of(const loom_ratings *r, int64_t x, int item)
{
    return r->raw ? r->raw[2 * x + item] : item ? r->v[x].i : r->v[x].u;
}

/* Dense ids (docs/loom-mf.md, "Ids"): the distinct ids of field `item`
 * (0 users, 1 items) in both files as read, sorted, become 0, 1, ...:
 * each rating's u (i) is set to its id's index, so the model has one row
 * per id that occurs, whatever the ids' values (up to 2^63 - 1).  Ids up
 * to 64 per rating (plus 2^20) are numbered with a bitmap of the ids that
 * occur and a count per 64 of them (O(n), one bit and half a byte per
 * possible id); sparser or larger ids by sorting a copy of all ids.
 * Returns how many; *ids (malloc'd) holds each dense id's 0-based id.  The
 * same on every rank (each holds both files whole).  Aborts when out of
 * memory or past 2^31 - 1 distinct ids. */
static int32_t dense_ids(loom_ratings *a, loom_ratings *b, int item, int64_t **ids)
{
    int64_t n = a->n + b->n, m = 0, top = -1;
    loom_ratings *f[2] = {a, b};
    for (int x = 0; x < 2; x++) {
        const loom_ratings *r = f[x];
#pragma omp parallel for schedule(static) reduction(max : top)
        for (int64_t k = 0; k < r->n; k++)
            top = id_of(r, k, item) > top ? id_of(r, k, item) : top;
    }
    if (!a->raw && !b->raw && top < 64 * n + (1 << 20)) {
        size_t words = (size_t)(top + 1) / 64 + 1;
        uint64_t *bits = calloc(words, sizeof *bits);
        uint32_t *before = malloc(words * sizeof *before);
        if (!bits || !before)
            loom_abort(1, "loom-mf: out of memory numbering the ids of %lld ratings", (long long)n);
        for (int x = 0; x < 2; x++) {
            const loom_ratings *r = f[x];
#pragma omp parallel for schedule(static)
            for (int64_t k = 0; k < r->n; k++) {
                int64_t id = id_of(r, k, item);
                __atomic_fetch_or(&bits[id >> 6], 1ULL << (id & 63), __ATOMIC_RELAXED);
            }
        }
        for (size_t w = 0; w < words; w++) {
            before[w] = (uint32_t)m;
            m += __builtin_popcountll(bits[w]);
        }
        if (m > INT32_MAX)
            loom_abort(1, "loom-mf: more than 2147483647 distinct %s ids", item ? "item" : "user");
        for (int x = 0; x < 2; x++) {
            loom_ratings *r = f[x];
#pragma omp parallel for schedule(static)
            for (int64_t k = 0; k < r->n; k++) {
                int64_t id = id_of(r, k, item);
                int32_t d = (int32_t)(before[id >> 6] +
                                      __builtin_popcountll(bits[id >> 6] & ((1ULL << (id & 63)) - 1)));
                *(item ? &r->v[k].i : &r->v[k].u) = d;
            }
        }
        *ids = malloc((size_t)(m ? m : 1) * sizeof **ids);
        if (!*ids)
            loom_abort(1, "loom-mf: out of memory numbering the ids of %lld ratings", (long long)n);
        for (size_t w = 0, d = 0; w < words; w++)
            for (uint64_t x = bits[w]; x; x &= x - 1)
                (*ids)[d++] = (int64_t)(w * 64 + (size_t)__builtin_ctzll(x));
        free(bits);
        free(before);
        return (int32_t)m;
    }
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v), k = 0;
    if (!v)
        loom_abort(1, "loom-mf: out of memory numbering the ids of %lld ratings", (long long)n);
    for (int x = 0; x < 2; x++)
        for (int64_t y = 0; y < f[x]->n; y++)
            v[k++] = id_of(f[x], y, item);
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    for (int64_t x = 0; x < n; x++)
        if (!m || v[x] != v[m - 1])
            v[m++] = v[x];
    if (m > INT32_MAX)
        loom_abort(1, "loom-mf: more than 2147483647 distinct %s ids", item ? "item" : "user");
    for (int x = 0; x < 2; x++) {
        loom_ratings *r = f[x];
        for (int64_t y = 0; y < r->n; y++) {
            int64_t id = id_of(r, y, item);
            const int64_t *at = bsearch(&id, v, (size_t)m, sizeof *v, cmp_i64);
            *(item ? &r->v[y].i : &r->v[y].u) = (int32_t)(at - v);
        }
    }
    *ids = realloc(v, (size_t)(m ? m : 1) * sizeof *v);
    if (!*ids)
        *ids = v;
    return (int32_t)m;
}

/* path's lines: each dense id's id as the files write it (first_id + the
 * 0-based id).  0, or -1 with errno. */
static int save_ids(const char *path, const int64_t *raw, int32_t n, int first_id)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (int32_t d = 0; d < n; d++)
        fprintf(f, "%lld\n", (long long)raw[d] + first_id);
    return fclose(f) ? -1 : 0;
}

/* W (all users, this rank's block filled) and H gathered onto rank 0 and
 * written to DIR: W.txt and H.txt (factors), user_bias.txt, item_bias.txt
 * and mean.txt.  Collective. */
static void save_model(const char *dir, float *W, const float *H, int32_t nu, int32_t ni,
                       int K, int D, float mu, const loom_user_range *mine,
                       int64_t *const raw[2], int first_id)
{
    size_t nw = (size_t)nu * (size_t)D;
    float *all = calloc(nw ? nw : 1, sizeof *all);
    if (!all)
        loom_abort(1, "loom-mf: out of memory saving the model");
    memcpy(all + (size_t)mine->lo * D, W + (size_t)mine->lo * D,
           (size_t)(mine->hi - mine->lo) * D * sizeof *all);
    loom_allreduce(LOOM_IN_PLACE, all, nw, LOOM_FLOAT, LOOM_SUM); /* others' rows are 0 */
    if (loom_rank() == 0) {
        if (mkdir(dir, 0777) && errno != EEXIST)
            loom_abort(1, "loom-mf: %s: %s", dir, strerror(errno));
        const struct { const char *name; const float *M; int32_t rows; int c0, nc; } f[4] = {
            {"W.txt", all, nu, 0, K}, {"H.txt", H, ni, 0, K},
            {"user_bias.txt", all, nu, K, 1}, {"item_bias.txt", H, ni, K, 1}};
        char p[4096];
        for (int x = 0; x < 4; x++) {
            snprintf(p, sizeof p, "%s/%s", dir, f[x].name);
            if (loom_mf_save(p, f[x].M, f[x].rows, D, f[x].c0, f[x].nc))
                loom_abort(1, "loom-mf: %s: %s", p, strerror(errno));
        }
        snprintf(p, sizeof p, "%s/mean.txt", dir);
        FILE *m = fopen(p, "w");
        if (!m || fprintf(m, "%.9g\n", mu) < 0 || fclose(m))
            loom_abort(1, "loom-mf: %s: %s", p, strerror(errno));
        for (int x = 0; x < 2; x++) { /* row r of W.txt (H.txt) is the r-th line's id */
            snprintf(p, sizeof p, "%s/%s", dir, x ? "item_ids.txt" : "user_ids.txt");
            if (save_ids(p, raw[x], x ? ni : nu, first_id))
                loom_abort(1, "loom-mf: %s: %s", p, strerror(errno));
        }
        printf("loom-mf: model saved to %s: W.txt (%d x %d), H.txt (%d x %d), user_bias.txt, "
               "item_bias.txt, mean.txt, user_ids.txt, item_ids.txt\n", dir, nu, K, ni, K);
    }
    free(all);
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    int rc = loom_app_start("loom-mf", &argc, &argv, parse, &o, &o.serial);
    if (rc != LOOM_APP_GO)
        return rc;
    int R = loom_size(), me = loom_rank();

    /* One read of each file; every rank then keeps its block of users,
     * split by rating count. */
    loom_ratings tr, te;
    loom_user_range mine;
    load(o.train, !o.zero_based, &tr);
    load(o.test, !o.zero_based, &te);
    int64_t ntrain = tr.nfile, ntest = te.nfile;
    char none[600];
    snprintf(none, sizeof none, "loom-mf: %s has no ratings", ntrain ? o.test : o.train);
    loom_report_agree(ntrain == 0 || ntest == 0, none); /* one message, not one per rank */
    /* one row per id that occurs: memory follows the distinct ids, not
     * the largest (a user id of 2^31 - 1 in a 2-line file) */
    int64_t *raw[2];
    int32_t nu = dense_ids(&tr, &te, 0, &raw[0]), ni = dense_ids(&tr, &te, 1, &raw[1]);
    for (int f = 0; f < 2; f++) { /* the ids as read are no longer needed */
        loom_ratings *r = f ? &te : &tr;
        free(r->raw);
        r->raw = NULL;
    }
    int first_id = tr.format == LOOM_RATINGS_MATRIXMARKET || !o.zero_based;
    {
        int D = loom_mf_stride(o.K);
        char what[160], why[700], msg[800];
        snprintf(what, sizeof what, "%d users x %d items at --rank %d", nu, ni, o.K);
        int bad = loom_mem_check(o.train, what,
                                 ((double)nu + ni) * (D * 4.0 * 2 + 16) +
                                     (double)(tr.n + te.n) * 24,
                                 why, sizeof why) != LOOM_OK;
        snprintf(msg, sizeof msg, "loom-mf: %s", why);
        loom_report_agree(bad, msg);
    }
    float mu = (float)(tr.sum / (double)tr.n);
    loom_ratings_split(&tr, nu, me, R, &mine);
    loom_ratings_keep(&tr, &mine);
    loom_ratings_keep(&te, &mine);
    if (me == 0)
        printf("loom-mf: %lld training and %lld test ratings, %d users x %d items, rank %d, "
               "%d rank(s) x %d thread(s)%s\n", (long long)ntrain, (long long)ntest, nu, ni, o.K,
               R, omp_get_max_threads(), o.serial ? ", serial twin" : "");

    /* Training ratings per user (this rank's) and per item (all ranks'):
     * rows with none stay zero, and test ratings that meet one are counted. */
    uint32_t *cu = calloc((size_t)nu + 1, sizeof *cu), *ci = calloc((size_t)ni + 1, sizeof *ci);
    if (!cu || !ci)
        loom_abort(1, "loom-mf: out of memory counting ratings");
    for (int64_t k = 0; k < tr.n; k++)
        cu[tr.v[k].u]++, ci[tr.v[k].i]++;
    loom_allreduce(LOOM_IN_PLACE, ci, (size_t)ni, LOOM_INT32, LOOM_SUM);
    int64_t unseen[2] = {0, 0};
    for (int64_t k = 0; k < te.n; k++)
        unseen[0] += !cu[te.v[k].u], unseen[1] += !ci[te.v[k].i];
    loom_allreduce(LOOM_IN_PLACE, unseen, 2, LOOM_INT64, LOOM_SUM);
    if (me == 0 && (unseen[0] || unseen[1]))
        printf("loom-mf: %lld test ratings of users and %lld of items unseen in training: "
               "predicted from the mean and the known bias\n", (long long)unseen[0],
               (long long)unseen[1]);

    /* The model: W local to each rank, H rotating on the ring (kernels/mf_dist.c). */
    loom_mf_dist j = {.m = {.lambda = (float)o.lambda, .lambda_bias = (float)o.lambda_bias},
                      .serial = o.serial, .ordered = o.ordered, .tick = loom_report_tick};
    loom_mf_dist_init(&j, nu, ni, o.K, mu, &mine, cu, ci, o.seed);
    int done = (int)loom_clock_now(); /* epochs before a restart: W and H came back */
    float *W = j.m.W, *H = j.m.H;
    int D = j.m.D;
    free(cu);
    free(ci);

    char err[512] = "", msg[600];
    loom_report *rep = loom_report_open("loom-mf", o.log,
                                        "iter,samples,seconds,train_obj,train_rmse,test_rmse",
                                        err, sizeof err);
    snprintf(msg, sizeof msg, "loom-mf: %s", err);
    loom_report_agree(!rep, msg);
    double busy = 0, test_rmse = NAN;
    for (int e = done + 1; e <= o.epochs; e++) {
        loom_report_begin(rep, e, tr.n);
        double t0 = loom_wtime();
        double sq = loom_mf_dist_epoch(&j, tr.v, tr.n, (float)(o.step * pow(o.decay, e - 1)));
        busy += loom_wtime() - t0;
        loom_ring_collect(H);
        double hnorm[2]; /* now: after the allreduce, the next epoch's ring hand-offs may
                          * land in H */
        loom_mf_sq_norm(H, ni, o.K, D, hnorm);
        double s[4] = {sq, loom_mf_sq_error(te.v, te.n, &j.m)};
        loom_mf_sq_norm(W + (size_t)mine.lo * D, mine.hi - mine.lo, o.K, D, s + 2);
        loom_allreduce(LOOM_IN_PLACE, s, 4, LOOM_DOUBLE, LOOM_SUM);
        double obj = s[0] + o.lambda * (s[2] + hnorm[0]) + o.lambda_bias * (s[3] + hnorm[1]);
        test_rmse = sqrt(s[1] / (double)ntest);
        loom_report_row(rep, (double[]){e, (double)ntrain * e, busy, obj,
                                        sqrt(s[0] / (double)ntrain), test_rmse});
        loom_clock(); /* one per epoch: LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs */
    }
    if (done >= o.epochs) { /* restarted after the last epoch's checkpoint: the model came
                             * back whole; H's rows are spread over the ring, so collect it
                             * and evaluate it as the last epoch did */
        loom_ring_collect(H);
        double s = loom_mf_sq_error(te.v, te.n, &j.m);
        loom_allreduce(LOOM_IN_PLACE, &s, 1, LOOM_DOUBLE, LOOM_SUM);
        test_rmse = sqrt(s / (double)ntest);
    }
    if (me == 0 && busy > 0)
        printf("loom-mf: %.0f updates/s over %d epochs (%.3f s training)\n",
               (double)ntrain * (o.epochs - done) / busy, o.epochs - done, busy);
    struct rusage ru;
    if (me == 0 && !getrusage(RUSAGE_SELF, &ru)) /* Linux: ru_maxrss in KiB */
        printf("loom-mf: peak resident memory %.0f MiB (rank 0)\n", ru.ru_maxrss / 1024.0);
    if (o.model)
        save_model(o.model, W, H, nu, ni, o.K, D, mu, &mine, raw, first_id);
    free(raw[0]);
    free(raw[1]);
    loom_report_final(rep, "test_rmse", test_rmse);
    loom_report_close(rep);
    loom_ratings_free(&tr);
    loom_ratings_free(&te);
    loom_mf_dist_free(&j);
    return loom_finalize();
}
