/* loom-w2v.c — word2vec (skip-gram, negative sampling) as a hybrid
 * SyncFor (seed 000 §7.3), and a nearest-words query over its vectors.
 *
 * The command line around kernels/w2v_dist.h, which holds the Loom
 * version beside its serial twin (the vectors' row allocations, their
 * merge, the loom_for over sentences, each sentence's stream and step).
 * Here: the flags, the text and its tables (every rank reads the whole
 * text, so word counts, subsampling and the unigram^0.75 table are the
 * same everywhere), the per-epoch report, and an epoch whose loss ran
 * away ending the job before anything is saved (loom_report_runaway).  A
 * loom_clock ends every epoch: LOOM_CHECKPOINT_EVERY=N checkpoints every
 * N epochs and a restarted job (loomrun --restart) resumes after the last
 * one, its vectors restored (the streams and α follow from the epoch).
 *
 *   loom-w2v [train] --train FILE --output FILE.vec [--dim D] [--window W]
 *            [--negative K] [--sample S] [--min-count N] [--epochs E]
 *            [--alpha A] [--sync-every M] [--merge sum|avg|capped] [--staleness S] [--seed S]
 *            [--log FILE.csv] [--serial]
 *   loom-w2v nearest WORD... --vectors FILE.vec [--top N]
 * docs/loom-w2v.md has the flags, formats and figures. */
#include <loom.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../data/corpus.h"
#include "common/flags.h"
#include "common/report.h"
#include "common/start.h"
#include "../kernels/w2v_dist.h"

struct opts {
    const char *train, *output, *log, *merge;
    loom_w2v_params p;
    long long min_count;
    int epochs, staleness, serial;
    long long sync_every;
    double alpha;
    unsigned long long seed;
};

static const char W2V_USAGE[] =
    "loom-w2v [train] --train FILE --output FILE.vec [OPTION]...\n"
    "loom-w2v nearest WORD... --vectors FILE.vec [--top N]";

/* Parses the training command's argv into o; returns 0, 1 after --help or
 * --version, -1 after saying what is wrong (rank 0). */
static int parse(int argc, char **argv, void *opts)
{
    struct opts *o = opts;
    *o = (struct opts){.p = {.dim = 100, .window = 5, .negative = 5, .sample = 1e-3},
                       .min_count = 5, .epochs = 3, .sync_every = -1, .alpha = 0.025, .seed = 1};
    const loom_flag flags[] = {
        {"train", LOOM_FLAG_STR, &o->train, "FILE", 0, 0, "plain text, one sentence per line"},
        {"output", LOOM_FLAG_STR, &o->output, "FILE.vec", 0, 0,
         "vectors in the word2vec text format"},
        {"dim", LOOM_FLAG_INT, &o->p.dim, "D", 1, 1024, "vector size (default 100)"},
        {"window", LOOM_FLAG_INT, &o->p.window, "W", 1, HUGE_VAL,
         "largest context distance (default 5)"},
        {"negative", LOOM_FLAG_INT, &o->p.negative, "K", 0, HUGE_VAL,
         "negative samples per context word (default 5)"},
        {"sample", LOOM_FLAG_NUM, &o->p.sample, "S", 0, HUGE_VAL,
         "subsampling threshold (default 1e-3; 0 keeps all)"},
        {"min-count", LOOM_FLAG_LONG, &o->min_count, "N", 1, HUGE_VAL,
         "drop words seen fewer times (default 5)"},
        {"epochs", LOOM_FLAG_INT, &o->epochs, "E", 1, HUGE_VAL,
         "passes over the text (default 3)"},
        {"alpha", LOOM_FLAG_NUM, &o->alpha, "A", 0, 0,
         "first step size, falling linearly to 0\n(default 0.025)"},
        {"sync-every", LOOM_FLAG_LONG, &o->sync_every, "M", 1, HUGE_VAL,
         "words of each rank between sync points\n(default 10000 capped; 5000 / (ranks - 1) "
         "when\nsumming: the other ranks' unseen words stay\n~5000; 50000 averaging)"},
        {"merge", LOOM_FLAG_STR, &o->merge, "HOW", 0, 0,
         "sum, avg or capped: at a sync point the\nranks' changes to a vector add up, or it "
         "becomes\nthe mean of the versions of the ranks that\nchanged it, or (capped) two "
         "ranks' changes add\nand more average to twice their mean (the\ndefault: summed changes "
         "overshoot on many\nranks; on 2 ranks capped is the sum)"},
        {"staleness", LOOM_FLAG_INT, &o->staleness, "S", 0, 1000,
         "clocks a read may lag (ssp rows; default 0 = bsp)"},
        {"seed", LOOM_FLAG_ULONG, &o->seed, "S", 0, 0,
         "initial vectors, subsampling and negative\nsamples (default 1)"},
        {"log", LOOM_FLAG_STR, &o->log, "FILE.csv", 0, 0, "CSV: iter,samples,seconds,loss,pairs"},
        {"serial", LOOM_FLAG_SET, &o->serial, NULL, 0, 0,
         "the serial twin (one rank): the plain loop, in\nfile order"},
        {0}};
    const loom_cli cli = {
        .app = "loom-w2v",
        .usage = W2V_USAGE,
        .about = "Word vectors by skip-gram with negative sampling (word2vec).\n"
                 "Trains on the ranks loomrun starts; `nearest` queries the saved vectors.",
        .flags = flags,
        .more = "loom-w2v nearest --help lists the query's flags.  See docs/loom-w2v.md."};
    int first = argc > 1 && !strcmp(argv[1], "train") ? 2 : 1;
    int rc = loom_flags_parse(&cli, argc, argv, first);
    if (rc)
        return rc;
    const char *bad = !o->train ? "--train is required"
                      : !o->output ? "--output is required"
                      : !(o->alpha > 0) ? "--alpha must be > 0"
                      : o->merge && strcmp(o->merge, "sum") && strcmp(o->merge, "avg") &&
                              strcmp(o->merge, "capped")
                          ? "--merge must be sum, avg or capped"
                      : NULL;
    return bad ? loom_flags_complain("loom-w2v", bad) : 0;
}

