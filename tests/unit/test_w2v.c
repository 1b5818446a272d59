/* test_w2v.c — unit tests for the word2vec sentence kernel
 * (kernels/w2v.c): the loss it returns, against -log sigma(z) -
 * N log(1 - sigma(z)) a pair computed here.  With alpha = 0 nothing moves,
 * every input and output vector is the same (so every dot product is z),
 * and the negatives are drawn from a table that holds only word 2 (never a
 * context word): the loss of each pair is known exactly.  With 400
 * negatives at z = 3 a pair's probability (0.047^400, about 1e-530) is
 * below what a double holds, so the kernel's early logarithms (a product
 * of the outcomes' probabilities is taken to its log before it underflows)
 * are checked too. */
#include "../../kernels/w2v.h"
#include "loom.h"
#include "../tap.h"

#include <math.h>
#include <stdlib.h>

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

int main(void)
{
    plan(4);
    int64_t pairs;
    for (int k = 0; k < 2; k++) {
        int n = k ? 400 : 5;
        float x = (float)sqrt(1.5), q = 1 / (1 + expf(-(x * x + x * x))); /* as the kernel */
        double want = 2 * (-log(q) - n * log(1 - q)), got = sentence_loss(n, 3.0, &pairs);
        ok(pairs == 2, "%d negatives: 2 pairs trained", n);
        ok(fabs(got - want) <= 1e-9 * want, "%d negatives: loss %.12g, expected %.12g", n, got,
           want);
    }
    return done_testing();
}
