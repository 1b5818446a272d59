/* diff.c — moving data between working copies and home stores.
 *
 * Fetch: a unit's master copy is read from its home's store, by RMA
 * (ucp_get_nbx with the home's key) or, at the home, by a local copy.  A
 * batch of small scattered units (loom_dsm_fetch_list: rows of a few
 * bytes, such as a distributed map's values) is gathered instead: one
 * GATHER message per home lists the units, and the home answers with
 * their bytes in one GATHERED message, where one get each would cost a
 * round trip each.
 *
 * Flush: at a release, the policy turns every dirty unit into records
 *   BYTES  offset, length, new bytes       (overwrite merge; rows' put)
 *   ADD    offset, length, typed deltas    (add merge; rows' add)
 * grouped by home into one DIFF message per home:
 *   header {src, alloc id, record count, bytes}, then records
 *   {u64 unit, u32 offset, u32 length, payload}.
 * The home applies them to its store in the message handler, checking
 * every field first (a bad message is logged and dropped, never applied
 * out of bounds), and answers ACK; the releasing rank waits for every ACK
 * so that a release is complete when it returns.  Records for units homed
 * here are applied directly, under the same lock as the handlers.
 *
 * Averaging (a->average: add-merge float rows, LOOM_MERGE_AVG): a row's
 * ADD records of one round (the sync points their senders passed) make it
 * the mean of the versions of the ranks that wrote it, x0 + (sum of their
 * deltas) / (their count), where x0 is the row when the round's first
 * record came: every rank fetched x0 at the sync point before (bsp), so
 * that is the average of their rows.  With a->average = k > 1 the mean
 * is taken k times once more than k ranks wrote (x0 + sum * min(k, n) /
 * n): up to k ranks' changes add, more average to k times their mean.
 * With block momentum (.momentum) the row also keeps (1 - 1/n) of its
 * last round's move (average() below).
 * A record of an older round (ssp) joins the current round's mean.
 *
 * Check mode (LOOM_CHECK=dsm): the home remembers which rank wrote each
 * byte of each unit in the current epoch; a second writer of the same byte
 * is reported and the job stopped. */
#include "dsm.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AM_DIFF 3
#define AM_ACK 4
#define AM_GATHER 2
#define AM_GATHERED 12

struct diff_hdr {
    uint32_t src, alloc, nrec, round; /* round: sync points the sender passed */
    uint64_t bytes;
};


/* Per-home outgoing buffers of the flush in progress. */
struct outbuf {
    uint8_t *p;
    size_t len, cap;
    uint32_t nrec;
    int alloc; /* records of one allocation per message: flushed on change */
};
static struct outbuf *out;
static _Atomic long acks_expected, acks_got;

static pthread_mutex_t local_apply = PTHREAD_MUTEX_INITIALIZER;

/* ---- applying at the home -------------------------------------------- */

static void conflict(loom_dsm_alloc *a, size_t u, size_t off, int r1, int r2)
{
    loom_abort(72, "check: ranks %d and %d both wrote byte %zu of unit %zu of '%s' in the "
               "same epoch (overwrite merge)", r1, r2, off, u, a->name);
}

static void read_race(loom_dsm_alloc *a, size_t row, int reader, int writer)
{
    loom_abort(72, "check: rank %d read row %zu of '%s' while rank %d wrote it (loom_row_put or "
               "a write through loom_at) with no barrier between: the read may see the row "
               "before or after the write (docs/openmp.md, \"Code between loops\")", reader, row,
               a->name, writer);
}

/* Check mode, at the home: rank src read row u in sync-point round
 * `round`.  Stops the job if another rank put the row in the same round;
 * else src joins the row's readers of that round. */
static void note_reader(loom_dsm_alloc *a, int src, size_t u, uint32_t round)
{
    struct loom_readlog *g = &a->reader[a->slot[u]];
    if (g->put_rank && g->put_rank != src + 1 && g->put_round == round)
        read_race(a, u, src, g->put_rank - 1);
    int k = g->rank[0] == src + 1 ? 0 : g->rank[1] == src + 1 ? 1 : -1;
    for (int x = 0; k < 0 && x < 2; x++)
        if (!g->rank[x] || g->round[x] != round) /* empty, or of another round */
            k = x;
    if (k >= 0)
        g->rank[k] = (uint16_t)(src + 1), g->round[k] = round;
}

