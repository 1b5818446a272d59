/* dmap.c — the distributed map (STRADS-AP's dmap, seed 000 ch. 6):
 * uint64 keys to fixed-size values, for key spaces that are sparse and
 * unknown in advance (features, a vocabulary built on the fly).
 *
 * A key lives in the shard of rank hash(key) % P.  Each shard is a table
 * of slots (open addressing, linear probing) kept in a "local" allocation
 * of its owner — plain memory that checkpoints and restarts with the
 * job — and slot s of rank r's shard names row r * slots + s of one row
 * allocation that holds the values.  The values therefore have exactly
 * the coherence of any row allocation (the policy, merge mode, staleness
 * and statistics the caller's options give): only the question "which row
 * is key k?" is the map's own, and its answer never changes once given,
 * so every rank caches it for good.  A rank asks the owner for the rows of
 * keys it does not know yet: one message per owner and batch (prefetch),
 * or per key.  The owner answers from its message handler, inserting
 * when the caller writes.
 *
 * Locks: each map's mu guards its shard table and its cache.  Handlers
 * run under the transport lock and take mu briefly; nothing sends while
 * holding mu (the order lock.c uses). */
#include "dsm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AM_DMAP_ASK 14
#define AM_DMAP_ANSWER 15
#define MAX_MAPS 64
#define ABSENT UINT64_MAX /* an answer: the key is not in the map */
#define FULL (UINT64_MAX - 1) /* an answer: the owner's shard is full */

struct slot { uint64_t key, used; }; /* one slot of a shard table */

struct loom_dmap {
    char name[64];
    int id;                 /* index in maps[], the same on every rank */
    size_t value_size;
    size_t slots;           /* per shard */
    struct slot *shard;     /* this rank's table: a "local" allocation */
    void *values;           /* nranks * slots rows of value_size bytes */
    pthread_mutex_t mu;
    uint64_t *ckey, *crow;  /* cache of known keys: open addressing */
    size_t ccap, cn;        /* capacity (a power of two), entries */
};

static loom_dmap *maps[MAX_MAPS];

/* An ask in flight: the answer lands in rows[] and done is set. */
struct ask {
    uint64_t *rows;
    size_t n;
    volatile int done;
};

struct ask_hdr { uint32_t src, map, insert, n; uint64_t ticket; };
struct answer_hdr { uint64_t ticket, n; };

static uint64_t mix(uint64_t x) /* SplitMix64's finalizer */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int owner_of(uint64_t key) { return (int)(mix(key) % (uint64_t)loom_rt_icv.nranks); }

/* The row of `key` in this rank's shard, inserting it when insert is set:
 * a global row, ABSENT, or FULL.  Caller holds m->mu. */
static uint64_t shard_find(loom_dmap *m, uint64_t key, int insert)
{
    size_t s = (size_t)(mix(key ^ 0x9e3779b97f4a7c15ULL) % m->slots);
    for (size_t probe = 0; probe < m->slots; probe++, s = (s + 1) % m->slots) {
        struct slot *e = &m->shard[s];
        if (e->used && e->key == key)
            return (uint64_t)loom_rt_icv.rank * m->slots + s;
        if (!e->used) {
            if (!insert)
                return ABSENT;
            e->key = key;
            e->used = 1;
            return (uint64_t)loom_rt_icv.rank * m->slots + s;
        }
    }
    return insert ? FULL : ABSENT;
}

/* Cache lookup (ABSENT if unknown) and insert; caller holds m->mu. */
static uint64_t cache_get(const loom_dmap *m, uint64_t key)
{
    if (!m->ccap)
        return ABSENT;
    for (size_t i = mix(key) & (m->ccap - 1);; i = (i + 1) & (m->ccap - 1)) {
        if (m->crow[i] == ABSENT)
            return ABSENT;
        if (m->ckey[i] == key)
            return m->crow[i];
    }
}

