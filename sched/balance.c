/* balance.c — histogram-balanced blocks: a range of rows cut into k
 * contiguous blocks of about equal weight.  The block rotation cuts its
 * arrays with it (rotation.c), the ordered schedule its grid (ordered.c).
 * A leaf of sched/: it calls nothing of the scheduler. */
#include "sched.h"

/* Contract: bounds[0] = lo, bounds[k] = hi, and bounds[b] (0 < b < k) the
 * first row of block b: the smallest r with the weight before it reaching
 * about b/k of the total (a row goes to the block holding more than half of
 * it).  w == NULL weighs every row 1 (equal cuts).  Pure; any thread. */
void loom_sched_balance(const uint32_t *w, size_t lo, size_t hi, int k, size_t *bounds)
{
    bounds[0] = lo;
    bounds[k] = hi;
    if (!w) {
        for (int b = 1; b < k; b++)
            bounds[b] = lo + (hi - lo) * (size_t)b / (size_t)k;
        return;
    }
    double total = 0;
    for (size_t r = lo; r < hi; r++)
        total += w[r];
    double cum = 0;
    size_t r = lo;
    for (int b = 1; b < k; b++) {
        double target = total * b / k;
        while (r < hi && cum + w[r] / 2.0 < target)
            cum += w[r++];
        bounds[b] = r;
    }
}
