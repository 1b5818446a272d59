/* dsm_cache.c — the bounded cache (LOOM_CACHE_BYTES) against exact answers
 * and the memory the system reports.
 * Usage: dsm_cache rows|pages|loop UNITS UNIT_BYTES EPOCHS
 * rows: a row allocation (LOOM_COHERENCE, default bsp) of UNITS rows of
 *   UNIT_BYTES (int64 elements, add merge).  In epoch e every rank reads every row, which must hold
 *   exactly the adds of epochs < e (row r, element j: the sum over ranks q
 *   and epochs d < e of q + d + r + j), a barrier, then adds q + e + r + j
 *   to every element of the rows r with r % 3 != q % 3, then a barrier.
 * pages: a page allocation (the same policy) of UNITS units of UNIT_BYTES (int64 elements,
 *   overwrite merge, block distribution); in epoch e rank q writes
 *   e * 1000003 + u * 7 + j into element j of the units u with u % P == q,
 *   a barrier, then every rank reads every unit, which must hold exactly
 *   that, then a barrier.
 * loop: a row allocation as for rows, and a bsp data-parallel loop
 *   (.local: every rank runs iterations 0 .. 2 * UNITS - 1; a sync point
 *   every UNITS / 10) in which iteration i adds i % 7 + 1 to element 0 and 1
 *   to element 1 of row i % UNITS, EPOCHS calls; then every row must hold
 *   exactly P * EPOCHS times that.  Prints the growth of the process's
 *   resident memory from after loom_alloc (VmRSS) to its peak (VmHWM), so
 *   that the loop's staged copies count, which mincore of the allocation
 *   does not see and which are unmapped when a call returns.
 * After each epoch's last barrier, mincore() counts the resident OS pages
 * of the working copies (pages: of the units not homed here); the largest
 * count is printed with the allocation's stats:
 *   dsm_cache: ok P=.. resident_max=BYTES evicted=N cached=BYTES
 * so the test can hold them against LOOM_CACHE_BYTES. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../rss.h"

#define FAIL(...) do { fprintf(stderr, "dsm_cache: rank %d: ", loom_rank()); \
                       fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

/* Resident bytes of [p, p + len) (page-aligned p). */
static size_t resident(const char *p, size_t len)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = (len + ps - 1) / ps, r = 0;
    unsigned char *v = malloc(n ? n : 1);
    if (!v || mincore((void *)p, len, v))
        return (size_t)-1;
    for (size_t i = 0; i < n; i++)
        r += v[i] & 1;
    free(v);
    return r * ps;
}

static long rss(void) { return rss_kb() * 1024; }
static long peak(void) { return status_kb("VmHWM:") * 1024; }

static int64_t *lm;
static size_t ln;

static void loop_body(long i, void *ctx)
{
    (void)ctx;
    int64_t *row = loom_at(lm, (size_t)i % ln);
    row[0] += i % 7 + 1;
    row[1] += 1;
}