static void cache_put(loom_dmap *m, uint64_t key, uint64_t row)
{
    if (2 * (m->cn + 1) > m->ccap) { /* grow: keep the load under a half */
        size_t ncap = m->ccap ? 2 * m->ccap : 1024;
        uint64_t *ok = m->ckey, *orow = m->crow;
        size_t ocap = m->ccap;
        m->ckey = malloc(ncap * sizeof *m->ckey);
        m->crow = malloc(ncap * sizeof *m->crow);
        if (!m->ckey || !m->crow)
            loom_rt_die(LOOM_EXIT_PEER, "out of memory caching the keys of map '%s'", m->name);
        for (size_t i = 0; i < ncap; i++)
            m->crow[i] = ABSENT;
        m->ccap = ncap;
        m->cn = 0;
        for (size_t i = 0; i < ocap; i++)
            if (orow[i] != ABSENT)
                cache_put(m, ok[i], orow[i]);
        free(ok);
        free(orow);
    }
    size_t i = mix(key) & (m->ccap - 1);
    while (m->crow[i] != ABSENT && m->ckey[i] != key)
        i = (i + 1) & (m->ccap - 1);
    if (m->crow[i] == ABSENT)
        m->cn++;
    m->ckey[i] = key;
    m->crow[i] = row;
}

/* Owner side: answer an ask with one row (or ABSENT/FULL) per key. */
static void on_ask(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct ask_hdr h;
    if (hlen != sizeof h)
        return;
    memcpy(&h, hdr, sizeof h);
    if (h.map >= MAX_MAPS || !maps[h.map] || len != (size_t)h.n * sizeof(uint64_t))
        loom_rt_die(LOOM_EXIT_PEER, "internal: a malformed map request from rank %u", h.src);
    loom_dmap *m = maps[h.map];
    uint64_t *rows = malloc((h.n ? h.n : 1) * sizeof *rows);
    if (!rows)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory answering a map request");
    pthread_mutex_lock(&m->mu);
    for (uint32_t i = 0; i < h.n; i++) {
        uint64_t key;
        memcpy(&key, (char *)data + i * sizeof key, sizeof key);
        rows[i] = shard_find(m, key, (int)h.insert);
    }
    pthread_mutex_unlock(&m->mu);
    struct answer_hdr a = {h.ticket, h.n};
    loom_rt_tp_am_send_eager((int)h.src, AM_DMAP_ANSWER, &a, sizeof a, rows, h.n * sizeof *rows, 1);
}

static void on_answer(const void *hdr, size_t hlen, void *data, size_t len)
{
    struct answer_hdr a;
    if (hlen != sizeof a)
        return;
    memcpy(&a, hdr, sizeof a);
    struct ask *k = (struct ask *)(uintptr_t)a.ticket;
    if (len != k->n * sizeof(uint64_t))
        loom_rt_die(LOOM_EXIT_PEER, "internal: a malformed map answer");
    memcpy(k->rows, data, len);
    __atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
}

/* The rows of keys[0..n), all owned by `owner`, into rows[] (ABSENT or
 * FULL where so), asking the owner unless it is this rank.  Caches what
 * it learns.  Takes m->mu; never holds it while sending or waiting. */
static void resolve(loom_dmap *m, int owner, const uint64_t *keys, size_t n, int insert,
                    uint64_t *rows)
{
    if (owner == loom_rt_icv.rank) {
        pthread_mutex_lock(&m->mu);
        for (size_t i = 0; i < n; i++)
            rows[i] = shard_find(m, keys[i], insert);
        pthread_mutex_unlock(&m->mu);
        return;
    }
    struct ask k = {.rows = rows, .n = n};
    struct ask_hdr h = {(uint32_t)loom_rt_icv.rank, (uint32_t)m->id, (uint32_t)insert,
                        (uint32_t)n, (uint64_t)(uintptr_t)&k};
    void *copy = malloc(n * sizeof *keys);
    if (!copy)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory asking for map keys");
    memcpy(copy, keys, n * sizeof *keys);
    loom_rt_tp_am_send_eager(owner, AM_DMAP_ASK, &h, sizeof h, copy, n * sizeof *keys, 1);
    loom_rt_tp_wait_flag(&k.done);
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++)
        if (rows[i] < FULL)
            cache_put(m, keys[i], rows[i]);
    pthread_mutex_unlock(&m->mu);
}

static void shard_full(const loom_dmap *m, int owner)
{
    loom_abort(LOOM_EXIT_PEER, "map '%s': the shard of rank %d is full (%zu keys); create "
               "the map with a larger capacity", m->name, owner, m->slots);
}

/* The row of one key: cached, or asked for.  ABSENT if the key is not in
 * the map (and insert is 0); a full shard is reported here. */
