/* loom-w2v.c — word2vec (skip-gram, negative sampling) as a hybrid
 * SyncFor (seed 000 §7.3), and a nearest-words query over its vectors.
 *
 * Layout over R ranks x T threads:
 *   - every rank reads the whole text (one sentence per line); word
 *     counts, the subsampling probabilities and the unigram^0.75 table
 *     come from all of it, so they are the same everywhere;
 *   - the input and output vectors are two row allocations (V rows of
 *     `dim` floats) with additive merge, "bsp" or "ssp" (--staleness);
 *   - an epoch is loom_for(dynamic) over the sentences with .sync =
 *     hybrid: inside a rank the threads share its copy of the rows
 *     (Hogwild, as the original word2vec); each round of --sync-every
 *     words per rank is shared among the ranks by their speed
 *     (sched/shares.c), and at its end the ranks add up to two ranks'
 *     worth of their changes home (--merge capped, the default: on 2
 *     ranks their sum, on more twice their mean), add them all (--merge
 *     sum) or average them (--merge avg), capped and averaged rows with
 *     block momentum, and take a clock;
 *   - an epoch whose loss ran away ends the job before anything is saved
 *     (loom_report_runaway).
 * Each sentence draws from its own random stream (seed, epoch, sentence),
 * and the step α falls linearly with the progress through its block of
 * the text (each rank starts on its own block, of about equal words: the
 * loop's blocks), as it would on the rank that owns it.  A loom_clock
 * ends every epoch: LOOM_CHECKPOINT_EVERY=N checkpoints every N epochs and
 * a restarted job (loomrun --restart) resumes after the last one, its
 * vectors restored (the streams and α follow from the epoch).
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
#include "../kernels/w2v.h"

#define SLOTS 256

struct opts {
    const char *train, *output, *log, *merge;
    loom_w2v_params p;
    long long min_count;
    int epochs, staleness, serial;
    long long sync_every;
    double alpha;
    unsigned long long seed;
};

/* What the loop body needs. */
struct job {
    const loom_corpus *c;
    loom_w2v_model m;
    float *in, *out;        /* Loom rows, or plain arrays for the serial twin */
    int epoch, epochs;
    int nblocks;            /* the ranks' blocks of the text (equal words)... */
    int64_t *block;         /* ...block k is sentences [block[k], block[k + 1]) */
    float alpha0;
    uint64_t seed;
    struct { double loss; int64_t pairs; char pad[48]; } slot[SLOTS];
};

/* A row the loop stages: loom_at (the kernel asks where loom_at_base has
 * no plain base for the array this round). */
static float *loom_row(void *ctx, int which, int32_t r)
{
    struct job *j = ctx;
    return loom_at(which ? j->out : j->in, (size_t)r);
}
/* The merged row, for the model's output after the last loop: loom_at
 * outside a loop is address arithmetic on this rank's copy, whose rows are
 * current only where valid (every row here, from the prefetch before
 * training, refreshed by write notices at each sync point and barrier);
 * loom_row_get also fetches a row that is not.  Call after a
 * loom_barrier. */
static float *home_row(void *ctx, int which, int32_t r)
{
    struct job *j = ctx;
    return (float *)loom_row_get(which ? j->out : j->in, (size_t)r);
}

/* The words of sentence i, the loop's weights: its rounds end every
 * --sync-every words per rank, so that rounds are equal work whatever the
 * sentences' lengths (the Bible's verses are longer in its first half). */
static long words(long i, void *ctx)
{
    const struct job *j = ctx;
    return (long)(j->c->doc_off[i + 1] - j->c->doc_off[i]);
}

/* Sentence d: its own stream, and α by the progress through its block. */
static void sentence(long d, void *ctx)
{
    struct job *j = ctx;
    int k = 0;
    while (k + 1 < j->nblocks && d >= j->block[k + 1])
        k++;
    int64_t first = j->block[k], nb = j->block[k + 1] - first;
    loom_rng g = loom_rng_stream(j->seed, (uint64_t)j->epoch * (uint64_t)j->c->ndocs + (uint64_t)d);
    double done = ((double)(j->epoch - 1) * (double)nb + (double)(d - first)) /
                  ((double)j->epochs * (double)(nb ? nb : 1));
    float alpha = j->alpha0 * (float)fmax(1e-4, 1 - done);
    int64_t pairs, lo = j->c->doc_off[d], n = j->c->doc_off[d + 1] - lo;
    loom_w2v_model m = j->m;
    if (!m.base[0]) /* Loom rows: by address where loom_at would be that anyway */
        m.base[0] = loom_at_base(j->in), m.base[1] = loom_at_base(j->out);
    double loss = loom_w2v_sentence(&m, j->c->word + lo, n, alpha, &g, &pairs);
    int s = omp_get_thread_num() % SLOTS;
    j->slot[s].loss += loss;
    j->slot[s].pairs += pairs;
    loom_report_tick(n);
}

