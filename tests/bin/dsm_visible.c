/* dsm_visible.c — writes released by a barrier (or an unlock) are seen by
 * every rank after it; an injected same-byte conflict is reported.
 * Usage: dsm_visible [conflict].  Prints "dsm_visible: ok" on rank 0. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "rank %d: ", loom_rank()); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); fails++; } } while (0)

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int r = loom_rank(), P = loom_size();
    if (argc > 1 && !strcmp(argv[1], "conflict")) {
        /* ranks 0 and 1 overwrite the same byte in one epoch */
        char *c = loom_alloc(4096, &(loom_alloc_opts){.name = "conflicted"});
        if (r < 2)
            c[100] = (char)(r + 1);
        loom_barrier();
        printf("rank %d: no conflict reported\n", r);
        loom_finalize();
        return 0;
    }
    /* pages: 3 units of 64 KiB; rank q writes q+1 into slot q of every unit */
    size_t unit = 65536, n = 3 * unit / sizeof(long);
    long *a = loom_alloc(n * sizeof(long), &(loom_alloc_opts){.name = "pages", .dist = LOOM_DIST_CYCLIC});
    CHECK(a != NULL, "loom_alloc failed");
    for (int round = 1; round <= 3; round++) {
        for (size_t u = 0; u < 3; u++)
            a[u * unit / sizeof(long) + (size_t)r] = round * 100 + r;
        loom_barrier();
        for (size_t u = 0; u < 3; u++)
            for (int q = 0; q < P; q++)
                CHECK(a[u * unit / sizeof(long) + (size_t)q] == round * 100 + q,
                      "round %d unit %zu slot %d: %ld", round, u, q,
                      a[u * unit / sizeof(long) + (size_t)q]);
        loom_barrier();
    }
    /* rows: rank q adds to row q, puts it (the put supersedes the add) and
     * adds 1 to it; everyone adds 1 to row P */
    int64_t *rows = loom_alloc((size_t)(P + 1) * 4 * 8,
        &(loom_alloc_opts){.name = "rows", .unit = LOOM_UNIT_ROW, .row_size = 32,
                           .dist = LOOM_DIST_HASH, .merge = LOOM_MERGE_ADD, .type = LOOM_INT64});
    int64_t mine[4] = {r, r * 2, r * 3, -r}, one[4] = {1, 1, 1, 1}, junk[4] = {7, 7, 7, 7};
    loom_row_add(rows, (size_t)r, junk); /* superseded by the put: never reaches the home */
    loom_row_put(rows, (size_t)r, mine);
    loom_row_add(rows, (size_t)r, one); /* after the put: added to it */
    loom_row_add(rows, (size_t)P, one);
    const int64_t *own = loom_row_get(rows, (size_t)P);
    CHECK(own && own[0] >= 1, "own add not visible before the barrier");
    loom_barrier();
    for (int q = 0; q < P; q++) {
        const int64_t *x = loom_row_get(rows, (size_t)q);
        CHECK(x && x[0] == q + 1 && x[1] == 2 * q + 1 && x[3] == 1 - q, "row %d after barrier: %lld %lld %lld %lld", q, x ? (long long)x[0] : 0LL, x ? (long long)x[1] : 0LL, x ? (long long)x[2] : 0LL, x ? (long long)x[3] : 0LL);
    }
    const int64_t *sum = loom_row_get(rows, (size_t)P);
    CHECK(sum && sum[0] == P && sum[3] == P, "row %d sums %lld, want %d", P,
          sum ? (long long)sum[0] : -1LL, P);
    /* the next epoch's add to row q starts from nothing: the add the put
     * superseded is gone for good (the first barrier: every rank has
     * checked the rows before any adds again) */
    loom_barrier();
    loom_row_add(rows, (size_t)r, one);
    loom_barrier();
    for (int q = 0; q < P; q++) {
        const int64_t *x = loom_row_get(rows, (size_t)q);
        CHECK(x && x[0] == q + 2 && x[2] == 3 * q + 2, "row %d in the next epoch: %lld %lld", q,
              x ? (long long)x[0] : 0LL, x ? (long long)x[2] : 0LL);
    }
    /* a prefetch keeps own adds: rank q adds 2^q to row P of a fresh
     * allocation before it ever read it (no copy yet: the add waits in the
     * twin), then prefetches it; the row must show its own bit before any
     * release (others' bits may show: ranks ahead already released in the
     * barrier), all P bits after the barrier */
    int64_t *late = loom_alloc((size_t)(P + 1) * 4 * 8,
        &(loom_alloc_opts){.name = "late", .unit = LOOM_UNIT_ROW, .row_size = 32,
                           .merge = LOOM_MERGE_ADD, .type = LOOM_INT64});
    int64_t bit[4] = {(int64_t)1 << r, 0, 0, (int64_t)1 << r};
    size_t last = (size_t)P;
    loom_row_add(late, last, bit);
    CHECK(loom_row_prefetch(late, &last, 1) == LOOM_OK, "loom_row_prefetch failed");
    const int64_t *pre = loom_row_get(late, last);
    CHECK(pre && (pre[0] >> r & 1) && pre[3] == pre[0] && pre[0] < (int64_t)1 << P,
          "own add after a prefetch: row %d holds %lld, without bit %d", P,
          pre ? (long long)pre[0] : -1LL, r);
    loom_barrier();
    pre = loom_row_get(late, last);
    CHECK(pre && pre[0] == ((int64_t)1 << P) - 1, "row %d of 'late' sums %lld, want %lld", P,
          pre ? (long long)pre[0] : -1LL, (long long)(((int64_t)1 << P) - 1));
    loom_free(late);
    /* an acquire keeps unreleased writes: rank q puts row q and adds to
     * row P, takes a lock (its acquire drops clean copies), and must read
     * both back; after the unlock and a barrier every rank sees them all */
    int64_t put2[4] = {100 + r, 0, 0, 1};
    loom_row_put(rows, (size_t)r, put2);
    loom_row_add(rows, (size_t)P, one);
    loom_lock(3);
    const int64_t *back = loom_row_get(rows, (size_t)r);
    CHECK(back && back[0] == 100 + r && back[3] == 1, "own put after an acquire: %lld",
          back ? (long long)back[0] : -1LL);
    back = loom_row_get(rows, (size_t)P);
    CHECK(back && back[0] >= P + 1, "own add after an acquire: row %d holds %lld", P,
          back ? (long long)back[0] : -1LL);
    loom_unlock(3);
    loom_barrier();
    for (int q = 0; q < P; q++) {
        back = loom_row_get(rows, (size_t)q);
        CHECK(back && back[0] == 100 + q, "row %d after the lock: %lld", q,
              back ? (long long)back[0] : -1LL);
    }
    back = loom_row_get(rows, (size_t)P);
    CHECK(back && back[0] == 2 * P, "row %d after the lock sums %lld, want %d", P,
          back ? (long long)back[0] : -1LL, 2 * P);
    /* locks: every rank increments a shared page counter 50 times */
    long *counter = loom_alloc(sizeof(long), &(loom_alloc_opts){.name = "counter"});
    for (int i = 0; i < 50; i++) {
        loom_lock(7);
        (*counter)++;
        loom_unlock(7);
    }
    loom_barrier();
    CHECK(*counter == 50L * P, "counter %ld, want %ld", *counter, 50L * P);
    loom_free(counter);
    loom_free(rows);
    loom_free(a);
    if (r == 0 && !fails)
        printf("dsm_visible: ok P=%d\n", P);
    loom_finalize();
    return fails != 0;
}
