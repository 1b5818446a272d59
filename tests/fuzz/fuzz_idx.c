/* fuzz_idx.c — the IDX reader (data/idx.c), plain input (zlib reads
 * uncompressed files through the same calls).  Invariants of an accepted
 * file: 1..4 dimensions, none zero, n their product, exactly n data bytes
 * (the harness reads them all, so ASan sees any short buffer); a refusal
 * leaves *out empty with a message. */
#include "fuzz.h"
#include "idx.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    loom_idx x;
    char err[512] = "";
    int rc = loom_idx_load(fuzz_file(0, d, n), &x, err, sizeof err);
    if (rc) {
        FUZZ_CHECK(!x.data && !x.n && err[0], "refused (%d) but not empty", rc);
        return 0;
    }
    FUZZ_CHECK(x.rank >= 1 && x.rank <= 4, "%d dimensions", x.rank);
    int64_t prod = 1;
    for (int k = 0; k < x.rank; k++) {
        FUZZ_CHECK(x.dim[k] > 0, "dimension %d is %lld", k, (long long)x.dim[k]);
        prod *= x.dim[k];
    }
    FUZZ_CHECK(prod == x.n && (size_t)x.n + 4 + 4 * (size_t)x.rank == n,
               "n %lld, product %lld, file %zu bytes", (long long)x.n, (long long)prod, n);
    unsigned sum = 0;
    for (int64_t i = 0; i < x.n; i++)
        sum += x.data[i];
    (void)sum;
    loom_idx_free(&x);
    return 0;
}
