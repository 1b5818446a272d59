/* loom-gen.c — the data generator command: Netflix-shaped ratings from a
 * planted low-rank model, a corpus drawn from the LDA generative model, or
 * a planted sparse regression problem for loom-lasso,
 * so that runs of 10^7-10^8 samples need no download (data/gen.c does
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
 * Counts may be written 10000000 or 1e7.  Flags go through apps/common/flags.c
 * (--flag=value or --flag value; `loom-gen --help` lists every command's).
 * Exit status: 0, 1 when writing failed, 2 for bad arguments. */
#include "common/flags.h"
#include "../data/gen.h"
#include "../data/gen_lasso.h"
#include "../data/gen_text.h"

#include <loom.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static double now(void)
{
    return loom_wtime();
}

static const char USAGE[] =
    "loom-gen ratings --users U --items I --rank K --samples N --out PREFIX [OPTION]...\n"
    "loom-gen lda --docs D --vocab V --topics K --doc-length L --out PREFIX [OPTION]...\n"
    "loom-gen lasso --samples N --features P --nonzeros K --out PREFIX [OPTION]...\n"
    "loom-gen text --samples N --features V --classes C --out PREFIX [OPTION]...";

static const char ABOUT[] =
    "Writes synthetic data sets from planted models (docs/data.md):\n"
    "  ratings  PREFIX.train and PREFIX.test: 'user<TAB>item<TAB>rating' lines\n"
    "           from a planted low-rank model\n"
    "  lda      PREFIX.docword.txt, PREFIX.vocab.txt (UCI bag-of-words) and\n"
    "           PREFIX.topics.txt (the planted topics, K lines of V probabilities)\n"
    "  lasso    PREFIX.X.mtx, PREFIX.y.mtx (MatrixMarket), PREFIX.svm (LIBSVM) and\n"
    "           PREFIX.beta.txt (the planted coefficients), y = X beta + noise\n"
    "  text     PREFIX.train.svm and PREFIX.test.svm (LIBSVM): documents of C\n"
    "           classes with words of their own over a shared Zipf vocabulary\n"
    "Counts may be written as 1e7.";

static const char MORE[] =
    "Exit status: 0; 1 when writing failed; 2 for bad arguments.\n"
    "loom-gen COMMAND --help lists one command's options.";

/* The flags of the three commands, filled by each command's table. */
static long long users, items, rank, samples, docs, vocab, topics, features, nonzeros = -1;
static unsigned long long seed = 1;
static const char *out;
static loom_gen_ratings_opts gr;
static loom_gen_lda_opts gl;
static loom_gen_lasso_opts gs;
static loom_gen_text_opts gt;
static long long classes, words = -1, test = -1;

#define OUT_FLAG {"out", LOOM_FLAG_STR, &out, "PREFIX", 0, 0, "where the files go (required)"}
#define SEED_FLAG {"seed", LOOM_FLAG_ULONG, &seed, "S", 0, 0, "random seed (default 1)"}
static const loom_flag ratings_flags[] = {
    {"users", LOOM_FLAG_LONG, &users, "U", 1, INT32_MAX, "users (required)"},
    {"items", LOOM_FLAG_LONG, &items, "I", 1, INT32_MAX, "items (required)"},
    {"rank", LOOM_FLAG_LONG, &rank, "K", 1, 10000, "rank of the planted model (default 10)"},
    {"samples", LOOM_FLAG_LONG, &samples, "N", 1, INT64_MAX / 2, "ratings (required)"},
    {"test-fraction", LOOM_FLAG_NUM, &gr.test_fraction, "F", 0, 0,
     "fraction of ratings held out (default 0.1)"},
    {"noise", LOOM_FLAG_NUM, &gr.noise, "S", 0, 0, "rating noise deviation (default 0.5)"},
    {"zipf-users", LOOM_FLAG_NUM, &gr.zipf_users, "A", 0, 0,
     "Zipf exponent of user activity (default 0.4)"},
    {"zipf-items", LOOM_FLAG_NUM, &gr.zipf_items, "A", 0, 0,
     "Zipf exponent of item popularity (default 0.6)"},
    {"real", LOOM_FLAG_SET, &gr.real, NULL, 0, 0,
     "real-valued ratings (default: integers 1..5)"},
    OUT_FLAG, SEED_FLAG, {0}};
