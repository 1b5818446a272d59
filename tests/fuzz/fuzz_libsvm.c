/* fuzz_libsvm.c — the LIBSVM reader (data/libsvm.c).  The first input
 * byte picks the row share (0: all rows, else part / parts of at most 8),
 * the rest is the file.  Invariants of an accepted file: row pointers
 * increase from 0 to nnz, indices lie in [0, cols) and increase within a
 * row, labels and values are finite, kept rows <= rows in the file; a
 * refusal leaves *out empty with a message. */
#include "fuzz.h"
#include "libsvm.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!n)
        return 0;
    int parts = 1 + (d[0] & 7);
    loom_rows share = {(d[0] >> 3) % parts, parts};
    loom_libsvm x;
    char err[512] = "";
    int rc = loom_libsvm_load(fuzz_file(0, d + 1, n - 1), d[0] ? &share : NULL, &x, err,
                              sizeof err);
    if (rc) {
        FUZZ_CHECK(!x.n && !x.ptr && err[0], "refused (%d) but not empty", rc);
        return 0;
    }
    FUZZ_CHECK(x.n >= 0 && x.n <= x.nfile, "kept %lld of %lld rows", (long long)x.n,
               (long long)x.nfile);
    FUZZ_CHECK(x.ptr[0] == 0 && x.ptr[x.n] == x.nnz, "row pointers 0..%lld, nnz %lld",
               (long long)x.ptr[x.n], (long long)x.nnz);
    for (int64_t r = 0; r < x.n; r++) {
        FUZZ_CHECK(isfinite(x.y[r]), "label %lld is %g", (long long)r, x.y[r]);
        FUZZ_CHECK(x.ptr[r] <= x.ptr[r + 1], "row %lld ends before it starts", (long long)r);
        for (int64_t k = x.ptr[r]; k < x.ptr[r + 1]; k++) {
            FUZZ_CHECK(x.idx[k] >= 0 && x.idx[k] < x.cols, "index %lld outside %lld columns",
                       (long long)x.idx[k], (long long)x.cols);
            FUZZ_CHECK(k == x.ptr[r] || x.idx[k] > x.idx[k - 1], "indices do not increase");
            FUZZ_CHECK(isfinite(x.val[k]), "value %g", x.val[k]);
        }
    }
    loom_libsvm_free(&x);
    return 0;
}
