/* dsm_cache.c — the bounded cache (LOOM_CACHE_BYTES) against exact answers
 * and the memory the system reports.
 * Usage: dsm_cache rows|pages UNITS UNIT_BYTES EPOCHS
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
