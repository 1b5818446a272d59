/* policy_ring.c — static ring rotation (STRADS-Static, seed 000 ch. 4).
 *
 * The allocation's units are cut into P partitions (blocks of whole units);
 * in sub-epoch t rank p owns partition (p - t) mod P, so every partition
 * moves to the ring successor at each rotation and, over P rotations,
 * visits every rank exactly once.  A *mirrored* ring (set_bounds, for
 * Orion's ordered schedule, sched/ordered.c) gives rank p partition
 * (t - p) mod P instead: the partitions still move to the successor, but
 * each rank meets them in increasing order (0, 1, ..., P - 1 from
 * sub-epoch p on) and a partition visits the ranks in increasing order
 * from rank 0.  The owner reads and writes its
 * partition in place: no fetch, no twin, no diff.
 *
 * Macro-synchronization: loom_ring_done(array, unit) sends a finished unit
 * to the successor at once; loom_ring_rotate sends whatever is left, then
 * waits for the partition it owns next.  A hand-off carries only the units
 * the successor lacks, zero runs squeezed out ("messages" below).  Incoming units land in that
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

extern const loom_policy loom_dsm_policy_ring; /* the table, at the end of this file */

struct ring {
    uint64_t t;               /* sub-epoch */
    int mirrored;             /* rank p owns (t - p) mod P, not (p - t) mod P */
    size_t *lo;               /* P + 1 partition boundaries, in units */
    _Atomic uint64_t *arrived; /* per partition: units received for it */
    uint8_t *sent;            /* per unit: already forwarded this sub-epoch */
    uint64_t *stamp;          /* per unit: sub-epoch of its last write known here */
    char *snap;               /* the owned partition as it arrived */
    size_t snaplo, snapcap;   /* its first unit; bytes allocated */
    int dense;                /* this sub-epoch: no snapshot, every owned unit goes raw */
    _Atomic size_t rewritten; /* units this sub-epoch's hand-offs found changed here and
                               * could not squeeze */
};

struct ring_hdr {
    uint32_t alloc, src, part, pad;
    uint64_t lo, n; /* units covered */
    uint64_t t;     /* the sender's sub-epoch */
};

static int P(void) { return loom_rt_icv.nranks; }
/* The partition rank q owns at sub-epoch t of P ranks: (q - t) mod P, or
 * (t - q) mod P mirrored. */
static int part_at(int q, uint64_t t, int mirrored, int P)
{
    int s = (int)(t % (uint64_t)P);
    return mirrored ? (s - q + P) % P : (q - s + P) % P;
}
static int owned_part(const struct ring *g) { return part_at(loom_rt_icv.rank, g->t, g->mirrored, P()); }
/* The rank that owns partition j now: j + t, or t - j mirrored. */
static int owner_of(const struct ring *g, int j)
{
    return g->mirrored ? part_at(j, g->t, 1, P()) : (int)(((uint64_t)j + g->t) % (uint64_t)P());
}
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
               "partition %d is owned by rank %d (ring)", loom_rt_icv.rank, u, a->name,
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

static void snapshot(loom_dsm_alloc *a, struct ring *g);

static void fini(loom_dsm_alloc *a)
{
    struct ring *g = a->policy_data;
    if (!g)
        return;
    free(g->lo);
    free((void *)g->arrived);
    free(g->sent);
    free(g->stamp);
    free(g->snap);
    free(g);
    a->policy_data = NULL;
}

/* Every unit stamped 0 (written in sub-epoch 0): the first P - 1
 * hand-offs send every unit. */
static int init(loom_dsm_alloc *a)
{
    struct ring *g = calloc(1, sizeof *g);
    a->policy_data = g;
    if (!g || !(g->lo = calloc((size_t)P() + 1, sizeof *g->lo)) ||
        !(g->arrived = calloc((size_t)P(), sizeof *g->arrived)) ||
        !(g->sent = calloc(a->nunits, 1)) || !(g->stamp = calloc(a->nunits, sizeof *g->stamp))) {
        fini(a);
        return LOOM_ERR_NOMEM;
    }
    for (int j = 0; j <= P(); j++)
        g->lo[j] = a->nunits * (size_t)j / (size_t)P();
    expose_units(a, 0, a->nunits, loom_dsm_check ? PROT_NONE : PROT_READ | PROT_WRITE);
    if (loom_dsm_check)
        expose(a, g, owned_part(g), PROT_READ | PROT_WRITE);
    snapshot(a, g);
    return LOOM_OK;
}