/* Check mode, at the home: rank src puts row u in round `round`; stops
 * the job if another rank read the row in that round. */
static void check_readers(loom_dsm_alloc *a, int src, size_t u, uint32_t round)
{
    struct loom_readlog *g = &a->reader[a->slot[u]];
    for (int k = 0; k < 2; k++)
        if (g->rank[k] && g->rank[k] != src + 1 && g->round[k] == round)
            read_race(a, u, g->rank[k] - 1, src);
    g->put_rank = (uint16_t)(src + 1), g->put_round = round;
}

void loom_dsm_note_read_row(loom_dsm_alloc *a, size_t row)
{
    if (!a->readmark || loom_dsm_looping || loom_dsm_locks_held() ||
        atomic_load_explicit((_Atomic uint8_t *)&a->readmark[row], memory_order_relaxed))
        return;
    while (atomic_flag_test_and_set_explicit(&a->read_lock, memory_order_acquire))
        ;
    if (!a->readmark[row]) {
        size_t *v = loom_rt_grow(a->reads, &a->capreads, a->nreads + 1, sizeof *v);
        if (!v)
            loom_rt_die(1, "out of memory (check mode)");
        a->reads = v;
        a->reads[a->nreads++] = row;
        a->readmark[row] = 1;
    }
    atomic_flag_clear_explicit(&a->read_lock, memory_order_release);
}

/* 1 if record r may be applied to a's home store here: a unit this rank
 * homes, a byte range inside that unit, a known kind, and (for additions)
 * whole elements of a's type.  Reads only a's layout. */
static int rec_valid(const loom_dsm_alloc *a, const struct loom_rec_hdr *r)
{
    if (r->kind > REC_READ || r->unit >= a->nunits || a->home[r->unit] != loom_rt_icv.rank)
        return 0;
    if (r->kind == REC_READ)
        return r->off == 0 && r->len == 0;
    size_t span = r->kind == REC_ADD16 ? (size_t)r->len * 2 : r->len; /* bytes covered */
    if ((size_t)r->off > a->unit || span > a->unit - r->off)
        return 0;
    if (r->kind != REC_BYTES && (r->off % a->esize || span % a->esize))
        return 0;
    return r->kind != REC_ADD16 || a->type == LOOM_FLOAT;
}

/* Averaging (above): a whole-row ADD record of round `round`.  With n
 * writers so far the row is x0 + sum * m / n, m = min(a->average, n): the
 * mean for average 1 (sum * 1 / n is sum / n bit for bit), the sum while
 * n <= a->average (bit for bit for n = 1 and 2: scaling by 2 is exact), and
 * a->average times the mean beyond.
 * Block momentum (a->avg_move): the row is x0 + (1 - m/n) v + sum * m / n,
 * where v is the row's move in the round before (the row at this round's
 * first record minus that round's x0): BMUF's block momentum, 1 - 1/n for
 * the mean, under which the merged change moves as far as the sum once the
 * moves settle, with the mean's noise; up to k writers (m = n) get none. */
#define MOVE(T) do { T *v_ = (T *)(void *)move, *x_ = (T *)(void *)dst, *b_ = (T *)(void *)base; \
                     for (size_t i = 0; i < ne; i++) v_[i] = x_[i] - b_[i]; } while (0)
#define MEAN(T) do { T *x_ = (T *)(void *)dst, *b_ = (T *)(void *)base, *s_ = (T *)(void *)sum; \
                     for (size_t i = 0; i < ne; i++) { T d_; memcpy(&d_, payload + i * sizeof d_, sizeof d_); \
                         s_[i] += d_; x_[i] = b_[i] + s_[i] * (T)m / (T)n; } } while (0)
#define MOMENTUM(T) do { T *x_ = (T *)(void *)dst, *b_ = (T *)(void *)base, *s_ = (T *)(void *)sum, \
                         *v_ = (T *)(void *)move, mu_ = 1 - (T)m / (T)n; \
                     for (size_t i = 0; i < ne; i++) { T d_; memcpy(&d_, payload + i * sizeof d_, sizeof d_); \
                         s_[i] += d_; x_[i] = b_[i] + mu_ * v_[i] + s_[i] * (T)m / (T)n; } } while (0)
