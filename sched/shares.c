/* shares.c — the rounds of a dynamic data-parallel loop on the job's
 * range, shared among the ranks by the speed each showed (work stealing
 * across ranks; seed 000 §4 balances the load across workers with a job
 * pool; docs/loop.md, "Dynamic across ranks").
 *
 * Each rank starts with the block of the range that LOOM_STATIC would
 * give it (equal iterations, or equal weight under .sync_weight) and works
 * through it from the front.  A round moves R times a rank's .sync_every
 * (iterations or weight) in all: each rank takes a part of that in
 * proportion to its rate, from the front of its own block, and a rank
 * whose block is used up takes its part from the back of the block with
 * the most left.  After each round the ranks exchange the weight each ran
 * and the seconds its threads took (one allreduce of 2R doubles), so a
 * rank on a slower or busier core gets less, and the ranks reach the sync
 * point together instead of the others waiting for it (on this project's
 * 2-core machine the two vCPUs of one run differ by 20-30% for the whole
 * run: docs/loom-w2v.md).  A rank thus runs mostly its own block (its
 * rows, its data), as under the static schedule.
 *
 * Every rank computes every rank's part from the same numbers, so the
 * parts tile the range: every iteration runs once.  Which rank runs an
 * iteration depends on timing, as which thread runs it does under
 * OpenMP's dynamic schedule; LOOM_STATIC keeps fixed blocks. */
#include "sched.h"

#include <stdlib.h>

struct loom_shares {
    int R;
    long lo;
    const int64_t *cum; /* cum[i - lo]: weight of [lo, i); NULL: 1 per iteration */
    long *f, *e;        /* per rank: what is left of its block, [f, e) */
    double *rate;       /* per rank: weight per second (smoothed); 0 until measured */
    double *x;          /* scratch: weights then seconds, 2R */
    char *own;          /* scratch: per rank, whether its block had any left */
};

/* Weight of [lo, i). */
static double at(const loom_shares *s, long i)
{
    return s->cum ? (double)s->cum[i - s->lo] : (double)(i - s->lo);
}

/* The first i in [l, h] whose weight before it reaches w (h if none). */
static long first_at(const loom_shares *s, long l, long h, double w)
{
    while (l < h) {
        long m = l + (h - l) / 2;
        if (at(s, m) < w)
            l = m + 1;
        else
            h = m;
    }
    return l;
}

loom_shares *loom_shares_new(long lo, long hi, const int64_t *cum)
{
    int R = loom_icv.nranks;
    loom_shares *s = calloc(1, sizeof *s);
    if (!s || !(s->f = calloc((size_t)R, sizeof *s->f)) ||
        !(s->e = calloc((size_t)R, sizeof *s->e)) ||
        !(s->rate = calloc((size_t)R, sizeof *s->rate)) ||
        !(s->x = calloc(2 * (size_t)R, sizeof *s->x)) || !(s->own = malloc((size_t)R)))
        loom_die(2, "loom_for: out of memory sharing rounds among %d ranks", R);
    s->R = R;
    s->lo = lo;
    s->cum = cum;
    /* the static blocks: block k ends at the first iteration whose weight
     * before it reaches floor(total (k + 1) / R), as for.c's my_range cuts
     * by count (and loom_corpus_block by tokens) */
    int64_t total = cum ? cum[hi - lo] : hi - lo;
    for (int k = 0; k < R; k++)
        s->f[k] = k == 0 ? lo : s->e[k - 1],
        s->e[k] = k == R - 1 ? hi
                             : first_at(s, s->f[k], hi,
                                        (double)(int64_t)((__int128)total * (k + 1) / R));
    return s;
}

void loom_shares_free(loom_shares *s)
{
    if (s) {
        free(s->f);
        free(s->e);
        free(s->rate);
        free(s->x);
        free(s->own);
        free(s);
    }
}

/* Rank k's part of a round: its rate over the sum, never below a quarter
 * of an equal part (so that a rank that got little is measured again);
 * equal parts until every rank has a rate. */
static double part(const loom_shares *s, int k)
{
    double sum = 0, floor = 0.25 / s->R, t = 0;
    for (int q = 0; q < s->R; q++) {
        if (s->rate[q] <= 0)
            return 1.0 / s->R;
        sum += s->rate[q];
    }
    for (int q = 0; q < s->R; q++)
        t += s->rate[q] / sum > floor ? s->rate[q] / sum : floor;
    return (s->rate[k] / sum > floor ? s->rate[k] / sum : floor) / t;
}

int loom_shares_next(loom_shares *s, double every, long *a, long *z)
{
    int R = s->R, me = loom_icv.rank, any = 0;
    char *own = s->own;
    for (int k = 0; k < R; k++)
        any |= own[k] = s->f[k] < s->e[k];
    if (!any)
        return 0;
    *a = *z = s->lo;
    for (int k = 0; k < R; k++) { /* first every rank's own front */
        if (!own[k])
            continue;
        long c = first_at(s, s->f[k], s->e[k], at(s, s->f[k]) + part(s, k) * every * R);
        if (c == s->f[k])
            c++; /* at least one iteration: the loop ends */
        if (k == me)
            *a = s->f[k], *z = c;
        s->f[k] = c;
    }
    for (int k = 0; k < R; k++) { /* then the ranks without one, from the back of the fullest */
        if (own[k])
            continue;
        int j = -1;
        for (int q = 0; q < R; q++)
            if (s->f[q] < s->e[q] && (j < 0 || at(s, s->e[q]) - at(s, s->f[q]) >
                                                   at(s, s->e[j]) - at(s, s->f[j])))
                j = q;
        if (j < 0)
            break; /* nothing left to take */
        /* the last c with weight(c, e_j) >= the part, but not before f_j */
        double want = part(s, k) * every * R;
        long c = first_at(s, s->f[j], s->e[j], at(s, s->e[j]) - want);
        if (c > s->f[j] && at(s, s->e[j]) - at(s, c) < want)
            c--;
        if (c == s->e[j])
            c--;
        if (k == me)
            *a = c, *z = s->e[j];
        s->e[j] = c;
    }
    return 1;
}

void loom_shares_rates(loom_shares *s, const double *x)
{
    int R = s->R;
    for (int q = 0; q < R; q++) {
        if (x[q] <= 0 || x[R + q] <= 0)
            continue; /* ran nothing: keep what was known */
        double now = x[q] / x[R + q];
        s->rate[q] = s->rate[q] > 0 ? 0.5 * s->rate[q] + 0.5 * now : now;
    }
}

void loom_shares_learn(loom_shares *s, long a, long z, double secs)
{
    int R = s->R, me = loom_icv.rank;
    for (int q = 0; q < 2 * R; q++)
        s->x[q] = 0;
    s->x[me] = z > a ? at(s, z) - at(s, a) : 0;
    s->x[R + me] = secs;
    if (loom_allreduce(LOOM_IN_PLACE, s->x, 2 * (size_t)R, LOOM_DOUBLE, LOOM_SUM))
        loom_die(2, "loom_for: the ranks' speeds could not be exchanged");
    loom_shares_rates(s, s->x);
}