/* ---- messages -------------------------------------------------------
 *
 * A hand-off carries only what the successor lacks.  Every unit has a
 * stamp here: the sub-epoch in which it was last written, as far as this
 * rank knows.  The successor last held a partition P - 1 sub-epochs ago
 * and every write made since (here or by the ranks between) is stamped
 * t - (P - 2) or later, so a hand-off in sub-epoch t sends unit u iff it
 * was written here (its bytes differ from the snapshot taken when the
 * partition arrived; it is stamped t) or stamp[u] >= t - (P - 2) (written
 * upstream, still on its way round).  Each unit travels with its age
 * t - stamp, so the successor's stamps agree.  init, restore and
 * set_bounds stamp every unit with the current sub-epoch, so the next
 * P - 1 hand-offs send every unit: after them all copies agree, whatever
 * they held.  Beyond MAX_AGE + 2 ranks every unit is sent.
 *
 * After the header: a bitmap of the n units covered (bit set = included),
 * then per included unit one byte (its age; RAW set: raw bytes follow)
 * and its bytes, raw or run-length coded as 32-bit words: runs of (u16
 * zero words, u16 literal words, the literals) until the unit's words are
 * covered, then its last unit % 4 bytes as they are.  Lossless for any
 * bytes; a unit whose code is not shorter goes raw.  A count table of
 * mostly zeros (LDA's word-topic rows) shrinks to its non-zero counts. */

#define RAW 0x80
#define MAX_AGE 0x7f

static int sparse(void) { return P() <= MAX_AGE + 2; }

/* Dense partitions.  When a hand-off finds every unit of the partition
 * changed here and none that the zero-run code shortens (SGD's factor
 * rows: every row is written each pass), looking is wasted work on the
 * owner's path: copying the partition as it arrives, comparing each unit
 * against that copy, scanning it for zero runs.  The next sub-epoch then
 * skips all three and sends every owned unit raw, stamped as written now,
 * which is exactly what it would have sent.  Every PROBE-th sub-epoch
 * looks again, so a partition that turns sparse is noticed. */
#define PROBE 16

static void decide_dense(struct ring *g, size_t handed_units)
{
    size_t n = atomic_exchange(&g->rewritten, 0);
    g->dense = sparse() && handed_units > 0 && n == handed_units && g->t % PROBE != 0;
}

static uint32_t word_at(const char *p, size_t w)
{
    uint32_t x;
    memcpy(&x, p + 4 * w, 4);
    return x;
}

/* Run-length code the unit bytes at src into dst (room for unit bytes).
 * Returns the code's length, or 0 when it would not be shorter than raw. */
static size_t rle_encode(const char *src, size_t unit, char *dst)
{
    const size_t W = unit / 4, tail = unit % 4;
    size_t w = 0, o = 0;
    while (w < W) {
        size_t z = 0, l = 0;
        while (w + z < W && z < 65535 && !word_at(src, w + z))
            z++;
        while (w + z + l < W && l < 65535 && word_at(src, w + z + l))
            l++;
        if (o + 4 + 4 * l >= unit)
            return 0;
        uint16_t run[2] = {(uint16_t)z, (uint16_t)l};
        memcpy(dst + o, run, 4);
        memcpy(dst + o + 4, src + 4 * (w + z), 4 * l);
        o += 4 + 4 * l;
        w += z + l;
    }
    if (o + tail >= unit)
        return 0;
    memcpy(dst + o, src + 4 * W, tail);
    return o + tail;
}

/* Decode one unit's code (at most avail bytes at src) into dst.  Returns
 * the bytes consumed, or 0 for a code that does not cover exactly one
 * unit within avail. */
static size_t rle_decode(const char *src, size_t avail, char *dst, size_t unit)
{
    const size_t W = unit / 4, tail = unit % 4;
    size_t w = 0, o = 0;
    while (w < W) {
        uint16_t run[2];
        if (avail - o < 4)
            return 0;
        memcpy(run, src + o, 4);
        o += 4;
        size_t z = run[0], l = run[1];
        if (z + l == 0 || z + l > W - w || avail - o < 4 * l)
            return 0;
        memset(dst + 4 * w, 0, 4 * z);
        memcpy(dst + 4 * (w + z), src + o, 4 * l);
        o += 4 * l;
        w += z + l;
    }
    if (avail - o < tail)
        return 0;
    memcpy(dst + 4 * W, src + o, tail);
    return o + tail;
}

