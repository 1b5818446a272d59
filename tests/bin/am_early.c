/* am_early.c — a DSM message that reaches a rank before it registered a
 * handler for its id must stop the job with a message, not vanish (UCX
 * drops an active message whose id has no handler, and a rank waiting for
 * it would hang).  Rank 0 sends rank 1 a map request (AM id 14, which a
 * rank registers only with its first loom_dmap), then both wait at the
 * barrier.  Prints "am_early: delivered nowhere" on rank 0 if the job
 * survives, which is the bug.  Run on 2 ranks. */
#include "internal.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (loom_rank() == 0) {
        char hdr[8] = {0};
        loom_rt_tp_am_send(1, 14, hdr, sizeof hdr, NULL, 0);
    }
    loom_barrier();
    loom_barrier();
    if (loom_rank() == 0)
        printf("am_early: delivered nowhere\n");
    return loom_finalize();
}
