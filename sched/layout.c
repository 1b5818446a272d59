/* layout.c — a plan's iterations laid out in plan order: grouped by cell
 * (a worker's share of a sub-block, or a group), in index order inside a
 * cell, so that running a cell streams through one contiguous run of
 * iteration numbers and, for a block body (loom_for_records), of records.
 *
 * One parallel histogram-and-scatter pass: the iterations are cut into
 * contiguous slices (several per thread, taken dynamically, so that a
 * thread the machine holds back does not hold up the others); each slice
 * counts its keys, a prefix sum over (key, slice) (parallel over ranges
 * of keys) gives every slice its own write position in every key, and
 * each slice scatters.  Because slices are in index order and a key's
 * positions are handed out slice by slice, the order inside a key is
 * index order, the same as a serial, stable bucket sort.  The rotation plan's key is (cell, pinned
 * row), so a cell walks its rows of A in order, each once. */
#include "sched.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE (2u << 20)

void *loom_sched_alloc(size_t bytes)
{
    if (bytes < HUGE)
        return malloc(bytes ? bytes : 1);
    void *p;
    size_t n = (bytes + HUGE - 1) / HUGE * HUGE;
    if (posix_memalign(&p, HUGE, n))
        return NULL;
    madvise(p, n, MADV_HUGEPAGE); /* advice only: fine if refused */
    return p;
}

/* Copies one record of sz bytes: the common sizes as one move. */
static inline void copy_rec(char *restrict to, const char *restrict from, size_t sz)
{
    switch (sz) {
    case 4: memcpy(to, from, 4); break;
    case 8: memcpy(to, from, 8); break;
    case 12: memcpy(to, from, 12); break;
    case 16: memcpy(to, from, 16); break;
    default: memcpy(to, from, sz);
    }
}

int loom_sched_slices(long n, size_t per)
{
    int T = omp_get_max_threads(), ns = 8 * T;
    while (ns > T && (size_t)ns * per > (size_t)n * 4 + (1u << 20))
        ns /= 2;
    return ns;
}

int loom_sched_bucket(long n, const uint32_t *key, size_t nkey, uint32_t *off, uint32_t *iters,
                const loom_body *b, char *recs)
{
    size_t stride = nkey + 1; /* a slice's row of pos */
    int ns = loom_sched_slices(n, stride * sizeof(uint32_t));
    uint32_t *pos = loom_sched_alloc((size_t)ns * stride * sizeof *pos); /* [slice][key] */
    if (!pos)
        return LOOM_ERR_NOMEM;
    size_t sz = b ? b->size : 0;
    const char *data = b ? b->data : NULL;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
        for (int x = 0; x < ns; x++) {
            uint32_t *mine = pos + (size_t)x * stride;
            memset(mine, 0, stride * sizeof *mine);
            for (long k = loom_sched_slice(n, ns, x); k < loom_sched_slice(n, ns, x + 1); k++)
                if (key[k] != UINT32_MAX)
                    mine[key[k]]++;
        }
        /* key c's run: slice 0's part, then slice 1's, ...; each thread
         * sums its own range of keys, then offsets it by the ranges before */
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t c0 = nkey * (size_t)t / (size_t)nt, c1 = nkey * (size_t)(t + 1) / (size_t)nt;
        uint32_t at = 0;
        for (size_t c = c0; c < c1; c++)
            for (int x = 0; x < ns; x++)
                at += pos[(size_t)x * stride + c];
        pos[(size_t)t * stride + nkey] = at; /* the range's total (the last column is free) */
#pragma omp barrier
        uint32_t before = 0;
        for (int u = 0; u < t; u++)
            before += pos[(size_t)u * stride + nkey];
        for (size_t c = c0; c < c1; c++) {
            off[c] = before;
            for (int x = 0; x < ns; x++) {
                uint32_t cnt = pos[(size_t)x * stride + c];
                pos[(size_t)x * stride + c] = before;
                before += cnt;
            }
        }
        if (t == nt - 1)
            off[nkey] = before;
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
        for (int x = 0; x < ns; x++) {
            uint32_t *mine = pos + (size_t)x * stride;
            for (long k = loom_sched_slice(n, ns, x); k < loom_sched_slice(n, ns, x + 1); k++) {
                if (key[k] == UINT32_MAX)
                    continue;
                uint32_t y = mine[key[k]]++;
                if (iters)
                    iters[y] = (uint32_t)k;
                if (recs)
                    copy_rec(recs + (size_t)y * sz, data + (size_t)k * sz, sz);
            }
        }
    }
    free(pos);
    return LOOM_OK;
}

