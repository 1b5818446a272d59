/* coll.c — barrier, broadcast and allreduce over the transport's messages.
 *
 * No collective funnels through rank 0:
 *   barrier    dissemination (Hensgen, Finkel, Manber): ceil(log2 P) rounds
 *   bcast      binomial tree; from LARGE bytes, binomial scatter + ring
 *              allgather (van de Geijn), ~2x the data instead of log2 P x
 *   allreduce  recursive doubling; from LARGE bytes, reduce-scatter by
 *              recursive halving + allgather by recursive doubling
 *              (Rabenseifner).  Non-powers of two fold the first 2*rem
 *              ranks in pairs before and unfold after.
 * Every element of an allreduce result is computed on one rank and copied,
 * or computed as a (+) b on both partners of a symmetric exchange, so the
 * result is bitwise identical on every rank.
 *
 * Every collective takes the next sequence number; a message's tag is
 * (sequence << 16 | step), so ranks must call collectives in the same
 * order, as in MPI.  Single-threaded per rank: call from one thread. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define LARGE (64u * 1024u)

static uint64_t seq;

static uint64_t tag_of(uint64_t s, unsigned step) { return s << 16 | step; }

size_t loom_rt_type_size(loom_type t)
{
    return t == LOOM_INT32 || t == LOOM_FLOAT ? 4 : 8;
}

/* Sums of integers wrap around (two's complement) as the hardware does:
 * they are added as the unsigned type U, since signed overflow is
 * undefined behaviour in C.  Floating types add as themselves (U = T).
 * Each element is independent, so the loops are vectorized (omp simd: at
 * -O2 GCC 12 left them scalar), with results identical bit for bit; a and
 * b must be the same array or not overlap. */
#define REDUCE(T, U)                                                      \
    do {                                                                  \
        T *x = a;                                                         \
        const T *y = b;                                                   \
        if (op == LOOM_SUM)                                               \
            _Pragma("omp simd")                                           \
            for (size_t i = 0; i < n; i++) x[i] = (T)((U)x[i] + (U)y[i]); \
        else if (op == LOOM_MIN)                                          \
            _Pragma("omp simd")                                           \
            for (size_t i = 0; i < n; i++) x[i] = y[i] < x[i] ? y[i] : x[i]; \
        else                                                              \
            _Pragma("omp simd")                                           \
            for (size_t i = 0; i < n; i++) x[i] = y[i] > x[i] ? y[i] : x[i]; \
    } while (0)

void loom_rt_reduce_local(void *a, const void *b, size_t n, loom_type t, loom_op op)
{
    switch (t) {
    case LOOM_INT32: REDUCE(int32_t, uint32_t); break;
    case LOOM_INT64: REDUCE(int64_t, uint64_t); break;
    case LOOM_FLOAT: REDUCE(float, float); break;
    case LOOM_DOUBLE: REDUCE(double, double); break;
    }
}

/* Send a to dst and receive b from src at once (no deadlock on large
 * messages, whose sends complete only when received). */
static void exchange(int dst, const void *a, size_t alen, int src, void *b,
                     size_t blen, uint64_t tag)
{
    loom_sreq *s = loom_rt_tp_isend(dst, tag, a, alen);
    loom_rt_tp_recv(src, tag, b, blen);
    loom_rt_tp_wait_send(s);
}

static int check_state(void)
{
    return loom_rt_state == 1 ? LOOM_OK : LOOM_ERR_STATE;
}

int loom_rt_coll_barrier(void)
{
    if (check_state())
        return LOOM_ERR_STATE;
    int P = loom_rt_icv.nranks, r = loom_rt_icv.rank;
    if (P == 1)
        return LOOM_OK;
    uint64_t s = ++seq;
    unsigned step = 0;
    for (int k = 1; k < P; k <<= 1, step++)
        exchange((r + k) % P, NULL, 0, (r - k + P) % P, NULL, 0, tag_of(s, step));
    return LOOM_OK;
}

static int (*is_loom_memory)(const void *p);

void loom_rt_coll_set_bounce(int (*fn)(const void *p))
{
    is_loom_memory = fn;
}

/* Collectives on Loom memory run on a private copy (the bounce buffer):
 * the transport cannot take the page path's faults, and the intermediate
 * values of a reduction must not live where other ranks' diffs land (a
 * home's units are written in place, dsm.h).  The result is stored once,
 * with plain stores, at the end.  Returns buf itself for other memory. */
static char *bounce_in(void *buf, size_t bytes, int copy)
{
    if (!bytes || !is_loom_memory || !is_loom_memory(buf))
        return buf;
    char *t = malloc(bytes);
    if (!t)
        loom_rt_die(1, "out of memory (a collective's copy of %zu bytes)", bytes);
    if (copy)
        memcpy(t, buf, bytes);
    return t;
}

static void bounce_out(void *buf, char *t, size_t bytes, int copy)
{
    if (t == buf)
        return;
    if (copy)
        memcpy(buf, t, bytes);
    free(t);
}

