/* fuzz_ratings.c — the ratings loader (data/ratings.c): MovieLens-style
 * triples and MatrixMarket coordinate files.  The first input byte picks
 * the user filter (0: none, else a block [lo, hi) of small ids), the rest
 * is the file.  Invariants of an accepted file: every kept rating has
 * 0 <= user < nusers, 0 <= item < nitems, its user inside the filter and
 * a finite value; kept <= in the file; sum is their sum; a refusal leaves
 * *out empty with a message. */
#include "fuzz.h"
#include "ratings.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!n)
        return 0;
    loom_user_range keep = {d[0] & 7, (d[0] & 7) + (d[0] >> 3)};
    loom_ratings r;
    char err[512];
    int rc = loom_ratings_load(fuzz_file(0, d + 1, n - 1), d[0] ? &keep : NULL, &r, err,
                               sizeof err);
    if (rc) {
        FUZZ_CHECK(!r.v && !r.n && err[0], "refused (%d) but not empty", rc);
        return 0;
    }
    FUZZ_CHECK(r.n >= 0 && r.n <= r.nfile, "kept %lld of %lld", (long long)r.n,
               (long long)r.nfile);
    double sum = 0;
    for (int64_t k = 0; k < r.n; k++) {
        const loom_rating *x = &r.v[k];
        FUZZ_CHECK(x->u >= 0 && x->u < r.nusers && x->i >= 0 && x->i < r.nitems,
                   "rating %lld (%d, %d) outside %d x %d", (long long)k, x->u, x->i, r.nusers,
                   r.nitems);
        FUZZ_CHECK(!d[0] || (x->u >= keep.lo && x->u < keep.hi), "user %d outside [%d, %d)",
                   x->u, keep.lo, keep.hi);
        FUZZ_CHECK(isfinite(x->r), "rating %lld is %g", (long long)k, x->r);
        sum += x->r;
    }
    FUZZ_CHECK(sum == r.sum, "sum %g, recorded %g", sum, r.sum);
    loom_ratings_free(&r);
    return 0;
}
