/* prefetch.c — IterStore's prefetch batches (seed 003) for repeated
 * data-parallel loops.
 *
 * A data-parallel loop (hybrid, bsp, ssp on several ranks) runs in rounds
 * between sync points, and its body reaches rows through loom_at: the
 * round's first touch of a row that is not valid fetches it, one round
 * trip at a time.  A loop site marked .repeated touches the same rows in
 * the same rounds every call, so the first call records, per round, the
 * rows its stages touched (its reconnaissance), and every later call
 * starts each round by prefetching them in one batch (loom_row_prefetch:
 * the invalid ones only, all in flight together).  A prefetch is only a
 * hint: rows the record misses are fetched on first touch as before, and
 * rows it names that the round no longer touches cost a fetch, never a
 * wrong value.  Each call records afresh, so a record follows a pattern
 * that changes slowly.
 *
 * After a site's first call the record also decides where rows live
 * (IterStore's placement, loom_sched_pf_place): each row's home moves to the
 * rank whose rounds touched it most (dsm/rehome.c), so that from the
 * second call on a rank reads most of its rows from its own store and
 * sends fewer diffs.
 *
 * The stage's other lesson carries over too: an array the last call's
 * last round mostly changed was to be staged whole in the next round
 * (stage.c); the next call stages it whole from its first round, instead
 * of row by row until its first sync point shows the same again.
 *
 * Sites are keyed by body, ctx, range and round length; at most SITES are
 * kept (the oldest is dropped).  A record names allocations by address
 * and is checked against the live ones at use.  Called only by the loop's
 * calling thread (staged_loop), between rounds; no locks. */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

#define SITES 8

struct pf_arr {
    void *base;
    size_t n;
    uint32_t *rows;
};

struct pf_round {
    size_t narr;
    struct pf_arr *arr;
};

struct loom_pf {
    void *fn, *ctx;
    long lo, hi, every;
    int64_t rounds;
    struct pf_round *round;
    uint64_t last; /* call number of its last use */
    int placed;    /* loom_sched_pf_place has run for this site */
    void *whole[2]; /* the arrays (bases) its last call ended staging whole */
};

static struct loom_pf sites[SITES];
static uint64_t calls;

static void clear_round(struct pf_round *r)
{
    for (size_t i = 0; i < r->narr; i++)
        free(r->arr[i].rows);
    free(r->arr);
    *r = (struct pf_round){0};
}

static void clear_site(struct loom_pf *p)
{
    for (int64_t r = 0; p->round && r < p->rounds; r++)
        clear_round(&p->round[r]);
    free(p->round);
    *p = (struct loom_pf){0};
}

loom_pf *loom_sched_pf_site(const loom_body *b, long lo, long hi, long every, int64_t rounds)
{
    void *fn = b->one ? (void *)b->one : b->range ? (void *)b->range : (void *)b->block;
    struct loom_pf *p = NULL, *old = &sites[0];
    calls++;
    for (int i = 0; i < SITES && !p; i++) {
        struct loom_pf *s = &sites[i];
        if (s->fn == fn && s->ctx == b->ctx && s->lo == lo && s->hi == hi &&
            s->every == every && s->rounds == rounds)
            p = s;
        else if (s->last < old->last)
            old = s;
    }
    if (!p) { /* a new site, in the place of the one unused longest */
        clear_site(old);
        p = old;
        *p = (struct loom_pf){.fn = fn, .ctx = b->ctx, .lo = lo, .hi = hi, .every = every,
                              .rounds = rounds, .round = calloc((size_t)rounds, sizeof *p->round)};
        if (!p->round) {
            *p = (struct loom_pf){0};
            return NULL;
        }
    }
    p->last = calls;
    return p;
}

void loom_sched_pf_before(loom_pf *p, int64_t round)
{
    if (!p || round >= p->rounds)
        return;
    struct pf_round *r = &p->round[round];
    for (size_t i = 0; i < r->narr; i++) {
        loom_dsm_alloc *a = loom_dsm_lookup_base(r->arr[i].base);
        if (!a || a->kind != LOOM_UNIT_ROW || !a->state)
            continue; /* freed since, or plain memory: nothing to fetch */
        size_t *rows = malloc(r->arr[i].n * sizeof *rows), n = 0;
        if (!rows)
            return;
        for (size_t k = 0; k < r->arr[i].n; k++)
            if (r->arr[i].rows[k] < a->nunits)
                rows[n++] = r->arr[i].rows[k];
        loom_row_prefetch(a->base, rows, n);
        free(rows);
    }
}

