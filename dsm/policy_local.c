/* policy_local.c — one rank: an allocation is plain memory.
 * Nothing is ever invalid, dirty or remote, so every hook is empty; the
 * fault path never runs (the memory is mapped read/write) and the row
 * path returns pointers into the allocation itself. */
#include "dsm.h"

static void nothing_unit(loom_dsm_alloc *a, size_t u) { (void)a; (void)u; }
static void nothing(loom_dsm_alloc *a) { (void)a; }

const loom_policy loom_dsm_policy_local = {
    .name = "local",
    .plain = 1,
    .read_miss = nothing_unit,
    .first_write = nothing_unit,
    .row_miss = nothing_unit,
    .release = nothing,
    .acquire = nothing,
};
