/* test_w2v.c — unit tests for the word2vec sentence kernel
 * (kernels/w2v.c): the loss it returns, against -log sigma(z) -
 * N log(1 - sigma(z)) a pair computed here.  With alpha = 0 nothing moves,
 * every input and output vector is the same (so every dot product is z),
 * and the negatives are drawn from a table that holds only word 2 (never a
 * context word): the loss of each pair is known exactly.  With 400
 * negatives at z = 3 a pair's probability (0.047^400, about 1e-530) is
 * below what a double holds, so the kernel's early logarithms (a product
 * of the outcomes' probabilities is taken to its log before it underflows)
 * are checked too.  A training sentence reaches the same rows through the
 * model's bases (address arithmetic) as through its callback: the loss
 * and every vector equal bit for bit, with both bases, with the output
 * vectors' only (two ranks' rounds), and with none. */
#include "../../kernels/w2v.h"
#include "loom.h"
#include "../tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float vec[3][2][2]; /* word, which (0 in, 1 out), dim */

static float *row(void *ctx, int which, int32_t r)
{
    (void)ctx;
    return vec[r][which];
}

/* The loss of a 2-word sentence [0, 1] (window 1: two pairs) with n
 * negatives each, all dot products z; *pairs gets the pairs trained. */
static double sentence_loss(int n, double z, int64_t *pairs)
{
    float x = (float)sqrt(z / 2);
    for (int w = 0; w < 3; w++)
        for (int k = 0; k < 2; k++)
            vec[w][k][0] = vec[w][k][1] = x;
    static const float keep[3] = {1, 1, 1};
    loom_alias neg;
    loom_alias_build(&neg, (const double[]){0, 0, 1}, 3);
    loom_w2v_model m = {.p = {.dim = 2, .window = 1, .negative = n, .sample = 0},
                        .keep = keep, .neg = &neg, .row = row};
    loom_rng g = loom_rng_stream(1, 2);
    double loss = loom_w2v_sentence(&m, (const int32_t[]){0, 1}, 2, 0.0f, &g, pairs);
    loom_alias_free(&neg);
    return loss;
}

/* Rows of V words, dim D, for the base-against-callback check: a[which]. */
enum { V = 7, D = 5 };
static float tv[2][V * D];
static float *trow(void *ctx, int which, int32_t r)
{
    (void)ctx;
    return tv[which] + (size_t)r * D;
}

/* Trains 3 passes over a 12-word sentence with the given bases (NULL:
 * through trow) from the same start; returns the summed loss and leaves
 * the vectors in tv. */
static double train(int base_in, int base_out)
{
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < V * D; i++)
            tv[w][i] = w ? 0 : (float)((i * 37 % 11) - 5) / 50;
    static const float keep[V] = {1, 1, 0.5f, 1, 1, 1, 1};
    loom_alias neg;
    loom_alias_build(&neg, (const double[]){3, 1, 2, 5, 1, 1, 2}, V);
    loom_w2v_model m = {.p = {.dim = D, .window = 3, .negative = 3, .sample = 1e-3},
                        .keep = keep, .neg = &neg, .row = trow,
                        .base = {base_in ? tv[0] : NULL, base_out ? tv[1] : NULL}};
    static const int32_t words[12] = {0, 3, 1, 2, 6, 0, 4, 5, 1, 3, 2, 6};
    loom_rng g = loom_rng_stream(7, 8);
    double loss = 0;
    int64_t pairs;
    for (int e = 0; e < 3; e++)
        loss += loom_w2v_sentence(&m, words, 12, 0.05f, &g, &pairs);
    loom_alias_free(&neg);
    return loss;
}

int main(void)
{
    plan(7);
    int64_t pairs;
    for (int k = 0; k < 2; k++) {
        int n = k ? 400 : 5;
        float x = (float)sqrt(1.5), q = 1 / (1 + expf(-(x * x + x * x))); /* as the kernel */
        double want = 2 * (-log(q) - n * log(1 - q)), got = sentence_loss(n, 3.0, &pairs);
        ok(pairs == 2, "%d negatives: 2 pairs trained", n);
        ok(fabs(got - want) <= 1e-9 * want, "%d negatives: loss %.12g, expected %.12g", n, got,
           want);
    }
    double want = train(0, 0);
    static float ref[2][V * D];
    memcpy(ref, tv, sizeof ref);
    int moved = memcmp(ref[1], (float[V * D]){0}, sizeof ref[1]) != 0;
    const char *how[] = {"both bases", "the output vectors' base only", "the input vectors' base only"};
    for (int k = 0; k < 3; k++) {
        double got = train(k != 1, k != 2);
        ok(moved && got == want && !memcmp(ref, tv, sizeof ref),
           "%s: the same loss (%.17g) and vectors, bit for bit, as the callback", how[k], got);
    }
    return done_testing();
}
