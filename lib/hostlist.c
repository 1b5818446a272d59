/* hostlist.c — Slurm's compressed host lists ("node[1-3,5],gpu[08-11]x"),
 * expanded name by name.  The runtime needs the first nodes of a step
 * (lib/slurm.c); loomrun needs every node of an allocation
 * (apps/loomrun/alloc.c). */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Expand rest's first bracket group after head (already expanded),
 * recursing for the groups after it; fn gets every complete name. */
static int expand(const char *head, const char *rest, loom_host_fn fn, void *arg, int *count,
                  char *err, size_t errlen)
{
    char buf[256];
    const char *lb = strchr(rest, '[');
    if (!lb) {
        if (snprintf(buf, sizeof buf, "%s%s", head, rest) >= (int)sizeof buf || !buf[0]) {
            snprintf(err, errlen, "a host name is empty or longer than 255 characters");
            return -1;
        }
        if (++*count > LOOM_HOSTLIST_MAX) {
            snprintf(err, errlen, "more than %d hosts", LOOM_HOSTLIST_MAX);
            return -1;
        }
        int r = fn(buf, arg);
        if (r < 0)
            snprintf(err, errlen, "out of memory");
        return r;
    }
    const char *rb = strchr(lb, ']');
    int inner = rb ? (int)(rb - lb - 1) : 0;
    if (!rb || !inner) {
        snprintf(err, errlen, "'[' without a range and ']'");
        return -1;
    }
    for (const char *p = lb + 1; p < rb;) {
        const char *q = p;
        while (q < rb && isdigit((unsigned char)*q))
            q++;
        int width = (int)(q - p);
        long lo = width && width < 10 ? strtol(p, NULL, 10) : -1, hi = lo;
        if (lo >= 0 && *q == '-') {
            const char *s = ++q;
            while (q < rb && isdigit((unsigned char)*q))
                q++;
            hi = q > s && q - s < 10 ? strtol(s, NULL, 10) : -1;
        }
        if (lo < 0 || hi < lo || (q < rb && *q != ',') || hi - lo >= LOOM_HOSTLIST_MAX) {
            snprintf(err, errlen, "'%.*s' is not a number range", inner, lb + 1);
            return -1;
        }
        for (long v = lo; v <= hi; v++) {
            if (snprintf(buf, sizeof buf, "%s%.*s%0*ld", head, (int)(lb - rest), rest, width,
                         v) >= (int)sizeof buf) {
                snprintf(err, errlen, "a host name is longer than 255 characters");
                return -1;
            }
            int r = expand(buf, rb + 1, fn, arg, count, err, errlen);
            if (r)
                return r;
        }
        p = q + (q < rb);
    }
    return 0;
}

/* Contract: see internal.h. */
int loom_rt_hostlist_expand(const char *s, loom_host_fn fn, void *arg, char *err, size_t errlen)
{
    char entry[1024];
    int count = 0;
    for (const char *p = s; *p;) {
        /* An entry ends at a comma outside brackets. */
        size_t n = 0;
        int depth = 0;
        while (p[n] && (depth || p[n] != ',')) {
            depth += (p[n] == '[') - (p[n] == ']');
            n++;
        }
        if (!n || n >= sizeof entry || depth) {
            snprintf(err, errlen, "'%.*s' is not a host list entry", (int)(n > 64 ? 64 : n), p);
            return -1;
        }
        memcpy(entry, p, n);
        entry[n] = 0;
        for (size_t k = 0; k < n; k++)
            if (!isalnum((unsigned char)entry[k]) && !strchr(".-_[],", entry[k])) {
                snprintf(err, errlen, "'%s' is not a host list entry", entry);
                return -1;
            }
        int r = expand("", entry, fn, arg, &count, err, errlen);
        if (r)
            return r < 0 ? -1 : count;
        p += n + (p[n] == ',');
    }
    if (!count) {
        snprintf(err, errlen, "the host list is empty");
        return -1;
    }
    return count;
}
