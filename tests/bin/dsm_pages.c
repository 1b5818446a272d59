/* dsm_pages.c — page-path equivalence: a seeded random read/write program
 * over a page-unit array gives byte-identical results on any number of
 * ranks and threads (one rank is plain memory: the serial run).
 * Usage: dsm_pages OUTFILE [MiB=64] [EPOCHS=3]
 * The array holds two halves; epoch e reads half e%2 and writes the other:
 *   new[i] = 3 * old[i] + old[j(i,e)] + e,   j a hash of (i, e)
 * Position i of epoch e is written by rank hash(i, e) % P, by whichever of
 * its OpenMP threads gets it; barriers separate epochs.  Rank 0 then writes
 * the whole array to OUTFILE for cmp(1). */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include "../rng.h"


int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 2) {
        fprintf(stderr, "usage: dsm_pages OUTFILE [MiB] [EPOCHS]\n");
        return 2;
    }
    size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 64;
    int epochs = argc > 3 ? atoi(argv[3]) : 3;
    size_t n = mib * (1u << 20) / 16; /* elements per half */
    int P = loom_size(), r = loom_rank();
    uint64_t *a = loom_alloc(2 * n * sizeof *a, &(loom_alloc_opts){.name = "pages"});
    if (!a)
        return 1;
    /* epoch -1: each rank fills its block of half 0 */
    size_t lo = n * (size_t)r / (size_t)P, hi = n * (size_t)(r + 1) / (size_t)P;
    #pragma omp parallel for
    for (size_t i = lo; i < hi; i++)
        a[i] = mix(i);
    loom_barrier();
    for (int e = 0; e < epochs; e++) {
        const uint64_t *src = a + (size_t)(e % 2) * n;
        uint64_t *dst = a + (size_t)((e + 1) % 2) * n;
        #pragma omp parallel for schedule(dynamic, 4096)
        for (size_t i = 0; i < n; i++) {
            uint64_t h = mix(i * 31 + (uint64_t)e);
            if ((int)(h % (uint64_t)P) != r)
                continue;
            dst[i] = 3 * src[i] + src[(h >> 20) % n] + (uint64_t)e;
        }
        loom_barrier();
    }
    if (r == 0) {
        loom_touch(a, 2 * n * sizeof *a, 0); /* fwrite's write(2) does not fault */
        FILE *f = fopen(argv[1], "wb");
        if (!f || fwrite(a, sizeof *a, 2 * n, f) != 2 * n || fclose(f)) {
            perror(argv[1]);
            return 1;
        }
        printf("dsm_pages: wrote %zu MiB after %d epochs on %d ranks\n", mib, epochs, P);
    }
    loom_free(a);
    return loom_finalize();
}
