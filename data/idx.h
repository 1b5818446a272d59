/* idx.h — reading IDX files (the MNIST / Fashion-MNIST format: a magic
 * number giving the element type and rank, big-endian dimensions, then
 * the elements), plain or gzip-compressed (zlib detects which), for the
 * logistic-regression app.  Only unsigned-byte elements (type 0x08) are
 * accepted: that is what the image and label files hold.
 * Messages: docs/data.md. */
#ifndef LOOM_IDX_H
#define LOOM_IDX_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_idx {
    int rank;          /* number of dimensions, 1..4 */
    int64_t dim[4];    /* dim[0] items, then the shape of one item */
    int64_t n;         /* dim[0] * ... * dim[rank-1] elements */
    uint8_t *data;     /* n bytes, row-major (malloc'd) */
} loom_idx;

/* Reads path into *out.  Returns LOOM_OK; or LOOM_ERR_FORMAT with
 * "FILE: byte OFFSET: what is wrong" in err (bad magic, unsupported type,
 * zero or absurd dimensions, truncated data, trailing bytes),
 * LOOM_ERR_IO with "FILE: strerror", LOOM_ERR_NOMEM.  On error *out is
 * left empty.  Offsets count uncompressed bytes. */
int loom_idx_load(const char *path, loom_idx *out, char *err, size_t errlen);

void loom_idx_free(loom_idx *x);

#endif
