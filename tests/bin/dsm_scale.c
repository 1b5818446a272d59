/* dsm_scale.c — an allocation larger than one rank's share works when its
 * distribution spreads it, and loom_free leaves nothing behind.
 * Usage: dsm_scale GiB.  A GiB-sized page allocation (1 MiB units, block
 * distribution) is written sparsely by every rank — 32 units each, spread
 * over the whole range, so most are homed elsewhere — and read back by
 * every rank.  Resident memory must stay far below the allocation's size.
 * Then 50 alloc/free cycles of both kinds must leave the count of memory
 * mappings, memfds and UCX registrations where they stood after the first
 * cycle (which creates the arena and warms UCX's pools and endpoints). */
#include "internal.h"
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../rss.h"

static long count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[512];
    long n = 0;
    while (f && fgets(line, sizeof line, f))
        n += !needle || strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

static long memfds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], target[300];
    long n = 0;
    while (d && (e = readdir(d))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, target, sizeof target - 1);
        if (k > 0) {
            target[k] = 0;
            n += strstr(target, "memfd:") != NULL;
        }
    }
    if (d)
        closedir(d);
    return n;
}

static long rss_mib(void) { return rss_kb() / 1024; }

int main(int argc, char **argv)
{
    /* One malloc arena: a thread's first malloc (Loom's progress agent
     * answering a message, at any moment) must not add glibc's mappings
     * to the count of Loom's. */
    mallopt(M_ARENA_MAX, 1);
    if (loom_init(&argc, &argv))
        return 1;
    int r = loom_rank(), P = loom_size(), fails = 0;
    size_t gib = argc > 1 ? (size_t)atol(argv[1]) : 4, unit = 1 << 20;
    size_t bytes = gib << 30, nunits = bytes / unit;
    long maps0 = 0, fds0 = 0, regs0 = 0;
    long *a = loom_alloc(bytes, &(loom_alloc_opts){.name = "big", .page_unit = unit});
    if (!a)
        return 1;
    for (int k = 0; k < 32; k++) {
        size_t u = ((size_t)k * 131 + (size_t)r * 17) % nunits;
        a[u * unit / sizeof(long) + (size_t)r] = (long)(u * 1000 + (size_t)r);
    }
    loom_barrier();
    for (int q = 0; q < P; q++)
        for (int k = 0; k < 32; k++) {
            size_t u = ((size_t)k * 131 + (size_t)q * 17) % nunits;
            long v = a[u * unit / sizeof(long) + (size_t)q];
            if (v != (long)(u * 1000 + (size_t)q) && fails++ < 5)
                fprintf(stderr, "rank %d: unit %zu slot %d holds %ld\n", r, u, q, v);
        }
    long rss = rss_mib();
    if (rss > 512 && fails++ < 5)
        fprintf(stderr, "rank %d: %ld MiB resident for a %zu GiB allocation\n", r, rss, gib);
    loom_free(a);
    for (int i = 0; i < 51; i++) {
        if (i == 1) {
            maps0 = count_lines("/proc/self/maps", NULL);
            fds0 = memfds();
            regs0 = loom_rt_tp_live_registrations();
        }
        void *p = loom_alloc(1 << 20, &(loom_alloc_opts){.page_unit = 65536});
        int64_t *q = loom_alloc(4096 * 8, &(loom_alloc_opts){.unit = LOOM_UNIT_ROW, .row_size = 64,
                                                            .merge = LOOM_MERGE_ADD, .type = LOOM_INT64});
        ((char *)p)[i * 1000] = 1;
        int64_t one[8] = {1};
        loom_row_add(q, (size_t)i, one);
        loom_barrier();
        loom_free(q);
        loom_free(p);
    }
    long maps1 = count_lines("/proc/self/maps", NULL), fds1 = memfds();
    long regs1 = loom_rt_tp_live_registrations();
    if ((maps1 != maps0 || fds1 != fds0 || regs1 != regs0) && fails++ < 5)
        fprintf(stderr, "rank %d: after free, %ld mappings (was %ld), %ld memfds (was %ld), "
                "%ld registrations (was %ld)\n", r, maps1, maps0, fds1, fds0, regs1, regs0);
    int32_t ok = !fails;
    loom_allreduce(LOOM_IN_PLACE, &ok, 1, LOOM_INT32, LOOM_MIN);
    if (r == 0 && ok)
        printf("dsm_scale: ok P=%d %zu GiB, %ld MiB resident on rank 0, no leaks\n", P, gib, rss);
    loom_finalize();
    return ok ? 0 : 1;
}