static const loom_flag lda_flags[] = {
    {"docs", LOOM_FLAG_LONG, &docs, "D", 1, INT32_MAX - 1, "documents (required)"},
    {"vocab", LOOM_FLAG_LONG, &vocab, "V", 1, INT32_MAX, "vocabulary size (required)"},
    {"topics", LOOM_FLAG_LONG, &topics, "K", 1, 100000, "planted topics (required)"},
    {"doc-length", LOOM_FLAG_NUM, &gl.doc_length, "L", 0, 0, "mean document length (required)"},
    {"alpha", LOOM_FLAG_NUM, &gl.alpha, "A", 0, 0, "document-topic prior (default 0.1)"},
    {"beta", LOOM_FLAG_NUM, &gl.beta, "B", 0, 0, "topic-word prior (default 0.01)"},
    {"zipf", LOOM_FLAG_NUM, &gl.zipf, "A", 0, 0, "Zipf exponent of word frequency (default 1)"},
    OUT_FLAG, SEED_FLAG, {0}};
static const loom_flag lasso_flags[] = {
    {"samples", LOOM_FLAG_LONG, &samples, "N", 1, INT32_MAX, "rows (required)"},
    {"features", LOOM_FLAG_LONG, &features, "P", 1, INT32_MAX, "columns (required)"},
    {"nonzeros", LOOM_FLAG_LONG, &nonzeros, "K", 0, INT32_MAX,
     "planted non-zero coefficients (required)"},
    {"noise", LOOM_FLAG_NUM, &gs.noise, "S", 0, 0, "noise deviation (default 0.5)"},
    {"correlation", LOOM_FLAG_NUM, &gs.correlation, "C", 0, 0,
     "correlation of neighbouring columns (default 0)"},
    {"density", LOOM_FLAG_NUM, &gs.density, "D", 0, 0,
     "fraction of X that is non-zero (default 1)"},
    OUT_FLAG, SEED_FLAG, {0}};

static const loom_flag text_flags[] = {
    {"samples", LOOM_FLAG_LONG, &samples, "N", 1, INT32_MAX, "training documents (required)"},
    {"test", LOOM_FLAG_LONG, &test, "M", 0, INT32_MAX, "test documents (default N / 4)"},
    {"features", LOOM_FLAG_LONG, &features, "V", 2, INT32_MAX, "vocabulary (required)"},
    {"classes", LOOM_FLAG_LONG, &classes, "C", 2, 1024, "classes (required)"},
    {"length", LOOM_FLAG_NUM, &gt.length, "L", 0, 0, "mean tokens a document (default 80)"},
    {"words", LOOM_FLAG_LONG, &words, "W", 1, INT32_MAX, "each class's own words (default 300)"},
    {"own", LOOM_FLAG_NUM, &gt.own, "Q", 0, 0,
     "a token's chance of being its class's own\n(default 0.04)"},
    {"zipf", LOOM_FLAG_NUM, &gt.zipf, "A", 0, 0, "Zipf exponent of the vocabulary (default 1)"},
    OUT_FLAG, SEED_FLAG, {0}};

static void help(void)
{
    const loom_cli cli = {.usage = USAGE, .about = ABOUT, .flags = (loom_flag[]){{0}},
                          .more = MORE};
    loom_flags_help(stdout, &cli);
    printf("\nOptions of loom-gen ratings:\n");
    loom_flags_table(stdout, ratings_flags);
    printf("\nOptions of loom-gen lda:\n");
    loom_flags_table(stdout, lda_flags);
    printf("\nOptions of loom-gen lasso:\n");
    loom_flags_table(stdout, lasso_flags);
    printf("\nOptions of loom-gen text:\n");
    loom_flags_table(stdout, text_flags);
}