static const char W2V_USAGE[] =
    "loom-w2v [train] --train FILE --output FILE.vec [OPTION]...\n"
    "loom-w2v nearest WORD... --vectors FILE.vec [--top N]";

/* Parses the training command's argv into o; returns 0, 1 after --help or
 * --version, -1 after saying what is wrong (rank 0). */
static int parse(int argc, char **argv, struct opts *o)
{
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

static int train(int argc, char **argv)
{
    struct opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 2 : 0;
    int R = loom_size(), me = loom_rank();
    /* Summed changes overshoot on many ranks: a frequent word's output
     * vector gets every rank's whole step at once, and on 8 and 16 ranks
     * the loss ran away (docs/loom-w2v.md, "Which merge").  The mean of the
     * ranks' versions cannot leave them, but its vectors scored far worse
     * on WordNet similarity; twice the mean (two ranks' changes add)
     * overshoots at most as 2 ranks summing do and, every 10 000 words,
     * scored within the seeds' spread of one rank on 2, 3 and 4 ranks, so
     * it is the default (on 2 ranks it is the sum, and dsm runs it as
     * one).  Block momentum (dsm.md) gives back the progress the mean
     * takes from the rows every rank trains, once sync points are close
     * enough for the moves to settle: every 8000 words of the job, as many
     * an epoch on any number of ranks, 8 ranks ended 3 epochs 2.8% above
     * one rank's loss where capped every 10 000 words of each rank ended
     * 5.2% above (docs/loom-w2v.md, "Which merge").  avg: the allocations'
     * .average (0 sum, 1 mean, 2 capped). */
    int avg = !o.merge || !strcmp(o.merge, "capped") ? 2 : !strcmp(o.merge, "sum") ? 0 : 1;
    if (o.sync_every < 0) /* summed deltas diverge when ranks see too little of each other;
                           * capped and averaged rows lose quality when they mix too seldom */
        o.sync_every = avg ? (8000 + R - 1) / R : R > 1 ? (5000 + R - 2) / (R - 1) : 5000;
    if (o.serial && R > 1)
        loom_abort(2, "loom-w2v: --serial runs on one rank (got %d)", R);
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

    static struct job j; /* large (per-thread slots); one per process */
    j.c = &c;
    j.nblocks = R; /* --serial: one rank, one block */
    if (!(j.block = malloc(((size_t)j.nblocks + 1) * sizeof *j.block)))
        loom_abort(1, "loom-w2v: out of memory");
    for (int k = 0; k <= j.nblocks; k++)
        j.block[k] = loom_corpus_block(&c, k, j.nblocks);
    j.epochs = o.epochs;
    j.alpha0 = (float)o.alpha;
    j.seed = o.seed;
    j.m = (loom_w2v_model){.p = o.p, .keep = keep, .neg = &neg, .row = loom_row, .ctx = &j};
    size_t row = (size_t)o.p.dim * sizeof(float), bytes = (size_t)V * row;
    if (o.serial) {
        j.in = malloc(bytes);
        j.out = calloc((size_t)V * (size_t)o.p.dim, sizeof(float));
    } else {
        loom_alloc_opts a = {.unit = LOOM_UNIT_ROW, .row_size = row, .merge = LOOM_MERGE_ADD,
                             .type = LOOM_FLOAT, .coherence = o.staleness ? "ssp" : "bsp",
                             .staleness = o.staleness, .staleness_set = 1, .average = avg,
                             .momentum = avg != 0};
        a.name = "in";
        j.in = loom_alloc(bytes, &a);
        a.name = "out";
        j.out = loom_alloc(bytes, &a);
    }
    if (!j.in || !j.out)
        loom_abort(1, "loom-w2v: cannot allocate 2 x %d vectors of %d floats", V, o.p.dim);
    if (o.serial) /* the twin's rows are plain arrays */
        j.m.base[0] = j.in, j.m.base[1] = j.out;
    int done = o.serial ? 0 : (int)loom_clock_now(); /* epochs before a restart: rows came back */
    if (o.serial)
        loom_w2v_init_rows(j.in, 0, V, o.p.dim, o.seed);
    else if (!loom_restarted()) { /* rank 0 writes the first vectors; the barrier publishes them */
        float *v = malloc(row);
        for (int32_t w = 0; me == 0 && v && w < V; w++) {
            loom_w2v_init_rows(v, w, 1, o.p.dim, o.seed);
            loom_row_put(j.in, (size_t)w, v);
        }
        free(v);
        loom_barrier();
    }
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
    if (!o.serial) { /* every rank reads nearly every row: fetch both tables in one batch each,
                      * not a round trip per row at its first use */
        size_t *all = malloc((size_t)V * sizeof *all);
        for (int32_t w = 0; all && w < V; w++)
            all[w] = (size_t)w;
        if (all && (loom_row_prefetch(j.in, all, (size_t)V) || loom_row_prefetch(j.out, all, (size_t)V)))
            loom_abort(1, "loom-w2v: cannot fetch the vectors");
        free(all);
    }
    loom_sync mode = o.staleness ? LOOM_SSP : LOOM_HYBRID;
    double busy = 0, last_loss = NAN; /* NAN until an epoch runs in this process */
    for (int e = done + 1; e <= o.epochs; e++) {
        j.epoch = e;
        memset(j.slot, 0, sizeof j.slot);
        loom_report_begin(&*rep, e, R == 1 ? c.ntokens : 0); /* ranks: shares by speed */
        double t0 = loom_wtime();
        if (o.serial)
            for (int64_t i = 0; i < c.ndocs; i++)
                sentence((long)i, &j);
        else if (loom_for(0, c.ndocs, sentence, &j, &(loom_for_opts){.schedule = LOOM_DYNAMIC,
                          .chunk = 16, .sync = mode, .sync_every = o.sync_every,
                          .sync_weight = words, /* --sync-every counts words */
                          .accessor_reads = 1})) /* the vectors are read by loom_row_get */
            loom_abort(1, "loom-w2v: the training loop failed in epoch %d", e);
        busy += loom_wtime() - t0;
        double s[2] = {0, 0};
        for (int k = 0; k < SLOTS; k++)
            s[0] += j.slot[k].loss, s[1] += (double)j.slot[k].pairs;
        loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
        last_loss = s[1] > 0 ? s[0] / s[1] : 0;
        loom_report_row(rep, (double[]){e, (double)c.ntokens * e, busy, last_loss, s[1]});
        /* an untrained model gives each of a pair's outcomes 1/2 (report.h) */
        loom_report_runaway("loom-w2v", e, last_loss, (1 + o.p.negative) * log(2.0),
                            R > 1 && avg != 1 ? "Use --merge avg, or a shorter --sync-every"
                                          : "Use a smaller --alpha");
        if (!o.serial)
            loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N epochs */
    }
    if (!o.serial)
        loom_barrier(); /* every rank's last changes are home: save reads them there */
    if (me == 0) {
        if (busy > 0)
            printf("loom-w2v: %.0f words/s over %d epochs (%.3f s training)\n",
                   (double)c.ntokens * (o.epochs - done) / busy, o.epochs - done, busy);
        loom_w2v_model view = j.m;
        if (!o.serial)
            view.row = home_row;
        if (loom_w2v_save(o.output, c.vocab, V, o.p.dim, &view))
            loom_abort(1, "loom-w2v: %s: %s", o.output, strerror(errno));
        printf("loom-w2v: %d vectors written to %s\n", V, o.output);
    }
    loom_report_final(rep, "loss", last_loss);
    loom_report_close(rep);
    if (o.serial) {
        free(j.in);
        free(j.out);
    } else {
        loom_free(j.in);
        loom_free(j.out);
    }
    loom_alias_free(&neg);
    free(j.block);
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
    if (loom_init(&argc, &argv))
        return 2;
    int rc = train(argc, argv);
    int frc = loom_finalize();
    return rc ? rc : frc;
}