/* Byte offset of chunk i when `bytes` is cut into P chunks, the first
 * bytes % P of them one byte longer. */
static size_t chunk_off(size_t bytes, int P, int i)
{
    size_t base = bytes / (size_t)P, rem = bytes % (size_t)P;
    return (size_t)i * base + ((size_t)i < rem ? (size_t)i : rem);
}

static int min_int(int a, int b) { return a < b ? a : b; }

/* Binomial-tree broadcast of the chunks [lo, hi) of every subtree, where a
 * subtree's range is its ranks'.  With whole=1 every rank gets all bytes
 * (plain binomial bcast); with whole=0 each relative rank v ends with the
 * chunks of its subtree (scatter). */
static void binomial(char *buf, size_t bytes, int root, int whole, uint64_t s)
{
    int P = loom_rt_icv.nranks, vr = (loom_rt_icv.rank - root + P) % P;
    int mask = 1;
    while (mask < P) {
        if (vr & mask) {
            int src = (vr - mask + root) % P;
            size_t lo = whole ? 0 : chunk_off(bytes, P, vr);
            size_t hi = whole ? bytes : chunk_off(bytes, P, min_int(vr + mask, P));
            loom_rt_tp_recv(src, tag_of(s, 0), buf + lo, hi - lo);
            break;
        }
        mask <<= 1;
    }
    loom_sreq *reqs[32];
    int nreq = 0;
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int c = vr + mask;
        if (c >= P)
            continue;
        size_t lo = whole ? 0 : chunk_off(bytes, P, c);
        size_t hi = whole ? bytes : chunk_off(bytes, P, min_int(c + mask, P));
        reqs[nreq++] = loom_rt_tp_isend((c + root) % P, tag_of(s, 0), buf + lo, hi - lo);
    }
    for (int i = 0; i < nreq; i++)
        loom_rt_tp_wait_send(reqs[i]);
}

static int bcast(void *buf, size_t bytes, int root);

int loom_bcast(void *buf, size_t bytes, int root)
{
    if (check_state())
        return LOOM_ERR_STATE;
    if (root < 0 || root >= loom_rt_icv.nranks || (!buf && bytes))
        return LOOM_ERR_ARG;
    int me = loom_rt_icv.rank == root;
    char *t = bounce_in(buf, bytes, me);
    int rc = bcast(t, bytes, root);
    bounce_out(buf, t, bytes, !me);
    return rc;
}

/* loom_bcast on buf (not Loom memory), arguments checked. */
static int bcast(void *buf, size_t bytes, int root)
{
    int P = loom_rt_icv.nranks;
    if (P == 1)
        return LOOM_OK;
    uint64_t s = ++seq;
    if (bytes < LARGE || P <= 2) {
        binomial(buf, bytes, root, 1, s);
        return LOOM_OK;
    }
    binomial(buf, bytes, root, 0, s);
    /* Ring allgather: in step i pass chunk (v - i) right, take (v - i - 1)
     * from the left. */
    int vr = (loom_rt_icv.rank - root + P) % P;
    int right = (loom_rt_icv.rank + 1) % P, left = (loom_rt_icv.rank - 1 + P) % P;
    char *b = buf;
    for (int i = 0; i < P - 1; i++) {
        int cs = (vr - i + P) % P, cr = (vr - i - 1 + P) % P;
        size_t so = chunk_off(bytes, P, cs), ro = chunk_off(bytes, P, cr);
        exchange(right, b + so, chunk_off(bytes, P, cs + 1) - so, left, b + ro,
                 chunk_off(bytes, P, cr + 1) - ro, tag_of(s, (unsigned)i + 1));
    }
    return LOOM_OK;
}

/* A scratch buffer reused across calls (collectives are single-threaded). */
static void *scratch(size_t n)
{
    static void *buf;
    static size_t cap;
    if (n > cap) {
        void *nb = realloc(buf, n);
        if (!nb)
            loom_rt_die(LOOM_EXIT_PEER, "out of memory (%zu bytes of scratch)", n);
        buf = nb;
        cap = n;
    }
    return buf;
}

/* The real rank of new rank nr after the fold of the first 2*rem ranks. */
static int real_rank(int nr, int rem) { return nr < rem ? 2 * nr + 1 : nr + rem; }

