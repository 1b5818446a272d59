/* dsm_bench.c — DSM micro-benchmarks, driven by tests/perf/dsm.sh, which
 * runs each mode several times, with UCX's default transports and with
 * UCX_TLS=tcp,self, next to ucx_perftest, and writes docs/bench-dsm.md.
 *
 *   dsm_bench fetch SCALE          2 ranks: rank 1 loads one word of page
 *       units homed at rank 0 (4 KiB, 64 KiB, 1 MiB units); each load
 *       faults and fetches the unit through the real path (SIGSEGV ->
 *       policy read_miss -> ucp_get_nbx from the home store).
 *         fetch_us SIZE US          distinct units, one acquire per pass
 *                                   (the barrier's), per fetch
 *         fetch_mibps SIZE MIBPS    SIZE / fetch_us
 *         localfault_us SIZE US     the same for units homed at rank 1
 *                                   itself: fault path + local copy, no
 *                                   network
 *         osfault_us SIZE US        the operating system's share: a
 *                                   SIGSEGV and one mprotect per unit of a
 *                                   plain mapping, no copy (Loom's handler
 *                                   only passes the fault on)
 *         acqfetch_us SIZE US       loop { loom_acquire(); load unit 0 }
 *                                   (one small allocation live), per loop
 *         acquire_us SIZE US        loop { loom_acquire(); } alone
 *         tpget_us SIZE US          the transport alone (no DSM): the
 *                                   loom_rt_tp_get + wait that a fetch makes,
 *                                   distinct units of a registered buffer
 *         tpgetsame_us SIZE US      the same, one unit over and over
 *         fetch_iters SIZE UNITS PASSES SAME_LOOPS
 *   dsm_bench rows SCALE           any rank count: rows of 64 B, 256 B,
 *       4 KiB, rows homed elsewhere (all rows with one rank, where an
 *       allocation is plain memory).  Aggregate rate = rows over all
 *       ranks / the slowest rank's time.
 *         rowget_rps SIZE R         loom_row_get after an acquire (fetches)
 *         rowpf_rps SIZE R          loom_row_prefetch of 256 rows, then gets
 *         rowadd_rps SIZE R         loom_row_add (int64, LOOM_MERGE_ADD)
 *                                   of every row, timed with the
 *                                   loom_barrier that pushes them home
 *         rows_iters SIZE ROWS_PER_RANK_PER_PASS PASSES
 *   dsm_bench stream MIB REPS      STREAM triad a = b + s*c and a sum of a,
 *       double, OpenMP parallel for, over MIB MiB per array per rank.
 *       One rank (run without loomrun: plain memory): loom_alloc'd vs
 *       malloc'd arrays, alternated REPS times; medians.
 *         s1_triad_mibps loom|malloc MIBPS    (3 arrays' bytes / time)
 *         s1_sum_mibps loom|malloc MIBPS
 *       Two or more ranks: every rank works on its own home block of
 *       global page-unit arrays; slowest rank's time, bytes of all ranks.
 *         sN_init_ms loom|malloc MS      first writes of a, b, c
 *         sN_initbar_ms loom MS          the loom_barrier after them
 *         sN_triad1_mibps loom|malloc    first triad after the barrier
 *         sN_triad_mibps loom|malloc     steady state (median)
 *         sN_sum_mibps loom|malloc       steady state (median)
 *         sN_relbar_ms loom MS           loom_barrier releasing a
 *         sN_sum1_mibps loom|malloc      first sum after that barrier
 * Every mode checks the values it reads and aborts the job on a wrong one.
 * Rank 0 prints the results, one "key args value" line each. */
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dsm_median.h"

static void check(int err, const char *what)
{
    if (err)
        loom_abort(1, "dsm_bench: %s: %s", what, loom_strerror(err));
}

static double slowest(double t)
{
    check(loom_allreduce(LOOM_IN_PLACE, &t, 1, LOOM_DOUBLE, LOOM_MAX), "allreduce");
    return t;
}