static void average(loom_dsm_alloc *a, const struct loom_rec_hdr *r, const uint8_t *payload,
                    uint32_t round)
{
    size_t s = a->slot[r->unit], ne = a->unit / a->esize;
    char *dst = a->store + s * a->unit, *base = a->avg_base + s * a->unit,
         *sum = a->avg_sum + s * a->unit, *move = a->avg_move ? a->avg_move + s * a->unit : NULL;
    int dbl = a->type == LOOM_DOUBLE;
    if (a->avg_round[s] < round + 1) { /* the round's first record */
        if (move && a->avg_round[s]) { /* the round before moved the row from base to dst */
            if (dbl)
                MOVE(double);
            else
                MOVE(float);
        }
        memcpy(base, dst, a->unit);
        memset(sum, 0, a->unit);
        a->avg_n[s] = 0;
        a->avg_round[s] = round + 1;
    }
    uint32_t n = ++a->avg_n[s], m = n < (uint32_t)a->average ? n : (uint32_t)a->average;
    if (move && dbl)
        MOMENTUM(double);
    else if (move)
        MOMENTUM(float);
    else if (dbl)
        MEAN(double);
    else
        MEAN(float);
}
#undef MOVE
#undef MEAN
#undef MOMENTUM

/* Apply one record from rank src, already checked by rec_valid, to the
 * home store. */
static void apply(loom_dsm_alloc *a, int src, const struct loom_rec_hdr *r, const uint8_t *payload,
                  uint32_t round)
{
    char *dst = a->store + (size_t)a->slot[r->unit] * a->unit + r->off;
    if (r->kind == REC_ADD && a->average && r->off == 0 && r->len == a->unit) {
        average(a, r, payload, round);
        return;
    }
    if (r->kind == REC_ADD16) {
        float *f = (float *)dst;
        for (size_t i = 0; i < r->len / 2; i++) {
            loom_half h;
            memcpy(&h, payload + 2 * i, 2);
            f[i] += (float)h;
        }
        return;
    }
    if (r->kind == REC_ADD) {
        /* payloads sit at any offset of the message: add through an
         * aligned bounce buffer */
        _Alignas(8) uint8_t tmp[1024];
        for (size_t done = 0; done < r->len; done += sizeof tmp) {
            size_t k = r->len - done < sizeof tmp ? r->len - done : sizeof tmp;
            memcpy(tmp, payload + done, k);
            loom_rt_reduce_local(dst + done, tmp, k / a->esize, a->type, LOOM_SUM);
        }
        return;
    }
    if (r->kind == REC_READ) {
        if (a->reader)
            note_reader(a, src, r->unit, round);
        return;
    }
    if (a->reader)
        check_readers(a, src, r->unit, round);
    if (a->writer) {
        uint8_t **w = &a->writer[a->slot[r->unit]];
        if (!*w && !(*w = calloc(a->unit, 1)))
            loom_rt_die(1, "out of memory (check mode)");
        for (size_t i = 0; i < r->len; i++) {
            uint8_t *cell = &(*w)[r->off + i];
            if (*cell && *cell != (uint8_t)(src + 1))
                conflict(a, r->unit, r->off + i, *cell - 1, src);
            *cell = (uint8_t)(src + 1);
        }
    }
    memcpy(dst, payload, r->len);
}

/* Apply a DIFF message body: h->nrec records filling exactly len bytes.
 * Every record is checked before any is applied, so a message with one bad
 * record is logged and dropped whole: a home store never holds half a
 * release. */
