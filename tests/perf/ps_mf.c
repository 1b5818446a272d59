/* ps_mf.c — matrix factorization as a parameter server runs it (Bösen,
 * seed 001 §4): the benchmark tests/perf/cluster_policies.sh uses to put
 * bsp, ssp and priority (managed communication) side by side.  loom-mf
 * cannot: its serializable loop keeps the item factors H on the ring.
 *
 *   ps_mf TRAIN TEST [RANK EPOCHS CLOCKS_PER_EPOCH STEP LAMBDA] > log.csv
 *
 * Data parallel: rank r trains on the ratings of users u with u % R == r,
 * its user factors W in plain memory; H is one row allocation (items x
 * RANK floats, additive merge) under the policy LOOM_COHERENCE names
 * (bsp, ssp, priority; LOOM_STALENESS, LOOM_BANDWIDTH, LOOM_PRIORITY as
 * for any allocation).  Per rating: read H_i (loom_row_get), SGD step on
 * W_u and H_i, add H_i's change (loom_row_add).  Each epoch is
 * CLOCKS_PER_EPOCH equal slices of the rank's ratings (shuffled once),
 * each ended by loom_clock, and begun by loom_row_prefetch of the slice's
 * items (one batched fetch instead of a round trip per row, as a parameter
 * server's client does).  Prediction mu + W_u . H_i, step STEP * 0.95^e.
 * After every epoch, test RMSE over every rank's users (reading H as the
 * policy allows, outside the timed part; the rows of the rank's test items
 * prefetched in one batch first, so that the evaluation moves about the
 * same bytes under every policy: with a row-by-row evaluation the shaped
 * link idled while a policy's misses went one by one, and its token
 * bucket (tbf's 256 KB burst) refilled, flattering that policy's next
 * epoch).  Rank 0 prints CSV on stdout:
 * epoch,seconds,test_rmse, seconds counting training only (the same
 * for every policy). */
#include <loom.h>