/* Keep a copy of the partition this rank now owns, as it arrived: what
 * its hand-off compares against. */
static void snapshot(loom_dsm_alloc *a, struct ring *g)
{
    if (g->dense)
        return;
    int j = owned_part(g);
    size_t len = (g->lo[j + 1] - g->lo[j]) * a->unit;
    if (len > g->snapcap) {
        free(g->snap);
        if (!(g->snap = malloc(len)))
            loom_rt_die(1, "out of memory keeping a copy of a partition of '%s'", a->name);
        g->snapcap = len;
    }
    g->snaplo = g->lo[j];
    if (len) /* an empty partition has nothing to keep (and snap may be NULL) */
        memcpy(g->snap, loom_dsm_unit_data(a, g->snaplo), len);
}

/* Every unit as if written now: the next P - 1 hand-offs send them all. */
static void restamp(loom_dsm_alloc *a, struct ring *g)
{
    for (size_t u = 0; u < a->nunits; u++)
        g->stamp[u] = g->t;
    g->dense = 0; /* look again: the snapshot is taken */
    atomic_store(&g->rewritten, 0);
}

/* Whether owned unit u goes into this sub-epoch's hand-off (see above):
 * 2 if it was written here (stamped now), 1 if it is still on its way
 * round, 0 if the successor has it. */
static int needed(loom_dsm_alloc *a, struct ring *g, size_t u)
{
    if (!sparse() || g->dense ||
        memcmp(loom_dsm_unit_data(a, u), g->snap + (u - g->snaplo) * a->unit, a->unit)) {
        g->stamp[u] = g->t;
        return 2;
    }
    return g->stamp[u] + (uint64_t)(P() - 2) >= g->t;
}

/* Hand units [lo, lo + n) of the owned partition to the successor: those
 * it lacks, coded as above.  Called by the owner only (any of its threads,
 * on disjoint units). */
static void send_units(loom_dsm_alloc *a, struct ring *g, size_t lo, size_t n)
{
    const size_t nb = (n + 7) / 8;
    char *d = malloc(nb + n * (1 + a->unit));
    if (!d)
        loom_rt_die(1, "out of memory forwarding '%s'", a->name);
    memset(d, 0, nb);
    size_t o = nb, m = 0, rewritten = 0;
    for (size_t i = 0; i < n; i++) {
        size_t u = lo + i;
        int why = needed(a, g, u);
        if (!why)
            continue;
        const char *src = loom_dsm_unit_data(a, u);
        size_t c = g->dense ? 0 : rle_encode(src, a->unit, d + o + 1);
        d[i / 8] |= (char)(1 << (i % 8));
        d[o] = (char)(g->t - g->stamp[u]);
        if (!c) {
            d[o] |= (char)RAW;
            memcpy(d + o + 1, src, a->unit);
            c = a->unit;
            rewritten += why == 2;
        }
        o += 1 + c;
        m++;
    }
    struct ring_hdr h = {(uint32_t)a->id, (uint32_t)loom_rt_icv.rank, (uint32_t)part_of(g, lo), 0,
                         lo, n, g->t};
    atomic_fetch_add(&a->stats.forwarded, m);
    atomic_fetch_add(&g->rewritten, rewritten);
    atomic_fetch_add(&a->stats.bytes_sent, o + sizeof h);
    loom_rt_tp_am_send((loom_rt_icv.rank + 1) % P(), AM_RING, &h, sizeof h, d, o);
    memset(g->sent + lo, 1, n);
}

/* Send units [lo, hi) of the owned partition not yet sent, each run of
 * them in one message.  As send_units. */
static void send_unsent(loom_dsm_alloc *a, struct ring *g, size_t lo, size_t hi)
{
    for (size_t u = lo; u < hi;) {
        size_t v = u;
        while (v < hi && !g->sent[v])
            v++;
        if (v > u)
            send_units(a, g, u, v - u);
        u = v + 1;
    }
}

