/* loom-lda.c — topic models by collapsed Gibbs sampling (LDA), STRADS-style:
 * on one machine or across the ranks `loomrun` starts.
 *
 *   loom-lda --train DOCWORD [--vocab VOCAB] | --text FILE [--min-count N]
 *            [--test FILE | --test-frac F] --topics K [--iters N] [--alpha A]
 *            [--beta B] [--seed S] [--log FILE.csv] [--model DIR] [--top N]
 *            [--planted TOPICS] [--eval-every N] [--test-iters N] [--forward]
 *            [--serial]
 *
 * How it is distributed (kernels/lda_ring.c does it; docs/loom-lda.md
 * explains it): each rank holds its own documents and each of its OpenMP
 * threads a shard of them (doc-topic counts never move); the word-topic
 * table is a `loom_alloc` ring allocation whose word partitions rotate
 * over the ranks, the threads of a rank sub-rotating the partition's word
 * blocks; the topic sums are replicated per worker and merged every round
 * with loom_allreduce, and the round's s-error (seed 002) is reported.
 * The rotation is driven directly (loom_ring_part / loom_ring_rotate plus
 * an OpenMP sub-rotation) rather than through loom_for: the sampler works
 * on a word range of a shard at once (one F+tree per word for all of its
 * tokens) and the doc-topic counts are sparse lists, not Loom rows; the
 * reasons are spelled out atop kernels/lda_ring.c.  --serial runs the
 * kernel's serial twin instead (one rank, one thread, exact sums).
 *
 * Output (apps/common/report.h): one line per iteration and the CSV log with
 * columns iter,samples,seconds,loglik[,perplexity],s_error,tokens_per_s
 * (samples and seconds cumulative, seconds counting the training rounds
 * only); progress every few seconds; `final loglik=...` at the end.
 * Exit status: 0; 1 for unreadable or malformed input (FILE:LINE: ...);
 * 2 for bad arguments. */
#include "../data/corpus.h"
#include "common/flags.h"
#include "../data/gen.h"
#include "../kernels/lda.h"
#include "../kernels/lda_model.h"
#include "../kernels/lda_ring.h"
#include "common/report.h"
#include "common/start.h"
#include "../data/stopwords.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct opts {
    const char *train, *vocab, *text, *test, *log, *model, *planted, *stopwords;
    double test_frac, alpha, beta;
    long long topics, iters, min_count, top, eval_every, test_iters;
    unsigned long long seed;
    int serial, forward;
};

static const char APP[] = "loom-lda";

/* Fills o from argv; returns 0, 1 after --help or --version, -1 after
 * saying what is wrong (rank 0). */