static double total(double x)
{
    check(loom_allreduce(LOOM_IN_PLACE, &x, 1, LOOM_DOUBLE, LOOM_SUM), "allreduce");
    return x;
}

static long scaled(long n, double scale, long min)
{
    long v = (long)((double)n * scale);
    return v < min ? min : v;
}

/* ---- fetch ---------------------------------------------------------- */

/* The operating system's share of a fault: a region outside Loom whose
 * units are made readable by a SIGSEGV handler with one mprotect each, as
 * Loom's handler does, minus everything else (no lock, no copy).  The
 * handler is installed before loom_init, so Loom's own handler passes
 * faults outside its allocations on to it. */
static char *os_region;
static size_t os_len, os_unit;

static void os_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char *p = si->si_addr;
    if (!os_region || p < os_region || p >= os_region + os_len) {
        signal(sig, SIG_DFL); /* a real crash: the retried access kills us */
        return;
    }
    p = os_region + (size_t)(p - os_region) / os_unit * os_unit;
    if (mprotect(p, os_unit, PROT_READ))
        signal(sig, SIG_DFL);
}

static void install_os_fault(void)
{
    struct sigaction sa = {.sa_sigaction = os_fault, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

/* Seconds per fault over nu units of `size` bytes, mean of `passes`
 * passes after an untimed one. */
static double os_faults(size_t size, long nu, int passes)
{
    os_unit = size;
    os_len = (size_t)nu * size;
    char *m = mmap(NULL, os_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        loom_abort(1, "dsm_bench: mmap failed");
    memset(m, 1, os_len);
    os_region = m;
    double t = 0;
    for (int p = 0; p <= passes; p++) {
        if (mprotect(m, os_len, PROT_NONE))
            loom_abort(1, "dsm_bench: mprotect failed");
        double t0 = loom_wtime();
        long s = 0;
        for (long u = 0; u < nu; u++)
            s += *(volatile const char *)(m + (size_t)u * size);
        if (p)
            t += loom_wtime() - t0;
        if (s != nu)
            loom_abort(3, "dsm_bench: wrong bytes in the fault test");
    }
    os_region = NULL;
    munmap(m, os_len);
    return t / ((double)nu * passes);
}

static uint64_t pattern(size_t unit, size_t size) { return 0x9e3779b9u * (uint64_t)unit + size; }

/* The transport alone, no DSM: rank 1 reads nu units of `size` bytes from
 * a buffer rank 0 registered, with loom_rt_tp_get + loom_rt_tp_wait_flag, the
 * calls loom_dsm_fetch makes.  Returns rank 1's seconds per get: distinct
 * units (*distinct) and the same unit over and over (*same). */
static void tp_get(size_t size, long nu, int passes, long loops, double *distinct,
                   double *same)
{
    int r = loom_rank();
    size_t len = (size_t)nu * size;
    char *buf = malloc(len);
    if (!buf)
        loom_abort(1, "dsm_bench: out of memory");
    for (long u = 0; u < nu; u++)
        memset(buf + (size_t)u * size, r == 0 ? (int)(u & 0x7f) + 1 : 0, size);
    void *memh = NULL, *rkey = NULL, *rk = NULL;
    size_t rlen = 0;
    uint64_t hdr[2] = {0, 0};
    char kb[1024];
    if (r == 0) {
        check(loom_rt_tp_mem_map(buf, len, &memh, &rkey, &rlen), "mem_map");
        if (rlen > sizeof kb)
            loom_abort(1, "dsm_bench: memory key of %zu bytes", rlen);
        hdr[0] = (uint64_t)(uintptr_t)buf;
        hdr[1] = rlen;
        memcpy(kb, rkey, rlen);
        loom_rt_tp_rkey_buffer_free(rkey);
    }
    check(loom_bcast(hdr, sizeof hdr, 0), "bcast");
    check(loom_bcast(kb, sizeof kb, 0), "bcast");
    *distinct = *same = 0;
    if (r == 1) {
        rk = loom_rt_tp_rkey_unpack(0, kb);
        int bad = 0;
        for (int p = 0; p <= passes; p++) {
            double t0 = loom_wtime();
            for (long u = 0; u < nu; u++) {
                volatile int done = 0;
                loom_rt_tp_get(0, buf + (size_t)u * size, size, hdr[0] + (uint64_t)u * size, rk,
                            &done);
                loom_rt_tp_wait_flag(&done);
                bad |= buf[(size_t)u * size + size - 1] != (char)((u & 0x7f) + 1);
            }
            if (p)
                *distinct += loom_wtime() - t0;
        }
        *distinct /= (double)nu * passes;
        for (long i = -(loops / 10 + 1); i < loops; i++) {
            if (!i)
                *same = loom_wtime();
            volatile int done = 0;
            loom_rt_tp_get(0, buf, size, hdr[0], rk, &done);
            loom_rt_tp_wait_flag(&done);
        }
        *same = (loom_wtime() - *same) / (double)loops;
        bad |= buf[size - 1] != 1;
        loom_rt_tp_rkey_destroy(rk);
        if (bad)
            loom_abort(3, "dsm_bench fetch: wrong bytes from a raw get (%zu B)", size);
    }
    check(loom_barrier(), "barrier");
    if (memh)
        loom_rt_tp_mem_unmap(memh);
    free(buf);
}

static void bench_fetch(double scale)
{
    int r = loom_rank();
    if (loom_size() != 2)
        loom_abort(2, "dsm_bench fetch runs on exactly 2 ranks");
    static const size_t sizes[] = {4096, 65536, 1 << 20};
    for (int si = 0; si < 3; si++) {
        size_t size = sizes[si];
        /* 16 MiB (4 KiB units) or 64 MiB of units homed at rank 0 */
        long nu = scaled(size == 4096 ? 4096 : (long)((64 << 20) / size), scale, 8);
        long loops = scaled(size == 4096 ? 20000 : size == 65536 ? 5000 : 500, scale, 20);
        int passes = 3;
        loom_alloc_opts o = {.name = "fetch_small", .page_unit = size};

        /* acquire + load of the same unit, with only a 2-unit allocation
         * live (an acquire visits every live allocation) */
        char *s = loom_alloc(2 * size, &o);
        if (!s)
            loom_abort(1, "dsm_bench: loom_alloc failed");
        if (r == 0)
            *(volatile uint64_t *)s = pattern(0, size);
        check(loom_barrier(), "barrier");
        double t_acq = 0, t_af = 0;
        if (r == 1) {
            uint64_t bad = 0;
            for (long i = 0; i < loops / 10 + 1; i++) {
                check(loom_acquire(), "acquire");
                bad |= *(volatile const uint64_t *)s ^ pattern(0, size);
            }
            double t0 = loom_wtime();
            for (long i = 0; i < loops; i++) {
                check(loom_acquire(), "acquire");
                bad |= *(volatile const uint64_t *)s ^ pattern(0, size);
            }
            t_af = loom_wtime() - t0;
            t0 = loom_wtime();
            for (long i = 0; i < loops; i++)
                check(loom_acquire(), "acquire");
            t_acq = loom_wtime() - t0;
            if (bad)
                loom_abort(3, "dsm_bench fetch: wrong value read from unit 0 (%zu B units)", size);
        }
        check(loom_barrier(), "barrier");
        check(loom_free(s), "free");

        /* distinct units: 2*nu units, block distribution: [0, nu) at rank 0 */
        o.name = "fetch";
        char *a = loom_alloc(2 * (size_t)nu * size, &o);
        if (!a)
            loom_abort(1, "dsm_bench: loom_alloc failed");
        for (long u = (long)r * nu; u < (long)(r + 1) * nu; u++) /* own units */
            *(volatile uint64_t *)(a + (size_t)u * size) = pattern((size_t)u, size);
        double t_fetch = 0, t_local = 0;
        for (int p = 0; p <= passes; p++) { /* pass 0: warm-up (memfd pages) */
            check(loom_barrier(), "barrier"); /* ends with an acquire */
            if (r != 1)
                continue;
            uint64_t bad = 0;
            double t0 = loom_wtime();
            for (long u = 0; u < nu; u++) /* homed at rank 0 */
                bad |= *(volatile const uint64_t *)(a + (size_t)u * size) ^
                       pattern((size_t)u, size);
            double t1 = loom_wtime();
            for (long u = nu; u < 2 * nu; u++) /* homed here: the fault path alone */
                bad |= *(volatile const uint64_t *)(a + (size_t)u * size) ^
                       pattern((size_t)u, size);
            if (p) {
                t_fetch += t1 - t0;
                t_local += loom_wtime() - t1;
            }
            if (bad)
                loom_abort(3, "dsm_bench fetch: wrong value read (%zu B units)", size);
        }
        check(loom_barrier(), "barrier");
        check(loom_free(a), "free");
        double tp_d, tp_s, t_os = r == 1 ? os_faults(size, nu, passes) : 0;
        t_os = slowest(t_os);
        tp_get(size, nu, passes, loops, &tp_d, &tp_s);
        tp_d = slowest(tp_d);
        tp_s = slowest(tp_s);
        t_fetch = slowest(t_fetch);
        t_local = slowest(t_local);
        t_af = slowest(t_af);
        t_acq = slowest(t_acq);
        if (r == 0) {
            double us = t_fetch / ((double)nu * passes) * 1e6;
            printf("fetch_us %zu %.3f\n", size, us);
            printf("fetch_mibps %zu %.1f\n", size, (double)size / (1 << 20) / (us * 1e-6));
            printf("localfault_us %zu %.3f\n", size, t_local / ((double)nu * passes) * 1e6);
            printf("osfault_us %zu %.3f\n", size, t_os * 1e6);
            printf("acqfetch_us %zu %.3f\n", size, t_af / (double)loops * 1e6);
            printf("acquire_us %zu %.3f\n", size, t_acq / (double)loops * 1e6);
            printf("tpget_us %zu %.3f\n", size, tp_d * 1e6);
            printf("tpgetsame_us %zu %.3f\n", size, tp_s * 1e6);
            printf("fetch_iters %zu %ld %d %ld\n", size, nu, passes, loops);
            fflush(stdout);
        }
    }
}

/* ---- rows ----------------------------------------------------------- */

static void bench_rows(double scale)
{
    int r = loom_rank(), P = loom_size();
    static const size_t sizes[] = {64, 256, 4096};
    const size_t batch = 256;
    for (int si = 0; si < 3; si++) {
        size_t rs = sizes[si], ne = rs / 8;
        long K = scaled(rs == 4096 ? 4096 : 8192, scale, 256); /* rows homed per rank */
        size_t n = (size_t)K * (size_t)P;
        int passes = 3;
        /* the rows this rank works on: homed elsewhere (all, on one rank) */
        size_t nmine = P == 1 ? n : n - (size_t)K;
        size_t *rows = malloc(nmine * sizeof *rows);
        int64_t *buf = calloc(ne, sizeof *buf);
        if (!rows || !buf)
            loom_abort(1, "dsm_bench: out of memory");
        for (size_t i = 0, k = 0; i < n; i++)
            if (P == 1 || i / (size_t)K != (size_t)r)
                rows[k++] = i;

        loom_alloc_opts o = {.name = "rows", .unit = LOOM_UNIT_ROW, .row_size = rs,
                             .type = LOOM_INT64};
        char *g = loom_alloc(n * rs, &o);
        if (!g)
            loom_abort(1, "dsm_bench: loom_alloc failed");
        for (size_t i = (size_t)r * (size_t)K; i < (size_t)(r + 1) * (size_t)K; i++) {
            buf[0] = (int64_t)i;
            buf[ne - 1] = (int64_t)(i * 7);
            check(loom_row_put(g, i, buf), "row_put");
        }
        /* get, then prefetch + get */
        double t_get = 0, t_pf = 0;
        for (int mode = 0; mode < 2; mode++)
            for (int p = 0; p <= passes; p++) {
                check(loom_barrier(), "barrier"); /* ends with an acquire */
                int64_t bad = 0;
                double t0 = loom_wtime();
                for (size_t i = 0; i < nmine; i += batch) {
                    size_t m = nmine - i < batch ? nmine - i : batch;
                    if (mode)
                        check(loom_row_prefetch(g, rows + i, m), "row_prefetch");
                    for (size_t j = i; j < i + m; j++) {
                        const int64_t *x = loom_row_get(g, rows[j]);
                        if (!x)
                            loom_abort(1, "dsm_bench: loom_row_get failed");
                        bad |= (x[0] ^ (int64_t)rows[j]) | (x[ne - 1] ^ (int64_t)(rows[j] * 7));
                    }
                }
                double t = loom_wtime() - t0;
                if (bad)
                    loom_abort(3, "dsm_bench rows: wrong row value (%zu B rows, %s)", rs,
                               mode ? "prefetch" : "get");
                if (p)
                    *(mode ? &t_pf : &t_get) += t;
            }
        check(loom_barrier(), "barrier");
        check(loom_free(g), "free");

        /* add: every row of mine gets +1 in every element per pass */
        o.name = "rows_add";
        o.merge = LOOM_MERGE_ADD;
        char *ad = loom_alloc(n * rs, &o);
        if (!ad)
            loom_abort(1, "dsm_bench: loom_alloc failed");
        for (size_t e = 0; e < ne; e++)
            buf[e] = 1;
        double t_add = 0;
        for (int p = 0; p <= passes; p++) {
            check(loom_barrier(), "barrier");
            double t0 = loom_wtime();
            for (size_t i = 0; i < nmine; i++)
                check(loom_row_add(ad, rows[i], buf), "row_add");
            check(loom_barrier(), "barrier");
            if (p)
                t_add += loom_wtime() - t0;
        }
        int64_t want = (int64_t)(passes + 1) * (P == 1 ? 1 : P - 1);
        for (size_t i = 0; i < n; i++) {
            const int64_t *x = loom_row_get(ad, i);
            if (!x || x[0] != want || x[ne - 1] != want)
                loom_abort(3, "dsm_bench rows: row %zu of the add allocation holds %lld, "
                           "want %lld (%zu B rows)", i, x ? (long long)x[0] : -1LL,
                           (long long)want, rs);
        }
        check(loom_barrier(), "barrier");
        check(loom_free(ad), "free");

        double rows_all = total((double)nmine * passes);
        t_get = slowest(t_get);
        t_pf = slowest(t_pf);
        t_add = slowest(t_add);
        if (r == 0) {
            printf("rowget_rps %zu %.0f\n", rs, rows_all / t_get);
            printf("rowpf_rps %zu %.0f\n", rs, rows_all / t_pf);
            printf("rowadd_rps %zu %.0f\n", rs, rows_all / t_add);
            printf("rows_iters %zu %zu %d\n", rs, nmine, passes);
            fflush(stdout);
        }
        free(rows);
        free(buf);
    }
}

/* ---- stream --------------------------------------------------------- */

static __attribute__((noinline)) void triad(double *restrict a, const double *restrict b,
                                            const double *restrict c, double s, size_t n)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static __attribute__((noinline)) double sum(const double *restrict a, size_t n)
{
    double t = 0;
    #pragma omp parallel for simd schedule(static) reduction(+ : t)
    for (size_t i = 0; i < n; i++)
        t += a[i];
    return t;
}

/* Values in [1, 2) with full mantissas, so a diff finds most bytes changed. */
static double val(size_t i, uint64_t seed)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return 1.0 + (double)(x >> 11) / 9007199254740992.0;
}

static __attribute__((noinline)) void init(double *restrict a, double *restrict b,
                                           double *restrict c, size_t n, size_t first)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = val(first + i, 1);
        c[i] = val(first + i, 2);
    }
}

