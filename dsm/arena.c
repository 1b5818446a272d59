/* arena.c — the global arena: one address range reserved at the same place
 * on every rank, and a deterministic first-fit allocator inside it.
 *
 * The arena is PROT_NONE, MAP_NORESERVE anonymous memory: it costs address
 * space only.  Ranks try a list of candidate addresses with
 * MAP_FIXED_NOREPLACE and agree (allreduce) on the first that every rank
 * got.  Because every rank makes the same loom_alloc/loom_free calls in
 * the same order, the first-fit allocator hands out the same addresses
 * everywhere: a pointer into a Loom allocation means the same on all ranks.
 * Size: LOOM_DSM_ARENA (default 1 TiB of address space). */
#include "dsm.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ALIGN (2u << 20) /* allocations start on 2 MiB boundaries */

static char *arena;
static size_t arena_size;

struct range { size_t off, len; };
static struct range *freel;
static size_t nfree, capfree;

int loom_dsm_arena_contains(const void *p)
{
    return arena && (const char *)p >= arena && (const char *)p < arena + arena_size;
}

int loom_dsm_arena_init(void)
{
    if (arena)
        return LOOM_OK;
#ifdef __SANITIZE_THREAD__
    /* ThreadSanitizer stops a process that maps memory outside its
     * application ranges; the low one ends at 512 GiB.  So the TSan build
     * (make check-tsan) reserves at most 256 GiB, from 64 GiB. */
    static const uintptr_t candidates[] = {0x001000000000};
    size_t size = loom_rt_icv.dsm_arena < ((size_t)256 << 30) ? loom_rt_icv.dsm_arena
                                                           : (size_t)256 << 30;
#else
    static const uintptr_t candidates[] = {0x200000000000, 0x300000000000, 0x400000000000,
                                           0x500000000000, 0x600000000000, 0x680000000000};
    size_t size = loom_rt_icv.dsm_arena;
#endif
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        void *want = (void *)candidates[i];
        void *got = mmap(want, size, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                         -1, 0);
        int32_t ok = got == want;
        if (got != MAP_FAILED && !ok)
            munmap(got, size);
        loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
        if (ok) {
            arena = want;
            arena_size = size;
            freel = malloc(sizeof *freel);
            if (!freel)
                return LOOM_ERR_NOMEM;
            freel[0] = (struct range){0, size};
            nfree = capfree = 1;
            return LOOM_OK;
        }
        if (got == want)
            munmap(got, size);
    }
    loom_rt_log("cannot reserve a %zu-byte global arena at the same address on every rank "
             "(LOOM_DSM_ARENA); try a smaller one", size);
    return LOOM_ERR_NOMEM;
}

char *loom_dsm_arena_take(size_t bytes)
{
    size_t need = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    for (size_t i = 0; i < nfree; i++) {
        if (freel[i].len < need)
            continue;
        char *p = arena + freel[i].off;
        freel[i].off += need;
        freel[i].len -= need;
        if (!freel[i].len) {
            memmove(&freel[i], &freel[i + 1], (nfree - i - 1) * sizeof *freel);
            nfree--;
        }
        return p;
    }
    return NULL;
}

void loom_dsm_arena_give(char *p, size_t bytes)
{
    size_t off = (size_t)(p - arena), len = (bytes + ALIGN - 1) / ALIGN * ALIGN;
    /* give the address range back as a reservation */
    mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    size_t i = 0;
    while (i < nfree && freel[i].off < off)
        i++;
    if (!(freel = loom_rt_grow(freel, &capfree, nfree + 1, sizeof *freel)))
        loom_rt_die(1, "out of memory");
    memmove(&freel[i + 1], &freel[i], (nfree - i) * sizeof *freel);
    freel[i] = (struct range){off, len};
    nfree++;
    /* coalesce with the right, then the left neighbour */
    if (i + 1 < nfree && freel[i].off + freel[i].len == freel[i + 1].off) {
        freel[i].len += freel[i + 1].len;
        memmove(&freel[i + 1], &freel[i + 2], (nfree - i - 2) * sizeof *freel);
        nfree--;
    }
    if (i > 0 && freel[i - 1].off + freel[i - 1].len == freel[i].off) {
        freel[i - 1].len += freel[i].len;
        memmove(&freel[i], &freel[i + 1], (nfree - i - 1) * sizeof *freel);
        nfree--;
    }
}