static int loop(size_t n, size_t ub, int epochs)
{
    int P = loom_size(), q = loom_rank();
    ln = n;
    lm = loom_alloc(n * ub, &(loom_alloc_opts){.name = "model", .unit = LOOM_UNIT_ROW,
                    .row_size = ub, .merge = LOOM_MERGE_ADD, .type = LOOM_INT64});
    if (!lm)
        FAIL("loom_alloc failed");
    loom_barrier();
    long base = rss(), grow = 0;
    loom_for_opts o = {.schedule = LOOM_STATIC, .local = 1, .sync = LOOM_BSP,
                       .sync_every = (long)(n / 10 ? n / 10 : 1)};
    for (int e = 0; e < epochs; e++) {
        if (loom_for(0, (long)(2 * n), loop_body, NULL, &o))
            FAIL("loom_for failed");
        loom_barrier();
        grow = peak() - base; /* the peak: a call's staged copies are gone by now */
    }
    for (size_t r = 0; r < n; r++) {
        const int64_t *v = loom_row_get(lm, r);
        int64_t w0 = (int64_t)P * epochs * ((int64_t)(r % 7) + 1 + (int64_t)((r + n) % 7) + 1);
        if (v[0] != w0 || v[1] != (int64_t)P * epochs * 2)
            FAIL("row %zu holds %lld, %lld, not %lld, %lld", r, (long long)v[0],
                 (long long)v[1], (long long)w0, (long long)P * epochs * 2);
    }
    loom_allreduce(LOOM_IN_PLACE, &grow, 1, LOOM_INT64, LOOM_MAX);
    if (q == 0)
        printf("dsm_cache: ok loop P=%d rss_growth=%ld\n", P, grow);
    loom_free(lm);
    return loom_finalize();
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc != 5) {
        fprintf(stderr, "usage: dsm_cache rows|pages UNITS UNIT_BYTES EPOCHS\n");
        return 2;
    }
    int rows = !strcmp(argv[1], "rows"), P = loom_size(), q = loom_rank();
    size_t n = (size_t)atol(argv[2]), ub = (size_t)atol(argv[3]), ne = ub / sizeof(int64_t);
    int epochs = atoi(argv[4]);
    if (!strcmp(argv[1], "loop"))
        return loop(n, ub, epochs);
    size_t rmax = 0;
    int64_t *buf = malloc(ub);
    char *a = loom_alloc(n * ub, &(loom_alloc_opts){.name = "model",
                         .unit = rows ? LOOM_UNIT_ROW : LOOM_UNIT_PAGE,
                         .row_size = rows ? ub : 0, .page_unit = rows ? 0 : ub,
                         .merge = rows ? LOOM_MERGE_ADD : LOOM_MERGE_OVERWRITE,
                         .type = LOOM_INT64}); /* LOOM_COHERENCE, else bsp */
    if (!a || !buf)
        FAIL("loom_alloc failed");
    /* pages: this rank's home run (block distribution), left out of the count */
    size_t per = (n + (size_t)P - 1) / (size_t)P, h0 = per * (size_t)q < n ? per * (size_t)q : n;
    size_t h1 = h0 + per < n ? h0 + per : n;
    for (int e = 0; e < epochs; e++) {
        if (rows) {
            for (size_t r = 0; r < n; r++) {
                const int64_t *v = loom_row_get(a, r);
                for (size_t j = 0; j < ne; j++) {
                    int64_t want = 0;
                    for (int qq = 0; qq < P; qq++)
                        for (int d = 0; d < e; d++)
                            want += r % 3 != (size_t)qq % 3 ? qq + d + (int64_t)(r + j) : 0;
                    if (v[j] != want)
                        FAIL("epoch %d: row %zu element %zu holds %lld, not %lld", e, r, j,
                             (long long)v[j], (long long)want);
                }
            }
            loom_barrier(); /* nobody adds before everyone has read */
            for (size_t r = 0; r < n; r++)
                if (r % 3 != (size_t)q % 3) {
                    for (size_t j = 0; j < ne; j++)
                        buf[j] = q + e + (int64_t)(r + j);
                    loom_row_add(a, r, buf);
                }
            loom_barrier();
            size_t got = resident(a, n * ub);
            rmax = got > rmax ? got : rmax;
        } else {
            for (size_t u = (size_t)q; u < n; u += (size_t)P)
                for (size_t j = 0; j < ne; j++)
                    ((int64_t *)(a + u * ub))[j] = e * 1000003LL + (int64_t)(u * 7 + j);
            loom_barrier();
            for (size_t u = 0; u < n; u++)
                for (size_t j = 0; j < ne; j++) {
                    int64_t v = ((int64_t *)(a + u * ub))[j];
                    if (v != e * 1000003LL + (int64_t)(u * 7 + j))
                        FAIL("epoch %d: unit %zu element %zu holds %lld", e, u, j, (long long)v);
                }
            loom_barrier();
            size_t got = resident(a, h0 * ub) + resident(a + h1 * ub, (n - h1) * ub);
            rmax = got > rmax ? got : rmax;
        }
    }
    loom_stats s;
    loom_stats_get(a, &s);
    long long v[3] = {(long long)rmax, (long long)s.evicted, (long long)s.cached_bytes};
    loom_allreduce(LOOM_IN_PLACE, &v[0], 1, LOOM_INT64, LOOM_MAX);
    loom_allreduce(LOOM_IN_PLACE, &v[1], 1, LOOM_INT64, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, &v[2], 1, LOOM_INT64, LOOM_MAX);
    if (q == 0)
        printf("dsm_cache: ok P=%d resident_max=%lld evicted=%lld cached=%lld\n", P, v[0], v[1],
               v[2]);
    loom_free(a);
    free(buf);
    return loom_finalize();
}
