/* mem.h — checking a size read from input against the memory this
 * process may use, before it is allocated (docs/data.md, "Memory").
 * Allocations the kernel grants lazily (overcommit, MAP_NORESERVE) fail
 * only when touched, by the OOM killer, with no message: a reader or an
 * app that derives a size from a file (an id, a declared dimension, a
 * count) asks here first. */
#ifndef LOOM_MEM_H
#define LOOM_MEM_H

#include <stddef.h>

/* Bytes this process may still use: the least of MemAvailable
 * (/proc/meminfo), the room left under its cgroup's memory limit (v2
 * memory.max - memory.current, or v1 limit - usage) and LOOM_MEM_LIMIT
 * (a byte count with K, M, G or T) when set.  Unknown parts are ignored;
 * with none known, the largest double. */
double loom_mem_available(void);

/* 0 if need bytes fit in loom_mem_available(); else LOOM_ERR_NOMEM with
 * "FILE: WHAT needs N GB of memory, but this job may use M GB
 * (MemAvailable, cgroup limit, LOOM_MEM_LIMIT)" in err (no "FILE: " when
 * file is NULL).  what names the size from the input, e.g. "D = 2147483646
 * documents". */
int loom_mem_check(const char *file, const char *what, double need, char *err, size_t errlen);

#endif