static uint64_t row_of(loom_dmap *m, uint64_t key, int insert)
{
    int owner = owner_of(key);
    uint64_t row = ABSENT;
    if (owner != loom_rt_icv.rank) {
        pthread_mutex_lock(&m->mu);
        row = cache_get(m, key);
        pthread_mutex_unlock(&m->mu);
    }
    if (row == ABSENT)
        resolve(m, owner, &key, 1, insert, &row);
    if (row == FULL)
        shard_full(m, owner);
    return row;
}

loom_dmap *loom_dmap_create(size_t capacity, size_t value_size, const loom_alloc_opts *opts)
{
    static int nmaps; /* maps created so far: the same count on every rank */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (loom_rt_state != 1) {
        loom_rt_log("loom_dmap_create: called before loom_init");
        return NULL;
    }
    if (!capacity || !value_size || nmaps >= MAX_MAPS) {
        loom_rt_log("loom_dmap_create: %s", nmaps >= MAX_MAPS ? "too many maps (64)"
                                         : "capacity and value_size must be > 0");
        return NULL;
    }
    if (opts && (opts->unit != LOOM_UNIT_PAGE || opts->row_size || opts->dist)) {
        loom_rt_log("loom_dmap_create: the map chooses its own units and distribution "
                 "(leave .unit, .row_size and .dist zero)");
        return NULL;
    }
    /* Handlers first: an ask may arrive as soon as loom_alloc below returns
     * on another rank, and that needs every rank inside it. */
    if (loom_rt_icv.nranks > 1)
        pthread_once(&once, loom_dsm_dmap_init);
    loom_dmap *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    snprintf(m->name, sizeof m->name, "%s", opts && opts->name ? opts->name : "dmap");
    m->value_size = value_size;
    /* Twice the keys a shard gets on average, plus room for the hash's
     * unevenness: probes stay short and a shard fills only far beyond. */
    m->slots = 2 * ((capacity + (size_t)loom_rt_icv.nranks - 1) / (size_t)loom_rt_icv.nranks) + 64;
    pthread_mutex_init(&m->mu, NULL);
    char kname[80];
    snprintf(kname, sizeof kname, "%s.keys", m->name);
    loom_alloc_opts ko = {.name = kname, .coherence = "local"};
    loom_alloc_opts vo = opts ? *opts : (loom_alloc_opts){0};
    vo.name = m->name;
    vo.unit = LOOM_UNIT_ROW;
    vo.row_size = value_size;
    vo.dist = LOOM_DIST_BLOCK;
    m->shard = loom_alloc(m->slots * sizeof *m->shard, &ko);
    if (!m->shard) {
        free(m);
        return NULL;
    }
    /* Listed before the values exist: a rank whose loom_alloc below
     * returns first may ask this one while it is still inside. */
    m->id = nmaps;
    maps[m->id] = m;
    m->values = loom_alloc((size_t)loom_rt_icv.nranks * m->slots * value_size, &vo);
    if (!m->values) { /* every rank fails alike (loom_alloc agrees) */
        maps[m->id] = NULL;
        loom_free(m->shard);
        free(m);
        return NULL;
    }
    nmaps++;
    return m;
}

int loom_dmap_free(loom_dmap *m)
{
    if (!m)
        return LOOM_ERR_ARG;
    loom_dsm_barrier(); /* nobody asks this map any more */
    maps[m->id] = NULL;
    int rc = loom_free(m->values);
    int rc2 = loom_free(m->shard);
    free(m->ckey);
    free(m->crow);
    pthread_mutex_destroy(&m->mu);
    free(m);
    return rc ? rc : rc2;
}

int loom_dmap_get(loom_dmap *m, uint64_t key, void *value, int *found)
{
    if (!m || !value)
        return LOOM_ERR_ARG;
    uint64_t row = row_of(m, key, 0);
    if (found)
        *found = row != ABSENT;
    if (row == ABSENT) {
        memset(value, 0, m->value_size);
        return LOOM_OK;
    }
    const void *p = loom_row_get(m->values, (size_t)row);
    if (!p)
        return LOOM_ERR_ARG;
    memcpy(value, p, m->value_size);
    return LOOM_OK;
}

int loom_dmap_put(loom_dmap *m, uint64_t key, const void *value)
{
    if (!m || !value)
        return LOOM_ERR_ARG;
    return loom_row_put(m->values, (size_t)row_of(m, key, 1), value);
}

