/* tap.h — a tiny Test Anything Protocol helper for Loom's C unit tests.
 *
 * Header-only.  A test program calls plan(n) (or nothing, and lets
 * done_testing() print the plan at the end), then ok/is_int/is_str/
 * is_mem/has_str once per test point (skip(n, why) for points that cannot
 * run here), and ends with
 *     return done_testing();
 * which is non-zero if any point failed or the count differs from the
 * plan.  Points print "ok N - name" / "not ok N - name" on stdout;
 * a failure's details go to stderr as "# " lines, as Test::More does, so
 * `prove` shows them without -v.  Each check returns 1 if it passed. */
#ifndef LOOM_TAP_H
#define LOOM_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_planned = -1, tap_run, tap_failed;

static inline void plan(int n)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep TAP in order if we crash */
    tap_planned = n;
    printf("1..%d\n", n);
}

/* A "# " line on stdout (shown by prove -v). */
__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("# ", stdout);
    vprintf(fmt, ap);
    fputs("\n", stdout);
    va_end(ap);
}

static inline int tap_result(int pass, const char *file, int line,
                             const char *fmt, va_list ap)
{
    ++tap_run;
    printf("%s %d - ", pass ? "ok" : "not ok", tap_run);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    if (!pass) {
        tap_failed++;
        fprintf(stderr, "#   Failed test %d at %s line %d.\n", tap_run, file, line);
    }
    return pass;
}

__attribute__((format(printf, 4, 5)))
static inline int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_result(pass, file, line, fmt, ap);
    va_end(ap);
    return pass;
}

__attribute__((format(printf, 5, 6)))
static inline int tap_is_int(long long got, long long want, const char *file,
                             int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_result(got == want, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        fprintf(stderr, "#          got: %lld\n#     expected: %lld\n", got, want);
    return pass;
}

__attribute__((format(printf, 5, 6)))
static inline int tap_is_str(const char *got, const char *want, const char *file,
                             int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int same = got && want ? !strcmp(got, want) : got == want;
    int pass = tap_result(same, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        fprintf(stderr, "#          got: %s%s%s\n#     expected: %s%s%s\n",
                got ? "'" : "", got ? got : "NULL", got ? "'" : "",
                want ? "'" : "", want ? want : "NULL", want ? "'" : "");
    return pass;
}

/* Passes if needle occurs in hay. */
__attribute__((format(printf, 5, 6)))
static inline int tap_has_str(const char *hay, const char *needle, const char *file,
                              int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_result(hay && needle && strstr(hay, needle), file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        fprintf(stderr, "#     '%s'\n#     does not contain '%s'\n", hay ? hay : "NULL",
                needle ? needle : "NULL");
    return pass;
}

static inline void tap_hex(const char *label, const void *p, size_t n)
{
    fprintf(stderr, "#     %s", label);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%02x", ((const unsigned char *)p)[i]);
    fputc('\n', stderr);
}

/* Passes if the n bytes at got and want are equal. */
__attribute__((format(printf, 6, 7)))
static inline int tap_is_mem(const void *got, const void *want, size_t n,
                             const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int pass = tap_result(!memcmp(got, want, n), file, line, fmt, ap);
    va_end(ap);
    if (!pass) {
        tap_hex("     got: ", got, n);
        tap_hex("expected: ", want, n);
    }
    return pass;
}

/* Report n points as skipped ("ok N # skip why"), for tests whose data
 * or environment is missing. */
static inline void skip(int n, const char *why)
{
    for (int k = 0; k < n; k++)
        printf("ok %d # skip %s\n", ++tap_run, why);
    fflush(stdout);
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) \
    tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define has_str(hay, needle, ...) \
    tap_has_str((hay), (needle), __FILE__, __LINE__, __VA_ARGS__)
#define is_mem(got, want, n, ...) \
    tap_is_mem((got), (want), (n), __FILE__, __LINE__, __VA_ARGS__)

/* Print the plan if plan() was not called; return the exit status. */
static inline int done_testing(void)
{
    if (tap_planned < 0)
        printf("1..%d\n", tap_run);
    else if (tap_run != tap_planned)
        fprintf(stderr, "# Looks like you planned %d tests but ran %d.\n",
                tap_planned, tap_run);
    if (tap_failed)
        fprintf(stderr, "# Looks like you failed %d test%s of %d.\n", tap_failed,
                tap_failed == 1 ? "" : "s", tap_run);
    fflush(stdout);
    return tap_failed || (tap_planned >= 0 && tap_run != tap_planned) ? 1 : 0;
}

#endif
