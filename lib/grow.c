/* grow.c — the runtime's one growable-array step: an array that doubles
 * (from at least 16 elements) until it holds what is asked.  The doubling
 * arrays of lib/, dsm/ and sched/ grow through it (frame buffers, diff
 * records, unit lists, notices, the arena's free list, kept state, access
 * records); what is left are buffers sized exactly (coll.c's scratch) and
 * lists grown by one (a handful of entries). */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

/* Contract: see internal.h.  No locks: the caller guards p and *cap. */
void *loom_rt_grow(void *p, size_t *cap, size_t need, size_t es)
{
    if (need <= *cap)
        return p;
    size_t c = *cap >= 16 ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / es)
            return NULL;
        c *= 2;
    }
    void *v = realloc(p, c * es);
    if (v)
        *cap = c;
    return v;
}
