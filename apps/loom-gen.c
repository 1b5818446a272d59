/* loom-gen.c — the data generator command: Netflix-shaped ratings from a
 * planted low-rank model, a corpus drawn from the LDA generative model, or
 * a planted sparse regression problem for loom-lasso,
 * so that runs of 10^7-10^8 samples need no download (kernels/gen.c does
 * the work; docs/data.md describes the models and the files).
 *
 *   loom-gen ratings --users U --items I --rank K --samples N --out PREFIX
 *                    [--test-fraction F] [--noise S] [--zipf-users A]
 *                    [--zipf-items A] [--real] [--seed S]
 *   loom-gen lda --docs D --vocab V --topics K --doc-length L --out PREFIX
 *                [--alpha A] [--beta B] [--zipf A] [--seed S]
 *   loom-gen lasso --samples N --features P --nonzeros K --out PREFIX
 *                  [--noise S] [--correlation C] [--density D] [--seed S]
 *
 * Counts may be written 10000000 or 1e7.  Exit status: 0, 1 when writing
 * failed, 2 for bad arguments (with the usage on stderr). */
#include "../kernels/gen.h"
#include "../kernels/gen_lasso.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: loom-gen ratings --users U --items I --rank K --samples N --out PREFIX\n"
    "                        [--test-fraction F] [--noise S] [--zipf-users A]\n"
    "                        [--zipf-items A] [--real] [--seed S]\n"
    "         writes PREFIX.train and PREFIX.test: 'user<TAB>item<TAB>rating' lines\n"
    "         (defaults: rank 10, test fraction 0.1, noise 0.5, zipf-users 0.4,\n"
    "         zipf-items 0.6, integer ratings 1..5, seed 1)\n"
    "       loom-gen lda --docs D --vocab V --topics K --doc-length L --out PREFIX\n"
    "                    [--alpha A] [--beta B] [--zipf A] [--seed S]\n"
    "         writes PREFIX.docword.txt, PREFIX.vocab.txt (UCI bag-of-words) and\n"
    "         PREFIX.topics.txt (the planted topics, K lines of V probabilities)\n"
    "         (defaults: alpha 0.1, beta 0.01, zipf 1.0, seed 1)\n"
    "       loom-gen lasso --samples N --features P --nonzeros K --out PREFIX\n"
    "                      [--noise S] [--correlation C] [--density D] [--seed S]\n"
    "         writes PREFIX.X.mtx, PREFIX.y.mtx (MatrixMarket), PREFIX.svm (LIBSVM)\n"
    "         and PREFIX.beta.txt (the planted coefficients), y = X beta + noise\n"
    "         (defaults: noise 0.5, correlation 0, density 1, seed 1)\n"
    "Counts may be written as 1e7.  See docs/data.md.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "loom-gen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return 2;
}

/* A count: an integer in [lo, hi], plain or as 1e7. */
static int parse_count(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    char *end;
    if (!*s || strpbrk(s, "xXpPnN") || *s == ' ')
        return -1;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || x != floor(x) || x < (double)lo || x > (double)hi)
        return -1;
    *v = (int64_t)x;
    return 0;
}

static int parse_real(const char *s, double *v)
{
    char *end;
    if (!*s || strpbrk(s, "xXpPnNiI") || *s == ' ')
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    return errno || *end ? -1 : 0;
}

static double now(void)
{
    return loom_wtime();
}

/* Option table for one subcommand: name, kind (c = count into i64, r =
 * real into dbl, s = string, f = flag), and where it goes. */
struct opt {
    const char *name;
    char kind;
    int64_t lo, hi;
    int64_t *i64;
    double *dbl;
    const char **str;
    int *flag;
    int seen;
};

