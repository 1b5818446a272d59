/* grow.h — the one growable-array step, for every layer: an array that
 * doubles (from at least 16 elements) until it holds what is asked.
 * Header only, so that it is no symbol of libloom: the runtime (lib/,
 * dsm/, sched/: frame buffers, diff records, unit lists, notices, the
 * arena's free list, kept state, access records) and the ML layer (data/,
 * kernels/, which link only the public API: the readers' growing arrays)
 * share it.  What is left are buffers sized exactly and lists grown by
 * one entry. */
#ifndef LOOM_GROW_H
#define LOOM_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* p, an array of *cap elements of es bytes, grown to hold at least need
 * (the capacity doubles from at least 16): the array to use from now on
 * (p itself when it already holds need), or NULL when memory ran out (p
 * still valid, *cap unchanged).  The new elements are not zeroed.  No
 * locks: the caller guards p and *cap. */
static inline void *loom_rt_grow(void *p, size_t *cap, size_t need, size_t es)
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

#endif
