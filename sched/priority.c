/* priority.c — the priority schedule of STRADS-Dynamic (seed 000 ch. 5,
 * seed 002 §3), pipelined.
 *
 * Coordinates are drawn without replacement with probability proportional
 * to delta_j^2 + eta, from a Fenwick tree of the weights (O(log n) to draw
 * or to change one).  Two ways to run the draws:
 *
 *   serial (one thread on one rank, or on every rank when each holds the
 *     whole data): each drawn coordinate is pushed and pulled at once,
 *     before the next draw.  Nothing runs concurrently, so
 *     there is nothing to filter: conflict() and prepare() are not called,
 *     and the cost per update is one draw plus the user's push and pull.
 *
 *   windows (several ranks or threads): `pipeline` rounds are in flight
 *     at once.  Each round draws up to L' candidates (one at a time,
 *     stopping once L are kept) and keeps, in draw order, up to L that
 *     pass conflict() against every coordinate already kept in the window
 *     (so no two conflicting coordinates are ever in flight together);
 *     then the window's pushes run in one parallel region, their partial
 *     results are summed over ranks in one allreduce, and the pulls run
 *     in round order.  With apply() the threads share each coordinate by
 *     data instead of taking whole ones (run_split): every thread pushes
 *     every kept coordinate, then the pulls, then every thread applies
 *     every kept coordinate.  The staleness this buys: a push sees
 *     the state from before every pull of its window (at most pipeline - 1
 *     earlier rounds, none of them conflicting with it), and the draws of
 *     a window do not see its own deltas.
 *
 * Every rank draws the same coordinates: the generator and the deltas are
 * the same everywhere, because the allreduce's results are bitwise
 * identical on every rank.  With .whole_data every rank holds all of the
 * data and runs the schedule alone, exchanging nothing: the same draws and
 * pushes give the same deltas on every rank.  Weights and the generator
 * persist between calls with the same push function and range, unless a
 * call asks to restart them. */
#include "sched.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
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
static double tree_total(const struct prio *s, long n)
{
    double t = 0;
    for (long i = n; i > 0; i -= i & -i)
        t += s->tree[i];
    return t;
}
/* Every weight to w, the tree rebuilt in O(n). */
static void reset(struct prio *s, long n, double w)
{
    for (long j = 0; j < n; j++)
        s->w[j] = w;
    for (long i = 1; i <= n; i++)
        s->tree[i] = w;
    for (long i = 1; i <= n; i++) {
        long up = i + (i & -i);
        if (up <= n)
            s->tree[up] += s->tree[i];
    }
}

/* A coordinate drawn with probability w_j / total, or -1 when every weight
 * is 0.  The drawn weight is not changed. */
static long draw(struct prio *s, long n)
{
    double total = tree_total(s, n);
    if (!(total > 0))
        return -1;
    double u = (double)(next64(&s->rng) >> 11) * 0x1.0p-53 * total;
    long pos = 0, step = 1;
    while (step * 2 <= n)
        step *= 2;
    for (; step; step /= 2)
        if (pos + step <= n && s->tree[pos + step] <= u) {
            pos += step;
            u -= s->tree[pos];
        }
    long j = pos < n ? pos : n - 1;
    if (s->w[j] <= 0) { /* rounding at an edge: take the nearest live one */
        long k = j;
        while (k < n && s->w[k] <= 0)
            k++;
        if (k == n)
            for (k = j; k >= 0 && s->w[k] <= 0; k--)
                ;
        j = k;
    }
    return j;
}

/* Checkpoints (docs/checkpoint.md): the weights, their tree and the
 * generator are kept in every checkpoint, and a restarted run's n-th
 * state gets the checkpointed n-th state's (loops run in the same order,
 * so the same range), to draw what the uninterrupted run draws. */
