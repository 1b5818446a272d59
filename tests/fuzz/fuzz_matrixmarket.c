/* fuzz_matrixmarket.c — the MatrixMarket reader (data/matrixmarket.c):
 * coordinate, array, vector and pattern files.  The first input byte
 * picks the row share (0: all rows), the rest is the file.  Invariants of
 * an accepted file: every kept entry lies inside the declared size with a
 * finite value, kept <= stored; a refusal leaves *out empty with a
 * message. */
#include "fuzz.h"
#include "matrixmarket.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!n)
        return 0;
    int parts = 1 + (d[0] & 7);
    loom_rows share = {(d[0] >> 3) % parts, parts};
    loom_mm m;
    char err[512] = "";
    int rc = loom_mm_load(fuzz_file(0, d + 1, n - 1), d[0] ? &share : NULL, &m, err, sizeof err);
    if (rc) {
        FUZZ_CHECK(!m.e && !m.n && err[0], "refused (%d) but not empty", rc);
        return 0;
    }
    FUZZ_CHECK(m.n >= 0 && m.n <= m.nfile, "kept %lld of %lld", (long long)m.n,
               (long long)m.nfile);
    for (int64_t k = 0; k < m.n; k++) {
        const loom_mm_entry *e = &m.e[k];
        FUZZ_CHECK(e->row >= 0 && e->row < m.rows && e->col >= 0 && e->col < m.cols,
                   "entry (%lld, %lld) outside %lld x %lld", (long long)e->row,
                   (long long)e->col, (long long)m.rows, (long long)m.cols);
        FUZZ_CHECK(isfinite(e->v), "entry %lld is %g", (long long)k, e->v);
    }
    loom_mm_free(&m);
    return 0;
}
