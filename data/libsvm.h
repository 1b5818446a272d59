/* libsvm.h — reading a LIBSVM (svmlight) file, "label index:value ...",
 * into compressed sparse rows, keeping one rank's share of the rows: the
 * input of the regression and classification apps (loom-lasso, loom-lr).
 * Format and messages: docs/loom-lasso.md. */
#ifndef LOOM_LIBSVM_H
#define LOOM_LIBSVM_H

#include <stddef.h>
#include <stdint.h>

#include "lines.h"

typedef struct loom_libsvm {
    int64_t n;      /* rows kept (local row r is file row r * parts + part) */
    int64_t nfile;  /* rows in the whole file */
    int64_t cols;   /* the largest feature index in the whole file (indices
                       are 1-based in the file, 0-based here: 0..cols-1) */
    int64_t nnz;    /* values kept */
    double *y;      /* n labels */
    int64_t *ptr;   /* n + 1: row r's values are [ptr[r], ptr[r+1]) */
    int64_t *idx;   /* nnz 0-based feature indices, increasing in each row */
    double *val;    /* nnz values */
} loom_libsvm;

/* Reads path into *out (which it overwrites).  A row is a line
 *   LABEL [qid:N] INDEX:VALUE INDEX:VALUE ... [# comment]
 * with a finite label and value, indices from 1 to 2^63 - 1 strictly
 * increasing (hashed feature ids fit); blank lines and '#' comment lines are skipped (they are not
 * rows); "qid:N" is accepted and ignored.  share == NULL keeps every row,
 * else only rows i with i % parts == part (nfile and cols still describe
 * the whole file).  Returns LOOM_OK; or LOOM_ERR_FORMAT with "FILE:LINE:
 * what is wrong" in err, LOOM_ERR_IO with "FILE: strerror",
 * LOOM_ERR_NOMEM, LOOM_ERR_ARG for a bad share.  On error *out is left
 * empty. */
int loom_libsvm_load(const char *path, const loom_rows *share, loom_libsvm *out, char *err,
                     size_t errlen);

/* loom_libsvm_load for a file whose feature indices start at first_index:
 * 1 (LIBSVM's own) or 0 (scikit-learn's dump_svmlight_file default);
 * out->idx is 0-based either way and out->cols the number of features. */
int loom_libsvm_read(const char *path, const loom_rows *share, int first_index, loom_libsvm *out,
                     char *err, size_t errlen);

/* Frees the arrays and empties *out. */
void loom_libsvm_free(loom_libsvm *out);

#endif