static void keep(struct prio *s, long n)
{
    static int made;
    char name[64];
    int rc = 0;
    made++;
    snprintf(name, sizeof name, "priority %d weights", made);
    rc |= loom_checkpoint_keep(name, s->w, (size_t)n * sizeof *s->w, NULL);
    snprintf(name, sizeof name, "priority %d tree", made);
    rc |= loom_checkpoint_keep(name, s->tree, ((size_t)n + 1) * sizeof *s->tree, NULL);
    snprintf(name, sizeof name, "priority %d generator", made);
    rc |= loom_checkpoint_keep(name, &s->rng, sizeof s->rng, NULL);
    if (rc)
        loom_rt_die(2, "loom_for: out of memory for the priority schedule");
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
        loom_rt_die(2, "loom_for: out of memory for the priority schedule of %ld coordinates", n);
    *s = (struct prio){p->push, begin, end, s->tree, s->w, p->seed ^ 0x6c6f6f6d, states};
    reset(s, n, 1.0 + eta); /* start uniform: every delta unknown, say 1 */
    states = s;
    keep(s, n);
    return s;
}

/* The new weight of a coordinate whose pull returned d. */
static double weight(double d, double eta)
{
    return isfinite(d) ? d * d + eta : eta;
}

/* One rank, one thread: `updates` draws, each pushed and pulled (and
 * applied) at once. */
static void run_serial(struct prio *s, long begin, long n, long updates, double eta, void *ctx,
                       const loom_priority *p, double *part)
{
    size_t width = (size_t)(p->width > 0 ? p->width : 1);
    for (long t = 0; t < updates; t++) {
        long j = draw(s, n);
        if (j < 0)
            return;
        memset(part, 0, width * sizeof *part);
        p->push(begin + j, part, ctx);
        set_weight(s, n, j, weight(p->pull(begin + j, part, ctx), eta));
        if (p->apply)
            p->apply(begin + j, ctx);
    }
}

/* Scratch of one window: the candidates of a round, the kept coordinates
 * of the window in round order, and their partial results. */
struct window {
    long *cand, *absolute, *kept;
    double *saved, *part, *tpart; /* tpart: every thread's partials (with apply) */
};

/* Draws the next candidate of a round into cand[*nc] (its weight saved,
 * then 0: out of the draws until the window ends); 0 when none is left. */
static int draw_one(struct prio *s, long n, long *cand, double *saved, long *nc)
{
    long j = draw(s, n);
    if (j < 0)
        return 0;
    cand[*nc] = j;
    saved[(*nc)++] = s->w[j];
    set_weight(s, n, j, 0);
    return 1;
}

/* Draws and filters one round into w->kept[*nk ..], checking conflicts
 * against every coordinate already kept in the window.  Candidates are
 * drawn one at a time and the round stops once L are kept: the kept ones
 * are those of drawing all Lc first and keeping the first L that pass,
 * without the draws that would be thrown away (with prepare(), which must
 * see them all, all Lc are drawn first).  w->cand and w->saved hold the
 * window's *ndrawn draws and their weights, to put back. */
static void schedule_round(struct prio *s, long begin, long n, long Lc, long L, void *ctx,
                           const loom_priority *p, struct window *w, long *nk, long *ndrawn)
{
    long *cand = w->cand + *ndrawn;
    double *saved = w->saved + *ndrawn;
    long nc = 0;
    if (p->prepare) { /* the window's kept ones first: conflict() asks about them too */
        while (nc < Lc && draw_one(s, n, cand, saved, &nc))
            ;
        long m = 0;
        for (long k = 0; k < *nk; k++)
            w->absolute[m++] = begin + w->kept[k];
        for (long c = 0; c < nc; c++)
            w->absolute[m++] = begin + cand[c];
        p->prepare(w->absolute, m, ctx);
    }
    long first = *nk, limit = first + L;
    for (long c = 0; c < Lc && *nk < limit; c++) {
        if (c == nc && !draw_one(s, n, cand, saved, &nc))
            break;
        int ok = 1;
        for (long k = 0; ok && p->conflict && k < *nk; k++)
            ok = !p->conflict(begin + cand[c], begin + w->kept[k], ctx);
        if (ok)
            w->kept[(*nk)++] = cand[c];
    }
    *ndrawn += nc;
}

/* The window's partials (w->part) summed over ranks, then the pulls in
 * round order, each setting its coordinate's weight.  On the calling
 * thread (the initial one: the allreduce is collective). */
static void finish_window(struct prio *s, long begin, long n, double eta, void *ctx,
                          const loom_priority *p, struct window *w, long nk)
{
    size_t width = (size_t)(p->width > 0 ? p->width : 1);
    if (loom_rt_icv.nranks > 1 && !p->whole_data)
        loom_allreduce(LOOM_IN_PLACE, w->part, (size_t)nk * width, LOOM_DOUBLE, LOOM_SUM);
    for (long k = 0; k < nk; k++)
        set_weight(s, n, w->kept[k],
                   weight(p->pull(begin + w->kept[k], w->part + (size_t)k * width, ctx), eta));
}

