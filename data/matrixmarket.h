/* matrixmarket.h — reading a real MatrixMarket matrix or vector (the NIST
 * exchange format) as a list of entries, keeping one rank's share of the
 * rows: the design matrix X and the response y of the regression apps.
 * Formats and messages: docs/loom-lasso.md. */
#ifndef LOOM_MATRIXMARKET_H
#define LOOM_MATRIXMARKET_H

#include <stddef.h>
#include <stdint.h>

#include "lines.h"

/* One stored value: 0-based row and column of the whole matrix. */
typedef struct loom_mm_entry {
    int64_t row;
    int64_t col;
    double v;
} loom_mm_entry;

typedef struct loom_mm {
    int64_t rows, cols; /* the declared size (a vector has 1 column) */
    int64_t nfile;      /* values the file stores (array: rows * cols) */
    int64_t n;          /* entries kept, in file order */
    loom_mm_entry *e;   /* the kept entries (malloc'd); an array's zeros
                           are kept too */
    int array;          /* 1: dense "array" format, 0: "coordinate" */
    int vector;         /* 1: the object was "vector" */
} loom_mm;

/* Reads path into *out (which it overwrites).  The banner must be
 *   %%MatrixMarket matrix|vector coordinate|array real|integer|double general
 * ("pattern" coordinates read as 1).  '%' comments and blank lines may
 * come anywhere after it.  The size line is "rows cols entries"
 * (coordinate matrix), "rows cols" (array matrix), "rows entries"
 * (coordinate vector) or "rows" (array vector); an array lists its values
 * column by column.  share == NULL keeps every row, else only the rows
 * i with i % parts == part (rows, cols and nfile still describe the whole
 * file).  Returns LOOM_OK; or LOOM_ERR_FORMAT with "FILE:LINE: what is
 * wrong" in err, LOOM_ERR_IO with "FILE: strerror", LOOM_ERR_NOMEM,
 * LOOM_ERR_ARG for a bad share.  On error *out is left empty. */
int loom_mm_load(const char *path, const loom_rows *share, loom_mm *out, char *err,
                 size_t errlen);

/* Frees out->e and empties *out. */
void loom_mm_free(loom_mm *out);

#endif
