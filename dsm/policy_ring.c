/* policy_ring.c — static ring rotation (STRADS-Static, seed 000 ch. 4).
 *
 * The allocation's units are cut into P partitions (blocks of whole units);
 * in sub-epoch t rank p owns partition (p - t) mod P, so every partition
 * moves to the ring successor at each rotation and, over P rotations,
 * visits every rank exactly once.  The owner reads and writes its
 * partition in place: no fetch, no twin, no diff.
 *
 * Macro-synchronization: loom_ring_done(array, unit) sends a finished unit
 * to the successor at once; loom_ring_rotate sends whatever is left, then
 * waits for the partition it owns next.  Incoming units land in that
 * partition's own address range (through the shadow alias for pages),
 * which nobody here touches until it is owned: the transfer overlaps the
 * computation on the current partition (double buffering).  After every P
 * rotations, one barrier keeps the ranks in step.
 *
 * Check mode (LOOM_CHECK=dsm): partitions a rank does not own are
 * PROT_NONE (pages) or invalid (rows, through loom_row_get); touching one
 * stops the job naming the rank, unit, partition and owner. */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define AM_RING 11

extern const loom_policy loom_policy_ring; /* the table, at the end of this file */

struct ring {
    uint64_t t;               /* sub-epoch */
    size_t *lo;               /* P + 1 partition boundaries, in units */
    _Atomic long *arrived;    /* per partition: units received for it */
    uint8_t *sent;            /* per unit: already forwarded this sub-epoch */
};

struct ring_hdr {
    uint32_t alloc, src, part, pad;
    uint64_t lo, n; /* units */
};

static int P(void) { return loom_icv.nranks; }
/* (rank - t) mod P */
static int owned_part(const struct ring *g)
{
    return (loom_icv.rank + P() - (int)(g->t % (uint64_t)P())) % P();
}
static int owner_of(const struct ring *g, int j) { return (int)(((uint64_t)j + g->t) % (uint64_t)P()); }
static int part_of(const struct ring *g, size_t u)
{
    int j = 0;
    while (u >= g->lo[j + 1])
        j++;
    return j;
}
/* Check mode: set units [lo, hi) to prot (rows: invalid or valid). */
static void expose_units(loom_dsm_alloc *a, size_t lo, size_t hi, int prot)
{
    if (a->kind == LOOM_UNIT_PAGE)
        loom_dsm_protect(a, lo, hi, prot);
    else
        for (size_t u = lo; u < hi; u++)
            atomic_store(&a->state[u], prot == PROT_NONE ? U_INVALID : U_CLEAN);
}

static void expose(loom_dsm_alloc *a, struct ring *g, int j, int prot)
{
    expose_units(a, g->lo[j], g->lo[j + 1], prot);
}

static void violation(loom_dsm_alloc *a, size_t u)
{
    struct ring *g = a->policy_data;
    int j = part_of(g, u);
    loom_abort(72, "check: rank %d touched unit %zu of '%s' in sub-epoch %llu, but its "
               "partition %d is owned by rank %d (ring)", loom_icv.rank, u, a->name,
               (unsigned long long)g->t, j, owner_of(g, j));
}

static void nothing(loom_dsm_alloc *a) { (void)a; }

/* Writes stay with the owner; forget the row path's bookkeeping. */
static void release(loom_dsm_alloc *a)
{
    for (size_t i = 0; i < a->ndirty; i++) {
        size_t u = a->dirty[i];
        if (a->kind == LOOM_UNIT_ROW) {
            if (a->twin[u])
                memset(a->twin[u], 0, a->unit);
            a->put[u] = 0;
        }
    }
    a->ndirty = 0;
}

static int init(loom_dsm_alloc *a)
{
    struct ring *g = calloc(1, sizeof *g);
    if (!g || !(g->lo = calloc((size_t)P() + 1, sizeof *g->lo)) ||
        !(g->arrived = calloc((size_t)P(), sizeof *g->arrived)) ||
        !(g->sent = calloc(a->nunits, 1))) {
        free(g ? g->lo : NULL);
        free(g);
        return LOOM_ERR_NOMEM;
    }
    for (int j = 0; j <= P(); j++)
        g->lo[j] = a->nunits * (size_t)j / (size_t)P();
    a->policy_data = g;
    expose_units(a, 0, a->nunits, loom_dsm_check ? PROT_NONE : PROT_READ | PROT_WRITE);
    if (loom_dsm_check)
        expose(a, g, owned_part(g), PROT_READ | PROT_WRITE);
    return LOOM_OK;
}

static void fini(loom_dsm_alloc *a)
{
    struct ring *g = a->policy_data;
    if (!g)
        return;
    free(g->lo);
    free((void *)g->arrived);
    free(g->sent);
    free(g);
    a->policy_data = NULL;
}


/* ---- messages -------------------------------------------------------- */