static int parse(int argc, char **argv, struct opt *opts)
{
    for (int a = 2; a < argc; a++) {
        struct opt *o = opts;
        while (o->name && strcmp(o->name, argv[a]))
            o++;
        if (!o->name)
            return usage_error("unknown option '%s'", argv[a]);
        o->seen = 1;
        if (o->kind == 'f') {
            *o->flag = 1;
            continue;
        }
        if (a + 1 >= argc)
            return usage_error("%s needs a value", argv[a]);
        const char *v = argv[++a];
        if (o->kind == 's')
            *o->str = v;
        else if (o->kind == 'c' && parse_count(v, o->lo, o->hi, o->i64)) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s wants an integer from %lld to %lld, not '%%s'", o->name,
                     (long long)o->lo, (long long)o->hi);
            return usage_error(msg, v);
        } else if (o->kind == 'r' && parse_real(v, o->dbl)) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s wants a number, not '%%s'", o->name);
            return usage_error(msg, v);
        }
    }
    return 0;
}

static int require(const struct opt *opts, const char *const *names)
{
    for (; *names; names++)
        for (const struct opt *o = opts; o->name; o++)
            if (!strcmp(o->name, *names) && !o->seen)
                return usage_error("missing %s", *names);
    return 0;
}

static int gen_ratings(int argc, char **argv)
{
    loom_gen_ratings_opts g;
    loom_gen_ratings_defaults(&g);
    int64_t users = 0, items = 0, rank = g.rank, samples = 0, seed = (int64_t)g.seed;
    const char *out = NULL;
    struct opt opts[] = {
        {.name = "--users", .kind = 'c', .lo = 1, .hi = INT32_MAX, .i64 = &users},
        {.name = "--items", .kind = 'c', .lo = 1, .hi = INT32_MAX, .i64 = &items},
        {.name = "--rank", .kind = 'c', .lo = 1, .hi = 10000, .i64 = &rank},
        {.name = "--samples", .kind = 'c', .lo = 1, .hi = INT64_MAX / 2, .i64 = &samples},
        {.name = "--seed", .kind = 'c', .lo = 0, .hi = INT64_MAX / 2, .i64 = &seed},
        {.name = "--test-fraction", .kind = 'r', .dbl = &g.test_fraction},
        {.name = "--noise", .kind = 'r', .dbl = &g.noise},
        {.name = "--zipf-users", .kind = 'r', .dbl = &g.zipf_users},
        {.name = "--zipf-items", .kind = 'r', .dbl = &g.zipf_items},
        {.name = "--real", .kind = 'f', .flag = &g.real},
        {.name = "--out", .kind = 's', .str = &out},
        {.name = NULL},
    };
    static const char *const needed[] = {"--users", "--items", "--rank", "--samples", "--out",
                                         NULL};
    int rc = parse(argc, argv, opts);
    if (rc || (rc = require(opts, needed)))
        return rc;
    g.users = (int32_t)users;
    g.items = (int32_t)items;
    g.rank = (int32_t)rank;
    g.samples = samples;
    g.seed = (uint64_t)seed;
    char err[512];
    loom_gen_ratings_stats st;
    double t0 = now();
    rc = loom_gen_ratings(&g, out, &st, err, sizeof err);
    if (rc == LOOM_ERR_ARG)
        return usage_error("%s", err);
    if (rc) {
        fprintf(stderr, "loom-gen: %s\n", err);
        return 1;
    }
    printf("loom-gen ratings: %s.train %lld ratings, %s.test %lld ratings; %d users "
           "(%d rated, at most %d ratings each), %d items, rank %d; planted-model test "
           "RMSE %.4f; %.2f s\n",
           out, (long long)st.train, out, (long long)st.test, (int)g.users, (int)st.users_rated,
           (int)st.max_degree, (int)g.items, (int)g.rank, st.planted_rmse, now() - t0);
    return 0;
}

