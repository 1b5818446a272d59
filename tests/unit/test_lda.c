/* test_lda.c — unit tests for the LDA kernel (kernels/lda.h): a corpus
 * drawn in the test from the LDA generative model (8 planted topics with
 * disjoint Zipfian supports, Dirichlet(0.1) document mixtures), the serial
 * twin on it (exact count invariants after every sweep, rising
 * log-likelihood, planted topics recovered by Hellinger matching, top
 * words, held-out perplexity), the word-rotation sampler simulated on 4
 * workers x 4 word blocks with stale per-worker topic sums merged once per
 * round (invariants, log-likelihood within 1% of the serial twin, s-error),
 * the per-token conditional checked by chi-square against the exact
 * probabilities (which the same draws would fail if the token's own count
 * were not removed), other shapes (K = 37, the dense sampler),
 * reproducibility per seed, range confinement, and the vocabulary
 * balancing helper. */
#include "../../kernels/lda.h"
#include "loom.h"
#include "../rng.h"
#include "../tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generative model ---- */

#define KT 8         /* planted topics */
#define NV 400        /* vocabulary: topic k lives on words [50k, 50k + 50) */
#define SUPPORT 50
#define D_TRAIN 320
#define D_TEST 60
#define SWEEPS 40
#define NW 4          /* workers = word blocks of the rotation */

static double unif(uint64_t *s) { return (double)(next(s) >> 11) * 0x1.0p-53; }

