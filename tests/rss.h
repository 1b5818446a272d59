/* rss.h — this process's resident memory (VmRSS of /proc/self/status),
 * for the test programs that bound it (dsm_scale, dsm_cache). */
#ifndef LOOM_TEST_RSS_H
#define LOOM_TEST_RSS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* VmRSS in KiB, or -1 if it cannot be read. */
static inline long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

#endif
