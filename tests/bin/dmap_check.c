/* dmap_check.c — the distributed map against exact answers.
 * Usage: dmap_check check KEYS      (the checks below; prints "dmap_check: ok")
 *        dmap_check save KEYS       (the adds and puts, then loom_checkpoint)
 *        dmap_check load KEYS       (under LOOM_RESTART: the checks, no adds)
 *        dmap_check overflow N      (rank 0 inserts N keys into a map made
 *                                    for 10: the job must stop, naming it)
 * check: KEYS sparse 64-bit keys (SplitMix64 of 0..KEYS-1, so unknown in
 * advance and spread over the whole key space).  Every rank and thread
 * adds (1, j) to key j for j < KEYS/2 (shared keys) and rank r adds
 * (r + 1, 0) to key j for j >= KEYS/2, j % P == r (keys one rank writes).
 * After a barrier every rank prefetches and reads every key: the shared
 * ones must hold exactly (P * T, P * T * j), the others (r + 1, 0); a key
 * never inserted is absent and reads as zeros; the shards together list
 * each key exactly once; loom_dmap_rows gives each key one row of
 * loom_dmap_values, the same on every rank, holding what get reads, and
 * none to an absent key.  A second map, overwrite merge, checks put. */
#include <loom.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "../rng.h"
#include <string.h>

static uint64_t key_of(long j) { return mix((uint64_t)j); }

#define FAIL(...) do { fprintf(stderr, "dmap_check: rank %d: ", loom_rank()); \
                       fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

/* Key j's first value: every rank and thread added 1 to the shared keys
 * (j < half); rank (j - half) mod P added its number + 1 to its own, and
 * to its first own key put 100 first and added it again. */
static double want_sum(long j, long half, int P, int T)
{
    if (j < half)
        return (double)P * T;
    return (double)((j - half) % P + 1) + (j - half < P ? 100 : 0);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 3) {
        fprintf(stderr, "usage: dmap_check check|overflow N\n");
        return 2;
    }
    long n = atol(argv[2]);
    int P = loom_size(), r = loom_rank(), T = omp_get_max_threads();
    if (!strcmp(argv[1], "overflow")) {
        loom_dmap *m = loom_dmap_create(10, sizeof(double), &(loom_alloc_opts){.name = "tiny"});
        double one = 1;
        if (r == 0)
            for (long j = 0; j < n; j++)
                loom_dmap_put(m, key_of(j), &one);
        loom_barrier();
        printf("dmap_check: %ld keys fit\n", n);
        loom_dmap_free(m);
        return loom_finalize();
    }
    loom_dmap *m = loom_dmap_create((size_t)n, 2 * sizeof(double),
                                    &(loom_alloc_opts){.name = "sums", .merge = LOOM_MERGE_ADD,
                                                       .type = LOOM_DOUBLE});
    loom_dmap *w = loom_dmap_create((size_t)P, sizeof(long), &(loom_alloc_opts){.name = "owners"});
    if (!m || !w)
        FAIL("loom_dmap_create failed");
    long half = n / 2;
    int load = !strcmp(argv[1], "load");
    if (load != loom_restarted())
        FAIL("load must run restarted, and only load");
    if (load)
        goto check;
#pragma omp parallel /* every thread adds to every shared key */
    for (long j = 0; j < half; j++)
        loom_dmap_add(m, key_of((j * 7 + omp_get_thread_num() * 1001) % half), /* orders differ */
                      (double[]){1, (double)((j * 7 + omp_get_thread_num() * 1001) % half)});
#pragma omp parallel for schedule(dynamic, 64)
    for (long j = half + r; j < n; j += P)
        loom_dmap_add(m, key_of(j), (double[]){r + 1, 0});
    if (half + r < n) { /* a put then an add of one key in one epoch: 100 + (r + 1), once */
        loom_dmap_put(m, key_of(half + r), (double[]){100, 0});
        loom_dmap_add(m, key_of(half + r), (double[]){r + 1, 0});
    }
    loom_dmap_put(w, 1000 + (uint64_t)r, &(long){7L * r});
    loom_barrier();
    if (!strcmp(argv[1], "save")) {
        int rc = loom_checkpoint(NULL);
        if (r == 0)
            printf("dmap_check: saved (%d)\n", rc);
        return rc ? 1 : loom_finalize();
    }
