/* ratings.h — loading a ratings file (user, item, rating) into memory for
 * the matrix-factorization apps: MovieLens-style triples or MatrixMarket
 * coordinate files, with an optional filter that keeps one block of users
 * (one rank's share of a distributed job).  Formats, messages: docs/data.md. */
#ifndef LOOM_RATINGS_H
#define LOOM_RATINGS_H

#include <stddef.h>
#include <stdint.h>

/* One rating; ids are 0-based (the files' ids minus one). */
typedef struct loom_rating {
    int32_t u, i;
    float r;
} loom_rating;

typedef enum loom_ratings_format {
    LOOM_RATINGS_TRIPLES = 1,     /* "user item rating [timestamp]" lines */
    LOOM_RATINGS_MATRIXMARKET = 2 /* %%MatrixMarket matrix coordinate ... */
} loom_ratings_format;

typedef struct loom_ratings {
    loom_rating *v;      /* the kept ratings, in file order (malloc'd) */
    int64_t n;           /* how many were kept */
    int64_t nfile;       /* how many the whole file holds, kept or not */
    int32_t nusers;      /* 1 + the largest user id in the whole file; for
                            MatrixMarket the declared number of rows */
    int32_t nitems;      /* likewise for items (MatrixMarket: columns) */
    double sum;          /* the sum of the kept ratings (a cheap checksum) */
    int64_t *raw;        /* loom_ratings_read_raw of a file with an id past
                            INT32_MAX: rating k's 0-based ids as read, user
                            raw[2k], item raw[2k+1]; else NULL */
    loom_ratings_format format;
} loom_ratings;

/* Keep only ratings whose 0-based user id u satisfies lo <= u < hi. */
typedef struct loom_user_range {
    int32_t lo, hi;
} loom_user_range;

/* Reads path into *out (which it overwrites).  keep == NULL keeps every
 * rating; otherwise only those of users in [keep->lo, keep->hi), while
 * nusers, nitems and nfile still describe the whole file.  The format is
 * MatrixMarket when the first line starts with "%%MatrixMarket", else
 * triples.  Returns LOOM_OK; or LOOM_ERR_FORMAT with "FILE:LINE: what is
 * wrong" in err, LOOM_ERR_IO with "FILE: strerror", LOOM_ERR_NOMEM, or
 * LOOM_ERR_ARG for a bad range (err may be NULL when errlen is 0).  On
 * error *out is left empty.  About half a second per 10^7 lines; a large
 * file is read 64 MiB at a time, so memory is the ratings' 12 bytes each
 * plus about 120 MiB. */
int loom_ratings_load(const char *path, const loom_user_range *keep, loom_ratings *out,
                      char *err, size_t errlen);

/* loom_ratings_load for a triples file whose ids start at first_id: 1
 * (MovieLens) or 0 (LIBMF's files, most Python tools' dumps).  An id below
 * first_id is "FILE:LINE: bad user id '0' (expected ...)".  MatrixMarket
 * files are 1-based by their standard, whatever first_id says. */
int loom_ratings_read(const char *path, const loom_user_range *keep, int first_id,
                      loom_ratings *out, char *err, size_t errlen);

/* loom_ratings_read of every rating, for a program that numbers ids
 * itself (loom-mf: dense ids): triples' ids may run to 2^63 - 1 (2^63 - 2
 * from 0).  While every id (0-based) fits an int32, each rating's u and i
 * are its ids as read, out->raw is NULL, and nusers and nitems are 1 + the
 * largest; a file with a larger id is read again keeping every rating's
 * ids as read (0-based) in out->raw (16 bytes a rating), u and i 0, and
 * nusers and nitems meaning nothing.  MatrixMarket files are read as
 * usual (raw NULL). */
int loom_ratings_read_raw(const char *path, int first_id, loom_ratings *out, char *err,
                          size_t errlen);

/* Bytes of a large triples file the parallel reader holds at a time
 * (64 MiB; tests shrink it to cross many windows). */
extern size_t loom_ratings_window;

/* Frees out->v and out->raw and empties *out. */
void loom_ratings_free(loom_ratings *out);

/* The split of users [0, nusers) into nranks contiguous blocks of about
 * equal numbers of r's ratings: rank's block into *range.  The same on
 * every rank that holds the same ratings. */
void loom_ratings_split(const loom_ratings *r, int32_t nusers, int rank, int nranks,
                        loom_user_range *range);

/* Keeps only the ratings of users in keep (in file order): n, sum and v
 * shrink; nfile, nusers and nitems still describe the whole file. */
void loom_ratings_keep(loom_ratings *r, const loom_user_range *keep);

/* The even block split of n users over nranks: rank r's range is
 * [n*r/nranks, n*(r+1)/nranks).  Fills *range; 0 <= rank < nranks. */
void loom_ratings_block(int32_t n, int rank, int nranks, loom_user_range *range);

#endif
