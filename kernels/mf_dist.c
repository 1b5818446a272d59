/* mf_dist.c — distributed SGD matrix factorization on the ring schedule:
 * the model's allocations and one epoch's Loom loop (mf_dist.h). */
#include "mf_dist.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define SLOT 8 /* doubles: each thread's loss a cache line apart */

/* The block body: the kernel's loop over a block of ratings.  A block of
 * one (every block under LOOM_CHECK=serial) reaches its rows through
 * loom_at, so that the checker sees the rows the update really touches,
 * not only those the ratings' fields name. */
static void sgd(const void *recs, long n, void *ctx)
{
    loom_mf_dist *d = ctx;
    double loss;
    if (n == 1) {
        const loom_rating *v = recs;
        float e = loom_mf_update(loom_at(d->m.W, (size_t)v->u), loom_at(d->m.H, (size_t)v->i),
                                 v->r, &d->m);
        loss = (double)e * e;
    } else {
        loss = loom_mf_block(recs, n, &d->m);
    }
    d->loss[omp_get_thread_num() * SLOT] += loss;
    if (d->tick)
        d->tick(n);
}

void loom_mf_dist_init(loom_mf_dist *d, int32_t nu, int32_t ni, int K, float mu,
                       const loom_user_range *mine, const uint32_t *cu, const uint32_t *ci,
                       unsigned long long seed)
{
    int D = loom_mf_stride(K);
    size_t row = (size_t)D * sizeof(float);
    float *W = loom_alloc((size_t)nu * row, &(loom_alloc_opts){.name = "W",
                          .unit = LOOM_UNIT_ROW, .row_size = row, .coherence = "local"});
    float *H = loom_alloc((size_t)ni * row, &(loom_alloc_opts){.name = "H",
                          .unit = LOOM_UNIT_ROW, .row_size = row, .coherence = "ring"});
    if (!W || !H)
        loom_abort(1, "loom-mf: cannot allocate the model (%d + %d rows of %d floats)", nu, ni,
                   D);
    /* this rank's users' rows of W are current here: a restart on another
     * number of ranks takes each row from the rank that held it */
    loom_checkpoint_rows(W, (size_t)mine->lo, (size_t)(mine->hi - mine->lo));
    size_t hfirst, hn;
    loom_ring_part(H, NULL, NULL, &hfirst, &hn);
    if (!loom_restarted()) {
        loom_mf_init_rows(W + (size_t)mine->lo * D, mine->lo, mine->hi - mine->lo, K, D,
                          cu + mine->lo, seed);
        loom_mf_init_rows(H + hfirst * D, (int64_t)hfirst, (int64_t)hn, K, D, ci + hfirst,
                          seed ^ 0x9e3779b97f4a7c15ULL);
    }
    d->m = (loom_mf){.W = W, .H = H, .K = K, .D = D, .mu = mu, .lambda = d->m.lambda,
                     .lambda_bias = d->m.lambda_bias};
    d->nu = nu, d->ni = ni;
    if (!(d->loss = calloc((size_t)omp_get_max_threads() * SLOT, sizeof *d->loss)))
        loom_abort(1, "loom-mf: out of memory");
}

double loom_mf_dist_epoch(loom_mf_dist *d, loom_rating *v, int64_t n, float step)
{
    int T = omp_get_max_threads();
    d->m.step = step;
    memset(d->loss, 0, (size_t)T * SLOT * sizeof *d->loss);
    if (d->serial)
        return loom_mf_block(v, n, &d->m);
    /* each rating touches the rows its fields name: W[u] and H[i]; the
     * planner lays the ratings out where they are (no copy: at 10^8
     * ratings, 2 GB less) */
    const loom_for_opts loop = {.schedule = LOOM_SERIALIZABLE, .local = 1, .repeated = 1,
                                .ordered = d->ordered, .in_place = 1,
                                .fields = {LOOM_FIELD(d->m.W, loom_rating, u),
                                           LOOM_FIELD(d->m.H, loom_rating, i)}};
    if (loom_for_records(v, sizeof *v, n, sgd, d, &loop))
        loom_abort(1, "loom-mf: the SGD loop failed");
    double s = 0;
    for (int t = 0; t < T; t++)
        s += d->loss[t * SLOT];
    return s;
}

void loom_mf_dist_free(loom_mf_dist *d)
{
    free(d->loss);
    d->loss = NULL;
    if (d->m.W)
        loom_free(d->m.W);
    if (d->m.H)
        loom_free(d->m.H);
    d->m.W = d->m.H = NULL;
}