static void apply_all(const struct diff_hdr *h, const uint8_t *p, size_t len)
{
    int n = atomic_load(&loom_dsm_nallocs);
    loom_dsm_alloc *a = h->alloc < (uint32_t)n ? loom_dsm_allocs[h->alloc] : NULL;
    if (!a || !a->live || !a->home || !a->store || h->src >= (uint32_t)loom_rt_icv.nranks ||
        h->bytes != len) {
        loom_rt_log("dsm: dropped a diff from rank %u for allocation %u: bad header", h->src,
                 h->alloc);
        return;
    }
    size_t off = 0;
    for (uint32_t i = 0; i < h->nrec; i++) {
        struct loom_rec_hdr r;
        if (len - off < sizeof r) {
            loom_rt_log("dsm: dropped a truncated diff from rank %u for '%s' (%u records "
                     "announced, %u found)", h->src, a->name, h->nrec, i);
            return;
        }
        memcpy(&r, p + off, sizeof r);
        off += sizeof r;
        if (r.len > len - off || !rec_valid(a, &r)) {
            loom_rt_log("dsm: dropped a diff from rank %u for '%s' with an invalid record (unit "
                     "%llu, offset %u, length %u, kind %u)", h->src, a->name,
                     (unsigned long long)r.unit, r.off, r.len, r.kind);
            return;
        }
        off += r.len;
    }
    if (off != len) {
        loom_rt_log("dsm: dropped a diff from rank %u for '%s': %zu bytes after its %u records",
                 h->src, a->name, len - off, h->nrec);
        return;
    }
    if ((int)h->src != loom_rt_icv.rank)
        atomic_fetch_add(&a->stats.bytes_recv, len + sizeof *h);
    off = 0;
    for (uint32_t i = 0; i < h->nrec; i++) {
        struct loom_rec_hdr r;
        memcpy(&r, p + off, sizeof r);
        apply(a, (int)h->src, &r, p + off + sizeof r, h->round);
        off += sizeof r + r.len;
    }
}

static void on_diff(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct diff_hdr h;
    if (hlen != sizeof h) {
        loom_rt_log("dsm: dropped a diff with a %zu-byte header", hlen);
        return;
    }
    memcpy(&h, hdr, sizeof h);
    pthread_mutex_lock(&local_apply);
    apply_all(&h, data, len);
    pthread_mutex_unlock(&local_apply);
    if (h.src < (uint32_t)loom_rt_icv.nranks) {
        uint32_t one = 1;
        loom_rt_tp_am_send((int)h.src, AM_ACK, &one, sizeof one, NULL, 0);
    }
}

/* Contract: every row homed here gains its row of sum (nunits rows of
 * a's type: a dense merge's total, dense.c), under the handlers' lock. */
void loom_dsm_home_add_rows(loom_dsm_alloc *a, const void *sum)
{
    size_t per = a->unit / a->esize;
    pthread_mutex_lock(&local_apply);
    for (size_t u = 0; u < a->nunits; u++)
        if (a->home[u] == loom_rt_icv.rank)
            loom_rt_reduce_local(a->store + (size_t)a->slot[u] * a->unit,
                              (const char *)sum + u * a->unit, per, a->type, LOOM_SUM);
    pthread_mutex_unlock(&local_apply);
}

static void on_ack(const void *hdr, size_t hlen, void *data, size_t len)
{
    (void)data;
    (void)len;
    uint32_t n;
    if (hlen != sizeof n) {
        loom_rt_log("dsm: dropped an acknowledgement with a %zu-byte header", hlen);
        return;
    }
    memcpy(&n, hdr, sizeof n);
    /* one per DIFF sent, and only for one sent: an unexpected one would
     * end a later release before its homes applied it */
    if (n != 1 || atomic_load(&acks_got) >= atomic_load(&acks_expected)) {
        loom_rt_log("dsm: dropped an unexpected acknowledgement (count %u)", n);
        return;
    }
    atomic_fetch_add(&acks_got, 1);
}

/* ---- gathering ------------------------------------------------------ */

/* Units smaller than this, alone in their run, are gathered rather than
 * read with a get each; a GATHER names at most GATHER_MAX of them. */
#define GATHER_UNIT 512
#define GATHER_MAX 8192

struct gather_hdr { uint32_t src, alloc; uint64_t n, ticket; };
struct gathered_hdr { uint64_t ticket, n; };

/* One GATHER in flight: its units' bytes land in their copies. */
struct gather {
    loom_dsm_alloc *a;
    const size_t *u;
    size_t n;
    volatile int done;
    uint64_t ticket;
};

/* The GATHERs in flight, so that an answer is checked against a request
 * before anything is written: slot i holds the request whose ticket is
 * i + nslots * (a sequence number). */
static pthread_mutex_t inflight_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gather **inflight;
static size_t ninflight_slots;
static uint64_t gather_seq;

static void inflight_add(struct gather *g)
{
    pthread_mutex_lock(&inflight_mu);
    size_t i = 0;
    while (i < ninflight_slots && inflight[i])
        i++;
    if (i == ninflight_slots) { /* grow; tickets name slots, which stay */
        size_t n = ninflight_slots;
        struct gather **v = loom_rt_grow(inflight, &ninflight_slots, n + 1, sizeof *v);
        if (!v)
            loom_rt_die(1, "out of memory");
        memset(v + n, 0, (ninflight_slots - n) * sizeof *v);
        inflight = v;
    }
    inflight[i] = g;
    g->ticket = (uint64_t)i | ++gather_seq << 32;
    pthread_mutex_unlock(&inflight_mu);
}