static int parse_args(int argc, char **argv, void *opts)
{
    struct opts *o = opts;
    *o = (struct opts){.alpha = 0.1, .beta = 0.01, .iters = 50, .seed = 1, .min_count = 1,
                       .top = 10, .eval_every = 1, .test_iters = 20, .test_frac = -1};
    const loom_flag flags[] = {
        {"train", LOOM_FLAG_STR, &o->train, "DOCWORD", 0, 0,
         "UCI bag-of-words training corpus (D, W, NNZ,\n'doc word count')"},
        {"vocab", LOOM_FLAG_STR, &o->vocab, "VOCAB", 0, 0,
         "its vocabulary, one word per line (for the top\nwords)"},
        {"text", LOOM_FLAG_STR, &o->text, "FILE", 0, 0,
         "plain text instead: one document per line"},
        {"min-count", LOOM_FLAG_LONG, &o->min_count, "N", 1, HUGE_VAL,
         "text: drop words seen fewer than N times\n(default 1)"},
        {"stopwords", LOOM_FLAG_STR, &o->stopwords, "FILE", 0, 0,
         "text: drop the words of FILE (one per line)\ninstead of the built-in English list; "
         "'none'\nkeeps every word"},
        {"test", LOOM_FLAG_STR, &o->test, "FILE", 0, 0,
         "held-out documents (same format and\nvocabulary): perplexity"},
        {"test-frac", LOOM_FLAG_NUM, &o->test_frac, "F", 0, 1,
         "or hold out this fraction of the training\ndocuments"},
        {"topics", LOOM_FLAG_LONG, &o->topics, "K", 1, 1000000, "number of topics (required)"},
        {"iters", LOOM_FLAG_LONG, &o->iters, "N", 0, 100000000, "sampling passes (default 50)"},
        {"alpha", LOOM_FLAG_NUM, &o->alpha, "A", 0, 0,
         "document-topic prior, > 0 (default 0.1)"},
        {"beta", LOOM_FLAG_NUM, &o->beta, "B", 0, 0,
         "topic-word prior, > 0 (default 0.01)"},
        {"seed", LOOM_FLAG_ULONG, &o->seed, "S", 0, 0,
         "initial topics and random streams (default 1)"},
        {"log", LOOM_FLAG_STR, &o->log, "FILE.csv", 0, 0, "per-iteration log"},
        {"model", LOOM_FLAG_STR, &o->model, "DIR", 0, 0,
         "save DIR/topics.txt (top words),\nDIR/word_topic.txt (counts), DIR/vocab.txt\n"
         "(the words of its ids, when known),\nDIR/doc_topic.txt (each training document's\n"
         "topic proportions) and\nDIR/test_doc_topic.txt (held-out documents')"},
        {"top", LOOM_FLAG_LONG, &o->top, "N", 1, 100000,
         "top words per topic in topics.txt (default 10)"},
        {"planted", LOOM_FLAG_STR, &o->planted, "TOPICS", 0, 0,
         "report the best-match Hellinger distance to\nplanted topics (loom-gen lda's "
         "PREFIX.topics.txt)"},
        {"eval-every", LOOM_FLAG_LONG, &o->eval_every, "N", 1, 100000000,
         "perplexity every N passes and after the last\n(default 1)"},
        {"test-iters", LOOM_FLAG_LONG, &o->test_iters, "N", 1, 100000,
         "document-completion sweeps per evaluation\n(default 20)"},
        {"forward", LOOM_FLAG_SET, &o->forward, NULL, 0, 0,
         "send each finished word row on at once\n(macro-synchronization)"},
        {"serial", LOOM_FLAG_SET, &o->serial, NULL, 0, 0,
         "the serial twin: one rank, one thread, exact\ntopic sums"},
        {0}};
    const loom_cli cli = {
        .app = "loom-lda",
        .usage = "loom-lda --train DOCWORD [--vocab VOCAB] --topics K [OPTION]...\n"
                 "loom-lda --text FILE [--min-count N] --topics K [OPTION]...",
        .about = "Topic models (LDA) by collapsed Gibbs sampling.\n"
                 "Runs on the ranks loomrun starts.",
        .flags = flags,
        .more = "Threads: OMP_NUM_THREADS.  Ranks: loomrun -n N loom-lda ...\n"
                "Exit status: 0; 1 for unreadable or malformed input; 2 for bad arguments.\n"
                "See docs/loom-lda.md."};
    int rc = loom_flags_parse(&cli, argc, argv, 1);
    if (rc)
        return rc;
    if (!o->train == !o->text)
        return loom_flags_complain(APP, o->train ? "--train and --text exclude each other"
                                                 : "missing --train or --text");
    if (o->vocab && !o->train)
        return loom_flags_complain(APP, "--vocab goes with --train");
    if (o->stopwords && !o->text)
        return loom_flags_complain(APP, "--stopwords goes with --text");
    if (!o->topics)
        return loom_flags_complain(APP, "missing --topics");
    if (!(o->alpha > 0) || !(o->beta > 0))
        return loom_flags_complain(APP, o->alpha > 0 ? "--beta must be > 0"
                                                     : "--alpha must be > 0");
    if (o->test && o->test_frac >= 0)
        return loom_flags_complain(APP, "--test and --test-frac exclude each other");
    return 0;
}

