/* flags.c — the apps' command lines (flags.h): getopt_long over a table,
 * the values converted and range-checked, --help printed from the table. */
#include "flags.h"

#include <loom.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXFLAGS 64
#define HELP_COL 24 /* where descriptions start in --help */

int loom_flags_complain(const char *app, const char *why0)
{
    char why[1024]; /* a flag's value is quoted: no control byte reaches the terminal */
    size_t k = 0;
    for (; why0[k] && k + 1 < sizeof why; k++)
        why[k] = (unsigned char)why0[k] < 0x20 || why0[k] == 0x7f ? '?' : why0[k];
    why[k] = 0;
    if (!loom_initialized() || loom_size() == 1) {
        fprintf(stderr, "%s: %s; try --help\n", app, why);
        return -1;
    }
    if (loom_rank() == 0) /* loomrun shows this and no other message */
        loom_abort(2, "%s: %s; try --help", app, why);
    loom_barrier(); /* ended by rank 0's abort */
    exit(2);
}

void loom_flags_version(const char *app)
{
    if (loom_rank() == 0)
        printf("%.*s (Loom) %s\n", (int)strcspn(app, " "), app, LOOM_VERSION_STRING);
}

/* Writes text, each line after the first indented by `indent` columns. */
static void indented(FILE *f, const char *text, int indent)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "%.*s\n", (int)n, p);
        p += n;
        if (*p == '\n' && *++p)
            fprintf(f, "%*s", indent, "");
    }
}

static void row(FILE *f, const char *left, const char *help)
{
    int n = fprintf(f, "  %s", left);
    if (n + 2 > HELP_COL)
        fprintf(f, "\n%*s", HELP_COL, "");
    else
        fprintf(f, "%*s", HELP_COL - n, "");
    indented(f, help, HELP_COL);
}

void loom_flags_table(FILE *f, const loom_flag *flags)
{
    char left[128];
    for (const loom_flag *k = flags; k->name; k++) {
        if (k->kind == LOOM_FLAG_SET)
            snprintf(left, sizeof left, "--%s", k->name);
        else
            snprintf(left, sizeof left, "--%s=%s", k->name, k->arg ? k->arg : "VALUE");
        row(f, left, k->help ? k->help : "");
    }
}

/* The GNU form help2man reads: "Usage: A" then "  or:  B" per line. */
void loom_flags_help(FILE *f, const loom_cli *cli)
{
    const char *p = cli->usage;
    for (int first = 1; *p; first = 0) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "%s%.*s\n", first ? "Usage: " : "  or:  ", (int)n, p);
        p += n + (p[n] == '\n');
    }
    if (cli->about) {
        fputc('\n', f);
        indented(f, cli->about, 0);
    }
    fputs("\nOptions:\n", f);
    loom_flags_table(f, cli->flags);
    row(f, "-h, --help", "print this help and exit");
    row(f, "-V, --version", "print the version and exit");
    if (cli->more) {
        fputc('\n', f);
        indented(f, cli->more, 0);
    }
}

/* An integer, plain or written as 1e7, into *x. */
static int integer(const char *v, long long *x)
{
    char *end;
    errno = 0;
    *x = strtoll(v, &end, 10);
    if (end != v && !*end && !errno)
        return 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno || d != floor(d) || !(fabs(d) < 9.2e18))
        return -1;
    *x = (long long)d;
    return 0;
}

