/* flags.h — the command line of every app: a table of long options, each
 * with the value's name and a description, parsed by glibc's getopt_long
 * (so `--epochs=5`, `--epochs 5` and an unambiguous prefix `--ep 5` all
 * work) and printed as the app's --help, which help2man turns into its man
 * page.  --help/-h and --version/-V come with every table.  Every rank
 * parses the same argv, so only rank 0 prints.
 *
 *   const loom_flag f[] = {
 *       {"train", LOOM_FLAG_STR, &o.train, "FILE", 0, 0, "training ratings"},
 *       {"epochs", LOOM_FLAG_INT, &o.epochs, "N", 1, HUGE_VAL, "passes (default 30)"},
 *       {"serial", LOOM_FLAG_SET, &o.serial, NULL, 0, 0, "the serial twin"}, {0}};
 *   const loom_cli cli = {.app = "loom-mf", .flags = f,
 *                         .usage = "loom-mf --train FILE --test FILE [OPTION]...",
 *                         .about = "SGD matrix factorization."};
 *   int rc = loom_flags_parse(&cli, argc, argv, 1);   // 0, 1 (help), -1 */
#ifndef LOOM_APPS_FLAGS_H
#define LOOM_APPS_FLAGS_H

#include <stdio.h>

typedef enum loom_flag_kind {
    LOOM_FLAG_STR,   /* const char ** : the value as given */
    LOOM_FLAG_INT,   /* int *         : an integer, plain or as 1e7 */
    LOOM_FLAG_LONG,  /* long long *   : an integer, plain or as 1e7 */
    LOOM_FLAG_ULONG, /* unsigned long long * : an integer >= 0 */
    LOOM_FLAG_NUM,   /* double *      : a finite number */
    LOOM_FLAG_SET,   /* int *         : no value; sets 1 */
} loom_flag_kind;

typedef struct loom_flag {
    const char *name; /* without the dashes: "epochs" is --epochs */
    loom_flag_kind kind;
    void *dst;
    const char *arg;  /* the value's name in --help ("FILE", "N"); NULL for SET */
    double lo, hi;    /* numbers: the value must lie in [lo, hi] when lo < hi
                         (HUGE_VAL: no bound); 0, 0: any value */
    const char *help; /* the description; '\n' starts a continuation line */
} loom_flag;

typedef struct loom_cli {
    const char *app;        /* names the messages: "loom-lr", "loom-gen ratings" */
    const char *usage;      /* synopsis lines after "usage: ", '\n' between them */
    const char *about;      /* a paragraph before the options (NULL: none) */
    const loom_flag *flags; /* ended by a zero entry */
    const char *more;       /* a paragraph after the options (NULL: none) */
    const char **args;      /* room for positional arguments (NULL: none taken) */
    int maxargs, *nargs;
} loom_cli;

/* Parses argv[first..argc) against cli->flags.  Returns 0; 1 after --help
 * or --version (printed to stdout by rank 0); -1 for an unknown or
 * ambiguous flag, a missing value, a value that is not a number or out of
 * its range, or a positional argument the app does not take (one line
 * "APP: why; try --help" through loom_flags_complain: in a job of several
 * ranks it does not return).  Not thread-safe (getopt). */
int loom_flags_parse(const loom_cli *cli, int argc, char **argv, int first);

/* Writes the --help text: usage, about, the options table, more. */
void loom_flags_help(FILE *f, const loom_cli *cli);

/* Writes the options table alone (for an app with subcommands). */
void loom_flags_table(FILE *f, const loom_flag *flags);

/* Prints "APP (Loom) VERSION", as loomrun --version does. */
void loom_flags_version(const char *app);

/* Prints "APP: WHY; try --help" on stderr and returns -1.  In a job of
 * several ranks (every rank calls it: they parse the same argv) it does
 * not return: rank 0 ends the job with that one message and exit status 2
 * (loom_abort). */
int loom_flags_complain(const char *app, const char *why);

#endif