/* Collective: every rank says whether its step failed (err not NULL).
 * If any did, the job ends with exit status 1 and the lowest failing
 * rank's message, once (loom_report_agree); otherwise it returns.  (All
 * ranks read the same files, so they usually fail alike; agreeing first
 * keeps a rank that failed alone from leaving the others in a collective.) */
static void agree(const char *err)
{
    char msg[1200];
    snprintf(msg, sizeof msg, "loom-lda: %s", err ? err : "");
    loom_report_agree(err != NULL, msg);
}

/* Text test documents have their own word ids: map them to the training
 * vocabulary through its sorted words; unknown words are dropped. */
static int by_word(const void *a, const void *b)
{
    return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

static void map_text_vocab(const loom_corpus *train, loom_corpus *test)
{
    char ***sorted = malloc(sizeof *sorted * ((size_t)train->nwords + 1));
    int32_t *map = malloc(sizeof *map * ((size_t)test->nwords + 1));
    if (!sorted || !map)
        loom_abort(1, "out of memory");
    for (int32_t w = 0; w < train->nwords; w++)
        sorted[w] = &train->vocab[w];
    qsort(sorted, (size_t)train->nwords, sizeof *sorted, by_word);
    for (int32_t w = 0; w < test->nwords; w++) {
        char **key = &test->vocab[w];
        char ***hit = bsearch(&key, sorted, (size_t)train->nwords, sizeof *sorted, by_word);
        map[w] = hit ? (int32_t)(*hit - train->vocab) : -1;
    }
    int64_t out = 0;
    for (int32_t d = 0; d < test->ndocs; d++) {
        int64_t from = test->doc_off[d], to = test->doc_off[d + 1];
        test->doc_off[d] = out;
        for (int64_t j = from; j < to; j++)
            if (map[test->word[j]] >= 0)
                test->word[out++] = map[test->word[j]];
    }
    test->doc_off[test->ndocs] = out;
    test->ntokens = out;
    test->nwords = train->nwords;
    free(sorted);
    free(map);
}

/* Removes the stop words (--stopwords FILE, else the built-in English
 * list; "none": none) from a text corpus.  Returns LOOM_OK or an error
 * with its message in err. */
static int drop_stopwords(const struct opts *o, loom_corpus *c, char *err, size_t errlen)
{
    if (o->stopwords && !strcmp(o->stopwords, "none"))
        return LOOM_OK;
    char **mine = NULL;
    int rc = o->stopwords ? loom_stopwords_load(o->stopwords, &mine, err, errlen) : LOOM_OK;
    if (rc)
        return rc;
    int64_t n = loom_corpus_drop_words(c, mine ? (const char *const *)mine
                                               : loom_stopwords_english);
    loom_stopwords_free(mine);
    if (n < 0) {
        snprintf(err, errlen, "out of memory dropping stop words");
        return LOOM_ERR_NOMEM;
    }
    return LOOM_OK;
}

/* Loads the training corpus and the held-out documents (test->ndocs = 0
 * without any), stopping the job with FILE:LINE on malformed input. */
static void load(const struct opts *o, loom_corpus *train, loom_corpus *test)
{
    char err[1024];
    loom_corpus all;
    memset(test, 0, sizeof *test);
    int rc = o->text ? loom_corpus_load_text(o->text, o->min_count, &all, err, sizeof err)
                     : loom_corpus_load_uci(o->train, o->vocab, &all, err, sizeof err);
    if (!rc && o->text)
        rc = drop_stopwords(o, &all, err, sizeof err);
    if (!rc && (all.ntokens == 0 || all.nwords < 2)) {
        snprintf(err, sizeof err, all.ntokens ? "%s: one distinct word: topics need at least 2"
                                              : "%s: no tokens to train on",
                 o->text ? o->text : o->train);
        loom_corpus_free(&all);
        rc = LOOM_ERR_FORMAT;
    }
    agree(rc ? err : NULL);
    if (o->test_frac > 0) {
        if (loom_corpus_split(&all, o->test_frac, (uint64_t)o->seed, train, test, NULL))
            loom_abort(1, "out of memory splitting the corpus");
        loom_corpus_free(&all);
    } else {
        *train = all;
    }
    if (!o->test)
        return;
    rc = o->text ? loom_corpus_load_text(o->test, 1, test, err, sizeof err)
                 : loom_corpus_load_uci(o->test, NULL, test, err, sizeof err);
    agree(rc ? err : NULL);
    if (o->text) {
        map_text_vocab(train, test);
    } else if (test->nwords > train->nwords) {
        snprintf(err, sizeof err, "%s: its vocabulary (W = %d) is larger than the training "
                 "corpus's (W = %d); both must use the same word ids", o->test,
                 (int)test->nwords, (int)train->nwords);
        agree(err);
    }
}

int main(int argc, char **argv)
{
    struct opts o = {0}; /* --serial with several ranks: loom_lda_ring_init refuses it */
    int rc = loom_app_start(APP, &argc, &argv, parse_args, &o, NULL);
    if (rc != LOOM_APP_GO)
        return rc;

    loom_corpus train, test;
    load(&o, &train, &test);
    loom_lda_params p = {.K = (int32_t)o.topics, .V = train.nwords, .alpha = o.alpha,
                         .beta = o.beta, .seed = (uint64_t)o.seed};
    double *planted = NULL;
    int32_t Kp = 0, Vp = 0;
    if (o.planted) {
        char err[1024];
        rc = loom_topics_load(o.planted, &Kp, &Vp, &planted, err, sizeof err);
        if (!rc && Vp != p.V)
            snprintf(err, sizeof err, "%s: the planted topics have %d words, the corpus %d",
                     o.planted, (int)Vp, (int)p.V);
        agree(rc || Vp != p.V ? err : NULL);
    }
    int have_test = test.ndocs > 0;
    if ((o.test || o.test_frac > 0) && !have_test && loom_rank() == 0)
        fprintf(stderr, "loom-lda: warning: no held-out documents; no perplexity\n");

    char err[512];
    loom_lda_ring *g;
    double t0 = loom_wtime();
    rc = loom_lda_ring_init(&g, &p, &train, &(loom_lda_ring_opts){.serial = o.serial,
                                                                  .forward = o.forward,
                                                                  .tick = loom_report_tick},
                            err, sizeof err);
    if (rc) {
        if (loom_rank() == 0)
            fprintf(stderr, "loom-lda: %s\n", err);
        loom_finalize();
        return 2;
    }
    if (have_test && loom_lda_ring_set_test(g, &test))
        loom_abort(70, "a held-out word id is out of range (internal error)");
    /* the shards hold copies of this rank's share: drop the whole corpus,
     * keeping the sizes and the vocabulary */
    free(train.word);
    free(train.doc_off);
    free(test.word);
    free(test.doc_off);
    train.word = test.word = NULL;
    train.doc_off = test.doc_off = NULL;
    double t_init = loom_wtime() - t0;
    int threads = o.serial ? 1 : omp_get_max_threads();
    if (loom_rank() == 0)
        printf("loom-lda: %d documents, %lld tokens, V = %d, K = %d, %d rank%s x %d thread%s%s; "
               "%d held-out documents; set up in %.2f s\n",
               (int)train.ndocs, (long long)train.ntokens, (int)p.V, (int)p.K, loom_size(),
               loom_size() > 1 ? "s" : "", threads, threads > 1 ? "s" : "",
               o.serial ? " (serial twin)" : "",
               (int)test.ndocs, t_init);

    loom_report *r = loom_report_open("loom-lda", o.log,
                                      have_test ? "iter,samples,seconds,loglik,perplexity,"
                                                  "s_error,tokens_per_s"
                                                : "iter,samples,seconds,loglik,s_error,"
                                                  "tokens_per_s",
                                      err, sizeof err);
    agree(r ? NULL : err); /* only rank 0 creates the log */

    double seconds = 0, samples = 0, ll = loom_lda_ring_loglik(g);
    double row[8];
    /* Restartable (docs/checkpoint.md): a loom_clock per iteration, so
     * LOOM_CHECKPOINT_EVERY=N checkpoints every N; the sampler's state is in
     * them (kernels/lda_ring.c), and a restart goes on after the last one. */
    int64_t done = o.serial ? 0 : (int64_t)loom_clock_now();
    samples = (double)train.ntokens * (double)done;
    for (int64_t it = done ? done + 1 : 0; it <= o.iters; it++) {
        double s_err = 0, dt = 0;
        int64_t n = 0;
        if (it > 0) {
            loom_report_begin(r, (long)it, loom_lda_ring_rank_tokens(g));
            double a = loom_wtime();
            n = loom_lda_ring_round(g, &s_err);
            dt = loom_wtime() - a;
            seconds += dt;
            samples += (double)n;
            ll = loom_lda_ring_loglik(g);
        }
        int c = 0;
        row[c++] = (double)it;
        row[c++] = samples;
        row[c++] = seconds;
        row[c++] = ll;
        if (have_test)
            row[c++] = it % o.eval_every == 0 || it == o.iters
                           ? loom_lda_ring_perplexity(g, (int32_t)o.test_iters,
                                                      (uint64_t)o.seed, NULL)
                           : NAN;
        row[c++] = s_err;
        row[c++] = dt > 0 ? (double)n / dt : 0;
        loom_report_row(r, row);
        if (it > 0 && !o.serial)
            loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N iterations */
    }

    /* the model: every rank takes part in gathering the table */
    int want = loom_rank() == 0 && (o.model || planted);
    int32_t *wt = want ? malloc(sizeof *wt * (size_t)p.V * (size_t)p.K) : NULL;
    int64_t *nk = want ? malloc(sizeof *nk * (size_t)p.K) : NULL;
    if (want && (!wt || !nk))
        loom_abort(1, "out of memory gathering the model (%d x %d)", (int)p.V, (int)p.K);
    if (o.model || planted)
        loom_lda_ring_table(g, wt, nk);
    int status = 0; /* the model's files (kernels/lda_model.h): one message each */
    if (want && o.model &&
        loom_lda_model_save(o.model, &p, wt, train.vocab, (int32_t)o.top, err, sizeof err)) {
        fprintf(stderr, "loom-lda: %s\n", err);
        status = 1;
    }
    for (int t = 0; o.model && t <= have_test; t++)
        if (loom_lda_model_theta(o.model, t ? "test_doc_topic.txt" : "doc_topic.txt", g, t,
                                 (int32_t)o.test_iters, (uint64_t)o.seed, err, sizeof err)) {
            if (loom_rank() == 0)
                fprintf(stderr, "loom-lda: %s\n", err);
            status = 1;
            break;
        }
    if (want && planted)
        printf("loom-lda: planted topics: best-match mean Hellinger distance %.4f (%d planted, "
               "%d learned)\n", loom_lda_model_match(&p, wt, nk, planted, Kp), (int)Kp, (int)p.K);
    if (loom_rank() == 0 && o.iters > 0)
        printf("loom-lda: %.0f tokens sampled in %.3f s of training rounds: %.4g tokens/s\n",
               samples, seconds, samples / seconds);
    loom_report_final(r, "loglik", ll);
    loom_report_close(r);
    free(wt);
    free(nk);
    free(planted);
    loom_lda_ring_free(g);
    loom_corpus_free(&train);
    loom_corpus_free(&test);
    loom_finalize();
    return status;
}
