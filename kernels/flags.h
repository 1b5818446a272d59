/* flags.h — the command-line flags of the apps: a table of "--name"
 * entries, each storing a string, an integer or a number, parsed the same
 * way everywhere.  Every rank parses the same argv, so only rank 0 says
 * what is wrong.
 *
 *   loom_flag f[] = {{"--train", LOOM_FLAG_STR, &o.train},
 *                    {"--epochs", LOOM_FLAG_INT, &o.epochs},
 *                    {"--serial", LOOM_FLAG_SET, &o.serial}, {0}};
 *   int rc = loom_flags_parse("loom-mf", argc, argv, 1, f, usage); */
#ifndef LOOM_KERNELS_FLAGS_H
#define LOOM_KERNELS_FLAGS_H

#include <stdio.h>

typedef enum loom_flag_kind {
    LOOM_FLAG_STR,   /* const char ** : the next argument */
    LOOM_FLAG_INT,   /* int *         : a decimal integer */
    LOOM_FLAG_LONG,  /* long long *   : a decimal integer */
    LOOM_FLAG_ULONG, /* unsigned long long * */
    LOOM_FLAG_NUM,   /* double *      : a number (strtod) */
    LOOM_FLAG_SET,   /* int *         : no value; sets 1 */
} loom_flag_kind;

typedef struct loom_flag {
    const char *name;
    loom_flag_kind kind;
    void *dst;
} loom_flag;

/* Parses argv[first..argc) against the table (ended by a zero entry).
 * Returns 0; 1 after --help or -h (usage printed to stdout by rank 0);
 * -1 for an unknown flag, a missing value or a value that is not a number
 * ("APP: --flag: 'x' is not a number; try --help" on stderr, rank 0). */
int loom_flags_parse(const char *app, int argc, char **argv, int first, const loom_flag *flags,
                     void (*usage)(FILE *));

/* Prints "APP: WHY; try --help" on stderr (rank 0 only). */
void loom_flags_complain(const char *app, const char *why);

#endif
