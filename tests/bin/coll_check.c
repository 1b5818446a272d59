/* coll_check.c — multi-rank check that the collectives give exact results.
 * Run under loomrun with any number of ranks; exits non-zero and names the
 * first wrong value otherwise.  Prints "coll_check: ok P=<ranks>" on rank 0. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "rank %d: ", loom_rank());                    \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
            if (++fails > 10) exit(1);                                    \
        }                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int r = loom_rank(), P = loom_size();
    /* the local rank as the launcher gave it: loomrun, Slurm, Open MPI or
     * MPICH's Hydra (PMI) */
    const char *lr = getenv("LOOM_LOCAL_RANK");
    if (!lr)
        lr = getenv("SLURM_LOCALID");
    if (!lr)
        lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lr)
        lr = getenv("MPI_LOCALRANKID");
    CHECK(loom_initialized() == 1, "loom_initialized() is not 1 after loom_init");
    CHECK(loom_local_rank() == (lr ? atoi(lr) : 0), "loom_local_rank() %d, LOOM_LOCAL_RANK %s",
          loom_local_rank(), lr ? lr : "(unset)");
    /* allreduce over every type and op, several sizes (small and large
     * paths), and every root for bcast. */
    size_t sizes[] = {1, 3, 17, 1000, 40000, 300001};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        int64_t *a = malloc(n * 8), *b = malloc(n * 8);
        int32_t *c = malloc(n * 4);
        double *d = malloc(n * 8);
        float *f = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            a[i] = (int64_t)(r + 1) * (int64_t)(i + 1) + ((int64_t)1 << 40);
            c[i] = (int32_t)((r * 7 + (int)i) % 1000) - 500;
            d[i] = (double)(r + 1) * 0.5 + (double)i;
            f[i] = (float)((r + 1) * 0.25);
        }
        loom_allreduce(a, b, n, LOOM_INT64, LOOM_SUM);
        int64_t tri = (int64_t)P * (P + 1) / 2;
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == tri * (int64_t)(i + 1) + (int64_t)P * ((int64_t)1 << 40),
                  "int64 sum n=%zu i=%zu got %lld", n, i, (long long)b[i]);
        loom_allreduce(LOOM_IN_PLACE, c, n, LOOM_INT32, LOOM_MIN);
        for (size_t i = 0; i < n; i++) {
            int32_t want = 1 << 30;
            for (int q = 0; q < P; q++) {
                int32_t v = (int32_t)((q * 7 + (int)i) % 1000) - 500;
                if (v < want) want = v;
            }
            CHECK(c[i] == want, "int32 min n=%zu i=%zu got %d want %d", n, i, c[i], want);
        }
        loom_allreduce(d, d, n, LOOM_DOUBLE, LOOM_MAX);
        for (size_t i = 0; i < n; i++)
            CHECK(d[i] == (double)P * 0.5 + (double)i, "double max n=%zu i=%zu", n, i);
        loom_allreduce(LOOM_IN_PLACE, f, n, LOOM_FLOAT, LOOM_SUM);
        /* exact in binary: multiples of 0.25 with small totals */
        for (size_t i = 0; i < n; i++)
            CHECK(f[i] == (float)(0.25 * tri), "float sum n=%zu i=%zu got %g", n, i, f[i]);
        /* the same float result bitwise on every rank: rank 0's bytes win a
         * bcast and must equal ours */
        double x = 0.1 * (r + 1), y;
        loom_allreduce(&x, &y, 1, LOOM_DOUBLE, LOOM_SUM);
        double y0 = y;
        loom_bcast(&y0, sizeof y0, 0);
        CHECK(memcmp(&y0, &y, sizeof y) == 0, "allreduce result differs between ranks");
        for (int root = 0; root < P; root++) {
            size_t bytes = n * 3 + 1;
            unsigned char *buf = malloc(bytes);
            for (size_t i = 0; i < bytes; i++)
                buf[i] = r == root ? (unsigned char)(i * 31 + (size_t)root) : 0xee;
            loom_bcast(buf, bytes, root);
            for (size_t i = 0; i < bytes; i++)
                CHECK(buf[i] == (unsigned char)(i * 31 + (size_t)root),
                      "bcast root=%d bytes=%zu i=%zu", root, bytes, i);
            free(buf);
        }
        free(a); free(b); free(c); free(d); free(f);
    }
    CHECK(loom_bcast(NULL, 0, P) == LOOM_ERR_ARG, "bcast to a bad root accepted");
    /* the rank's traffic (loom_stats' wire_*): with a power of two of
     * ranks, a small allreduce of n doubles is log2 P exchanges of all n,
     * and on 2 ranks a large one (reduce-scatter, allgather) moves n too,
     * each way.  A message counts when its receive takes it, so the
     * fences (allreduces, not loom_barrier: its write notices count when
     * they arrive) keep the others' next traffic out of the window. */
    size_t counts[] = {17, 300001};
    for (int i = 0; P > 1 && !(P & (P - 1)) && i < (P == 2 ? 2 : 1); i++) {
        size_t n = counts[i];
        double *v = calloc(n, sizeof *v);
        loom_stats s0, s1;
        int fence = 0;
        loom_allreduce(LOOM_IN_PLACE, &fence, 1, LOOM_INT32, LOOM_SUM);
        loom_stats_get(NULL, &s0);
        loom_allreduce(LOOM_IN_PLACE, v, n, LOOM_DOUBLE, LOOM_SUM);
        loom_stats_get(NULL, &s1);
        loom_allreduce(LOOM_IN_PLACE, &fence, 1, LOOM_INT32, LOOM_SUM);
        uint64_t want = (uint64_t)n * sizeof *v * (uint64_t)(i ? 1 : __builtin_ctz((unsigned)P));
        CHECK(s1.wire_sent - s0.wire_sent == want && s1.wire_received - s0.wire_received == want,
              "allreduce of %zu doubles: sent %llu B, received %llu B, want %llu each", n,
              (unsigned long long)(s1.wire_sent - s0.wire_sent),
              (unsigned long long)(s1.wire_received - s0.wire_received), (unsigned long long)want);
        free(v);
    }
    loom_barrier();
    if (r == 0 && !fails)
        printf("coll_check: ok P=%d\n", P);
    loom_finalize();
    CHECK(loom_initialized() == 0, "loom_initialized() is not 0 after loom_finalize");
    return fails ? 1 : 0;
}