/* Place the included units of a hand-off's body (len bytes at data)
 * covering units [h->lo, h->lo + h->n) and stamp them.  Returns 0, or -1
 * for a body that does not decode to exactly those units. */
static int place(loom_dsm_alloc *a, struct ring *g, const struct ring_hdr *h, const char *data,
                 size_t len)
{
    const size_t n = (size_t)h->n, nb = (n + 7) / 8;
    if (len < nb)
        return -1;
    size_t o = nb;
    for (size_t i = 0; i < n; i++) {
        if (!(data[i / 8] >> (i % 8) & 1))
            continue;
        size_t u = (size_t)h->lo + i, c;
        if (len - o < 1)
            return -1;
        uint8_t tag = (uint8_t)data[o++];
        char *dst = loom_dsm_unit_data(a, u);
        if (tag & RAW) {
            if (len - o < a->unit)
                return -1;
            memcpy(dst, data + o, a->unit);
            c = a->unit;
        } else if (!(c = rle_decode(data + o, len - o, dst, a->unit))) {
            return -1;
        }
        o += c;
        g->stamp[u] = h->t - (tag & MAX_AGE);
    }
    return o == len ? 0 : -1;
}

/* A hand-off: units [lo, lo + n) of partition `part`, from the ring
 * predecessor, land in place.  The units must lie inside the partition
 * (lo and lo + n both within its bounds) and the body decode to exactly
 * them.  A hand-off this rank cannot place would leave its owner-to-be
 * waiting forever: stop the job instead, saying what arrived. */
static void on_ring(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct ring_hdr h;
    if (hlen != sizeof h)
        loom_abort(70, "ring: a hand-off arrived with a %zu-byte header (internal error)", hlen);
    memcpy(&h, hdr, sizeof h);
    int n = atomic_load(&loom_dsm_nallocs);
    loom_dsm_alloc *a = h.alloc < (uint32_t)n ? loom_dsm_allocs[h.alloc] : NULL;
    struct ring *g = a && a->live && a->policy == &loom_dsm_policy_ring ? a->policy_data : NULL;
    int pred = (loom_rt_icv.rank + P() - 1) % P();
    if (!g || h.src != (uint32_t)pred || h.part >= (uint32_t)P() || h.lo < g->lo[h.part] ||
        h.lo > g->lo[h.part + 1] || h.n > g->lo[h.part + 1] - h.lo || place(a, g, &h, data, len))
        loom_abort(70, "ring: rank %d cannot place a hand-off from rank %u (allocation %u%s, "
                   "partition %u, units %llu+%llu, %zu bytes) (internal error)", loom_rt_icv.rank,
                   h.src, h.alloc, g ? "" : " not a ring here", h.part,
                   (unsigned long long)h.lo, (unsigned long long)h.n, len);
    atomic_fetch_add(&a->stats.bytes_recv, len + sizeof h);
    atomic_fetch_add(&g->arrived[h.part], (uint64_t)h.n);
}

static void setup(void)
{
    loom_rt_tp_am_register(AM_RING, on_ring);
}

/* ---- the API --------------------------------------------------------- */