/* Swaps two records of sz bytes. */
static inline void swap_rec(char *x, char *y, size_t sz, char *tmp)
{
    copy_rec(tmp, x, sz);
    copy_rec(x, y, sz);
    copy_rec(y, tmp, sz);
}

/* The bucket of rec: group(rec, ctx), or m (none) for a group of m or
 * more (UINT32_MAX). */
static inline size_t bucket_of(uint32_t (*group)(const char *, const void *), const void *ctx,
                               size_t m, const char *rec)
{
    uint32_t b = group(rec, ctx);
    return b < m ? b : m;
}

/* Contract: the records [0, n) of data, grouped in place into m + 1
 * buckets by group (the last: none) by an American flag sort (McIlroy,
 * Bostic & McIlroy 1993): start[b] gets where bucket b's run begins
 * (start[m + 1] = n).  cnt holds m + 2 counters of scratch, tmp room for
 * a record.  Every record is moved at most once, into its run; the order
 * inside a bucket is not the records' order.  Calls no other thread. */
static void flag_sort(char *data, size_t sz, long n, uint32_t (*group)(const char *, const void *),
                      const void *ctx, size_t m, size_t *start, size_t *cnt, char *tmp)
{
    memset(cnt, 0, (m + 2) * sizeof *cnt);
    for (long x = 0; x < n; x++)
        cnt[bucket_of(group, ctx, m, data + (size_t)x * sz)]++;
    size_t at = 0;
    for (size_t b = 0; b <= m; b++) {
        start[b] = at;
        at += cnt[b];
        cnt[b] = start[b]; /* cnt: each bucket's next free place from now on */
    }
    start[m + 1] = at;
    for (size_t b = 0; b <= m; b++)
        while (cnt[b] < start[b + 1]) {
            char *rec = data + cnt[b] * sz;
            size_t to = bucket_of(group, ctx, m, rec);
            if (to == b)
                cnt[b]++;
            else
                swap_rec(rec, data + cnt[to]++ * sz, sz, tmp);
        }
}

int loom_sched_bucket_in_place(char *data, size_t sz, long n, uint32_t (*group)(const char *, const void *),
                         size_t ngroup, uint32_t (*sub)(const char *, const void *, uint32_t),
                         const uint32_t *base, const void *ctx, uint32_t *off)
{
    size_t *start = malloc((ngroup + 2) * sizeof *start), *cnt = malloc((ngroup + 2) * sizeof *cnt);
    char *tmp = malloc(sz);
    int bad = !start || !cnt || !tmp;
    if (!bad) /* by group: one pass, on this thread */
        flag_sort(data, sz, n, group, ctx, ngroup, start, cnt, tmp);
    free(cnt);
    free(tmp);
    if (!bad && !base)
        for (size_t g = 0; g <= ngroup; g++)
            off[g] = (uint32_t)start[g];
    if (!bad && base) { /* then each group by its keys, the groups shared by the threads */
        size_t span = 0, most = 0;
        for (size_t g = 0; g < ngroup; g++) {
            span = base[g + 1] - base[g] > span ? base[g + 1] - base[g] : span;
            most = start[g + 1] - start[g] > most ? start[g + 1] - start[g] : most;
        }
#pragma omp parallel reduction(| : bad)
        {
            uint32_t *at = malloc((span + 1) * sizeof *at), *key = malloc((most + 1) * sizeof *key);
            char *t = malloc(most * sz + 1);
            bad = !at || !key || !t;
#pragma omp for schedule(dynamic, 1)
            for (size_t g = 0; g < ngroup; g++) {
                size_t w = base[g + 1] - base[g], m = start[g + 1] - start[g];
                char *from = data + start[g] * sz;
                if (bad)
                    continue;
                /* a stable counting sort through a scratch copy of the group */
                memset(at, 0, (w + 1) * sizeof *at);
                for (size_t x = 0; x < m; x++) {
                    key[x] = sub(from + x * sz, ctx, (uint32_t)g);
                    at[key[x] + 1]++;
                }
                for (size_t k = 0; k < w; k++) {
                    off[base[g] + k] = (uint32_t)(start[g] + at[k]);
                    at[k + 1] += at[k];
                }
                for (size_t x = 0; x < m; x++)
                    copy_rec(t + (size_t)at[key[x]]++ * sz, from + x * sz, sz);
                memcpy(from, t, m * sz);
            }
            free(at);
            free(key);
            free(t);
        }
        off[base[ngroup]] = (uint32_t)start[ngroup];
    }
    free(start);
    return bad ? LOOM_ERR_NOMEM : LOOM_OK;
}
