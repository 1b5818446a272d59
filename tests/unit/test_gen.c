/* test_gen.c — unit tests for gen.c and rng.c: generated ratings parse
 * back with loom_ratings_load (exact counts, ids in range, each (user,
 * item) pair at most once, integer ratings 1..5 or real ones, the test
 * share), generated LDA corpora parse back with loom_corpus_load_uci and
 * loom_topics_load (sizes, token counts, topics summing to 1, the corpus's
 * word frequencies following the planted topics), byte-identical output
 * for the same seed whatever the thread count, different output for
 * another seed, option errors, and the samplers' moments. */
#include "../../data/corpus.h"
#include "../../data/gen.h"
#include "../../data/ratings.h"
#include "../../data/rng.h"
#include "../data.h"
#include "../tap.h"

#include <loom.h>

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[512];

/* 1 if files a and b have the same bytes. */
static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = read_all(a, &na), *y = read_all(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

static const char *path2(const char *prefix, const char *suffix)
{
    static char p[2][512];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s%s", scratch(prefix), suffix);
    return p[k];
}

static int cmp_pair(const void *a, const void *b)
{
    const loom_rating *x = a, *y = b;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void test_ratings(void)
{
    loom_gen_ratings_opts o;
    loom_gen_ratings_defaults(&o);
    o.users = 300;
    o.items = 200;
    o.rank = 5;
    o.samples = 6000;
    o.test_fraction = 0.25;
    o.seed = 11;
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s", scratch("r1"));
    loom_gen_ratings_stats st;
    /* several threads, even where OMP_NUM_THREADS=1 or one CPU would give
     * one: the 1-thread run below must be compared with a parallel one */
    int threads = omp_get_max_threads() < 3 ? 3 : omp_get_max_threads();
    omp_set_num_threads(threads);
    int rc = loom_gen_ratings(&o, prefix, &st, err, sizeof err);
    is_int(rc, LOOM_OK, "ratings: generated (%s)", err);

    loom_ratings tr, te;
    int rc1 = loom_ratings_load(path2("r1", ".train"), NULL, &tr, err, sizeof err);
    int rc2 = loom_ratings_load(path2("r1", ".test"), NULL, &te, err, sizeof err);
    ok(rc1 == 0 && rc2 == 0 && tr.n + te.n == 6000 && tr.n == st.train && te.n == st.test,
       "ratings: %lld train + %lld test = 6000 samples parse back (%s)", (long long)tr.n,
       (long long)te.n, err);
    ok(te.n > 1350 && te.n < 1650, "ratings: about 25%% in the test file (%lld)",
       (long long)te.n);
    ok(tr.nusers <= 300 && tr.nitems <= 200 && te.nusers <= 300 && te.nitems <= 200,
       "ratings: ids within 300 users and 200 items");
    loom_rating *all = malloc(sizeof *all * 6000);
    int ints = 1;
    if (rc1 == 0 && rc2 == 0 && tr.n + te.n == 6000) {
        memcpy(all, tr.v, sizeof *all * (size_t)tr.n);
        memcpy(all + tr.n, te.v, sizeof *all * (size_t)te.n);
        for (int k = 0; k < 6000; k++)
            ints &= all[k].r == floorf(all[k].r) && all[k].r >= 1 && all[k].r <= 5;
        qsort(all, 6000, sizeof *all, cmp_pair);
    }
    int dup = 0;
    for (int k = 1; k < 6000; k++)
        dup += all[k].u == all[k - 1].u && all[k].i == all[k - 1].i;
    ok(ints, "ratings: integers from 1 to 5");
    is_int(dup, 0, "ratings: no (user, item) pair twice across train and test");
    double mean = (tr.sum + te.sum) / 6000;
    ok(mean > 3.2 && mean < 3.9, "ratings: mean rating %.3f near the planted 3.6", mean);
    ok(st.planted_rmse > 0.4 && st.planted_rmse < 0.7,
       "ratings: planted-model test RMSE %.3f, about the noise 0.5", st.planted_rmse);
    free(all);
    loom_ratings_free(&tr);
    loom_ratings_free(&te);

    /* Same seed, 1 thread instead of several: the same bytes. */
    omp_set_num_threads(1);
    snprintf(prefix, sizeof prefix, "%s", scratch("r2"));
    rc = loom_gen_ratings(&o, prefix, NULL, err, sizeof err);
    omp_set_num_threads(threads);
    ok(rc == 0 && same_file(path2("r1", ".train"), path2("r2", ".train")) &&
           same_file(path2("r1", ".test"), path2("r2", ".test")),
       "ratings: same seed, 1 thread vs %d: identical files", threads);
    o.seed = 12;
    snprintf(prefix, sizeof prefix, "%s", scratch("r3"));
    rc = loom_gen_ratings(&o, prefix, NULL, err, sizeof err);
    ok(rc == 0 && !same_file(path2("r1", ".train"), path2("r3", ".train")),
       "ratings: another seed, other ratings");
    omp_set_num_threads(threads);

    /* Dense: every pair once; real-valued ratings with skewed popularity. */
    o.users = 40;
    o.items = 30;
    o.samples = 1200;
    o.real = 1;
    o.zipf_users = 2;
    o.zipf_items = 2;
    snprintf(prefix, sizeof prefix, "%s", scratch("dense"));
    rc = loom_gen_ratings(&o, prefix, &st, err, sizeof err);
    rc1 = loom_ratings_load(path2("dense", ".train"), NULL, &tr, err, sizeof err);
    rc2 = loom_ratings_load(path2("dense", ".test"), NULL, &te, err, sizeof err);
    char *seen = calloc(40 * 30, 1);
    int all_once = rc == 0 && rc1 == 0 && rc2 == 0 && tr.n + te.n == 1200, frac = 0;
    for (int s = 0; s < 2 && all_once; s++) {
        const loom_ratings *r = s ? &te : &tr;
        for (int64_t k = 0; k < r->n; k++) {
            all_once &= !seen[r->v[k].u * 30 + r->v[k].i]++;
            frac += r->v[k].r != floorf(r->v[k].r);
        }
    }
    ok(all_once && st.max_degree == 30, "ratings: samples = users * items rates every pair once");
    ok(frac > 1000, "ratings: --real writes real values (%d of 1200 fractional)", frac);
    free(seen);
    loom_ratings_free(&tr);
    loom_ratings_free(&te);

    o.samples = 1201;
    rc = loom_gen_ratings(&o, prefix, NULL, err, sizeof err);
    ok(rc == LOOM_ERR_ARG && strstr(err, "samples must be at most users * items"),
       "ratings: too many samples refused: %s", err);
    o.samples = 10;
    o.users = 0;
    rc = loom_gen_ratings(&o, prefix, NULL, err, sizeof err);
    ok(rc == LOOM_ERR_ARG && strstr(err, "users must be at least 1"), "ratings: %s", err);
    o.users = 10;
    rc = loom_gen_ratings(&o, "/nonexistent/dir/x", NULL, err, sizeof err);
    ok(rc == LOOM_ERR_IO && !strcmp(err, "/nonexistent/dir/x.train: No such file or directory"),
       "ratings: an unwritable prefix: %s", err);
}

/* The log-likelihood of document d under topics phi (K x V) with its
 * topic shares fitted by 50 EM steps. */
static double doc_fit(const double *phi, int32_t K, int32_t V, const loom_corpus *c, int32_t d)
{
    double theta[64], acc[64], ll = 0;
    for (int32_t k = 0; k < K; k++)
        theta[k] = 1.0 / K;
    for (int it = 0; it <= 50; it++) {
        ll = 0;
        memset(acc, 0, sizeof acc);
        for (int64_t t = c->doc_off[d]; t < c->doc_off[d + 1]; t++) {
            double p = 1e-300;
            for (int32_t k = 0; k < K; k++)
                p += theta[k] * phi[k * V + c->word[t]];
            for (int32_t k = 0; k < K; k++)
                acc[k] += theta[k] * phi[k * V + c->word[t]] / p;
            ll += log(p);
        }
        double n = (double)(c->doc_off[d + 1] - c->doc_off[d]);
        for (int32_t k = 0; k < K; k++)
            theta[k] = acc[k] / n;
    }
    return ll;
}

static void test_lda(void)
{
    loom_gen_lda_opts o;
    loom_gen_lda_defaults(&o);
    o.docs = 400;
    o.vocab = 300;
    o.topics = 4;
    o.doc_length = 80;
    o.alpha = 0.2;
    o.beta = 0.05;
    o.seed = 3;
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s", scratch("l1"));
    loom_gen_lda_stats st;
    int threads = omp_get_max_threads() < 3 ? 3 : omp_get_max_threads(); /* as for ratings */
    omp_set_num_threads(threads);
    int rc = loom_gen_lda(&o, prefix, &st, err, sizeof err);
    is_int(rc, LOOM_OK, "lda: generated (%s)", err);

    loom_corpus c;
    char dw[512], vocab[512];
    snprintf(dw, sizeof dw, "%s", path2("l1", ".docword.txt"));
    snprintf(vocab, sizeof vocab, "%s", path2("l1", ".vocab.txt"));
    rc = loom_corpus_load_uci(dw, vocab, &c, err, sizeof err);
    ok(rc == 0 && c.ndocs == 400 && c.nwords == 300 && c.ntokens == st.tokens,
       "lda: the docword file parses back: D 400, W 300, %lld tokens (%s)",
       (long long)c.ntokens, err);
    ok(fabs((double)st.tokens / 400 - 80) < 3, "lda: mean document length %.2f near 80",
       (double)st.tokens / 400);
    int words_ok = rc == 0;
    for (int32_t w = 0; words_ok && w < 300; w++) {
        char want[32];
        words_ok = !strcmp(c.vocab[w], loom_gen_word(w, want, sizeof want));
        for (int32_t v = 0; words_ok && v < w; v++)
            words_ok = strcmp(c.vocab[v], c.vocab[w]) != 0;
    }
    ok(words_ok, "lda: the vocabulary file holds 300 distinct generated words");

    int32_t K, V;
    double *phi;
    rc = loom_topics_load(path2("l1", ".topics.txt"), &K, &V, &phi, err, sizeof err);
    int sums_ok = rc == 0 && K == 4 && V == 300;
    for (int32_t k = 0; sums_ok && k < K; k++) {
        double s = 0;
        for (int32_t w = 0; w < V; w++)
            s += phi[k * V + w];
        sums_ok = fabs(s - 1) < 1e-4;
    }
    ok(sums_ok, "lda: 4 planted topics of 300 probabilities, each summing to 1 (%s)", err);

    /* The corpus's word frequencies follow the topics it was drawn from:
     * every document mixes them, so the overall frequencies should be
     * close to some mixture -- and to the plain average up to the
     * documents' random topic shares. */
    if (sums_ok && c.ntokens) {
        double *f = calloc((size_t)V, sizeof *f), dot = 0, nf = 0, nm = 0;
        for (int64_t t = 0; t < c.ntokens; t++)
            f[c.word[t]] += 1.0 / (double)c.ntokens;
        for (int32_t w = 0; w < V; w++) {
            double m = 0;
            for (int32_t k = 0; k < K; k++)
                m += phi[k * V + w] / K;
            dot += f[w] * m;
            nf += f[w] * f[w];
            nm += m * m;
        }
        double cosine = dot / sqrt(nf * nm);
        ok(cosine > 0.9, "lda: corpus word frequencies vs the mean planted topic: cosine %.3f",
           cosine);
        free(f);
    } else {
        ok(0, "lda: corpus word frequencies vs the planted topics");
    }
    free(phi);
    loom_corpus_free(&c);

    /* Documents are mixtures of the planted topics: fitting each
     * document's topic shares (EM with the topics fixed) explains it far
     * better with the planted topics than with another seed's topics. */
    loom_gen_lda_opts o4 = o;
    o4.zipf = 0;
    o4.alpha = 0.1;
    o4.docs = 200;
    o4.doc_length = 60;
    snprintf(prefix, sizeof prefix, "%s", scratch("l4"));
    rc = loom_gen_lda(&o4, prefix, NULL, err, sizeof err);
    o4.seed++;
    snprintf(prefix, sizeof prefix, "%s", scratch("l5"));
    rc |= loom_gen_lda(&o4, prefix, NULL, err, sizeof err);
    snprintf(dw, sizeof dw, "%s", path2("l4", ".docword.txt"));
    rc |= loom_corpus_load_uci(dw, NULL, &c, err, sizeof err);
    double *other = NULL;
    int32_t K2 = 0, V2 = 0;
    phi = NULL;
    rc |= loom_topics_load(path2("l4", ".topics.txt"), &K, &V, &phi, err, sizeof err);
    rc |= loom_topics_load(path2("l5", ".topics.txt"), &K2, &V2, &other, err, sizeof err);
    int better = 0, long_docs = 0;
    for (int32_t d = 0; rc == 0 && d < c.ndocs; d++) {
        if (c.doc_off[d + 1] - c.doc_off[d] < 30)
            continue;
        long_docs++;
        better += doc_fit(phi, K, V, &c, d) > doc_fit(other, K, V, &c, d);
    }
    ok(rc == 0 && long_docs > 150 && better >= long_docs - 2,
       "lda: %d of %d documents fit the planted topics better than another seed's", better,
       long_docs);
    free(phi);
    free(other);
    loom_corpus_free(&c);

    omp_set_num_threads(1);
    snprintf(prefix, sizeof prefix, "%s", scratch("l2"));
    rc = loom_gen_lda(&o, prefix, NULL, err, sizeof err);
    omp_set_num_threads(threads);
    ok(rc == 0 && same_file(path2("l1", ".docword.txt"), path2("l2", ".docword.txt")) &&
           same_file(path2("l1", ".topics.txt"), path2("l2", ".topics.txt")) &&
           same_file(path2("l1", ".vocab.txt"), path2("l2", ".vocab.txt")),
       "lda: same seed, 1 thread vs %d: identical files", threads);
    o.seed = 4;
    snprintf(prefix, sizeof prefix, "%s", scratch("l3"));
    rc = loom_gen_lda(&o, prefix, NULL, err, sizeof err);
    ok(rc == 0 && !same_file(path2("l1", ".docword.txt"), path2("l3", ".docword.txt")),
       "lda: another seed, another corpus");
    FILE *tmp = fopen(path2("l3", ".docword.txt.tmp"), "r");
    ok(!tmp, "lda: no temporary file left behind");
    if (tmp)
        fclose(tmp);

    o.topics = 0;
    rc = loom_gen_lda(&o, prefix, NULL, err, sizeof err);
    ok(rc == LOOM_ERR_ARG && strstr(err, "topics must be"), "lda: %s", err);

    const char *ragged = write_file("ragged.topics.txt", "0.5 0.25 0.25\n0.5 0.5\n");
    rc = loom_topics_load(ragged, &K, &V, &phi, err, sizeof err);
    char want[512];
    snprintf(want, sizeof want, "%s:2: 2 values, but line 1 has 3", ragged);
    ok(rc == LOOM_ERR_FORMAT && !strncmp(err, want, strlen(want)), "topics: %s", err);
}

static void test_samplers(void)
{
    loom_rng g = loom_rng_stream(7, 1);
    const int n = 200000;
    double s = 0, s2 = 0;
    for (int k = 0; k < n; k++) {
        double x = loom_rng_normal(&g);
        s += x;
        s2 += x * x;
    }
    ok(fabs(s / n) < 0.01 && fabs(s2 / n - 1) < 0.02, "normal: mean %.4f, variance %.4f", s / n,
       s2 / n);
    int gamma_ok = 1;
    static const double shapes[] = {0.1, 0.5, 1, 3.5, 50};
    for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
        s = 0;
        for (int k = 0; k < n; k++)
            s += exp(loom_rng_log_gamma(&g, shapes[j]));
        if (fabs(s / n - shapes[j]) > 0.02 * shapes[j] + 0.005) {
            diag("gamma(%g): mean %g", shapes[j], s / n);
            gamma_ok = 0;
        }
    }
    ok(gamma_ok, "gamma: means equal the shapes 0.1 .. 50");
    int pois_ok = 1;
    static const double means[] = {0.5, 5, 11.9, 12, 80, 1000};
    for (size_t j = 0; j < sizeof means / sizeof means[0]; j++) {
        s = s2 = 0;
        for (int k = 0; k < n; k++) {
            double x = (double)loom_rng_poisson(&g, means[j]);
            s += x;
            s2 += x * x;
        }
        double m = s / n, v = s2 / n - m * m;
        if (fabs(m - means[j]) > 0.02 * means[j] + 0.01 ||
            fabs(v - means[j]) > 0.05 * means[j] + 0.02) {
            diag("poisson(%g): mean %g, variance %g", means[j], m, v);
            pois_ok = 0;
        }
    }
    ok(pois_ok, "poisson: mean and variance equal the mean, both methods");
    static const double w[5] = {1, 0, 3, 0.5, 5.5};
    loom_alias a;
    int rc = loom_alias_build(&a, w, 5);
    int64_t count[5] = {0};
    for (int k = 0; k < 1000000; k++)
        count[loom_alias_draw(&a, &g)]++;
    int alias_ok = rc == 0 && count[1] == 0;
    for (int j = 0; j < 5; j++)
        alias_ok &= fabs((double)count[j] / 1e6 - w[j] / 10) < 0.003;
    ok(alias_ok, "alias: frequencies %lld %lld %lld %lld %lld per 10^6 for weights 1 0 3 0.5 5.5",
       (long long)count[0], (long long)count[1], (long long)count[2], (long long)count[3],
       (long long)count[4]);
    loom_alias_free(&a);
    static const double zero[2] = {0, 0};
    ok(loom_alias_build(&a, zero, 2) == LOOM_ERR_ARG, "alias: all-zero weights refused");
}

int main(void)
{
    test_ratings();
    test_lda();
    test_samplers();
    return done_testing();
}