/* Stores value v of flag k; returns 0 or -1 with the reason in why. */
static int store(const loom_flag *k, const char *v, char *why, size_t n)
{
    long long i = 0;
    double x = 0;
    char *end;
    switch (k->kind) {
    case LOOM_FLAG_STR: *(const char **)k->dst = v; return 0;
    case LOOM_FLAG_SET: *(int *)k->dst = 1; return 0;
    case LOOM_FLAG_NUM:
        errno = 0;
        x = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(x))
            goto nan;
        break;
    case LOOM_FLAG_INT:
    case LOOM_FLAG_LONG:
    case LOOM_FLAG_ULONG:
        if (integer(v, &i) || (k->kind == LOOM_FLAG_ULONG && i < 0) ||
            (k->kind == LOOM_FLAG_INT && (i < -2147483647LL || i > 2147483647LL))) {
            snprintf(why, n, "--%s: '%s' is not %s", k->name, v,
                     k->kind == LOOM_FLAG_ULONG ? "an integer >= 0" : "an integer");
            return -1;
        }
        x = (double)i;
        break;
    }
    if (k->lo < k->hi && !(x >= k->lo && x <= k->hi)) {
        if (k->hi == HUGE_VAL)
            snprintf(why, n, "--%s must be >= %g (not '%s')", k->name, k->lo, v);
        else if (k->lo == -HUGE_VAL)
            snprintf(why, n, "--%s must be <= %g (not '%s')", k->name, k->hi, v);
        else
            snprintf(why, n, "--%s must be in %g..%g (not '%s')", k->name, k->lo, k->hi, v);
        return -1;
    }
    switch (k->kind) {
    case LOOM_FLAG_INT: *(int *)k->dst = (int)i; break;
    case LOOM_FLAG_LONG: *(long long *)k->dst = i; break;
    case LOOM_FLAG_ULONG: *(unsigned long long *)k->dst = (unsigned long long)i; break;
    default: *(double *)k->dst = x; break;
    }
    return 0;
nan:
    snprintf(why, n, "--%s: '%s' is not a number", k->name, v);
    return -1;
}

int loom_flags_parse(const loom_cli *cli, int argc, char **argv, int first)
{
    struct option lo[MAXFLAGS + 3];
    int n = 0;
    for (const loom_flag *k = cli->flags; k->name && n < MAXFLAGS; k++, n++)
        lo[n] = (struct option){k->name, k->kind == LOOM_FLAG_SET ? no_argument : required_argument,
                                NULL, 256 + n};
    lo[n] = (struct option){"help", no_argument, NULL, 'h'};
    lo[n + 1] = (struct option){"version", no_argument, NULL, 'V'};
    lo[n + 2] = (struct option){0, 0, 0, 0};
    /* argv[first - 1] stands for the program name: getopt skips it */
    int ac = argc - first + 1;
    char **av = argv + first - 1;
    char why[600] = "";
    int c, rc = 0;
    if (cli->nargs)
        *cli->nargs = 0;
    opterr = 0;
    optind = 0; /* a full restart of getopt's state */
    while (!rc && (c = getopt_long(ac, av, ":hV", lo, NULL)) != -1) {
        if (c == 'h' || c == 'V') {
            if (c == 'V')
                loom_flags_version(cli->app);
            else if (loom_rank() == 0)
                loom_flags_help(stdout, cli);
            return 1;
        }
        if (c == ':') {
            snprintf(why, sizeof why, "%s needs a value", av[optind - 1]);
            rc = -1;
        } else if (c == '?') {
            const char *a = av[optind - 1];
            if (optopt >= 256 || optopt == 'h' || optopt == 'V')
                snprintf(why, sizeof why, "%.*s takes no value", (int)strcspn(a, "="), a);
            else if (optopt)
                snprintf(why, sizeof why, "unknown flag '-%c'", optopt);
            else
                snprintf(why, sizeof why, "unknown or ambiguous flag '%s'", a);
            rc = -1;
        } else {
            rc = store(&cli->flags[c - 256], optarg, why, sizeof why);
        }
    }
    for (int a = optind; !rc && a < ac; a++) {
        if (!cli->args || *cli->nargs >= cli->maxargs) {
            snprintf(why, sizeof why, "unexpected argument '%s'", av[a]);
            rc = -1;
        } else {
            cli->args[(*cli->nargs)++] = av[a];
        }
    }
    if (rc)
        loom_flags_complain(cli->app, why);
    return rc;
}