/* Parses one command's flags; returns 1 with the exit status in *rc (0
 * after --help, 2 after saying what is wrong), else 0. */
static int parse(const char *app, const char *usage, const loom_flag *flags, int argc,
                 char **argv, int *rc)
{
    const loom_cli cli = {.app = app, .usage = usage, .about = ABOUT, .flags = flags,
                          .more = MORE};
    int r = loom_flags_parse(&cli, argc, argv, 2);
    *rc = r < 0 ? 2 : 0;
    return r != 0;
}

/* Says which required flag is missing; returns the exit status 2. */
static int missing(const char *app, const char *flag)
{
    char why[80];
    snprintf(why, sizeof why, "missing %s", flag);
    loom_flags_complain(app, why);
    return 2;
}

/* The generator's own complaint about the values (LOOM_ERR_ARG) or about
 * writing: exit status 2 or 1. */
static int failed(const char *app, int rc, const char *err)
{
    if (rc == LOOM_ERR_ARG) {
        loom_flags_complain(app, err);
        return 2;
    }
    fprintf(stderr, "%s: %s\n", app, err);
    return 1;
}

static int gen_ratings(int argc, char **argv)
{
    loom_gen_ratings_defaults(&gr);
    rank = gr.rank;
    int rc;
    const char *app = "loom-gen ratings";
    if (parse(app, "loom-gen ratings --users U --items I --rank K --samples N --out PREFIX ...",
              ratings_flags, argc, argv, &rc))
        return rc;
    const char *miss = !users ? "--users" : !items ? "--items" : !samples ? "--samples"
                       : !out ? "--out" : NULL;
    if (miss)
        return missing(app, miss);
    if (gr.test_fraction >= 1) {
        loom_flags_complain(app, "--test-fraction must be below 1 (at 1 no rating is left "
                            "to train on)");
        return 2;
    }
    gr.users = (int32_t)users;
    gr.items = (int32_t)items;
    gr.rank = (int32_t)rank;
    gr.samples = samples;
    gr.seed = seed;
    char err[512];
    loom_gen_ratings_stats st;
    double t0 = now();
    if ((rc = loom_gen_ratings(&gr, out, &st, err, sizeof err)))
        return failed(app, rc, err);
    if (!st.train || (!st.test && gr.test_fraction > 0))
        return failed(app, LOOM_ERR_FORMAT,
                      !st.train ? "no rating fell in the training set: raise --samples"
                                : "no rating fell in the test set: raise --samples or "
                                  "--test-fraction");
    printf("loom-gen ratings: %s.train %lld ratings, %s.test %lld ratings; %d users "
           "(%d rated, at most %d ratings each), %d items, rank %d; planted-model test "
           "RMSE %.4f; %.2f s\n",
           out, (long long)st.train, out, (long long)st.test, (int)gr.users, (int)st.users_rated,
           (int)st.max_degree, (int)gr.items, (int)gr.rank, st.planted_rmse, now() - t0);
    return 0;
}

static int gen_lda(int argc, char **argv)
{
    loom_gen_lda_defaults(&gl);
    int rc;
    const char *app = "loom-gen lda";
    if (parse(app, "loom-gen lda --docs D --vocab V --topics K --doc-length L --out PREFIX ...",
              lda_flags, argc, argv, &rc))
        return rc;
    const char *miss = !docs ? "--docs" : !vocab ? "--vocab" : !topics ? "--topics"
                       : !gl.doc_length ? "--doc-length" : !out ? "--out" : NULL;
    if (miss)
        return missing(app, miss);
    gl.docs = (int32_t)docs;
    gl.vocab = (int32_t)vocab;
    gl.topics = (int32_t)topics;
    gl.seed = seed;
    char err[512];
    loom_gen_lda_stats st;
    double t0 = now();
    if ((rc = loom_gen_lda(&gl, out, &st, err, sizeof err)))
        return failed(app, rc, err);
    if (!st.tokens)
        return failed(app, LOOM_ERR_FORMAT,
                      "every document came out empty: raise --doc-length or --docs");
    printf("loom-gen lda: %s.docword.txt %d documents (%d empty), %lld tokens, %lld entries; "
           "%s.vocab.txt %d words; %s.topics.txt %d topics; %.2f s\n",
           out, (int)gl.docs, (int)st.empty, (long long)st.tokens, (long long)st.nnz, out,
           (int)gl.vocab, out, (int)gl.topics, now() - t0);
    return 0;
}

