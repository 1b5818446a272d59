/* fuzz_am.c — every DSM message handler, fed arbitrary messages.
 *
 * The harness is rank 1 of a 4-rank job with four allocations:
 *   0 "pages"  page units of 4 KiB, 8 units, overwrite, cyclic (homes 1, 5)
 *   1 "rows"   rows of 10 floats, 32 rows, add, block (homes rows 8..15)
 *   2 "ring"   ring policy, rows of 16 bytes, 16 rows (partitions of 4)
 *   3 "local"  local policy: no home store at all
 * and one SSP reduction (id 0, 6 int64, its first call made), all built
 * fresh for every input.  The input is a sequence of messages
 *   u8 id (mod 16), u8 header length, u16 data length (LE), header, data
 * handed to whatever handler lib/ and dsm/ registered for the id (GATHER
 * 2, DIFF 3, ACK 4, LOCK_REQ 5, LOCK_GRANT 6, UNLOCK 7, CLOCK 8, CONTRIB 9,
 * UPDATE 10, RING 11, GATHERED 12) exactly as the transport would.  A handler may drop a message
 * or stop the job (loom_abort); it must never read or write outside what
 * it owns — ASan and UBSan watch every access. */
#include "fuzz.h"
#include "dsm.h"

#include <stdlib.h>
#include <string.h>

#define NALLOC 4

static loom_dsm_alloc *make(int id, const char *name, loom_unit_kind kind, size_t unit,
                            size_t nunits, loom_merge merge, loom_type type, loom_dist dist,
                            const loom_policy *pol)
{
    loom_dsm_alloc *a = calloc(1, sizeof *a);
    a->id = id;
    a->live = 1;
    strcpy(a->name, name);
    a->kind = kind;
    a->unit = unit;
    a->nunits = nunits;
    a->bytes = a->mapped = unit * nunits;
    a->merge = merge;
    a->type = type;
    a->esize = loom_rt_type_size(type);
    a->policy = pol;
    a->memfd = -1;
    a->base = calloc(nunits, unit);
    a->state = calloc(nunits, sizeof *a->state);
    a->ulock = calloc(nunits, sizeof *a->ulock);
    if (!pol->plain) {
        a->home = calloc(nunits, sizeof *a->home);
        a->slot = calloc(nunits, sizeof *a->slot);
        if (loom_dsm_dist_place(a, dist, NULL, NULL))
            abort();
        a->store = calloc(a->nhome ? a->nhome : 1, unit);
    }
    if (pol->init && pol->init(a))
        abort();
    a->policy_up = 1;
    return a;
}

static void unmake(loom_dsm_alloc *a)
{
    if (a->policy->fini)
        a->policy->fini(a);
    free(a->base);
    free((void *)a->state);
    free(a->ulock);
    free(a->home);
    free(a->slot);
    free(a->store);
    free(a);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    loom_rt_icv.nranks = 4;
    loom_rt_icv.rank = 1;
    loom_dsm_check = 0;
    loom_rt_state = 1;
    loom_dsm_wire_init();
    loom_dsm_lock_init();
    loom_dsm_clock_init();
    loom_dsm_allreduce_ssp_init();
    loom_dsm_policy_setup_all();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    loom_dsm_alloc *a[NALLOC] = {
        make(0, "pages", LOOM_UNIT_PAGE, 4096, 8, LOOM_MERGE_OVERWRITE, LOOM_INT32,
             LOOM_DIST_CYCLIC, loom_dsm_policy_find("bsp")),
        make(1, "rows", LOOM_UNIT_ROW, 40, 32, LOOM_MERGE_ADD, LOOM_FLOAT, LOOM_DIST_BLOCK,
             loom_dsm_policy_find("bsp")),
        make(2, "ring", LOOM_UNIT_ROW, 16, 16, LOOM_MERGE_OVERWRITE, LOOM_INT32,
             LOOM_DIST_BLOCK, loom_dsm_policy_find("ring")),
        make(3, "local", LOOM_UNIT_ROW, 8, 4, LOOM_MERGE_ADD, LOOM_INT64, LOOM_DIST_BLOCK,
             loom_dsm_policy_find("local")),
    };
    for (int i = 0; i < NALLOC; i++)
        loom_dsm_allocs[i] = a[i];
    atomic_store(&loom_dsm_nallocs, NALLOC);
    int64_t mine[6] = {1, 2, 3, 4, 5, 6}, res[6];
    FUZZ_CHECK(!loom_allreduce_ssp(res, mine, 6, LOOM_INT64, LOOM_SUM, 1000), "%s",
               "the reduction's first call");

    const uint8_t *p = d, *end = d + n;
    for (int k = 0; k < 64 && end - p >= 4; k++) {
        unsigned id = p[0] & 15;
        size_t hl = p[1], dl = fuzz_u16(p + 2, end);
        p += 4;
        if (hl > (size_t)(end - p))
            hl = (size_t)(end - p);
        const uint8_t *h = p;
        p += hl;
        if (dl > (size_t)(end - p))
            dl = (size_t)(end - p);
        fuzz_am_deliver(id, h, hl, p, dl);
        p += dl;
    }

    loom_dsm_allreduce_ssp_fini();
    loom_dsm_lock_fini();
    atomic_store(&loom_dsm_nallocs, 0);
    for (int i = 0; i < NALLOC; i++) {
        loom_dsm_allocs[i] = NULL;
        unmake(a[i]);
    }
    return 0;
}