int loom_dmap_add(loom_dmap *m, uint64_t key, const void *delta)
{
    if (!m || !delta)
        return LOOM_ERR_ARG;
    return loom_row_add(m->values, (size_t)row_of(m, key, 1), delta);
}

/* The rows of keys[0..n) into rows[] (LOOM_DMAP_ABSENT for a key not in
 * the map when insert is 0): the keys this rank does not know yet are
 * sorted by owner (a counting sort) and each owner is asked once.  A full
 * shard stops the job.  Thread-safe; takes m->mu, never while sending. */
int loom_dmap_rows(loom_dmap *m, const uint64_t *keys, size_t n, int insert, size_t *rows)
{
    if (!m || (n && (!keys || !rows)))
        return LOOM_ERR_ARG;
    int P = loom_rt_icv.nranks;
    uint64_t *todo = malloc((n ? n : 1) * sizeof *todo), *got = malloc((n ? n : 1) * sizeof *got);
    size_t *at = calloc((size_t)P + 1, sizeof *at), *from = malloc((n ? n : 1) * sizeof *from);
    int *ask = malloc((n ? n : 1) * sizeof *ask); /* the owner to ask, or -1 */
    int rc = LOOM_ERR_NOMEM;
    if (!todo || !got || !at || !from || !ask)
        goto out;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < n; i++) {
        int o = owner_of(keys[i]);
        uint64_t r = o == loom_rt_icv.rank ? ABSENT : cache_get(m, keys[i]);
        ask[i] = r == ABSENT ? o : -1;
        rows[i] = r == ABSENT ? LOOM_DMAP_ABSENT : (size_t)r;
        at[o + 1] += r == ABSENT;
    }
    pthread_mutex_unlock(&m->mu);
    for (int p = 0; p < P; p++)
        at[p + 1] += at[p];
    for (size_t i = 0; i < n; i++)
        if (ask[i] >= 0) { /* at[p] ends as the end of p's run */
            from[at[ask[i]]] = i;
            todo[at[ask[i]]++] = keys[i];
        }
    for (int p = 0, lo = 0; p < P; lo = (int)at[p], p++) {
        size_t k = at[p] - (size_t)lo;
        if (!k)
            continue;
        resolve(m, p, todo + lo, k, insert, got + lo);
        for (size_t i = (size_t)lo; i < (size_t)lo + k; i++) {
            if (got[i] == FULL)
                shard_full(m, p);
            rows[from[i]] = got[i] == ABSENT ? LOOM_DMAP_ABSENT : (size_t)got[i];
        }
    }
    rc = LOOM_OK;
out:
    free(todo), free(got), free(at), free(from), free(ask);
    return rc;
}

void *loom_dmap_values(loom_dmap *m, size_t *nrows)
{
    if (nrows)
        *nrows = m ? (size_t)loom_rt_icv.nranks * m->slots : 0;
    return m ? m->values : NULL;
}

int loom_dmap_prefetch(loom_dmap *m, const uint64_t *keys, size_t n)
{
    if (!m || (n && !keys))
        return LOOM_ERR_ARG;
    size_t *rows = malloc((n ? n : 1) * sizeof *rows), known = 0;
    if (!rows)
        return LOOM_ERR_NOMEM;
    int rc = loom_dmap_rows(m, keys, n, 0, rows);
    for (size_t i = 0; !rc && i < n; i++)
        if (rows[i] != LOOM_DMAP_ABSENT)
            rows[known++] = rows[i];
    if (!rc && known)
        rc = loom_row_prefetch(m->values, rows, known);
    free(rows);
    return rc;
}

size_t loom_dmap_shard(loom_dmap *m, uint64_t *keys, size_t max)
{
    if (!m)
        return 0;
    size_t n = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t s = 0; s < m->slots; s++)
        if (m->shard[s].used) {
            if (keys && n < max)
                keys[n] = m->shard[s].key;
            n++;
        }
    pthread_mutex_unlock(&m->mu);
    return n;
}

void loom_dsm_dmap_init(void)
{
    loom_rt_tp_am_register(AM_DMAP_ASK, on_ask);
    loom_rt_tp_am_register(AM_DMAP_ANSWER, on_answer);
}