static loom_dsm_alloc *ring_alloc(void *array, const char *fn)
{
    loom_dsm_alloc *a = loom_dsm_lookup_base(array);
    if (!a || (a->policy != &loom_dsm_policy_ring && !a->policy->plain)) {
        loom_rt_log("%s: %p is not a ring allocation", fn, array);
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
    if (a->policy == &loom_dsm_policy_ring) {
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

/* Contract (loom.h): units [first, first + n) of the owned partition go
 * to the successor now, each run of those not yet sent in one message.
 * From any thread of the owner during the sub-epoch, for units no other
 * thread is writing or forwarding at the same time. */
int loom_ring_done(void *array, size_t first, size_t n)
{
    loom_dsm_alloc *a = ring_alloc(array, "loom_ring_done");
    if (!a)
        return LOOM_ERR_ARG;
    if (a->policy->plain)
        return first <= a->nunits && n <= a->nunits - first ? LOOM_OK : LOOM_ERR_ARG;
    struct ring *g = a->policy_data;
    int j = owned_part(g);
    if (first < g->lo[j] || first > g->lo[j + 1] || n > g->lo[j + 1] - first) {
        loom_rt_log("loom_ring_done: units %zu to %zu of '%s' are not all in this rank's partition",
                 first, first + n, a->name);
        return LOOM_ERR_ARG;
    }
    send_unsent(a, g, first, first + n);
    return LOOM_OK;
}

int loom_ring_rotate(void)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if (P() == 1)
        return LOOM_OK;
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++) { /* forward what is left of each partition */
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (!a || !a->live || a->policy != &loom_dsm_policy_ring)
            continue;
        struct ring *g = a->policy_data;
        int j = owned_part(g);
        send_unsent(a, g, g->lo[j], g->lo[j + 1]);
    }
    int rotation_ends = 0;
    for (int i = 0; i < n; i++) { /* take the next partition */
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (!a || !a->live || a->policy != &loom_dsm_policy_ring)
            continue;
        struct ring *g = a->policy_data;
        int old = owned_part(g);
        g->t++;
        int j = owned_part(g);
        loom_rt_tp_wait_flag_until(&g->arrived[j], g->lo[j + 1] - g->lo[j]);
        atomic_store(&g->arrived[j], 0);
        memset(g->sent + g->lo[old], 0, g->lo[old + 1] - g->lo[old]);
        decide_dense(g, g->lo[old + 1] - g->lo[old]);
        if (g->dense)
            atomic_fetch_add(&a->stats.raw_handoffs, 1);
        snapshot(a, g);
        if (loom_dsm_check) { /* only the owned partition, even after a collect */
            expose_units(a, 0, a->nunits, PROT_NONE);
            expose(a, g, j, PROT_READ | PROT_WRITE);
        }
        rotation_ends |= g->t % (uint64_t)P() == 0;
    }
    if (rotation_ends)
        loom_rt_coll_barrier();
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
 * lo[P] = nunits, nondecreasing), e.g. to balance work by a histogram,
 * and make the ring mirrored or not (see the top).  Every rank gets every
 * partition first (as loom_ring_collect), so each rank then holds its new
 * partition.  Returns LOOM_ERR_ARG (nothing changed) for bad bounds or a
 * rotation in progress. */
static int set_bounds(loom_dsm_alloc *a, const size_t *lo, int mirrored)
{
    struct ring *g = a->policy_data;
    if (g->t % (uint64_t)P() != 0 || lo[0] != 0 || lo[P()] != a->nunits)
        return LOOM_ERR_ARG;
    for (int j = 0; j < P(); j++)
        if (lo[j] > lo[j + 1])
            return LOOM_ERR_ARG;
    if (!memcmp(lo, g->lo, ((size_t)P() + 1) * sizeof *lo) && g->mirrored == !!mirrored)
        return LOOM_OK;
    int rc = loom_ring_collect(a->base);
    memcpy(g->lo, lo, ((size_t)P() + 1) * sizeof *lo);
    g->mirrored = !!mirrored;
    restamp(a, g);
    snapshot(a, g);
    loom_rt_coll_barrier(); /* nobody forwards by the new bounds before all have them */
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

/* The sub-epoch, with the top bit set for a mirrored ring (a checkpoint
 * saves it; restore and saved_part read it back). */
#define MIRRORED ((uint64_t)1 << 63)
static uint64_t subepoch(loom_dsm_alloc *a)
{
    struct ring *g = a->policy_data;
    return g->t | (g->mirrored ? MIRRORED : 0);
}

static int saved_part(uint64_t saved, int q, int P)
{
    return part_at(q, saved & ~MIRRORED, !!(saved & MIRRORED), P);
}

/* Contract (restart.c, inside loom_alloc after init and before a is
 * published, so no hand-off for a can arrive yet): put a's rotation at
 * sub-epoch t (as subepoch() gave it: mirrored in its top bit) with
 * boundaries lo[0..P], as the checkpoint had it.  Nothing
 * is in flight or sent, and every unit is stamped t, so the next P - 1
 * hand-offs send every unit.
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
    g->t = t & ~MIRRORED;
    g->mirrored = !!(t & MIRRORED);
    restamp(a, g);
    snapshot(a, g);
    if (loom_dsm_check) {
        expose_units(a, 0, a->nunits, PROT_NONE);
        expose(a, g, owned_part(g), PROT_READ | PROT_WRITE);
    }
    return LOOM_OK;
}

const loom_policy loom_dsm_policy_ring = {
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
    .saved_part = saved_part,
};
