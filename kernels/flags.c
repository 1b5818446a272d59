/* flags.c — the apps' flag tables (flags.h). */
#include "flags.h"

#include <loom.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void loom_flags_complain(const char *app, const char *why)
{
    if (loom_rank() == 0)
        fprintf(stderr, "%s: %s; try --help\n", app, why);
}

int loom_flags_parse(const char *app, int argc, char **argv, int first, const loom_flag *flags,
                     void (*usage)(FILE *))
{
    char why[300];
    for (int a = first; a < argc; a++) {
        const char *f = argv[a];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            if (loom_rank() == 0)
                usage(stdout);
            return 1;
        }
        const loom_flag *k = flags;
        while (k->name && strcmp(k->name, f))
            k++;
        if (!k->name) {
            snprintf(why, sizeof why, "unknown flag '%s'", f);
            loom_flags_complain(app, why);
            return -1;
        }
        if (k->kind == LOOM_FLAG_SET) {
            *(int *)k->dst = 1;
            continue;
        }
        if (++a >= argc) {
            snprintf(why, sizeof why, "%s needs a value", f);
            loom_flags_complain(app, why);
            return -1;
        }
        const char *v = argv[a];
        char *end = NULL;
        errno = 0;
        switch (k->kind) {
        case LOOM_FLAG_STR: *(const char **)k->dst = v; break;
        case LOOM_FLAG_INT: {
            long x = strtol(v, &end, 10);
            if (x < -2147483647L || x > 2147483647L)
                errno = ERANGE;
            *(int *)k->dst = (int)x;
            break;
        }
        case LOOM_FLAG_LONG: *(long long *)k->dst = strtoll(v, &end, 10); break;
        case LOOM_FLAG_ULONG: *(unsigned long long *)k->dst = strtoull(v, &end, 10); break;
        case LOOM_FLAG_NUM: *(double *)k->dst = strtod(v, &end); break;
        case LOOM_FLAG_SET: break;
        }
        if (end && (*end || errno || end == v)) {
            snprintf(why, sizeof why, "%s: '%s' is not a number", f, v);
            loom_flags_complain(app, why);
            return -1;
        }
    }
    return 0;
}
