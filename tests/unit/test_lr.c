/* test_lr.c — unit tests for the multinomial model's per-sample pieces
 * (kernels/lr.c): loom_lr_softmax and loom_lr_predict against the same
 * sums taken here in double, for feature counts around the dot product's
 * blocks of 16 (1, 15, 16, 17, 31, 785: the blocks, their partial sums and
 * the tail), every element weighted differently so that a skipped or
 * doubled element shows. */
#include "../../kernels/lr.h"
#include "../tap.h"

#include <math.h>
#include <stdlib.h>

enum { C = 5, MAXD = 785 };
static float W[C][MAXD], x[MAXD];

int main(void)
{
    static const int dims[] = {1, 15, 16, 17, 31, 785};
    int nd = (int)(sizeof dims / sizeof *dims);
    plan(3 * nd);
    for (int k = 0; k < nd; k++) {
        int D = dims[k];
        for (int f = 0; f < D; f++) {
            x[f] = (float)(1 + f % 7) / 8;
            for (int c = 0; c < C; c++)
                W[c][f] = (float)(((f * 13 + c * 5) % 11) - 5) / (16 + c);
        }
        float *rows[C], p[C];
        for (int c = 0; c < C; c++)
            rows[c] = W[c];
        double z[C], m = -INFINITY, s = 0;
        int best = 0;
        for (int c = 0; c < C; c++) {
            z[c] = 0;
            for (int f = 0; f < D; f++)
                z[c] += (double)W[c][f] * x[f];
            if (z[c] > z[best])
                best = c;
            m = fmax(m, z[c]);
        }
        for (int c = 0; c < C; c++)
            s += exp(z[c] - m);
        double worst = 0;
        double loss = loom_lr_softmax(rows, C, x, D, 2, p);
        for (int c = 0; c < C; c++)
            worst = fmax(worst, fabs(p[c] - exp(z[c] - m) / s));
        ok(worst <= 1e-5, "D = %d: softmax within 1e-5 of the double sums (off by %.2g)", D,
           worst);
        double want = -(z[2] - m - log(s));
        ok(fabs(loss - want) <= 1e-4, "D = %d: loss %.6f, expected %.6f", D, loss, want);
        ok(loom_lr_predict(rows, C, x, D) == best, "D = %d: predicts class %d", D, best);
    }
    return done_testing();
}