check:;
    uint64_t *all = malloc((size_t)n * sizeof *all);
    for (long j = 0; j < n; j++)
        all[j] = key_of(j);
    if (loom_dmap_prefetch(m, all, (size_t)n))
        FAIL("prefetch failed");
    long bad = 0;
#pragma omp parallel for reduction(+ : bad)
    for (long j = 0; j < n; j++) {
        double v[2];
        int found;
        loom_dmap_get(m, all[j], v, &found);
        double want0 = want_sum(j, half, P, T);
        double want1 = j < half ? (double)P * T * (double)j : 0;
        if (!found || v[0] != want0 || v[1] != want1)
            bad++;
    }
    if (bad)
        FAIL("%ld of %ld keys hold the wrong sums", bad, n);
    /* loom_dmap_rows: every key's row, the same on every rank, distinct,
     * holding what get reads; an absent key has none (insert = 0). */
    size_t *rows = malloc(((size_t)n + 1) * sizeof *rows), nrows;
    all = realloc(all, ((size_t)n + 1) * sizeof *all);
    all[n] = key_of(n + 12345);
    if (!rows || !all || loom_dmap_rows(m, all, (size_t)n + 1, 0, rows))
        FAIL("loom_dmap_rows failed");
    double *vals = loom_dmap_values(m, &nrows);
    int64_t *lo = malloc((size_t)n * sizeof *lo), *hi = malloc((size_t)n * sizeof *hi);
    char *seen = calloc(nrows, 1);
    for (long j = 0; j < n; j++) {
        const double *p = rows[j] < nrows ? loom_row_get(vals, rows[j]) : NULL;
        double want0 = want_sum(j, half, P, T);
        if (!p || p[0] != want0 || seen[rows[j]]++)
            FAIL("loom_dmap_rows: key %ld has row %zu of %zu (seen before: %d)", j, rows[j],
                 nrows, p ? seen[rows[j]] - 1 : -1);
        lo[j] = hi[j] = (int64_t)rows[j];
    }
    if (rows[n] != LOOM_DMAP_ABSENT)
        FAIL("loom_dmap_rows: a key never inserted has row %zu", rows[n]);
    loom_allreduce(LOOM_IN_PLACE, lo, (size_t)n, LOOM_INT64, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, hi, (size_t)n, LOOM_INT64, LOOM_MAX);
    for (long j = 0; j < n; j++)
        if (lo[j] != hi[j])
            FAIL("loom_dmap_rows: ranks disagree on the row of key %ld", j);
    free(rows), free(lo), free(hi), free(seen);
    double v[2] = {9, 9};
    int found = 1;
    loom_dmap_get(m, key_of(n + 12345), v, &found);
    if (found || v[0] != 0 || v[1] != 0)
        FAIL("a key never inserted reads as present or non-zero");
    for (int q = 0; q < P; q++) {
        long o = -1;
        loom_dmap_get(w, 1000 + (uint64_t)q, &o, &found);
        if (!found || o != 7L * q)
            FAIL("put: key %d holds %ld, not %ld", 1000 + q, o, 7L * q);
    }
    /* The shards list every key exactly once, and only keys of the map. */
    size_t mine = loom_dmap_shard(m, NULL, 0);
    uint64_t *keys = malloc((mine ? mine : 1) * sizeof *keys);
    if (loom_dmap_shard(m, keys, mine) != mine)
        FAIL("loom_dmap_shard changed its count");
    long total = (long)mine, strays = 0;
    for (size_t i = 0; i < mine; i++) {
        int f;
        loom_dmap_get(m, keys[i], v, &f);
        strays += !f;
    }
    loom_allreduce(LOOM_IN_PLACE, &total, 1, LOOM_INT64, LOOM_SUM);
    if (total != n || strays)
        FAIL("the shards list %ld keys (%ld not in the map), not %ld", total, strays, n);
    loom_barrier();
    loom_dmap_free(w);
    loom_dmap_free(m);
    free(all);
    free(keys);
    if (r == 0)
        printf("dmap_check: ok P=%d T=%d keys=%ld\n", P, T, n);
    return loom_finalize();
}
