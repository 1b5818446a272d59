/* idx.c — the IDX reader (idx.h), through zlib's gzread so that .gz files
 * and plain ones read alike. */
#include "idx.h"

#include <loom.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_BYTES ((int64_t)1 << 36) /* 64 GiB: anything larger is a corrupt header */

/* Reads exactly n bytes; returns the number read (short at end of file),
 * or -1 on a read error. */
static int64_t read_all(gzFile f, void *buf, int64_t n)
{
    int64_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1 << 30) ? 1u << 30 : (unsigned)(n - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += r;
    }
    return got;
}

int loom_idx_load(const char *path, loom_idx *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, errno ? strerror(errno) : "cannot open");
        return LOOM_ERR_IO;
    }
    int rc = LOOM_ERR_FORMAT;
    uint8_t h[4 + 16];
    int64_t got = read_all(f, h, 4);
    if (got < 0)
        goto ioerr;
    if (got < 4 || h[0] || h[1]) {
        snprintf(err, errlen, "%s: byte 0: not an IDX file (no magic number)", path);
        goto out;
    }
    if (h[2] != 0x08) {
        snprintf(err, errlen, "%s: byte 2: element type 0x%02x is not supported (only "
                 "unsigned bytes, 0x08)", path, h[2]);
        goto out;
    }
    if (h[3] < 1 || h[3] > 4) {
        snprintf(err, errlen, "%s: byte 3: %d dimensions (expected 1 to 4)", path, h[3]);
        goto out;
    }
    out->rank = h[3];
    got = read_all(f, h + 4, 4 * out->rank);
    if (got < 0)
        goto ioerr;
    if (got < 4 * out->rank) {
        snprintf(err, errlen, "%s: byte %lld: the header ends early", path, (long long)(4 + got));
        goto out;
    }
    out->n = 1;
    for (int d = 0; d < out->rank; d++) {
        const uint8_t *p = h + 4 + 4 * d;
        out->dim[d] = (int64_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
        if (out->dim[d] == 0 || out->n > MAX_BYTES / out->dim[d]) {
            snprintf(err, errlen, "%s: byte %d: dimension %d is %lld (%s)", path, 4 + 4 * d, d,
                     (long long)out->dim[d], out->dim[d] ? "too large" : "empty");
            goto out;
        }
        out->n *= out->dim[d];
    }
    if (!(out->data = malloc((size_t)out->n))) {
        rc = LOOM_ERR_NOMEM;
        snprintf(err, errlen, "%s: out of memory for %lld bytes", path, (long long)out->n);
        goto out;
    }
    int64_t at = 4 + 4 * out->rank;
    got = read_all(f, out->data, out->n);
    if (got < 0)
        goto ioerr;
    if (got < out->n) {
        snprintf(err, errlen, "%s: byte %lld: the data ends early (%lld of %lld bytes)", path,
                 (long long)(at + got), (long long)got, (long long)out->n);
        goto out;
    }
    char extra;
    if ((got = read_all(f, &extra, 1)) != 0) {
        if (got < 0)
            goto ioerr;
        snprintf(err, errlen, "%s: byte %lld: bytes after the last element", path,
                 (long long)(at + out->n));
        goto out;
    }
    gzclose(f);
    return LOOM_OK;
ioerr:;
    int e;
    const char *m = gzerror(f, &e);
    snprintf(err, errlen, "%s: %s", path, e == Z_ERRNO ? strerror(errno) : m);
    rc = LOOM_ERR_IO;
out:
    gzclose(f);
    loom_idx_free(out);
    return rc;
}

void loom_idx_free(loom_idx *x)
{
    free(x->data);
    memset(x, 0, sizeof *x);
}
