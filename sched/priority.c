/* priority.c — the priority schedule of STRADS-Dynamic (seed 000 ch. 5,
 * seed 002 §3).
 *
 * Each round: sample L' candidate coordinates without replacement with
 * probability proportional to delta_j^2 + eta (a Fenwick tree of the
 * weights: O(log n) to draw or to change one); keep, in draw order, those
 * that pass the user's dependency test against every one already kept, up
 * to L; push the kept ones in parallel (every rank over its own data);
 * sum the partial results over ranks (allreduce); pull each one on every
 * rank, which applies it and returns the new delta_j.  Every rank draws
 * the same coordinates: the generator and the deltas are the same
 * everywhere, because the allreduce's results are bitwise identical on
 * every rank.  Weights and the generator persist between calls with the
 * same push function and range, unless a call asks to restart them. */
#include "sched.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

struct prio {
    void (*push)(long, double *, void *);
    long begin, end;
    double *tree;   /* Fenwick tree over the weights, 1-based */
    double *w;      /* the weights */
    uint64_t rng;
    struct prio *next;
};
static struct prio *states;

static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void tree_add(struct prio *s, long n, long j, double d)
{
    for (long i = j + 1; i <= n; i += i & -i)
        s->tree[i] += d;
}
static void set_weight(struct prio *s, long n, long j, double w)
{
    tree_add(s, n, j, w - s->w[j]);
    s->w[j] = w;
}
/* The coordinate whose cumulative weight interval holds u. */
static long tree_find(const struct prio *s, long n, double u)
{
    long pos = 0, step = 1;
    while (step * 2 <= n)
        step *= 2;
    for (; step; step /= 2)
        if (pos + step <= n && s->tree[pos + step] <= u) {
            pos += step;
            u -= s->tree[pos];
        }
    return pos < n ? pos : n - 1;
}
static double tree_total(const struct prio *s, long n)
{
    double t = 0;
    for (long i = n; i > 0; i -= i & -i)
        t += s->tree[i];
    return t;
}

static struct prio *state_for(long begin, long end, const loom_priority *p, double eta)
{
    for (struct prio *s = states; s; s = s->next)
        if (s->push == p->push && s->begin == begin && s->end == end)
            return s;
    long n = end - begin;
    struct prio *s = calloc(1, sizeof *s);
    if (!s || !(s->tree = calloc((size_t)n + 1, sizeof *s->tree)) ||
        !(s->w = calloc((size_t)n, sizeof *s->w)))
        loom_die(2, "loom_for: out of memory for the priority schedule of %ld coordinates", n);
    *s = (struct prio){p->push, begin, end, s->tree, s->w, p->seed ^ 0x6c6f6f6d, states};
    for (long j = 0; j < n; j++) /* start uniform: every delta unknown, say 1 */
        set_weight(s, n, j, 1.0 + eta);
    states = s;
    return s;
}

int loom_priority_run(long begin, long end, void *ctx, const loom_priority *p)
{
    long n = end - begin;
    if (n <= 0)
        return LOOM_OK;
    int T = omp_get_max_threads();
    long L = p->select > 0 ? p->select : T;
    long Lc = p->candidates > 0 ? p->candidates : 2 * L;
    if (Lc > n)
        Lc = n;
    if (L > Lc)
        L = Lc;
    long rounds = p->rounds > 0 ? p->rounds : (n + L - 1) / L;
    int width = p->width > 0 ? p->width : 1;
    double eta = p->eta > 0 ? p->eta : 1e-6;
    struct prio *s = state_for(begin, end, p, eta);
    if (p->restart)
        for (long j = 0; j < n; j++)
            set_weight(s, n, j, 1.0 + eta);
    long *cand = malloc((size_t)Lc * sizeof *cand), *kept = malloc((size_t)L * sizeof *kept);
    long *absolute = malloc((size_t)Lc * sizeof *absolute);
    double *saved = malloc((size_t)Lc * sizeof *saved);
    double *part = malloc((size_t)L * (size_t)width * sizeof *part);
    if (!cand || !kept || !absolute || !saved || !part)
        loom_die(2, "loom_for: out of memory for the priority schedule");
    for (long r = 0; r < rounds; r++) {
        /* draw L' distinct candidates: a drawn weight is set to 0 until the
         * round ends */
        long nc = 0;
        for (; nc < Lc; nc++) {
            double total = tree_total(s, n);
            if (!(total > 0))
                break;
            double u = (double)(next64(&s->rng) >> 11) * 0x1.0p-53 * total;
            long j = tree_find(s, n, u);
            if (s->w[j] <= 0) { /* rounding at an edge: take the next live one */
                long k = j;
                while (k < n && s->w[k] <= 0)
                    k++;
                if (k == n)
                    for (k = j; k >= 0 && s->w[k] <= 0; k--)
                        ;
                if (k < 0)
                    break;
                j = k;
            }
            cand[nc] = j;
            saved[nc] = s->w[j];
            set_weight(s, n, j, 0);
        }
        if (p->prepare) {
            for (long c = 0; c < nc; c++)
                absolute[c] = begin + cand[c];
            p->prepare(absolute, nc, ctx);
        }
        long nk = 0;
        for (long c = 0; c < nc && nk < L; c++) {
            int ok = 1;
            for (long k = 0; ok && p->conflict && k < nk; k++)
                ok = !p->conflict(begin + cand[c], begin + kept[k], ctx);
            if (ok)
                kept[nk++] = cand[c];
        }
        for (long c = 0; c < nc; c++) /* the weights come back (kept: updated below) */
            set_weight(s, n, cand[c], saved[c]);
        memset(part, 0, (size_t)nk * (size_t)width * sizeof *part);
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
        for (long k = 0; k < nk; k++)
            p->push(begin + kept[k], part + (size_t)k * (size_t)width, ctx);
        if (loom_icv.nranks > 1)
            loom_allreduce(LOOM_IN_PLACE, part, (size_t)nk * (size_t)width, LOOM_DOUBLE, LOOM_SUM);
        for (long k = 0; k < nk; k++) {
            double d = p->pull(begin + kept[k], part + (size_t)k * (size_t)width, ctx);
            set_weight(s, n, kept[k], isfinite(d) ? d * d + eta : eta);
        }
    }
    free(cand);
    free(kept);
    free(absolute);
    free(saved);
    free(part);
    return LOOM_OK;
}