static int train(struct opts o)
{
    int rc, R = loom_size(), me = loom_rank();
    /* the merge and its sync interval: kernels/w2v_dist.h says why */
    int avg = !o.merge || !strcmp(o.merge, "capped") ? LOOM_W2V_CAPPED
              : !strcmp(o.merge, "sum")              ? LOOM_W2V_SUM
                                                     : LOOM_W2V_AVG;
    if (o.sync_every < 0)
        o.sync_every = loom_w2v_sync_every(avg, R);
    loom_corpus c;
    char err[512] = "", msg[600];
    rc = loom_corpus_load_text(o.train, o.min_count, &c, err, sizeof err);
    snprintf(msg, sizeof msg, "loom-w2v: %s", err);
    loom_report_agree(rc != LOOM_OK, msg);
    int32_t V = c.nwords;
    int64_t *count = calloc((size_t)V + 1, sizeof *count);
    float *keep = malloc(((size_t)V + 1) * sizeof *keep);
    if (!count || !keep)
        loom_abort(1, "loom-w2v: out of memory");
    for (int64_t t = 0; t < c.ntokens; t++)
        count[c.word[t]]++;
    loom_alias neg;
    snprintf(msg, sizeof msg, "loom-w2v: %s has %d distinct words of at least %lld "
             "occurrences; need 2", o.train, V, (long long)o.min_count);
    loom_report_agree(V < 2 || loom_w2v_tables(count, V, c.ntokens, o.p.sample, keep, &neg),
                      msg); /* every rank finds the same: one message */
    int done = o.serial ? 0 : (int)loom_clock_now(); /* epochs before a restart: rows came back */
    loom_w2v_dist *d = loom_w2v_dist_new(&c, keep, &neg, &(loom_w2v_dist_opts){
        .p = o.p, .serial = o.serial, .merge = avg, .staleness = o.staleness,
        .sync_every = o.sync_every, .epochs = o.epochs, .alpha = o.alpha, .seed = o.seed,
        .tick = loom_report_tick});
    if (me == 0)
        printf("loom-w2v: %lld words in %d sentences, vocabulary %d (min count %lld), dim %d, "
               "%d rank(s) x %d thread(s)%s\n", (long long)c.ntokens, c.ndocs, V,
               (long long)o.min_count, o.p.dim, R, omp_get_max_threads(),
               o.serial ? ", serial twin" : "");
    if (me == 0 && R > 1)
        printf("loom-w2v: ranks %s every %lld words of each rank (--merge, --sync-every)\n",
               avg == 2 ? "add their changes up to twice their mean, with block momentum,"
               : avg    ? "average their changes, with block momentum,"
                        : "sum their changes", (long long)o.sync_every);

    loom_report *rep = loom_report_open("loom-w2v", o.log, "iter,samples,seconds,loss,pairs",
                                        err, sizeof err);
    snprintf(msg, sizeof msg, "loom-w2v: %s", err);
    loom_report_agree(!rep, msg);
    double busy = 0, last_loss = NAN; /* NAN until an epoch runs in this process */
    for (int e = done + 1; e <= o.epochs; e++) {
        loom_report_begin(&*rep, e, R == 1 ? c.ntokens : 0); /* ranks: shares by speed */
        double t0 = loom_wtime(), s[2];
        loom_w2v_dist_epoch(d, e, s);
        busy += loom_wtime() - t0;
        last_loss = s[1] > 0 ? s[0] / s[1] : 0;
        loom_report_row(rep, (double[]){e, (double)c.ntokens * e, busy, last_loss, s[1]});
        /* an untrained model gives each of a pair's outcomes 1/2 (report.h) */
        loom_report_runaway("loom-w2v", e, last_loss, (1 + o.p.negative) * log(2.0),
                            R > 1 && avg != 1 ? "Use --merge avg, or a shorter --sync-every"
                                          : "Use a smaller --alpha");
        if (!o.serial)
            loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N epochs */
    }
    loom_w2v_dist_finish(d);
    if (me == 0) {
        if (busy > 0)
            printf("loom-w2v: %.0f words/s over %d epochs (%.3f s training)\n",
                   (double)c.ntokens * (o.epochs - done) / busy, o.epochs - done, busy);
        if (loom_w2v_dist_save(d, o.output, c.vocab))
            loom_abort(1, "loom-w2v: %s: %s", o.output, strerror(errno));
        printf("loom-w2v: %d vectors written to %s\n", V, o.output);
    }
    loom_report_final(rep, "loss", last_loss);
    loom_report_close(rep);
    loom_w2v_dist_free(d);
    loom_alias_free(&neg);
    free(count);
    free(keep);
    loom_corpus_free(&c);
    return 0;
}

