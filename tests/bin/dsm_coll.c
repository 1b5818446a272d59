/* dsm_coll.c — collectives and read(2) on Loom page units no rank has
 * touched yet (docs/dsm.md, "System calls do not fault").
 * Usage: dsm_coll SCRATCHFILE
 * For buffers of 4 KiB to 1 MiB in 4 KiB and 64 KiB units: loom_bcast from
 * each root into a fresh allocation and loom_allreduce into one; every
 * rank checks what it received, and after
 * a loom_barrier every rank checks the whole allocation again (the
 * received bytes went home like any other write).  Then read(2) of a file
 * into a unit homed on another rank: after loom_touch it reads the file;
 * without it, it fails with EFAULT (the documented behaviour), never a
 * crash.  Prints "dsm_coll: ok" on rank 0. */
#include <loom.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, P;

static void fail(const char *what, size_t bytes, size_t unit, size_t at)
{
    loom_abort(1, "dsm_coll: %s (%zu bytes, %zu-byte units): rank %d, byte %zu wrong", what,
               bytes, unit, me, at);
}

static uint8_t pat(size_t i, int k) { return (uint8_t)(i * 131 + (size_t)k * 7 + 1); }

static uint8_t *fresh(size_t bytes, size_t unit)
{
    uint8_t *b = loom_alloc(bytes, &(loom_alloc_opts){.name = "collbuf", .page_unit = unit});
    if (!b)
        loom_abort(1, "dsm_coll: loom_alloc failed");
    return b;
}

static void bcasts(size_t bytes, size_t unit)
{
    for (int root = 0; root < P; root++) {
        uint8_t *b = fresh(bytes, unit);
        if (me == root)
            for (size_t i = 0; i < bytes; i++)
                b[i] = pat(i, root);
        loom_bcast(b, bytes, root);
        for (size_t i = 0; i < bytes; i++)
            if (b[i] != pat(i, root))
                fail("loom_bcast", bytes, unit, i);
        loom_barrier();
        for (size_t i = 0; i < bytes; i++)
            if (b[i] != pat(i, root))
                fail("after loom_bcast and a barrier", bytes, unit, i);
        loom_free(b);
    }
}

/* Every rank's contribution from private memory, the sum into the shared
 * (untouched) array: every rank stores the same result there.  (An
 * in-place allreduce on one shared array would have the ranks write
 * different contributions to the same bytes in one epoch: a race.) */
static void allreduce(size_t bytes, size_t unit)
{
    size_t n = bytes / sizeof(int32_t);
    int32_t *v = (int32_t *)(void *)fresh(bytes, unit), *mine = malloc(bytes);
    for (size_t i = 0; i < n; i++)
        mine[i] = (int32_t)(i + (size_t)me);
    loom_allreduce(mine, v, n, LOOM_INT32, LOOM_SUM);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++)
            if (v[i] != (int32_t)((int64_t)P * (int64_t)i + (int64_t)P * (P - 1) / 2))
                fail(pass ? "after loom_allreduce and a barrier" : "loom_allreduce", bytes,
                     unit, i * 4);
        loom_barrier();
    }
    free(mine);
    loom_free(v);
}

static void reads(const char *path)
{
    size_t unit = 4096, bytes = unit * (size_t)P;
    uint8_t *b = fresh(bytes, unit), *src = malloc(unit);
    for (size_t i = 0; i < unit; i++)
        src[i] = pat(i, 99);
    if (me == 0) {
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(src, 1, unit, f) != unit || fclose(f))
            loom_abort(1, "dsm_coll: cannot write %s", path);
    }
    loom_barrier();
    uint8_t *other = b + (size_t)((me + 1) % P) * unit; /* homed on the next rank */
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        loom_abort(1, "dsm_coll: cannot open %s", path);
    if (P > 1) {
        errno = 0;
        ssize_t got = pread(fd, other, unit, 0);
        if (got != -1 || errno != EFAULT)
            loom_abort(1, "dsm_coll: read(2) into an untouched remote unit gave %zd (%s), "
                       "not EFAULT", got, strerror(errno));
    }
    loom_touch(other, unit, 1);
    if (pread(fd, other, unit, 0) != (ssize_t)unit || memcmp(other, src, unit))
        loom_abort(1, "dsm_coll: read(2) after loom_touch did not read the file");
    close(fd);
    free(src);
    loom_barrier();
    loom_free(b);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 2) {
        fprintf(stderr, "usage: dsm_coll SCRATCHFILE\n");
        return 2;
    }
    me = loom_rank(), P = loom_size();
    static const size_t units[] = {4096, 65536};
    static const size_t sizes[] = {4096, 16384, 65536, 1 << 20};
    for (int u = 0; u < 2; u++)
        for (int s = 0; s < 4; s++) {
            bcasts(sizes[s], units[u]);
            allreduce(sizes[s], units[u]);
        }
    reads(argv[1]);
    if (me == 0)
        printf("dsm_coll: ok (%d ranks)\n", P);
    return loom_finalize();
}