/* The request a ticket names, taken off the list; NULL if none. */
static struct gather *inflight_take(uint64_t ticket)
{
    pthread_mutex_lock(&inflight_mu);
    size_t i = (size_t)(ticket & 0xffffffffu);
    struct gather *g = i < ninflight_slots && inflight[i] && inflight[i]->ticket == ticket
                           ? inflight[i] : NULL;
    if (g)
        inflight[i] = NULL;
    pthread_mutex_unlock(&inflight_mu);
    return g;
}

/* Home side: answer with the store bytes of the listed units, which must
 * all be small and homed here (a request that is not is a peer's bug:
 * the job stops, as the requester would otherwise wait for ever).  Every
 * unit is checked before local_apply is taken. */
static void on_gather(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct gather_hdr h;
    if (hlen != sizeof h)
        loom_rt_die(LOOM_EXIT_PEER, "internal: a gather request with a %zu-byte header", hlen);
    memcpy(&h, hdr, sizeof h);
    int na = atomic_load(&loom_dsm_nallocs);
    loom_dsm_alloc *a = h.alloc < (uint32_t)na ? loom_dsm_allocs[h.alloc] : NULL;
    if (!a || !a->live || !a->store || a->unit > GATHER_UNIT ||
        h.src >= (uint32_t)loom_rt_icv.nranks || h.n > GATHER_MAX ||
        len != h.n * sizeof(uint64_t))
        loom_rt_die(LOOM_EXIT_PEER, "internal: a malformed gather request from rank %u", h.src);
    for (uint64_t i = 0; i < h.n; i++) {
        uint64_t u;
        memcpy(&u, (char *)data + i * sizeof u, sizeof u);
        if (u >= a->nunits || a->home[u] != loom_rt_icv.rank)
            loom_rt_die(LOOM_EXIT_PEER, "internal: rank %u asked for unit %llu of '%s', not "
                     "homed here", h.src, (unsigned long long)u, a->name);
    }
    char *out = malloc(h.n ? h.n * a->unit : 1);
    if (!out)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory answering a gather request");
    pthread_mutex_lock(&local_apply);
    for (uint64_t i = 0; i < h.n; i++) {
        uint64_t u;
        memcpy(&u, (char *)data + i * sizeof u, sizeof u);
        memcpy(out + i * a->unit, a->store + (uint64_t)a->slot[u] * a->unit, a->unit);
    }
    pthread_mutex_unlock(&local_apply);
    struct gathered_hdr r = {h.ticket, h.n};
    loom_rt_tp_am_send_eager((int)h.src, AM_GATHERED, &r, sizeof r, out, h.n * a->unit, 1);
}

static void on_gathered(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct gathered_hdr r;
    if (hlen != sizeof r)
        loom_rt_die(LOOM_EXIT_PEER, "internal: a gather answer with a %zu-byte header", hlen);
    memcpy(&r, hdr, sizeof r);
    struct gather *g = inflight_take(r.ticket);
    if (!g || r.n != g->n || len != g->n * g->a->unit)
        loom_rt_die(LOOM_EXIT_PEER, "internal: a gather answer for no request, or of the wrong size");
    for (size_t i = 0; i < g->n; i++)
        memcpy(loom_dsm_unit_data(g->a, g->u[i]), (char *)data + i * g->a->unit, g->a->unit);
    loom_rt_flag_set(&g->done);
}

/* Start gathering units u[0..n) (n <= GATHER_MAX), all homed at h (not
 * this rank), into their copies; g->done becomes 1. */
static void gather_start(loom_dsm_alloc *a, int h, const size_t *u, size_t n, struct gather *g)
{
    *g = (struct gather){.a = a, .u = u, .n = n};
    uint64_t *list = malloc(n * sizeof *list);
    if (!list)
        loom_rt_die(1, "out of memory");
    for (size_t i = 0; i < n; i++)
        list[i] = u[i];
    inflight_add(g);
    struct gather_hdr hd = {(uint32_t)loom_rt_icv.rank, (uint32_t)a->id, n, g->ticket};
    atomic_fetch_add(&a->stats.bytes_recv, n * a->unit);
    loom_rt_tp_am_send_eager(h, AM_GATHER, &hd, sizeof hd, list, n * sizeof *list, 1);
}