static void send_units(loom_dsm_alloc *a, struct ring *g, size_t lo, size_t n)
{
    size_t len = n * a->unit;
    void *d = malloc(len);
    if (!d)
        loom_die(1, "out of memory forwarding '%s'", a->name);
    memcpy(d, loom_dsm_unit_data(a, lo), len);
    struct ring_hdr h = {(uint32_t)a->id, (uint32_t)loom_icv.rank, (uint32_t)part_of(g, lo), 0,
                         lo, n};
    atomic_fetch_add(&a->stats.forwarded, n);
    atomic_fetch_add(&a->stats.bytes_sent, len);
    loom_tp_am_send((loom_icv.rank + 1) % P(), AM_RING, &h, sizeof h, d, len);
    memset(g->sent + lo, 1, n);
}

/* A hand-off: units [lo, lo + n) of partition `part`, from the ring
 * predecessor, land in place.  The units must lie inside the partition
 * (lo and lo + n both within its bounds) and the payload be exactly n
 * units.  A hand-off this rank cannot place would leave its owner-to-be
 * waiting forever: stop the job instead, saying what arrived. */
static void on_ring(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct ring_hdr h;
    if (hlen != sizeof h)
        loom_abort(70, "ring: a hand-off arrived with a %zu-byte header (internal error)", hlen);
    memcpy(&h, hdr, sizeof h);
    int n = atomic_load(&loom_nallocs);
    loom_dsm_alloc *a = h.alloc < (uint32_t)n ? loom_allocs[h.alloc] : NULL;
    struct ring *g = a && a->live && a->policy == &loom_policy_ring ? a->policy_data : NULL;
    int pred = (loom_icv.rank + P() - 1) % P();
    if (!g || h.src != (uint32_t)pred || h.part >= (uint32_t)P() || h.lo < g->lo[h.part] ||
        h.lo > g->lo[h.part + 1] || h.n > g->lo[h.part + 1] - h.lo || len != h.n * a->unit)
        loom_abort(70, "ring: rank %d cannot place a hand-off from rank %u (allocation %u%s, "
                   "partition %u, units %llu+%llu, %zu bytes) (internal error)", loom_icv.rank,
                   h.src, h.alloc, g ? "" : " not a ring here", h.part,
                   (unsigned long long)h.lo, (unsigned long long)h.n, len);
    memcpy(loom_dsm_unit_data(a, (size_t)h.lo), data, len);
    atomic_fetch_add(&a->stats.bytes_recv, len);
    atomic_fetch_add(&g->arrived[h.part], (long)h.n);
}

static void setup(void)
{
    loom_tp_am_register(AM_RING, on_ring);
}

/* ---- the API --------------------------------------------------------- */

static loom_dsm_alloc *ring_alloc(void *array, const char *fn)
{
    loom_dsm_alloc *a = loom_dsm_lookup_base(array);
    if (!a || (a->policy != &loom_policy_ring && !a->policy->plain)) {
        loom_log("%s: %p is not a ring allocation", fn, array);
        return NULL;
    }
    return a;
}

int loom_ring_part(void *array, void **start, size_t *bytes, size_t *first, size_t *n)
{
    loom_dsm_alloc *a = ring_alloc(array, "loom_ring_part");
    if (!a)
        return LOOM_ERR_ARG;
    size_t lo = 0, hi = a->nunits;
    if (a->policy == &loom_policy_ring) {
        struct ring *g = a->policy_data;
        int j = owned_part(g);
        lo = g->lo[j];
        hi = g->lo[j + 1];
    }
    size_t end = hi * a->unit < a->bytes ? hi * a->unit : a->bytes;
    if (start) *start = a->base + lo * a->unit;
    if (bytes) *bytes = end > lo * a->unit ? end - lo * a->unit : 0;
    if (first) *first = lo;
    if (n) *n = hi - lo;
    return LOOM_OK;
}

int loom_ring_done(void *array, size_t unit)
{
    loom_dsm_alloc *a = ring_alloc(array, "loom_ring_done");
    if (!a)
        return LOOM_ERR_ARG;
    if (a->policy->plain)
        return unit < a->nunits ? LOOM_OK : LOOM_ERR_ARG;
    struct ring *g = a->policy_data;
    int j = owned_part(g);
    if (unit < g->lo[j] || unit >= g->lo[j + 1]) {
        loom_log("loom_ring_done: unit %zu of '%s' is not in this rank's partition", unit, a->name);
        return LOOM_ERR_ARG;
    }
    if (!g->sent[unit])
        send_units(a, g, unit, 1);
    return LOOM_OK;
}