static int gen_lda(int argc, char **argv)
{
    loom_gen_lda_opts g;
    loom_gen_lda_defaults(&g);
    int64_t docs = 0, vocab = 0, topics = 0, seed = (int64_t)g.seed;
    const char *out = NULL;
    struct opt opts[] = {
        {.name = "--docs", .kind = 'c', .lo = 1, .hi = INT32_MAX - 1, .i64 = &docs},
        {.name = "--vocab", .kind = 'c', .lo = 1, .hi = INT32_MAX, .i64 = &vocab},
        {.name = "--topics", .kind = 'c', .lo = 1, .hi = 100000, .i64 = &topics},
        {.name = "--doc-length", .kind = 'r', .dbl = &g.doc_length},
        {.name = "--alpha", .kind = 'r', .dbl = &g.alpha},
        {.name = "--beta", .kind = 'r', .dbl = &g.beta},
        {.name = "--zipf", .kind = 'r', .dbl = &g.zipf},
        {.name = "--seed", .kind = 'c', .lo = 0, .hi = INT64_MAX / 2, .i64 = &seed},
        {.name = "--out", .kind = 's', .str = &out},
        {.name = NULL},
    };
    static const char *const needed[] = {"--docs", "--vocab", "--topics", "--doc-length", "--out",
                                         NULL};
    int rc = parse(argc, argv, opts);
    if (rc || (rc = require(opts, needed)))
        return rc;
    g.docs = (int32_t)docs;
    g.vocab = (int32_t)vocab;
    g.topics = (int32_t)topics;
    g.seed = (uint64_t)seed;
    char err[512];
    loom_gen_lda_stats st;
    double t0 = now();
    rc = loom_gen_lda(&g, out, &st, err, sizeof err);
    if (rc == LOOM_ERR_ARG)
        return usage_error("%s", err);
    if (rc) {
        fprintf(stderr, "loom-gen: %s\n", err);
        return 1;
    }
    printf("loom-gen lda: %s.docword.txt %d documents (%d empty), %lld tokens, %lld entries; "
           "%s.vocab.txt %d words; %s.topics.txt %d topics; %.2f s\n",
           out, (int)g.docs, (int)st.empty, (long long)st.tokens, (long long)st.nnz, out,
           (int)g.vocab, out, (int)g.topics, now() - t0);
    return 0;
}

static int gen_lasso(int argc, char **argv)
{
    loom_gen_lasso_opts g;
    loom_gen_lasso_defaults(&g);
    int64_t seed = (int64_t)g.seed;
    const char *out = NULL;
    struct opt opts[] = {
        {.name = "--samples", .kind = 'c', .lo = 1, .hi = INT32_MAX, .i64 = &g.samples},
        {.name = "--features", .kind = 'c', .lo = 1, .hi = INT32_MAX, .i64 = &g.features},
        {.name = "--nonzeros", .kind = 'c', .lo = 0, .hi = INT32_MAX, .i64 = &g.nonzeros},
        {.name = "--noise", .kind = 'r', .dbl = &g.noise},
        {.name = "--correlation", .kind = 'r', .dbl = &g.correlation},
        {.name = "--density", .kind = 'r', .dbl = &g.density},
        {.name = "--seed", .kind = 'c', .lo = 0, .hi = INT64_MAX / 2, .i64 = &seed},
        {.name = "--out", .kind = 's', .str = &out},
        {.name = NULL},
    };
    static const char *const needed[] = {"--samples", "--features", "--nonzeros", "--out", NULL};
    int rc = parse(argc, argv, opts);
    if (rc || (rc = require(opts, needed)))
        return rc;
    g.seed = (uint64_t)seed;
    char err[512];
    loom_gen_lasso_stats st;
    double t0 = now();
    rc = loom_gen_lasso(&g, out, &st, err, sizeof err);
    if (rc == LOOM_ERR_ARG)
        return usage_error("%s", err);
    if (rc) {
        fprintf(stderr, "loom-gen: %s\n", err);
        return 1;
    }
    printf("loom-gen lasso: %s.X.mtx %lld x %lld (%lld non-zeros), %s.y.mtx, %s.svm, "
           "%s.beta.txt %lld planted non-zeros; signal %.4g, noise %.4g (sums of squares); "
           "%.2f s\n",
           out, (long long)g.samples, (long long)g.features, (long long)st.nnz, out, out, out,
           (long long)g.nonzeros, st.signal, st.noise, now() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "ratings"))
        return gen_ratings(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "lda"))
        return gen_lda(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "lasso"))
        return gen_lasso(argc, argv);
    fputs(argc >= 2 ? "loom-gen: unknown command (expected 'ratings', 'lda' or 'lasso')\n"
                    : "loom-gen: missing command (expected 'ratings', 'lda' or 'lasso')\n",
          stderr);
    fputs(usage_text, stderr);
    return 2;
}