void loom_sched_pf_start(loom_pf *p, loom_stage **ss, int n)
{
    for (int i = 0; p && n == 1 && i < 2; i++) {
        loom_dsm_alloc *a = p->whole[i] ? loom_dsm_lookup_base(p->whole[i]) : NULL;
        if (a && a->state) /* still a live allocation with copies */
            loom_sched_stage_expect_whole(ss[0], a);
    }
}

void loom_sched_pf_end(loom_pf *p, loom_stage **ss, int n)
{
    loom_dsm_alloc *w[2] = {NULL, NULL};
    if (!p)
        return;
    if (n == 1)
        loom_sched_stage_whole(ss[0], w);
    for (int i = 0; i < 2; i++)
        p->whole[i] = w[i] ? w[i]->base : NULL;
}

/* loom_sched_stage_each's callback: one array's touched rows into the round. */
static void record(loom_dsm_alloc *a, const size_t *rows, size_t n, void *arg)
{
    struct pf_round *r = arg;
    if (!n || a->nunits > UINT32_MAX)
        return;
    struct pf_arr *v = realloc(r->arr, (r->narr + 1) * sizeof *v);
    uint32_t *copy = malloc(n * sizeof *copy);
    if (!v || !copy) {
        free(copy);
        if (v)
            r->arr = v;
        return;
    }
    for (size_t k = 0; k < n; k++)
        copy[k] = (uint32_t)rows[k];
    r->arr = v;
    r->arr[r->narr++] = (struct pf_arr){a->base, n, copy};
}

void loom_sched_pf_after(loom_pf *p, int64_t round, loom_stage **ss, int n)
{
    if (!p || round >= p->rounds)
        return;
    clear_round(&p->round[round]);
    loom_sched_stage_each(ss, n, record, &p->round[round]);
}

/* Contract: collective (every rank ends the same loop call), after the
 * call's last round.  Once per site, after its first call: for every
 * allocation whose homes can move (loom_dsm_rehome_eligible), count per
 * row the rounds of this call that touched it here; the rank with the
 * most (ties: the current home, then the lowest rank) becomes its home,
 * if that moves any row of the allocation.  One allreduce of a word per
 * row, per such allocation, once per site. */
void loom_sched_pf_place(loom_pf *p)
{
    if (!p || p->placed)
        return;
    p->placed = 1;
    const int me = loom_rt_icv.rank;
    int quiet = 0;
    int n = atomic_load(&loom_dsm_nallocs);
    for (int id = 0; id < n; id++) {
        loom_dsm_alloc *a = loom_dsm_allocs[id];
        if (!a || !a->live || !loom_dsm_rehome_eligible(a) || a->nunits > UINT32_MAX)
            continue; /* the same on every rank: allocations are collective */
        uint64_t *key = calloc(a->nunits + 1, sizeof *key);
        int *home = malloc((a->nunits + 1) * sizeof *home);
        int32_t nomem = !key || !home;
        loom_allreduce(LOOM_IN_PLACE, &nomem, 1, LOOM_INT32, LOOM_MAX);
        if (nomem) {
            free(key);
            free(home);
            return; /* placement is an optimization: skip it */
        }
        for (int64_t r = 0; r < p->rounds; r++)
            for (size_t i = 0; i < p->round[r].narr; i++)
                if (p->round[r].arr[i].base == a->base)
                    for (size_t k = 0; k < p->round[r].arr[i].n; k++)
                        if (p->round[r].arr[i].rows[k] < a->nunits)
                            key[p->round[r].arr[i].rows[k]] += (uint64_t)1 << 24;
        for (size_t u = 0; u < a->nunits; u++) /* count, then "is its home", then low rank */
            key[u] |= (uint64_t)(a->home[u] == me) << 23 | (uint64_t)(0x7fffff - me);
        loom_allreduce(LOOM_IN_PLACE, key, a->nunits, LOOM_INT64, LOOM_MAX); /* keys < 2^63 */
        size_t moved = 0;
        for (size_t u = 0; u < a->nunits; u++) {
            home[u] = 0x7fffff - (int)(key[u] & 0x7fffff);
            moved += home[u] != a->home[u];
        }
        if (moved) {
            if (!quiet++)
                loom_dsm_barrier(); /* every write home, none in flight */
            loom_dsm_rehome(a, home);
        }
        free(key);
        free(home);
    }
}
