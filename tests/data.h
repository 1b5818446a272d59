/* data.h — helpers for the data-layer unit tests (test_ratings, test_corpus,
 * test_gen): where the shared data folder is, a scratch folder removed at
 * exit, and small files written into it.  Header-only.
 *
 * The shared data is $LOOMTEST_DATA when set, else ../shared/data beside
 * the repository, found from this binary's own path
 * (REPO/BUILD/tests/unit/NAME), as `make demo` finds ../shared/data. */
#ifndef LOOM_TEST_DATA_H
#define LOOM_TEST_DATA_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The path of rel inside the shared data folder, or NULL if it is absent. */
static inline const char *shared_data(const char *rel)
{
    static char path[PATH_MAX + 64];
    char dir[PATH_MAX];
    const char *env = getenv("LOOMTEST_DATA");
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        if (n <= 0)
            return NULL;
        dir[n] = '\0';
        for (int up = 0; up < 4; up++) { /* NAME, unit, tests, BUILD */
            char *slash = strrchr(dir, '/');
            if (!slash)
                return NULL;
            *slash = '\0';
        }
        strncat(dir, "/../shared/data", sizeof dir - strlen(dir) - 1);
    }
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    struct stat st;
    return stat(path, &st) == 0 ? path : NULL;
}

static char scratch_dir[64];

static inline int scratch_rm(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static inline void scratch_cleanup(void)
{
    if (scratch_dir[0])
        nftw(scratch_dir, scratch_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* SCRATCH/name in a fresh folder under /tmp (made on first use, removed
 * at exit).  Returns a static buffer: copy it to keep it. */
static inline const char *scratch(const char *name)
{
    static char path[256];
    if (!scratch_dir[0]) {
        snprintf(scratch_dir, sizeof scratch_dir, "/tmp/loomtest-data.XXXXXX");
        if (!mkdtemp(scratch_dir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(scratch_cleanup);
    }
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    return path;
}

/* Writes text to SCRATCH/name; returns its path (static, as scratch). */
static inline const char *write_file(const char *name, const char *text)
{
    const char *path = scratch(name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        perror(path);
        exit(2);
    }
    return path;
}

/* The whole of path, malloc'd, its size in *n; NULL if unreadable. */
static inline char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0, k;
    char *buf = malloc(cap);
    while (buf && (k = fread(buf + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *n = len;
    return buf;
}

#endif
