/* policy_ssp.c — stale synchronous parallel (Bosen's SSP consistency).
 *
 * Guarantee, for a rank in clock c with staleness s: a read sees every
 * write from clocks < c - s of every rank, and all of the rank's own
 * writes.  Deltas go home eagerly at every loom_clock (and at every
 * release); a read blocks only when its copy is older than that
 * (clock.c).  The mechanics are bsp's (policy_bsp.c), with s > 0: bsp is
 * exactly ssp with s = 0.  s comes from the allocation's staleness option
 * or LOOM_STALENESS. */
#include "dsm.h"

const loom_policy loom_dsm_policy_ssp = {
    .name = "ssp",
    .notices = 1,
    .uses_staleness = 1,
    .homes_in_place = 1,
    .read_miss = loom_dsm_rc_read_miss,
    .first_write = loom_dsm_rc_first_write,
    .row_miss = loom_dsm_rc_row_miss,
    .release = loom_dsm_rc_release,
    .acquire = loom_dsm_rc_acquire,
    .clock = loom_dsm_rc_clock,
};