void loom_dsm_wire_init(void)
{
    loom_rt_tp_am_register(AM_DIFF, on_diff);
    loom_rt_tp_am_register(AM_ACK, on_ack);
    loom_rt_tp_am_register(AM_GATHER, on_gather);
    loom_rt_tp_am_register(AM_GATHERED, on_gathered);
}

/* ---- fetching -------------------------------------------------------- */

/* Gets larger than this are split: UCX reads peers' transport-allocated
 * stores on this host directly (sysv "copy-out") only up to ~30 KiB per
 * get, and emulates larger ones through the home. */
#define FETCH_CHUNK ((size_t)16 << 10)

void loom_dsm_fetch_start(loom_dsm_alloc *a, size_t u, char *dst, volatile int *done)
{
    int h = a->home[u];
    uint64_t off = (uint64_t)a->slot[u] * a->unit;
    if (h == loom_rt_icv.rank) {
        pthread_mutex_lock(&local_apply);
        memcpy(dst, a->store + off, a->unit);
        pthread_mutex_unlock(&local_apply);
        loom_rt_flag_set(done);
        return;
    }
    atomic_fetch_add(&a->stats.bytes_recv, a->unit);
    *done = 0;
    loom_rt_tp_get(h, dst, a->unit, a->store_base[h] + off, a->rkeys[h], done);
}

/* Gets in flight at most, in a batch fetch. */
#define FETCH_BATCH 4096

/* Gets started and not yet awaited, of one batch fetch. */
struct batch {
    volatile int done[FETCH_BATCH];
    size_t k;
};

static void batch_wait(struct batch *b)
{
    for (size_t c = 0; c < b->k; c++)
        loom_rt_tp_wait_flag(&b->done[c]);
    b->k = 0;
}

/* Start fetching n units in consecutive slots of one home, from unit u's
 * slot on, into dst (a copy at the home). */
static void fetch_run(loom_dsm_alloc *a, size_t u, size_t n, char *dst, struct batch *b)
{
    int h = a->home[u];
    uint64_t off = (uint64_t)a->slot[u] * a->unit;
    size_t len = n * a->unit;
    if (h == loom_rt_icv.rank) {
        pthread_mutex_lock(&local_apply);
        memcpy(dst, a->store + off, len);
        pthread_mutex_unlock(&local_apply);
        return;
    }
    atomic_fetch_add(&a->stats.bytes_recv, len);
    for (size_t c = 0; c < len; c += FETCH_CHUNK) {
        if (b->k == FETCH_BATCH)
            batch_wait(b);
        size_t l = len - c < FETCH_CHUNK ? len - c : FETCH_CHUNK;
        b->done[b->k] = 0;
        loom_rt_tp_get(h, dst + c, l, a->store_base[h] + off + c, a->rkeys[h], &b->done[b->k]);
        b->k++;
    }
}

/* 1 if unit v may join a run of unit u's home that reached unit w. */
static int same_run(const loom_dsm_alloc *a, size_t u, size_t w, size_t v)
{
    return a->home[v] == a->home[u] && a->slot[v] == a->slot[w] + 1;
}

/* Fetch n units into dst, the i-th being list[i] (list NULL: first + i):
 * runs of consecutive slots of one home, batched. */
static void fetch_into(loom_dsm_alloc *a, const size_t *list, size_t first, size_t n, char *dst)
{
#define UNIT(i) (list ? list[i] : first + (i))
    struct batch *b = malloc(sizeof *b);
    if (!b)
        loom_rt_die(1, "out of memory");
    b->k = 0;
    for (size_t i = 0; i < n;) { /* runs of consecutive slots of one home */
        size_t j = i + 1;
        while (j < n && same_run(a, UNIT(i), UNIT(j - 1), UNIT(j)))
            j++;
        fetch_run(a, UNIT(i), j - i, dst + i * a->unit, b);
        i = j;
    }
    batch_wait(b);
    free(b);
#undef UNIT
}

void loom_dsm_fetch_many(loom_dsm_alloc *a, size_t u, size_t n, char *dst)
{
    fetch_into(a, NULL, u, n, dst);
}

