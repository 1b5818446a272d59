/* mem.c — the memory a size read from input may take (mem.h). */
#include "mem.h"
#include "lines.h"

#include <loom.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first number in file path (a "max" reads as none), or -1. */
static double read_num(const char *path)
{
    FILE *f = fopen(path, "r");
    char b[64] = "";
    if (!f)
        return -1;
    int ok = fgets(b, sizeof b, f) != NULL;
    fclose(f);
    char *e;
    double v = ok ? strtod(b, &e) : -1;
    return ok && e != b ? v : -1;
}

/* The cgroup's room: limit - usage, or -1 when no limit is known. */
static double cgroup_room(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024], p[1200];
    double room = -1;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        const char *path = c2 + 1;
        double lim = -1, use = -1;
        if (c1[1] == ':') { /* v2: "0::/path" */
            snprintf(p, sizeof p, "/sys/fs/cgroup%s/memory.max", path);
            lim = read_num(p);
            snprintf(p, sizeof p, "/sys/fs/cgroup%s/memory.current", path);
            use = read_num(p);
        } else if (strstr(c1, "memory")) { /* v1 */
            snprintf(p, sizeof p, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", path);
            lim = read_num(p);
            snprintf(p, sizeof p, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", path);
            use = read_num(p);
        }
        if (lim > 0 && lim < 1e18 && use >= 0) { /* v1's "no limit" is ~2^63 */
            double r = lim > use ? lim - use : 0;
            room = room < 0 || r < room ? r : room;
        }
    }
    if (f)
        fclose(f);
    return room;
}

static double mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb >= 0 ? kb * 1024 : -1;
}

/* LOOM_MEM_LIMIT in bytes (lib/env.c refuses a bad value at loom_init),
 * or -1. */
static double env_limit(void)
{
    const char *s = getenv("LOOM_MEM_LIMIT");
    char *e;
    double v = s && *s ? strtod(s, &e) : -1;
    if (v < 0 || e == s)
        return -1;
    const char *units = "KMGT";
    const char *u = *e ? strchr(units, *e & ~0x20) : NULL; /* k or K */
    for (int k = u ? (int)(u - units) + 1 : 0; k > 0; k--)
        v *= 1024;
    return v;
}

double loom_mem_available(void)
{
    double v[3] = {mem_available(), cgroup_room(), env_limit()}, m = DBL_MAX;
    for (int k = 0; k < 3; k++)
        if (v[k] >= 0 && v[k] < m)
            m = v[k];
    return m;
}

/* n bytes for a message: "232 GB", "10.8 MB". */
static const char *human(double n, char *b, size_t len)
{
    snprintf(b, len, n >= 1e9 ? "%.3g GB" : "%.3g MB", n >= 1e9 ? n / 1e9 : n / 1e6);
    return b;
}

int loom_mem_check(const char *file, const char *what, double need, char *err, size_t errlen)
{
    double have = loom_mem_available();
    if (need <= have)
        return LOOM_OK;
    char a[32], b[32];
    return loom_errf(err, errlen, LOOM_ERR_NOMEM,
                     "%s%s%s needs %s of memory, but this job may use %s "
                     "(MemAvailable, cgroup limit, LOOM_MEM_LIMIT)",
                     file ? file : "", file ? ": " : "", what, human(need, a, sizeof a),
                     human(have, b, sizeof b));
}