#include "../../data/ratings.h"
#include "../rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float uniform(uint64_t *s) { return (float)((double)(next(s) >> 11) * 0x1p-53); }

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 3) {
        fprintf(stderr, "usage: ps_mf TRAIN TEST [RANK EPOCHS CLOCKS STEP LAMBDA]\n");
        return 2;
    }
    const int K = argc > 3 ? atoi(argv[3]) : 20, E = argc > 4 ? atoi(argv[4]) : 20,
              C = argc > 5 ? atoi(argv[5]) : 4;
    const float step0 = argc > 6 ? (float)atof(argv[6]) : 0.02f,
                lambda = argc > 7 ? (float)atof(argv[7]) : 0.05f;
    const int R = loom_size(), me = loom_rank();
    loom_ratings tr, te;
    char err[256];
    if (loom_ratings_load(argv[1], NULL, &tr, err, sizeof err) ||
        loom_ratings_load(argv[2], NULL, &te, err, sizeof err)) {
        fprintf(stderr, "ps_mf: %s\n", err);
        return 1;
    }
    const int32_t U = tr.nusers > te.nusers ? tr.nusers : te.nusers,
                  I = tr.nitems > te.nitems ? tr.nitems : te.nitems;
    const float mu = (float)(tr.sum / (double)tr.n);
    /* this rank's ratings, shuffled once (the same order every epoch) */
    int64_t n = 0;
    for (int64_t j = 0; j < tr.n; j++)
        if (tr.v[j].u % R == me)
            tr.v[n++] = tr.v[j];
    uint64_t s = 12345 + (uint64_t)me;
    for (int64_t j = n - 1; j > 0; j--) {
        int64_t k = (int64_t)(next(&s) % (uint64_t)(j + 1));
        loom_rating x = tr.v[j];
        tr.v[j] = tr.v[k];
        tr.v[k] = x;
    }
    /* per clock slice: its distinct items, for the prefetch */
    size_t **items = malloc(sizeof *items * (size_t)C), *nitems = calloc((size_t)C, sizeof *nitems);
    uint8_t *seen = malloc((size_t)I);
    for (int c = 0; items && seen && nitems && c < C; c++) {
        memset(seen, 0, (size_t)I);
        if (!(items[c] = malloc(sizeof **items * (size_t)I))) {
            fprintf(stderr, "ps_mf: out of memory\n");
            return 1;
        }
        for (int64_t j = n * c / C; j < n * (c + 1) / C; j++)
            if (!seen[tr.v[j].i]) {
                seen[tr.v[j].i] = 1;
                items[c][nitems[c]++] = (size_t)tr.v[j].i;
            }
    }
    /* the distinct items of this rank's test ratings, for the evaluation's prefetch */
    size_t *test_items = malloc(sizeof *test_items * (size_t)I), ntest = 0;
    if (seen && test_items) {
        memset(seen, 0, (size_t)I);
        for (int64_t j = 0; j < te.n; j++)
            if (te.v[j].u % R == me && !seen[te.v[j].i]) {
                seen[te.v[j].i] = 1;
                test_items[ntest++] = (size_t)te.v[j].i;
            }
    }
    float *W = malloc(sizeof *W * (size_t)U * (size_t)K), *dh = malloc(sizeof *dh * (size_t)K),
          *h = malloc(sizeof *h * (size_t)K);
    float *H = loom_alloc(sizeof *H * (size_t)I * (size_t)K,
                          &(loom_alloc_opts){.name = "H", .unit = LOOM_UNIT_ROW,
                                             .row_size = sizeof *H * (size_t)K,
                                             .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT});
    if (!W || !dh || !h || !H || !items || !nitems || !seen || !test_items) {
        fprintf(stderr, "ps_mf: out of memory\n");
        return 1;
    }
    uint64_t sw = 777;
    for (size_t j = 0; j < (size_t)U * (size_t)K; j++)
        W[j] = 0.1f * uniform(&sw);
    if (me == 0) { /* H's initial values, added once */
        uint64_t sh = 999;
        for (int32_t i = 0; i < I; i++) {
            for (int k = 0; k < K; k++)
                dh[k] = 0.1f * uniform(&sh);
            loom_row_add(H, (size_t)i, dh);
        }
    }
    loom_clock();
    loom_barrier();
    if (me == 0)
        printf("epoch,seconds,test_rmse\n");
    double busy = 0;
    for (int e = 0; e <= E; e++) {
        if (e > 0) {
            float step = step0 * powf(0.95f, (float)(e - 1));
            double t0 = loom_wtime();
            for (int c = 0; c < C; c++) {
                loom_row_prefetch(H, items[c], nitems[c]);
                for (int64_t j = n * c / C; j < n * (c + 1) / C; j++) {
                    const loom_rating *x = &tr.v[j];
                    float *w = W + (size_t)x->u * (size_t)K;
                    memcpy(h, loom_row_get(H, (size_t)x->i), sizeof *h * (size_t)K);
                    float p = mu;
                    for (int k = 0; k < K; k++)
                        p += w[k] * h[k];
                    float g = x->r - p;
                    for (int k = 0; k < K; k++) {
                        dh[k] = step * (g * w[k] - lambda * h[k]);
                        w[k] += step * (g * h[k] - lambda * w[k]);
                    }
                    loom_row_add(H, (size_t)x->i, dh);
                }
                loom_clock();
            }
            busy += loom_wtime() - t0;
        }
        double acc[2] = {0, 0};
        loom_row_prefetch(H, test_items, ntest);
        for (int64_t j = 0; j < te.n; j++) {
            const loom_rating *x = &te.v[j];
            if (x->u % R != me)
                continue;
            const float *hh = loom_row_get(H, (size_t)x->i), *w = W + (size_t)x->u * (size_t)K;
            float p = mu;
            for (int k = 0; k < K; k++)
                p += w[k] * hh[k];
            acc[0] += (double)(x->r - p) * (x->r - p);
            acc[1] += 1;
        }
        double t = busy;
        loom_allreduce(LOOM_IN_PLACE, acc, 2, LOOM_DOUBLE, LOOM_SUM);
        loom_allreduce(LOOM_IN_PLACE, &t, 1, LOOM_DOUBLE, LOOM_MAX);
        if (me == 0)
            printf("%d,%.4f,%.5f\n", e, t, sqrt(acc[0] / acc[1]));
        fflush(stdout);
    }
    loom_free(H);
    for (int c = 0; c < C; c++)
        free(items[c]);
    free(items);
    free(nitems);
    free(seen);
    free(test_items);
    free(W);
    free(dh);
    free(h);
    loom_ratings_free(&tr);
    loom_ratings_free(&te);
    loom_finalize();
    return 0;
}