void loom_dsm_fetch_units(loom_dsm_alloc *a, const size_t *u, size_t n, char *dst)
{
    fetch_into(a, u, 0, n, dst);
}

void loom_dsm_fetch_list(loom_dsm_alloc *a, const size_t *u, size_t n)
{
    if (!n)
        return;
    int P = loom_rt_icv.nranks;
    struct batch *b = malloc(sizeof *b);
    size_t *lone = malloc(n * sizeof *lone), *at = calloc((size_t)P + 1, sizeof *at),
           *by = malloc(n * sizeof *by), nlone = 0;
    if (!b || !lone || !at || !by)
        loom_rt_die(1, "out of memory");
    b->k = 0;
    for (size_t i = 0; i < n;) { /* runs by get; small lone units gathered */
        size_t j = i + 1;
        while (j < n && u[j] == u[j - 1] + 1 && same_run(a, u[i], u[j - 1], u[j]))
            j++;
        if (j - i == 1 && a->unit <= GATHER_UNIT && a->home[u[i]] != loom_rt_icv.rank) {
            lone[nlone++] = u[i];
            at[a->home[u[i]] + 1]++;
        } else {
            fetch_run(a, u[i], j - i, loom_dsm_unit_data(a, u[i]), b);
        }
        i = j;
    }
    for (int p = 0; p < P; p++) /* the lone units by home (a counting sort) */
        at[p + 1] += at[p];
    for (size_t i = 0; i < nlone; i++)
        by[at[a->home[lone[i]]]++] = lone[i]; /* at[p] ends as the end of p's run */
    size_t ng = (nlone + GATHER_MAX - 1) / GATHER_MAX + (size_t)P, k = 0;
    struct gather *g = malloc(ng * sizeof *g);
    if (!g)
        loom_rt_die(1, "out of memory");
    for (int p = 0, lo = 0; p < P; lo = (int)at[p], p++)
        for (size_t i = (size_t)lo; i < at[p]; i += GATHER_MAX)
            gather_start(a, p, by + i, at[p] - i < GATHER_MAX ? at[p] - i : GATHER_MAX, &g[k++]);
    batch_wait(b);
    for (size_t i = 0; i < k; i++)
        loom_rt_tp_wait_flag(&g[i].done);
    free(g), free(b), free(lone), free(at), free(by);
}

void loom_dsm_fetch(loom_dsm_alloc *a, size_t u, char *dst)
{
    volatile int done;
    loom_dsm_fetch_start(a, u, dst, &done);
    loom_rt_tp_wait_flag(&done);
}

/* ---- flushing -------------------------------------------------------- */

void loom_dsm_send_diff(int h, loom_dsm_alloc *a, void *buf, size_t len, uint32_t nrec)
{
    struct diff_hdr hd = {.src = (uint32_t)loom_rt_icv.rank, .alloc = (uint32_t)a->id,
                          .nrec = nrec, .round = (uint32_t)loom_dsm_notice_round(), .bytes = len};
    if (h == loom_rt_icv.rank) {
        pthread_mutex_lock(&local_apply);
        apply_all(&hd, buf, len);
        pthread_mutex_unlock(&local_apply);
        free(buf);
        return;
    }
    atomic_fetch_add(&acks_expected, 1);
    atomic_fetch_add(&a->stats.bytes_sent, len + sizeof hd);
    loom_rt_tp_am_send(h, AM_DIFF, &hd, sizeof hd, buf, len);
}

long loom_dsm_unacked(void)
{
    return atomic_load(&acks_expected) - atomic_load(&acks_got);
}

void loom_dsm_rec_append(uint8_t **buf, size_t *len, size_t *cap, size_t unit, size_t off,
                     const void *payload, size_t plen, uint32_t kind)
{
    struct loom_rec_hdr r = {.unit = unit, .off = (uint32_t)off, .len = (uint32_t)plen,
                             .kind = kind};
    if (!(*buf = loom_rt_grow(*buf, cap, *len + sizeof r + plen, 1)))
        loom_rt_die(1, "out of memory building a diff");
    memcpy(*buf + *len, &r, sizeof r);
    if (plen)
        memcpy(*buf + *len + sizeof r, payload, plen);
    *len += sizeof r + plen;
}

/* Send (or, for our own units, apply) what is buffered for home h. */
static void send_out(int h)
{
    struct outbuf *b = &out[h];
    if (!b->nrec)
        return;
    loom_dsm_send_diff(h, loom_dsm_allocs[b->alloc], b->p, b->len, b->nrec);
    *b = (struct outbuf){.alloc = -1};
}