/* A window whose coordinates the threads share by data (p->apply set):
 * in one parallel region every thread pushes every kept coordinate into
 * its own partials, the initial thread adds them in thread order and
 * finishes the window, and every thread applies every kept coordinate.
 * w->tpart holds T partials of the window. */
static void run_split(struct prio *s, long begin, long n, double eta, void *ctx,
                      const loom_priority *p, struct window *w, long nk, int T)
{
    size_t width = (size_t)(p->width > 0 ? p->width : 1), m = (size_t)nk * width;
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        double *mine = w->tpart + (size_t)t * m;
        memset(mine, 0, m * sizeof *mine);
        for (long k = 0; k < nk; k++)
            p->push(begin + w->kept[k], mine + (size_t)k * width, ctx);
#pragma omp barrier
#pragma omp master
        {
            memcpy(w->part, w->tpart, m * sizeof *w->part);
            for (int u = 1; u < nt; u++)
                for (size_t i = 0; i < m; i++)
                    w->part[i] += w->tpart[(size_t)u * m + i];
            finish_window(s, begin, n, eta, ctx, p, w, nk);
        }
#pragma omp barrier
        for (long k = 0; k < nk; k++)
            p->apply(begin + w->kept[k], ctx);
    }
}

int loom_sched_priority_run(long begin, long end, void *ctx, const loom_priority *p)
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
    long depth = p->pipeline > 0 ? p->pipeline : 1; /* measured: docs/loom-lasso.md */
    if (depth * Lc > n) /* a window draws without replacement */
        depth = n / Lc > 0 ? n / Lc : 1;
    size_t width = (size_t)(p->width > 0 ? p->width : 1);
    double eta = p->eta > 0 ? p->eta : 1e-6;
    struct prio *s = state_for(begin, end, p, eta);
    if (p->restart)
        reset(s, n, 1.0 + eta);
    size_t drawn = (size_t)(depth * Lc), kept = (size_t)(depth * L);
    struct window w = {malloc(drawn * sizeof(long)), malloc((drawn + kept) * sizeof(long)),
                       malloc(kept * sizeof(long)), malloc(drawn * sizeof(double)),
                       malloc(kept * width * sizeof(double)),
                       malloc((size_t)T * kept * width * sizeof(double))};
    if (!w.cand || !w.absolute || !w.kept || !w.saved || !w.part || !w.tpart)
        loom_rt_die(2, "loom_for: out of memory for the priority schedule");
    if ((loom_rt_icv.nranks == 1 || p->whole_data) && T == 1) {
        run_serial(s, begin, n, rounds * L, eta, ctx, p, w.part);
        rounds = 0;
    }
    for (long r = 0; r < rounds; r += depth) {
        long nk = 0, ndrawn = 0, d = rounds - r < depth ? rounds - r : depth;
        for (long k = 0; k < d; k++)
            schedule_round(s, begin, n, Lc, L, ctx, p, &w, &nk, &ndrawn);
        for (long c = 0; c < ndrawn; c++) /* the weights come back (kept: updated below) */
            set_weight(s, n, w.cand[c], w.saved[c]);
        if (p->apply && T > 1) {
            run_split(s, begin, n, eta, ctx, p, &w, nk, T);
            continue;
        }
        memset(w.part, 0, (size_t)nk * width * sizeof *w.part);
        if (T > 1 && nk > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
            for (long k = 0; k < nk; k++)
                p->push(begin + w.kept[k], w.part + (size_t)k * width, ctx);
        } else { /* no region: even one of one thread cost ~0.4 us a window */
            for (long k = 0; k < nk; k++)
                p->push(begin + w.kept[k], w.part + (size_t)k * width, ctx);
        }
        finish_window(s, begin, n, eta, ctx, p, &w, nk);
        for (long k = 0; p->apply && k < nk; k++) /* one thread: its share is everything */
            p->apply(begin + w.kept[k], ctx);
    }
    free(w.cand);
    free(w.absolute);
    free(w.kept);
    free(w.saved);
    free(w.part);
    free(w.tpart);
    return LOOM_OK;
}