/* Allreduce among the pof2 ranks that survive the fold; me is my new rank. */
static void rd_allreduce(char *buf, size_t count, loom_type t, loom_op op,
                         int me, int pof2, int rem, uint64_t s)
{
    size_t es = loom_rt_type_size(t), bytes = count * es;
    char *tmp = scratch(bytes);
    unsigned step = 1;
    if (bytes < LARGE || count < (size_t)pof2) {
        for (int mask = 1; mask < pof2; mask <<= 1, step++) {
            int peer = real_rank(me ^ mask, rem);
            exchange(peer, buf, bytes, peer, tmp, bytes, tag_of(s, step));
            loom_rt_reduce_local(buf, tmp, count, t, op);
        }
        return;
    }
    /* Reduce-scatter by recursive halving over element chunks... */
    int lo = 0, hi = pof2, los[32], his[32], depth = 0;
    for (int mask = pof2 >> 1; mask > 0; mask >>= 1, step++) {
        int peer = real_rank(me ^ mask, rem), mid = (lo + hi) / 2;
        int klo = (me & mask) ? mid : lo, khi = (me & mask) ? hi : mid; /* keep */
        int glo = (me & mask) ? lo : mid, ghi = (me & mask) ? mid : hi; /* give */
        size_t ko = chunk_off(count, pof2, klo) * es, ke = chunk_off(count, pof2, khi) * es;
        size_t go = chunk_off(count, pof2, glo) * es, ge = chunk_off(count, pof2, ghi) * es;
        exchange(peer, buf + go, ge - go, peer, tmp + ko, ke - ko, tag_of(s, step));
        loom_rt_reduce_local(buf + ko, tmp + ko, (ke - ko) / es, t, op);
        los[depth] = lo;
        his[depth++] = hi;
        lo = klo;
        hi = khi;
    }
    /* ... then allgather by recursive doubling, retracing the halves. */
    for (int mask = 1; mask < pof2; mask <<= 1, step++) {
        int peer = real_rank(me ^ mask, rem);
        int plo = los[--depth], phi = his[depth];
        int olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo; /* other half */
        size_t mo = chunk_off(count, pof2, lo) * es, me_ = chunk_off(count, pof2, hi) * es;
        size_t oo = chunk_off(count, pof2, olo) * es, oe = chunk_off(count, pof2, ohi) * es;
        exchange(peer, buf + mo, me_ - mo, peer, buf + oo, oe - oo, tag_of(s, step));
        lo = plo;
        hi = phi;
    }
}

static int allreduce(void *recv, size_t count, loom_type type, loom_op op);

int loom_allreduce(const void *send, void *recv, size_t count, loom_type type,
                   loom_op op)
{
    if (check_state())
        return LOOM_ERR_STATE;
    if ((unsigned)type > LOOM_DOUBLE || (unsigned)op > LOOM_MAX ||
        (count && (!send || !recv)))
        return LOOM_ERR_ARG;
    size_t bytes = count * loom_rt_type_size(type);
    int inplace = send == LOOM_IN_PLACE || send == recv;
    char *t = bounce_in(recv, bytes, inplace);
    if (!inplace)
        memmove(t, send, bytes);
    int rc = allreduce(t, count, type, op);
    bounce_out(recv, t, bytes, 1);
    return rc;
}

/* loom_allreduce in place on recv (not Loom memory). */
static int allreduce(void *recv, size_t count, loom_type type, loom_op op)
{
    size_t bytes = count * loom_rt_type_size(type);
    int P = loom_rt_icv.nranks, r = loom_rt_icv.rank;
    if (P == 1 || count == 0)
        return LOOM_OK;
    uint64_t s = ++seq;
    int pof2 = 1;
    while (pof2 * 2 <= P)
        pof2 *= 2;
    int rem = P - pof2, me;
    char *buf = recv;
    if (r < 2 * rem) { /* fold: even ranks hand their vector to the odd one */
        if (r % 2 == 0) {
            loom_rt_tp_wait_send(loom_rt_tp_isend(r + 1, tag_of(s, 0), buf, bytes));
            me = -1;
        } else {
            char *tmp = scratch(bytes);
            loom_rt_tp_recv(r - 1, tag_of(s, 0), tmp, bytes);
            loom_rt_reduce_local(buf, tmp, count, type, op);
            me = r / 2;
        }
    } else
        me = r - rem;
    if (me >= 0)
        rd_allreduce(buf, count, type, op, me, pof2, rem, s);
    if (r < 2 * rem) { /* unfold */
        if (r % 2 == 0)
            loom_rt_tp_recv(r + 1, tag_of(s, 0xffff), buf, bytes);
        else
            loom_rt_tp_wait_send(loom_rt_tp_isend(r - 1, tag_of(s, 0xffff), buf, bytes));
    }
    return LOOM_OK;
}

/* Ring allgather: in step i pass block (r - i) right, take (r - i - 1)
 * from the left. */
int loom_rt_allgather(const void *mine, void *all, size_t len)
{
    if (check_state())
        return LOOM_ERR_STATE;
    int P = loom_rt_icv.nranks, r = loom_rt_icv.rank;
    char *a = all;
    memmove(a + (size_t)r * len, mine, len);
    if (P == 1)
        return LOOM_OK;
    uint64_t s = ++seq;
    int right = (r + 1) % P, left = (r - 1 + P) % P;
    for (int i = 0; i < P - 1; i++) {
        int bs = (r - i + P) % P, br = (r - i - 1 + P) % P;
        exchange(right, a + (size_t)bs * len, len, left, a + (size_t)br * len, len,
                 tag_of(s, (unsigned)i));
    }
    return LOOM_OK;
}