static void put_rec(loom_dsm_alloc *a, size_t u, size_t off, const void *p, size_t len,
                    uint32_t kind)
{
    int h = a->home[u];
    struct outbuf *b = &out[h];
    if (b->alloc != a->id) { /* one allocation per message */
        send_out(h);
        b->alloc = a->id;
    }
    loom_dsm_rec_append(&b->p, &b->len, &b->cap, u, off, p, len, kind);
    b->nrec++;
    if (b->len > (4u << 20)) { /* keep messages bounded */
        send_out(h);
        b->alloc = a->id;
    }
}

void loom_dsm_flush_bytes(loom_dsm_alloc *a, size_t u, size_t off, const void *p, size_t len)
{
    put_rec(a, u, off, p, len, REC_BYTES);
}

void loom_dsm_send_reads(loom_dsm_alloc *a)
{
    for (size_t i = 0; i < a->nreads; i++) {
        put_rec(a, a->reads[i], 0, NULL, 0, REC_READ);
        a->readmark[a->reads[i]] = 0;
    }
    a->nreads = 0;
}

void loom_dsm_flush_add(loom_dsm_alloc *a, size_t u, size_t off, const void *delta, size_t len)
{
    if (!loom_dsm_half_wire(a) || off % 4 || len % 4) {
        put_rec(a, u, off, delta, len, REC_ADD);
        return;
    }
    loom_half half[512]; /* LOOM_WIRE=fp16: half the bytes, in pieces */
    for (size_t done = 0; done < len; done += sizeof half * 2) {
        size_t n = (len - done) / 4 < 512 ? (len - done) / 4 : 512;
        for (size_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, (const char *)delta + done + 4 * i, 4);
            half[i] = (loom_half)f;
        }
        put_rec(a, u, off + done, half, n * sizeof *half, REC_ADD16);
    }
}

void loom_dsm_flush_begin(void)
{
    int P = loom_rt_icv.nranks;
    if (!out) {
        out = calloc((size_t)P, sizeof *out);
        if (!out)
            loom_rt_die(1, "out of memory");
    }
    for (int h = 0; h < P; h++)
        out[h] = (struct outbuf){.alloc = -1};
}

static int acked(void *arg)
{
    (void)arg;
    return atomic_load(&acks_got) >= atomic_load(&acks_expected);
}

void loom_dsm_flush_end(void)
{
    for (int h = 0; h < loom_rt_icv.nranks; h++)
        send_out(h);
    loom_rt_tp_wait_until(acked, NULL); /* also the priority sender's messages */
}

/* ---- bookkeeping ----------------------------------------------------- */

static void spin_lock(atomic_flag *f)
{
    for (int i = 0; atomic_flag_test_and_set_explicit(f, memory_order_acquire); i++)
        if (i > 64)
            sched_yield();
}

void loom_dsm_unit_lock(loom_dsm_alloc *a, size_t u) { spin_lock(&a->ulock[u]); }
void loom_dsm_unit_unlock(loom_dsm_alloc *a, size_t u)
{
    atomic_flag_clear_explicit(&a->ulock[u], memory_order_release);
}

/* Append u to a unit list guarded by spin lock f. */
static void list_push(atomic_flag *f, size_t **v, size_t *n, size_t *cap, size_t u)
{
    spin_lock(f);
    size_t *nv = loom_rt_grow(*v, cap, *n + 1, sizeof *nv);
    if (!nv)
        loom_rt_die(1, "out of memory");
    *v = nv;
    (*v)[(*n)++] = u;
    atomic_flag_clear_explicit(f, memory_order_release);
}

void loom_dsm_mark_dirty(loom_dsm_alloc *a, size_t u)
{
    list_push(&a->dirty_lock, &a->dirty, &a->ndirty, &a->capdirty, u);
}

void loom_dsm_mark_valid(loom_dsm_alloc *a, size_t u)
{
    list_push(&a->valid_lock, &a->valid, &a->nvalid, &a->capvalid, u);
}

void loom_dsm_new_epoch(loom_dsm_alloc *a)
{
    for (size_t s = 0; a->writer && s < a->nhome; s++)
        if (a->writer[s])
            memset(a->writer[s], 0, a->unit);

}