static void verify_triad(const double *a, size_t n, size_t first, const char *what)
{
    for (size_t i = 0; i < n; i += 4099)
        if (a[i] != val(first + i, 1) + 3.0 * val(first + i, 2))
            loom_abort(3, "dsm_bench stream: %s: a[%zu] wrong", what, first + i);
}

static void bench_stream(size_t mib, int reps)
{
    int r = loom_rank(), P = loom_size();
    size_t bytes = mib << 20, n = bytes / sizeof(double);
    double *m[3];
    for (int k = 0; k < 3; k++)
        if (!(m[k] = malloc(bytes)))
            loom_abort(1, "dsm_bench: out of memory");
    double *g[3];
    loom_alloc_opts o = {.name = "stream"};
    for (int k = 0; k < 3; k++)
        if (!(g[k] = loom_alloc(bytes * (size_t)P, &o)))
            loom_abort(1, "dsm_bench: loom_alloc failed");
    double *l[3] = {g[0] + (size_t)r * n, g[1] + (size_t)r * n, g[2] + (size_t)r * n};
    size_t first = (size_t)r * n;
    double *tt[2], *ts[2];
    for (int k = 0; k < 2; k++)
        if (!(tt[k] = calloc((size_t)reps, sizeof(double))) ||
            !(ts[k] = calloc((size_t)reps, sizeof(double))))
            loom_abort(1, "dsm_bench: out of memory");
    double tri = 3.0 * (double)bytes * P / (1 << 20), one = (double)bytes * P / (1 << 20);
    double **arr[2] = {l, m};
    const char *name[2] = {"loom", "malloc"};

    if (P == 1) {
        for (int k = 0; k < 2; k++) { /* first touch, untimed */
            init(arr[k][0], arr[k][1], arr[k][2], n, 0);
            triad(arr[k][0], arr[k][1], arr[k][2], 3.0, n);
        }
        double s[2] = {0, 0};
        for (int i = 0; i < reps; i++)
            for (int j = 0; j < 2; j++) {
                int k = (i + j) % 2; /* alternate which goes first */
                double t0 = omp_get_wtime();
                triad(arr[k][0], arr[k][1], arr[k][2], 3.0, n);
                tt[k][i] = omp_get_wtime() - t0;
                t0 = omp_get_wtime();
                s[k] = sum(arr[k][0], n);
                ts[k][i] = omp_get_wtime() - t0;
            }
        for (int k = 0; k < 2; k++)
            verify_triad(arr[k][0], n, 0, name[k]);
        if (fabs(s[0] - s[1]) > 1e-9 * fabs(s[1]))
            loom_abort(3, "dsm_bench stream: sums differ (%.17g vs %.17g)", s[0], s[1]);
        for (int k = 0; k < 2; k++) {
            printf("s1_triad_mibps %s %.1f\n", name[k], tri / median(tt[k], reps));
            printf("s1_sum_mibps %s %.1f\n", name[k], one / median(ts[k], reps));
        }
        printf("stream_iters %zu %d %d\n", mib, reps, omp_get_max_threads());
        fflush(stdout);
    } else {
        /* Every step between barriers, so that all ranks run it at once;
         * Loom and malloc'd arrays take turns within each step, and
         * alternate which goes first in the steady-state passes. */
        double init_t[2], first_t[2], sum1_t[2], s1[2], t0;
        check(loom_barrier(), "barrier");
        for (int k = 0; k < 2; k++) {
            check(loom_rt_coll_barrier(), "barrier"); /* no release/acquire */
            t0 = loom_wtime();
            init(arr[k][0], arr[k][1], arr[k][2], n, first);
            init_t[k] = slowest(loom_wtime() - t0);
        }
        t0 = loom_wtime();
        check(loom_barrier(), "barrier"); /* releases b, c and a of Loom's set */
        double t_bar = slowest(loom_wtime() - t0);
        for (int k = 0; k < 2; k++) {
            check(loom_rt_coll_barrier(), "barrier"); /* no release/acquire */
            t0 = loom_wtime();
            triad(arr[k][0], arr[k][1], arr[k][2], 3.0, n);
            first_t[k] = slowest(loom_wtime() - t0);
        }
        for (int i = 0; i < reps; i++)
            for (int j = 0; j < 2; j++) {
                int k = (i + j) % 2;
                check(loom_rt_coll_barrier(), "barrier");
                t0 = loom_wtime();
                triad(arr[k][0], arr[k][1], arr[k][2], 3.0, n);
                tt[k][i] = slowest(loom_wtime() - t0);
                check(loom_rt_coll_barrier(), "barrier");
                t0 = loom_wtime();
                volatile double v = sum(arr[k][0], n);
                (void)v;
                ts[k][i] = slowest(loom_wtime() - t0);
            }
        for (int k = 0; k < 2; k++)
            verify_triad(arr[k][0], n, first, name[k]);
        t0 = loom_wtime();
        check(loom_barrier(), "barrier"); /* releases Loom's a */
        double t_rel = slowest(loom_wtime() - t0);
        for (int k = 0; k < 2; k++) {
            check(loom_rt_coll_barrier(), "barrier");
            t0 = loom_wtime();
            s1[k] = sum(arr[k][0], n);
            sum1_t[k] = slowest(loom_wtime() - t0);
        }
        if (fabs(s1[0] - s1[1]) > 1e-9 * fabs(s1[1]))
            loom_abort(3, "dsm_bench stream: sums differ (%.17g vs %.17g)", s1[0], s1[1]);
        /* the other ranks' blocks, read through the DSM, are right too */
        if (r == 0)
            verify_triad(g[0] + (size_t)(P - 1) * n, n, (size_t)(P - 1) * n, "remote block");
        if (r == 0) {
            printf("s%d_initbar_ms loom %.2f\n", P, t_bar * 1e3);
            printf("s%d_relbar_ms loom %.2f\n", P, t_rel * 1e3);
            for (int k = 0; k < 2; k++) {
                printf("s%d_init_ms %s %.2f\n", P, name[k], init_t[k] * 1e3);
                printf("s%d_triad1_mibps %s %.1f\n", P, name[k], tri / first_t[k]);
                printf("s%d_triad_mibps %s %.1f\n", P, name[k], tri / median(tt[k], reps));
                printf("s%d_sum_mibps %s %.1f\n", P, name[k], one / median(ts[k], reps));
                printf("s%d_sum1_mibps %s %.1f\n", P, name[k], one / sum1_t[k]);
            }
            printf("stream_iters %zu %d %d\n", mib, reps, omp_get_max_threads());
            fflush(stdout);
        }
        check(loom_barrier(), "barrier");
    }
    for (int k = 0; k < 3; k++) {
        free(m[k]);
        check(loom_free(g[k]), "free");
    }
    for (int k = 0; k < 2; k++) {
        free(tt[k]);
        free(ts[k]);
    }
}

int main(int argc, char **argv)
{
    install_os_fault(); /* before loom_init: Loom's handler chains to it */
    if (loom_init(&argc, &argv))
        return 1;
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "fetch") && argc == 3 && atof(argv[2]) > 0)
        bench_fetch(atof(argv[2]));
    else if (!strcmp(mode, "rows") && argc == 3 && atof(argv[2]) > 0)
        bench_rows(atof(argv[2]));
    else if (!strcmp(mode, "stream") && argc == 4 && atoi(argv[2]) > 0 && atoi(argv[3]) > 0)
        bench_stream((size_t)atoi(argv[2]), atoi(argv[3]));
    else {
        if (loom_rank() == 0)
            fprintf(stderr, "usage: dsm_bench fetch SCALE | rows SCALE | stream MIB REPS\n");
        loom_finalize();
        return 2;
    }
    loom_finalize();
    return 0;
}