static double normal(uint64_t *s)
{
    double u = unif(s), v = unif(s);
    return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* Gamma(a, 1) by Marsaglia and Tsang; a < 1 through Gamma(a + 1) U^(1/a). */
static double gamma_draw(uint64_t *s, double a)
{
    if (a < 1)
        return gamma_draw(s, a + 1) * pow(unif(s) + 1e-300, 1 / a);
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = normal(s), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        if (log(unif(s) + 1e-300) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

static int draw(uint64_t *s, const double *p, int n)
{
    double u = unif(s), c = 0;
    for (int i = 0; i < n - 1; i++)
        if (u < (c += p[i]))
            return i;
    return n - 1;
}

struct corpus {
    int32_t n_docs;
    int64_t *doc_off;
    int32_t *words;
};

static double planted[KT * NV]; /* phi of the planted topics */

static void plant_topics(uint64_t *s)
{
    memset(planted, 0, sizeof planted);
    for (int k = 0; k < KT; k++) {
        int perm[SUPPORT];
        for (int i = 0; i < SUPPORT; i++)
            perm[i] = i;
        for (int i = SUPPORT - 1; i > 0; i--) {
            int j = (int)(next(s) % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        double z = 0;
        for (int r = 0; r < SUPPORT; r++)
            z += 1.0 / (r + 1);
        for (int r = 0; r < SUPPORT; r++)
            planted[k * NV + k * SUPPORT + perm[r]] = 1.0 / (r + 1) / z;
    }
}

static void make_corpus(uint64_t *s, int32_t n_docs, struct corpus *c)
{
    c->n_docs = n_docs;
    c->doc_off = malloc(((size_t)n_docs + 1) * sizeof *c->doc_off);
    c->words = malloc((size_t)n_docs * 140 * sizeof *c->words);
    c->doc_off[0] = 0;
    for (int d = 0; d < n_docs; d++) {
        double theta[KT], sum = 0;
        for (int k = 0; k < KT; k++)
            sum += theta[k] = gamma_draw(s, 0.1);
        for (int k = 0; k < KT; k++)
            theta[k] /= sum;
        int len = 60 + (int)(next(s) % 81);
        int64_t at = c->doc_off[d];
        for (int j = 0; j < len; j++) {
            int k = draw(s, theta, KT);
            c->words[at + j] = draw(s, planted + k * NV, NV);
        }
        c->doc_off[d + 1] = at + len;
    }
}

/* ---- the count invariants ---- */

/* Every table recounted from the assignments: doc-topic lists (positive
 * distinct entries summing to the document length and equal to the
 * recount), word-topic rows (the recount, summing to each word's
 * frequency) and topic sums (the recount).  Returns 1 if all hold. */
static int invariants(loom_lda_shard *sh, int nsh, const int32_t *wt, const int64_t *nk,
                      const int64_t *freq, const char *when)
{
    int K = sh[0].p.K, good = 1;
    int32_t *wt2 = calloc((size_t)NV * K, sizeof *wt2);
    int64_t *nk2 = calloc((size_t)K, sizeof *nk2), total = 0;
    for (int i = 0; i < nsh; i++) {
        loom_lda_shard *s = &sh[i];
        loom_lda_count_range(s, 0, NV, wt2, (size_t)K, nk2);
        total += s->n_tokens;
        int32_t *dense = calloc((size_t)s->n_docs * K, sizeof *dense), *got = malloc(K * 4);
        for (int32_t w = 0; w < s->n_words; w++)
            for (int64_t j = s->word_off[w]; j < s->word_off[w + 1]; j++)
                dense[(size_t)s->tok_doc[j] * K + s->tok_z[j]]++;
        for (int32_t d = 0; d < s->n_docs && good; d++) {
            int64_t sum = 0;
            for (int32_t q = 0; q < s->dt_len[d]; q++)
                if (s->dt[s->doc_off[d] + q].count <= 0)
                    good = 0;
            loom_lda_doc_topics(s, d, got);
            for (int k = 0; k < K; k++)
                sum += got[k];
            int distinct = 0;
            for (int k = 0; k < K; k++)
                distinct += got[k] > 0;
            if (sum != s->doc_off[d + 1] - s->doc_off[d] || distinct != s->dt_len[d] ||
                memcmp(got, dense + (size_t)d * K, (size_t)K * 4)) {
                diag("%s: shard %d doc %d: doc-topic counts wrong", when, i, d);
                good = 0;
            }
        }
        free(dense);
        free(got);
    }
    if (memcmp(wt, wt2, (size_t)NV * K * sizeof *wt)) {
        diag("%s: word-topic table differs from the recount", when);
        good = 0;
    }
    if (memcmp(nk, nk2, (size_t)K * sizeof *nk)) {
        diag("%s: topic sums differ from the recount", when);
        good = 0;
    }
    int64_t all = 0;
    for (int w = 0; w < NV; w++) {
        int64_t f = 0;
        for (int k = 0; k < K; k++)
            f += wt[(size_t)w * K + k];
        if (f != freq[w]) {
            diag("%s: word %d has %lld counts, frequency %lld", when, w, (long long)f,
                 (long long)freq[w]);
            good = 0;
            break;
        }
    }
    for (int k = 0; k < K; k++)
        all += nk[k];
    if (all != total)
        good = 0;
    free(wt2);
    free(nk2);
    return good;
}

/* ---- the tests ---- */

static struct corpus train, test;
static int64_t freq[NV], n_train;
static loom_lda_params prm = {.K = KT, .V = NV, .alpha = 0.1, .beta = 0.01, .seed = 2024};
static double serial_ll[SWEEPS + 1];

/* Shard i of n over the training documents, as a driver would cut them. */
static int shard_of(loom_lda_shard *s, const loom_lda_params *p, int i, int n, uint64_t worker)
{
    int32_t d0 = (int32_t)((int64_t)train.n_docs * i / n),
            d1 = (int32_t)((int64_t)train.n_docs * (i + 1) / n);
    int64_t *off = malloc(((size_t)(d1 - d0) + 1) * sizeof *off);
    for (int32_t d = d0; d <= d1; d++)
        off[d - d0] = train.doc_off[d] - train.doc_off[d0];
    int rc = loom_lda_shard_init(s, p, d1 - d0, off, train.words + train.doc_off[d0], d0,
                                 worker);
    free(off);
    return rc;
}

static int32_t *serial_wt;
static int64_t serial_nk[KT];

static void test_serial(void)
{
    loom_lda_shard s;
    is_int(shard_of(&s, &prm, 0, 1, 0), LOOM_OK, "serial: shard of %d docs, %lld tokens",
           train.n_docs, (long long)n_train);
    int32_t *wt = calloc((size_t)NV * KT, sizeof *wt);
    int64_t nk[KT] = {0};
    is_int(loom_lda_count_range(&s, 0, NV, wt, KT, nk), n_train, "count_range counts every token");
    ok(invariants(&s, 1, wt, nk, freq, "init"), "invariants hold at the start");
    serial_ll[0] = loom_lda_loglik(&s, wt, nk);

    double ppl0 = loom_lda_perplexity(&prm, wt, KT, nk, test.n_docs, test.doc_off, test.words,
                                      10, 7);
    int good = 1;
    int64_t sampled = 0;
    for (int it = 1; it <= SWEEPS; it++) {
        sampled += loom_lda_sweep(&s, wt, nk);
        good &= invariants(&s, 1, wt, nk, freq, "serial sweep");
        serial_ll[it] = loom_lda_loglik(&s, wt, nk);
    }
    is_int(sampled, SWEEPS * n_train, "every sweep samples every token");
    ok(good, "(a) invariants hold exactly after each of %d sweeps", SWEEPS);
    diag("serial log-likelihood: init %.1f, sweep 1 %.1f, sweep 10 %.1f, sweep %d %.1f",
         serial_ll[0], serial_ll[1], serial_ll[10], SWEEPS, serial_ll[SWEEPS]);
    ok(serial_ll[SWEEPS] > serial_ll[1] && serial_ll[1] > serial_ll[0],
       "(b) log-likelihood rises: init < sweep 1 < sweep %d", SWEEPS);

    /* (c) recovered topics against the planted ones */
    double *phi = malloc((size_t)KT * NV * sizeof *phi);
    loom_lda_phi(&prm, wt, KT, nk, phi);
    double rowsum = 0;
    for (int w = 0; w < NV; w++)
        rowsum += phi[w];
    ok(fabs(rowsum - 1) < 1e-9, "phi rows are distributions");
    int32_t match[KT];
    double h = loom_lda_match_topics(planted, KT, phi, KT, NV, match);
    diag("best-match mean Hellinger distance %.4f", h);
    ok(h >= 0 && h <= 0.2, "(c) planted topics recovered: mean Hellinger %.3f <= 0.2", h);
    int perm = 1, seen[KT] = {0};
    for (int k = 0; k < KT; k++)
        perm &= match[k] >= 0 && match[k] < KT && !seen[match[k]]++;
    ok(perm, "the matching is one-to-one");

    int32_t top[KT * 5];
    loom_lda_top_words(&prm, wt, KT, 5, top);
    int in_support = 1;
    for (int k = 0; k < KT; k++)
        for (int i = 0; i < 5; i++) {
            int32_t w = top[match[k] * 5 + i];
            in_support &= w >= k * SUPPORT && w < (k + 1) * SUPPORT;
            if (i > 0)
                in_support &= wt[(size_t)w * KT + match[k]] <=
                               wt[(size_t)top[match[k] * 5 + i - 1] * KT + match[k]];
        }
    ok(in_support, "top-5 words of each matched topic lie in its planted support, by count");

    double ppl = loom_lda_perplexity(&prm, wt, KT, nk, test.n_docs, test.doc_off, test.words,
                                     10, 7);
    double ll;
    int64_t n_eval, want = 0;
    for (int d = 0; d < test.n_docs; d++)
        want += (test.doc_off[d + 1] - test.doc_off[d]) / 2;
    loom_lda_completion(&prm, wt, KT, nk, test.n_docs, test.doc_off, test.words, 0, 10, 7, &ll,
                        &n_eval);
    is_int(n_eval, want, "document completion scores the odd positions");
    ok(fabs(exp(-ll / n_eval) - ppl) < 1e-9 * ppl, "perplexity = exp(-loglik / n)");
    diag("held-out perplexity: %.1f before training, %.1f after (V = %d)", ppl0, ppl, NV);
    ok(ppl > 1 && ppl < 0.5 * ppl0, "held-out perplexity falls by more than half");

    serial_wt = wt;
    memcpy(serial_nk, nk, sizeof nk);
    free(phi);
    loom_lda_shard_free(&s);
}

/* (d) the rotation: NW = 4 workers, each with a quarter of the documents, NW word
 * blocks; in sub-epoch t worker p owns block (p + t) mod NW (seed 000 Alg.
 * 5, the counter advancing once per schedule); each worker samples against
 * its own stale topic sums, whose deltas are merged at the end of the
 * round. */
static void test_rotation(void)
{
    loom_lda_shard sh[NW];
    int made = 1;
    for (int p = 0; p < NW; p++)
        made &= shard_of(&sh[p], &prm, p, NW, (uint64_t)p) == LOOM_OK;
    ok(made, "rotation: %d shards", NW);
    int32_t *wt = calloc((size_t)NV * KT, sizeof *wt), *wt_serial0 = calloc((size_t)NV * KT, 4);
    int64_t nk[KT] = {0}, local[NW][KT], delta[NW][KT], nk_serial0[KT] = {0};
    for (int p = 0; p < NW; p++)
        loom_lda_count_range(&sh[p], 0, NV, wt, KT, nk);
    loom_lda_shard s0;
    shard_of(&s0, &prm, 0, 1, 0);
    loom_lda_count_range(&s0, 0, NV, wt_serial0, KT, nk_serial0);
    ok(!memcmp(wt, wt_serial0, (size_t)NV * KT * 4) && !memcmp(nk, nk_serial0, sizeof nk),
       "the initial state does not depend on the sharding");
    loom_lda_shard_free(&s0);
    free(wt_serial0);

    int good = 1;
    double err_first = 0, err_last = 0, err_max = 0;
    for (int round = 0; round < SWEEPS; round++) {
        for (int p = 0; p < NW; p++) {
            memcpy(local[p], nk, sizeof nk);
            memset(delta[p], 0, sizeof delta[p]);
        }
        for (int t = 0; t < NW; t++)
            for (int p = 0; p < NW; p++) {
                int32_t lo, hi;
                loom_lda_word_block(NV, NW, (p + t) % NW, &lo, &hi);
                loom_lda_sample_range(&sh[p], lo, hi, wt + (size_t)lo * KT, KT, local[p],
                                      delta[p]);
            }
        /* merge: the true sums, then every worker's s-error before resync */
        int64_t truth[KT];
        memcpy(truth, nk, sizeof nk);
        for (int p = 0; p < NW; p++)
            for (int k = 0; k < KT; k++)
                truth[k] += delta[p][k];
        double e = 0;
        for (int p = 0; p < NW; p++)
            e += loom_lda_s_error(local[p], truth, KT, n_train) / NW;
        err_first = round == 0 ? e : err_first;
        err_last = e;
        err_max = e > err_max ? e : err_max;
        memcpy(nk, truth, sizeof nk);
        good &= invariants(sh, NW, wt, nk, freq, "rotation round");
    }
    ok(good, "(d) invariants hold exactly after each of %d rounds", SWEEPS);

    double ll = loom_lda_ll_topics(&prm, nk);
    for (int p = 0; p < NW; p++) {
        int32_t lo, hi;
        loom_lda_word_block(NV, NW, p, &lo, &hi);
        ll += loom_lda_ll_docs(&sh[p]) + loom_lda_ll_words(&prm, lo, hi, wt + (size_t)lo * KT, KT);
    }
    double rel = fabs(ll - serial_ll[SWEEPS]) / fabs(serial_ll[SWEEPS]);
    diag("rotation log-likelihood %.1f vs serial %.1f (%.3f%% apart)", ll, serial_ll[SWEEPS],
         100 * rel);
    ok(rel <= 0.01, "(d) rotation log-likelihood within 1%% of the serial twin after %d sweeps",
       SWEEPS);
    diag("s-error: round 1 %.5f, max %.5f, round %d %.5f", err_first, err_max, SWEEPS, err_last);
    ok(err_max > 0 && err_max <= 2 && err_last < err_first,
       "s-error is in (0, 2] and falls as the sampler settles");

    double phi[KT * NV];
    loom_lda_phi(&prm, wt, KT, nk, phi);
    double h = loom_lda_match_topics(planted, KT, phi, KT, NV, NULL);
    diag("rotation: best-match mean Hellinger distance %.4f", h);
    ok(h <= 0.2, "rotation recovers the planted topics too (%.3f <= 0.2)", h);
    for (int p = 0; p < NW; p++)
        loom_lda_shard_free(&sh[p]);
    free(wt);
}

/* The same seed and calls give the same assignments; another worker id
 * another stream. */
static void test_reproducible(void)
{
    int32_t z[3][2000];
    for (int r = 0; r < 3; r++) {
        loom_lda_shard s;
        shard_of(&s, &prm, 1, 8, r == 2 ? 9 : 3);
        int32_t *wt = calloc((size_t)NV * KT, 4);
        int64_t nk[KT] = {0};
        loom_lda_count_range(&s, 0, NV, wt, KT, nk);
        for (int it = 0; it < 3; it++)
            loom_lda_sweep(&s, wt, nk);
        memcpy(z[r], s.tok_z, sizeof z[r]);
        free(wt);
        loom_lda_shard_free(&s);
    }
    ok(!memcmp(z[0], z[1], sizeof z[0]), "same seed and worker: identical run");
    ok(memcmp(z[0], z[2], sizeof z[0]), "another worker id: another random stream");
}

/* Other shapes: an F+tree whose K is not a power of two (37: 64 leaves,
 * 27 of them padding) and the dense sampler, a few sweeps each. */
static void test_shapes(void)
{
    const struct { int32_t K; loom_lda_sampler smp; const char *name; } c[2] = {
        {37, LOOM_LDA_FTREE, "F+tree"}, {KT, LOOM_LDA_DENSE, "dense"}};
    for (int i = 0; i < 2; i++) {
        loom_lda_params p = prm;
        p.K = c[i].K;
        p.sampler = c[i].smp;
        loom_lda_shard s;
        shard_of(&s, &p, 0, 1, 0);
        int32_t *wt = calloc((size_t)NV * p.K, 4);
        int64_t *nk = calloc((size_t)p.K, sizeof *nk);
        loom_lda_count_range(&s, 0, NV, wt, (size_t)p.K, nk);
        double ll0 = loom_lda_loglik(&s, wt, nk);
        int good = 1;
        for (int it = 0; it < 5; it++) {
            loom_lda_sweep(&s, wt, nk);
            good &= invariants(&s, 1, wt, nk, freq, c[i].name);
        }
        double ll = loom_lda_loglik(&s, wt, nk);
        ok(good && ll > ll0, "%s K=%d: invariants exact over 5 sweeps, log-likelihood %.0f -> %.0f",
           c[i].name, p.K, ll0, ll);
        free(wt);
        free(nk);
        loom_lda_shard_free(&s);
    }
}

/* Sampling [100, 200) touches only those words' rows and tokens. */
static void test_range_only(void)
{
    loom_lda_shard s;
    shard_of(&s, &prm, 0, 2, 0);
    int32_t *wt = calloc((size_t)NV * KT, 4), *before = malloc((size_t)NV * KT * 4);
    int64_t nk[KT] = {0};
    loom_lda_count_range(&s, 0, NV, wt, KT, nk);
    memcpy(before, wt, (size_t)NV * KT * 4);
    int32_t *z0 = malloc((size_t)s.n_tokens * 4);
    memcpy(z0, s.tok_z, (size_t)s.n_tokens * 4);
    int64_t n = loom_lda_sample_range(&s, 100, 200, wt + 100 * KT, KT, nk, NULL);
    int64_t want = 0;
    int outside_same = 1, inside_moved = 0;
    for (int32_t i = 0; i < s.n_words; i++)
        for (int64_t j = s.word_off[i]; j < s.word_off[i + 1]; j++) {
            int in = s.word_id[i] >= 100 && s.word_id[i] < 200;
            want += in;
            if (!in)
                outside_same &= s.tok_z[j] == z0[j];
            else
                inside_moved |= s.tok_z[j] != z0[j];
        }
    is_int(n, want, "sample_range samples exactly the tokens of its word range");
    ok(outside_same && inside_moved &&
           !memcmp(before, wt, 100 * KT * 4) &&
           !memcmp(before + 200 * KT, wt + 200 * KT, (size_t)(NV - 200) * KT * 4),
       "tokens and rows outside the range are untouched");
    ok(loom_lda_sample_range(&s, 10, NV + 1, wt, KT, nk, NULL) == -1 &&
           loom_lda_sample_range(&s, 5, 4, wt, KT, nk, NULL) == -1 &&
           loom_lda_sample_range(&s, 0, NV, wt, KT - 1, nk, NULL) == -1,
       "bad ranges and strides are refused");
    loom_lda_params bad = prm;
    bad.K = 0;
    loom_lda_shard t;
    int64_t off[2] = {0, 1};
    int32_t w_bad = NV;
    ok(loom_lda_shard_init(&t, &bad, 1, off, train.words, 0, 0) == LOOM_ERR_ARG &&
           loom_lda_shard_init(&t, &prm, 1, off, &w_bad, 0, 0) == LOOM_ERR_ARG,
       "shard_init refuses K = 0 and a word id >= V");
    free(z0);
    free(before);
    free(wt);
    loom_lda_shard_free(&s);
}

/* (e) The draw of one token against the exact conditional.  A document of
 * one probe token (word 0, the only one in the shard) and 11 others (words
 * 1, 2, fixed since outside the range); word 0's row and the topic sums
 * hold arbitrary counts of other documents.  Resampling the probe N times
 * draws N times from the same conditional, since removing the probe always
 * leaves the same counts. */
static void test_conditional(int K, loom_lda_sampler smp)
{
    const char *name = smp == LOOM_LDA_DENSE ? "dense" : "F+tree";
    loom_lda_params p = {.K = K, .V = 3, .alpha = 1.5, .beta = 0.5, .seed = 99, .sampler = smp};
    int32_t words[12] = {0, 1, 2, 1, 1, 2, 2, 1, 2, 1, 1, 2};
    int64_t off[2] = {0, 12};
    loom_lda_shard s;
    loom_lda_shard_init(&s, &p, 1, off, words, 0, 0);
    int32_t row[8], nd[8];
    int64_t nk[8];
    const int32_t row_other[8] = {3, 0, 9, 1, 0, 5, 2, 4};
    const int64_t nk_other[8] = {20, 6, 41, 10, 3, 12, 30, 8};
    int32_t z = s.tok_z[s.word_off[0]];
    for (int k = 0; k < K; k++) {
        row[k] = row_other[k] + (k == z);
        nk[k] = nk_other[k] + row[k];
    }
    loom_lda_doc_topics(&s, 0, nd);
    nd[z]--; /* the rest of the document */
    double want[8], naive[8], sw = 0, sn = 0;
    for (int k = 0; k < K; k++) {
        want[k] = (nd[k] + p.alpha) * (row_other[k] + p.beta) /
                  (nk_other[k] + row_other[k] + p.V * p.beta);
        /* what a sampler that forgot to remove the token would draw from */
        naive[k] = (nd[k] + (k == z) + p.alpha) * (row_other[k] + (k == z) + p.beta) /
                   (nk_other[k] + row_other[k] + (k == z) + p.V * p.beta);
        sw += want[k];
        sn += naive[k];
    }
    enum { N = 60000 };
    long seen[8] = {0};
    int steady = 1;
    for (int i = 0; i < N; i++) {
        loom_lda_sample_range(&s, 0, 1, row, (size_t)K, nk, NULL);
        seen[s.tok_z[s.word_off[0]]]++;
        int32_t now[8];
        loom_lda_doc_topics(&s, 0, now);
        for (int k = 0; k < K; k++)
            steady &= now[k] == nd[k] + (k == s.tok_z[0]) &&
                      row[k] == row_other[k] + (k == s.tok_z[0]);
    }
    double chi = 0, chi_naive = 0;
    for (int k = 0; k < K; k++) {
        double e = N * want[k] / sw, en = N * naive[k] / sn;
        chi += (seen[k] - e) * (seen[k] - e) / e;
        chi_naive += (seen[k] - en) * (seen[k] - en) / en;
    }
    ok(steady, "(e) %s K=%d: the probe's moves keep the counts exact", name, K);
    diag("%s K=%d: chi-square %.2f (df %d) against the conditional, %.1f against the "
         "conditional without removal", name, K, chi, K - 1, chi_naive);
    /* the 1 - 1e-5 quantiles of chi-square with 2 and 5 df are 23.0 and 30.9 */
    ok(chi < (K <= 3 ? 23.0 : 30.9), "(e) %s K=%d: draws follow the exact conditional", name, K);
    ok(chi_naive > 100, "(e) %s K=%d: the same draws refute a sampler that keeps the token",
       name, K);
    loom_lda_shard_free(&s);
}

/* Zipfian frequencies: the balanced relabelling is a permutation with
 * block loads within 5% of the mean. */
static void test_balance(void)
{
    enum { BV = 1000, BP = 4 };
    int64_t f[BV], load[BP] = {0}, tot = 0;
    int32_t id[BV];
    for (int w = 0; w < BV; w++)
        tot += f[w] = 100000 / (w + 1);
    is_int(loom_lda_balance_words(f, BV, BP, id), LOOM_OK, "balance_words");
    int seen[BV] = {0}, perm = 1;
    for (int w = 0; w < BV; w++) {
        perm &= id[w] >= 0 && id[w] < BV && !seen[id[w]]++;
        for (int x = 0; x < BP; x++) {
            int32_t lo, hi;
            loom_lda_word_block(BV, BP, x, &lo, &hi);
            if (id[w] >= lo && id[w] < hi)
                load[x] += f[w];
        }
    }
    int even = 1;
    for (int x = 0; x < BP; x++)
        even &= fabs((double)load[x] - tot / (double)BP) <= 0.05 * tot / BP;
    ok(perm && even, "balanced blocks: a permutation, loads %lld %lld %lld %lld",
       (long long)load[0], (long long)load[1], (long long)load[2], (long long)load[3]);
}

int main(void)
{
    uint64_t rng = 42;
    plant_topics(&rng);
    make_corpus(&rng, D_TRAIN, &train);
    make_corpus(&rng, D_TEST, &test);
    n_train = train.doc_off[train.n_docs];
    for (int64_t j = 0; j < n_train; j++)
        freq[train.words[j]]++;

    test_serial();
    test_rotation();
    test_reproducible();
    test_shapes();
    test_range_only();
    test_conditional(3, LOOM_LDA_FTREE);
    test_conditional(6, LOOM_LDA_FTREE);
    test_conditional(3, LOOM_LDA_DENSE);
    test_balance();

    free(serial_wt);
    free(train.doc_off);
    free(train.words);
    free(test.doc_off);
    free(test.words);
    return done_testing();
}