int loom_ring_rotate(void)
{
    if (loom_state != 1)
        return LOOM_ERR_STATE;
    if (P() == 1)
        return LOOM_OK;
    int n = atomic_load(&loom_nallocs);
    for (int i = 0; i < n; i++) { /* forward what is left of each partition */
        loom_dsm_alloc *a = loom_allocs[i];
        if (!a || !a->live || a->policy != &loom_policy_ring)
            continue;
        struct ring *g = a->policy_data;
        int j = owned_part(g);
        for (size_t u = g->lo[j]; u < g->lo[j + 1];) {
            size_t v = u;
            while (v < g->lo[j + 1] && !g->sent[v])
                v++;
            if (v > u)
                send_units(a, g, u, v - u);
            u = v + 1;
        }
    }
    int rotation_ends = 0;
    for (int i = 0; i < n; i++) { /* take the next partition */
        loom_dsm_alloc *a = loom_allocs[i];
        if (!a || !a->live || a->policy != &loom_policy_ring)
            continue;
        struct ring *g = a->policy_data;
        int old = owned_part(g);
        g->t++;
        int j = owned_part(g);
        long want = (long)(g->lo[j + 1] - g->lo[j]);
        while (atomic_load(&g->arrived[j]) < want)
            loom_tp_poll();
        atomic_store(&g->arrived[j], 0);
        memset(g->sent + g->lo[old], 0, g->lo[old + 1] - g->lo[old]);
        if (loom_dsm_check) { /* only the owned partition, even after a collect */
            expose_units(a, 0, a->nunits, PROT_NONE);
            expose(a, g, j, PROT_READ | PROT_WRITE);
        }
        rotation_ends |= g->t % (uint64_t)P() == 0;
    }
    if (rotation_ends)
        loom_coll_barrier();
    return LOOM_OK;
}

int loom_ring_collect(void *array)
{
    loom_dsm_alloc *a = ring_alloc(array, "loom_ring_collect");
    if (!a)
        return LOOM_ERR_ARG;
    if (a->policy->plain)
        return LOOM_OK;
    struct ring *g = a->policy_data;
    for (int j = 0; j < P(); j++) {
        size_t lo = g->lo[j], hi = g->lo[j + 1];
        loom_bcast(loom_dsm_unit_data(a, lo), (hi - lo) * a->unit, owner_of(g, j));
        if (loom_dsm_check && j != owned_part(g))
            expose(a, g, j, PROT_READ); /* readable until the next rotation */
    }
    return LOOM_OK;
}

/* Contract (collective; sub-epoch a multiple of P, no thread inside the
 * allocation): move a's partition boundaries to lo[0..P] (lo[0] = 0,
 * lo[P] = nunits, nondecreasing), e.g. to balance work by a histogram.
 * Every rank gets every partition first (as loom_ring_collect), so each
 * rank then holds its new partition.  Returns LOOM_ERR_ARG (nothing
 * changed) for bad bounds or a rotation in progress. */
static int set_bounds(loom_dsm_alloc *a, const size_t *lo)
{
    struct ring *g = a->policy_data;
    if (g->t % (uint64_t)P() != 0 || lo[0] != 0 || lo[P()] != a->nunits)
        return LOOM_ERR_ARG;
    for (int j = 0; j < P(); j++)
        if (lo[j] > lo[j + 1])
            return LOOM_ERR_ARG;
    if (!memcmp(lo, g->lo, ((size_t)P() + 1) * sizeof *lo))
        return LOOM_OK;
    int rc = loom_ring_collect(a->base);
    memcpy(g->lo, lo, ((size_t)P() + 1) * sizeof *lo);
    loom_coll_barrier(); /* nobody forwards by the new bounds before all have them */
    if (loom_dsm_check) {
        expose_units(a, 0, a->nunits, PROT_NONE);
        expose(a, g, owned_part(g), PROT_READ | PROT_WRITE);
    }
    return rc;
}

/* The partition boundaries (P + 1 units) and the partition this rank owns
 * now, for the loop planner. */
static const size_t *bounds(loom_dsm_alloc *a, int *owned)
{
    struct ring *g = a->policy_data;
    if (owned)
        *owned = owned_part(g);
    return g->lo;
}

static uint64_t subepoch(loom_dsm_alloc *a)
{
    struct ring *g = a->policy_data;
    return g->t;
}

/* Contract (restart.c, inside loom_alloc after init and before a is
 * published, so no hand-off for a can arrive yet): put a's rotation at
 * sub-epoch t with boundaries lo[0..P], as the checkpoint had it.  Nothing
 * is in flight or sent, so the next rotation forwards whole partitions.
 * Returns LOOM_ERR_ARG (nothing changed) for boundaries that do not cut
 * a's units into P ordered partitions. */
static int restore(loom_dsm_alloc *a, uint64_t t, const uint64_t *lo)
{
    struct ring *g = a->policy_data;
    if (lo[0] != 0 || lo[P()] != a->nunits)
        return LOOM_ERR_ARG;
    for (int j = 0; j < P(); j++)
        if (lo[j] > lo[j + 1])
            return LOOM_ERR_ARG;
    for (int j = 0; j <= P(); j++)
        g->lo[j] = (size_t)lo[j];
    g->t = t;
    if (loom_dsm_check) {
        expose_units(a, 0, a->nunits, PROT_NONE);
        expose(a, g, owned_part(g), PROT_READ | PROT_WRITE);
    }
    return LOOM_OK;
}

const loom_policy loom_policy_ring = {
    .name = "ring",
    .read_miss = violation,
    .first_write = violation,
    .row_miss = violation,
    .release = release,
    .acquire = nothing,
    .init = init,
    .fini = fini,
    .setup = setup,
    .bounds = bounds,
    .set_bounds = set_bounds,
    .rotate = loom_ring_rotate,
    .subepoch = subepoch,
    .restore = restore,
};
