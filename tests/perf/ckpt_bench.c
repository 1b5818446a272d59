/* ckpt_bench.c — how big a checkpoint of a 1 GiB allocation is, and how
 * long it takes to write and to restore (docs/checkpoint.md, "Measured").
 * Run by hand, never by make check:
 *
 *   LOOM_CHECKPOINT_DIR=/tmp/ck build/tests/perf/ckpt_bench [GIB] [--cold]
 *   LOOM_CHECKPOINT_DIR=/tmp/ck build/bin/loomrun --restart -n 1 build/tests/perf/ckpt_bench [GIB]
 *   LOOM_CHECKPOINT_DIR=/tmp/ck build/tests/perf/ckpt_bench [GIB] --touch F
 *
 * A fresh run fills GIB GiB (default 1) of page units (1 MiB each; bsp on
 * several ranks, each rank writing the block it homes) and times
 * loom_checkpoint; --cold then drops the checkpoint's files from the page
 * cache (posix_fadvise), so that the restore reads the disk.  A restarted
 * run times the loom_alloc that restores the data and checks every word
 * it homes.  --touch F then changes a fraction F of every rank's units
 * and times a second checkpoint: incremental, it writes only those
 * (LOOM_CHECKPOINT_CHAIN=1: all of them again). */
#include <loom.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t pattern(size_t i) { return (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ 0x5bd1e995; }

/* Bytes of the files of the checkpoint LATEST names; with drop, also
 * evict them from the page cache. */
static double ckpt_bytes(const char *dir, int drop)
{
    char p[4096], name[64] = "";
    snprintf(p, sizeof p, "%s/LATEST", dir);
    FILE *f = fopen(p, "r");
    if (!f || !fgets(name, sizeof name, f)) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    name[strcspn(name, "\n")] = 0;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    DIR *d = opendir(p);
    double total = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char q[4400];
        struct stat st;
        snprintf(q, sizeof q, "%s/%s", p, e->d_name);
        if (stat(q, &st) || !S_ISREG(st.st_mode))
            continue;
        total += (double)st.st_size;
        int fd = drop ? open(q, O_RDONLY) : -1;
        if (fd >= 0) {
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
    if (d)
        closedir(d);
    return total;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 2;
    double gib = argc > 1 && argv[1][0] != '-' ? atof(argv[1]) : 1.0;
    int cold = argc > 1 && !strcmp(argv[argc - 1], "--cold");
    double touch = argc > 2 && !strcmp(argv[argc - 2], "--touch") ? atof(argv[argc - 1]) : -1;
    const char *dir = getenv("LOOM_CHECKPOINT_DIR");
    if (!dir || gib <= 0)
        loom_abort(2, "usage: LOOM_CHECKPOINT_DIR=DIR ckpt_bench [GIB] [--cold]");
    int r = loom_rank(), P = loom_size();
    size_t bytes = (size_t)(gib * (1 << 30)), n = bytes / 8;
    double t0 = loom_wtime();
    uint64_t *x = loom_alloc(bytes, &(loom_alloc_opts){.name = "big", .page_unit = 1 << 20});
    double t_alloc = loom_wtime() - t0;
    if (!x)
        loom_abort(1, "ckpt_bench: cannot allocate %.2f GiB", gib);
    size_t units = (bytes + (1 << 20) - 1) >> 20; /* block distribution: rank r homes these */
    size_t lo = units * (size_t)r / (size_t)P << 17, hi = units * (size_t)(r + 1) / (size_t)P << 17;
    if (hi > n)
        hi = n;
    if (loom_restarted()) {
        size_t bad = 0;
        if (P == 1)
            for (size_t i = lo; i < hi; i++)
                bad += x[i] != pattern(i);
        else
            for (size_t i = lo; i < hi; i += 4096) /* one word a page: a read fetches the unit */
                bad += x[i] != pattern(i);
        loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT64, LOOM_SUM);
        if (r == 0)
            printf("ckpt_bench: restore of %.2f GiB on %d rank(s): loom_alloc %.3f s "
                   "(%.2f GB/s), %s\n", gib, P, t_alloc, (double)bytes / t_alloc / 1e9,
                   bad ? "WRONG DATA" : "data checked");
        loom_finalize();
        return bad != 0;
    }
    for (size_t i = lo; i < hi; i++)
        x[i] = pattern(i);
    loom_barrier();
    t0 = loom_wtime();
    int rc = loom_checkpoint(NULL);
    double t_ck = loom_wtime() - t0;
    if (r == 0) {
        double size = ckpt_bytes(dir, cold);
        printf("ckpt_bench: checkpoint of %.2f GiB on %d rank(s): %.0f bytes (%.4f of the "
               "data) in %.3f s (%.2f GB/s), fsync %s: %s%s\n", gib, P, size, size / (double)bytes,
               t_ck, (double)bytes / t_ck / 1e9, getenv("LOOM_CHECKPOINT_SYNC") ? getenv("LOOM_CHECKPOINT_SYNC") : "on",
               loom_strerror(rc), cold ? "; files dropped from the page cache" : "");
    }
    if (cold && r != 0)
        ckpt_bytes(dir, 1);
    if (touch >= 0) {
        size_t step = (size_t)1 << 17, mine = (hi - lo) / step, k = (size_t)(touch * (double)mine);
        for (size_t u = 0; u < k; u++) /* one word of each touched unit */
            x[lo + u * step] ^= 1;
        loom_barrier();
        t0 = loom_wtime();
        rc = loom_checkpoint(NULL);
        double t2 = loom_wtime() - t0;
        if (r == 0)
            printf("ckpt_bench: second checkpoint, %.3f of the units changed, chain %s: %.3f s "
                   "(%.2fx the first): %s\n", touch, getenv("LOOM_CHECKPOINT_CHAIN")
                   ? getenv("LOOM_CHECKPOINT_CHAIN") : "8", t2, t2 / t_ck, loom_strerror(rc));
    }
    loom_free(x);
    return loom_finalize();
}
