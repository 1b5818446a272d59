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
 * whose block is used up takes its part, or what its block lacked of it,
 * from the back of the block with the most left (so a part is up to two
 * ranges); the last round shares what is left the same way, so that no
 * rank waits a whole round at the end of the range.  After each round
 * the ranks exchange the weight each ran and the seconds its threads took
 * (one allreduce of 2R doubles), so a rank on a slower or busier core gets
 * less, and the ranks reach the sync point together instead of the others
 * waiting for it (on this project's 2-core machine the two vCPUs of one
 * run differ by 20-30% for the whole run: docs/loom-w2v.md).  A rank
 * thus runs mostly its own block (its rows, its data), as under the
 * static schedule.
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
    double *got;        /* scratch: per rank, the weight its own block gave this round */
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

loom_shares *loom_sched_shares_new(long lo, long hi, const int64_t *cum)
{
    int R = loom_rt_icv.nranks;
    loom_shares *s = calloc(1, sizeof *s);
    if (!s || !(s->f = calloc((size_t)R, sizeof *s->f)) ||
        !(s->e = calloc((size_t)R, sizeof *s->e)) ||
        !(s->rate = calloc((size_t)R, sizeof *s->rate)) ||
        !(s->x = calloc(2 * (size_t)R, sizeof *s->x)) ||
        !(s->got = calloc((size_t)R, sizeof *s->got)))
        loom_rt_die(2, "loom_for: out of memory sharing rounds among %d ranks", R);
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

void loom_sched_shares_free(loom_shares *s)
{
    if (s) {
        free(s->f);
        free(s->e);
        free(s->rate);
        free(s->x);
        free(s->got);
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

/* The weight of the block left to rank q. */
static double left(const loom_shares *s, int q) { return at(s, s->e[q]) - at(s, s->f[q]); }

/* Cuts want's worth (at least one iteration) off the back of the block
 * with the most left: the range taken, or an empty one if none is left. */
static void from_fullest(loom_shares *s, double want, long *a, long *z)
{
    int j = -1;
    for (int q = 0; q < s->R; q++)
        if (s->f[q] < s->e[q] && (j < 0 || left(s, q) > left(s, j)))
            j = q;
    *a = *z = s->lo;
    if (j < 0)
        return; /* nothing left to take */
    /* the last c with weight(c, e_j) >= want, but not before f_j */
    long c = first_at(s, s->f[j], s->e[j], at(s, s->e[j]) - want);
    if (c > s->f[j] && at(s, s->e[j]) - at(s, c) < want)
        c--;
    if (c == s->e[j])
        c--;
    *a = c, *z = s->e[j];
    s->e[j] = c;
}

int loom_sched_shares_next(loom_shares *s, double every, loom_part *p)
{
    int R = s->R, me = loom_rt_icv.rank, any = 0;
    double total = 0, round = every * R, *got = s->got;
    for (int k = 0; k < R; k++)
        total += left(s, k), any |= s->f[k] < s->e[k];
    if (!any)
        return 0;
    /* the last round shares what is left, by speed too, not one rank's
     * block to one rank while the others wait at the sync point */
    if (total > 0 && total < round)
        round = total;
    p->a[0] = p->z[0] = p->a[1] = p->z[1] = s->lo;
    for (int k = 0; k < R; k++) { /* first every rank's own front */
        got[k] = 0;
        if (s->f[k] >= s->e[k])
            continue;
        long c = first_at(s, s->f[k], s->e[k], at(s, s->f[k]) + part(s, k) * round);
        if (c == s->f[k])
            c++; /* at least one iteration: the loop ends */
        got[k] = at(s, c) - at(s, s->f[k]);
        if (k == me)
            p->a[0] = s->f[k], p->z[0] = c;
        s->f[k] = c;
    }
    /* then the ranks whose own block is used up and fell short of their
     * part (by an eighth of it or more: not a block's rounding) take the
     * rest from the back of the fullest, a second range */
    for (int k = 0; k < R; k++) {
        double want = part(s, k) * round, need = want - got[k];
        if (s->f[k] < s->e[k] || (got[k] > 0 && need < want / 8))
            continue;
        long a, z;
        from_fullest(s, need, &a, &z);
        if (k == me)
            p->a[1] = a, p->z[1] = z;
    }
    return 1;
}

void loom_sched_shares_rates(loom_shares *s, const double *x)
{
    int R = s->R;
    for (int q = 0; q < R; q++) {
        if (x[q] <= 0 || x[R + q] <= 0)
            continue; /* ran nothing: keep what was known */
        double now = x[q] / x[R + q];
        s->rate[q] = s->rate[q] > 0 ? 0.5 * s->rate[q] + 0.5 * now : now;
    }
}

void loom_sched_shares_learn(loom_shares *s, const loom_part *p, double secs)
{
    int R = s->R, me = loom_rt_icv.rank;
    for (int q = 0; q < 2 * R; q++)
        s->x[q] = 0;
    for (int i = 0; i < 2; i++)
        s->x[me] += p->z[i] > p->a[i] ? at(s, p->z[i]) - at(s, p->a[i]) : 0;
    s->x[R + me] = secs;
    if (loom_allreduce(LOOM_IN_PLACE, s->x, 2 * (size_t)R, LOOM_DOUBLE, LOOM_SUM))
        loom_rt_die(2, "loom_for: the ranks' speeds could not be exchanged");
    loom_sched_shares_rates(s, s->x);
}
