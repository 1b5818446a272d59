/* policy_writethrough.c — write-through: a rank keeps no copy past its
 * own release.  The example of docs/dsm.md, "Adding a policy": one file
 * and one line in policy.c's registry.
 *
 * Guarantee: bsp's (after an acquire a rank reads every write released
 * before it by any rank; always its own writes), and more: after its own
 * release (every loom_barrier, loom_unlock and loom_clock starts with one)
 * a rank holds no copy at all, so every read after it comes from the home,
 * which by then has the rank's writes applied.  Copies live only between
 * a read and the rank's next release.
 * Traffic: bsp's diffs, plus a fetch for every unit read again after a
 * release (bsp keeps clean copies across its clocks and releases).
 * The hooks are bsp's (policy_bsp.c), with one change: release drops
 * every clean copy once the diffs are in the flush. */
#include "dsm.h"

#include <stdint.h>

/* Contract (release): what loom_dsm_rc_release does (the dirty units' diffs
 * into the flush; page units clean), then every clean copy is invalid.
 * The flush copied the records, so dropping the units loses nothing. */
static void release(loom_dsm_alloc *a)
{
    loom_dsm_rc_release(a);
    loom_dsm_rc_invalidate(a, UINT64_MAX);
}

const loom_policy loom_dsm_policy_writethrough = {
    .name = "writethrough",
    .read_miss = loom_dsm_rc_read_miss,
    .first_write = loom_dsm_rc_first_write,
    .row_miss = loom_dsm_rc_row_miss,
    .release = release,
    .acquire = loom_dsm_rc_acquire,
    .clock = loom_dsm_rc_clock,
};