static int gen_lasso(int argc, char **argv)
{
    loom_gen_lasso_defaults(&gs);
    int rc;
    const char *app = "loom-gen lasso";
    if (parse(app, "loom-gen lasso --samples N --features P --nonzeros K --out PREFIX ...",
              lasso_flags, argc, argv, &rc))
        return rc;
    const char *miss = !samples ? "--samples" : !features ? "--features"
                       : nonzeros < 0 ? "--nonzeros"
                       : !out ? "--out" : NULL;
    if (miss)
        return missing(app, miss);
    if (!nonzeros && !(gs.noise > 0)) {
        loom_flags_complain(app, "--nonzeros 0 with --noise 0 makes y all zero: nothing to fit");
        return 2;
    }
    gs.samples = samples;
    gs.features = features;
    gs.nonzeros = nonzeros;
    gs.seed = seed;
    char err[512];
    loom_gen_lasso_stats st;
    double t0 = now();
    if ((rc = loom_gen_lasso(&gs, out, &st, err, sizeof err)))
        return failed(app, rc, err);
    printf("loom-gen lasso: %s.X.mtx %lld x %lld (%lld non-zeros), %s.y.mtx, %s.svm, "
           "%s.beta.txt %lld planted non-zeros; signal %.4g, noise %.4g (sums of squares); "
           "%.2f s\n",
           out, (long long)gs.samples, (long long)gs.features, (long long)st.nnz, out, out, out,
           (long long)gs.nonzeros, st.signal, st.noise, now() - t0);
    return 0;
}

static int gen_text(int argc, char **argv)
{
    loom_gen_text_defaults(&gt);
    int rc;
    const char *app = "loom-gen text";
    if (parse(app, "loom-gen text --samples N --features V --classes C --out PREFIX ...",
              text_flags, argc, argv, &rc))
        return rc;
    const char *miss = !samples ? "--samples" : !features ? "--features" : !classes ? "--classes"
                       : !out ? "--out" : NULL;
    if (miss)
        return missing(app, miss);
    gt.samples = samples;
    gt.test = test;
    gt.features = features;
    gt.classes = (int32_t)classes;
    gt.words = words > 0 ? (int32_t)(words < features ? words : features) : (int32_t)(300 < features ? 300 : features);
    gt.seed = seed;
    char err[512];
    int64_t nnz;
    double t0 = now();
    if ((rc = loom_gen_text(&gt, out, &nnz, err, sizeof err)))
        return failed(app, rc, err);
    printf("loom-gen text: %s.train.svm %lld and %s.test.svm %lld documents of %d classes, "
           "%lld words, %lld non-zeros; %.2f s\n", out, (long long)samples, out,
           (long long)(test >= 0 ? test : samples / 4), (int)classes, (long long)features,
           (long long)nnz, now() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        help();
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
        loom_flags_version("loom-gen");
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "ratings"))
        return gen_ratings(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "lda"))
        return gen_lda(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "lasso"))
        return gen_lasso(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "text"))
        return gen_text(argc, argv);
    char why[200];
    snprintf(why, sizeof why, argc >= 2 ? "unknown command '%s' (expected ratings, lda, lasso or text)"
                                        : "missing command%s (expected ratings, lda, lasso or text)",
             argc >= 2 ? argv[1] : "");
    loom_flags_complain("loom-gen", why);
    return 2;
}