/* ---- nearest --------------------------------------------------------- */

/* Reads a word2vec text file; rows normalized to unit length.  Exits with
 * "FILE:LINE: ..." on a malformed line. */
static void read_vectors(const char *path, int *V, int *dim, char ***words, float **vec)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "loom-w2v: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (fscanf(f, "%d %d", V, dim) != 2 || *V < 1 || *dim < 1 || *dim > 100000) {
        fprintf(stderr, "loom-w2v: %s:1: expected 'WORDS DIM' (the word2vec text format)\n", path);
        exit(1);
    }
    *words = calloc((size_t)*V, sizeof **words);
    *vec = malloc((size_t)*V * (size_t)*dim * sizeof **vec);
    char w[1024];
    for (int v = 0; *words && *vec && v < *V; v++) {
        float *x = *vec + (size_t)v * (size_t)*dim;
        double n = 0;
        if (fscanf(f, "%1023s", w) != 1)
            goto bad;
        for (int d = 0; d < *dim; d++) {
            if (fscanf(f, "%f", &x[d]) != 1)
                goto bad;
            n += (double)x[d] * x[d];
        }
        for (int d = 0; d < *dim && n > 0; d++)
            x[d] = (float)(x[d] / sqrt(n));
        (*words)[v] = strdup(w);
        continue;
    bad:
        fprintf(stderr, "loom-w2v: %s:%d: expected a word and %d numbers\n", path, v + 2, *dim);
        exit(1);
    }
    fclose(f);
}

static int nearest(int argc, char **argv)
{
    const char *path = NULL;
    int top = 10, nq = 0;
    const char *q[64];
    const loom_flag flags[] = {
        {"vectors", LOOM_FLAG_STR, &path, "FILE.vec", 0, 0, "the vectors loom-w2v train wrote"},
        {"top", LOOM_FLAG_INT, &top, "N", 1, HUGE_VAL, "neighbours per word (default 10)"},
        {0}};
    const loom_cli cli = {
        .app = "loom-w2v nearest",
        .usage = "loom-w2v nearest WORD... --vectors FILE.vec [--top N]",
        .about = "Prints the N words nearest to each WORD (cosine similarity).",
        .flags = flags, .args = q, .maxargs = 64, .nargs = &nq};
    int prc = loom_flags_parse(&cli, argc, argv, 2);
    if (prc)
        return prc < 0 ? 2 : 0;
    if (!path || !nq) {
        loom_flags_complain(cli.app, !path ? "--vectors is required" : "no WORD to look up");
        return 2;
    }
    int V, dim, rc = 0;
    char **words;
    float *vec;
    read_vectors(path, &V, &dim, &words, &vec);
    float *sim = malloc((size_t)V * sizeof *sim);
    for (int k = 0; k < nq; k++) {
        char lower[1024];
        snprintf(lower, sizeof lower, "%s", q[k]);
        for (char *p = lower; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        int w = 0;
        while (w < V && strcmp(words[w], lower))
            w++;
        if (w == V) {
            fprintf(stderr, "loom-w2v: '%s' is not in %s\n", q[k], path);
            rc = 1;
            continue;
        }
        const float *x = vec + (size_t)w * dim;
        for (int v = 0; v < V; v++) {
            float s = 0;
            for (int d = 0; d < dim; d++)
                s += x[d] * vec[(size_t)v * dim + d];
            sim[v] = v == w ? -2 : s;
        }
        printf("%s:", words[w]);
        for (int t = 0; t < top && t < V - 1; t++) { /* top by selection */
            int b = 0;
            for (int v = 1; v < V; v++)
                if (sim[v] > sim[b])
                    b = v;
            printf(" %s %.3f", words[b], sim[b]);
            sim[b] = -3;
        }
        printf("\n");
    }
    for (int v = 0; v < V; v++)
        free(words[v]);
    free(words);
    free(vec);
    free(sim);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "nearest"))
        return nearest(argc, argv); /* a local query: no job, no loom_init */
    struct opts o = {0};
    int rc = loom_app_start("loom-w2v", &argc, &argv, parse, &o, &o.serial);
    if (rc != LOOM_APP_GO)
        return rc;
    rc = train(o);
    int frc = loom_finalize();
    return rc ? rc : frc;
}
