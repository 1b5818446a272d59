/* rss.h — this process's resident memory (VmRSS of /proc/self/status)
 * and its peak (VmHWM), for the test programs that bound them (dsm_scale,
 * dsm_cache). */
#ifndef LOOM_TEST_RSS_H
#define LOOM_TEST_RSS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The KiB of /proc/self/status's line `field` ("VmRSS:", "VmHWM:"), or
 * -1 if it cannot be read. */
static inline long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, strlen(field)))
            kb = atol(line + strlen(field));
    if (f)
        fclose(f);
    return kb;
}

static inline long rss_kb(void) { return status_kb("VmRSS:"); }

#endif
