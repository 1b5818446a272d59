/* gen.h — the data generator behind `loom-gen`: Netflix-shaped ratings
 * from a planted low-rank model, and corpora drawn from the LDA generative
 * model, written in the formats the loaders read (ratings.h, corpus.h),
 * so that runs of 10^7 to 10^8 samples need no download.  Output is a
 * function of the options and the seed only: every user and every
 * document has its own random stream, and chunks are generated in
 * parallel (OpenMP) but written in order, so the files are byte-identical
 * for any number of threads.  The models are described in docs/data.md. */
#ifndef LOOM_GEN_H
#define LOOM_GEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_gen_ratings_opts {
    int32_t users, items; /* ids 1..users and 1..items in the files */
    int32_t rank;         /* K, the planted model's rank */
    int64_t samples;      /* ratings in all, train + test; at most users*items */
    double test_fraction; /* each rating goes to PREFIX.test with this probability */
    double noise;         /* standard deviation of the Gaussian noise */
    double zipf_users;    /* popularity exponents: the user (item) of popularity */
    double zipf_items;    /*   rank r gets weight (r+1)^-zipf; 0 = uniform */
    int real;             /* 1: real-valued ratings (3 decimals), 0: integers 1..5 */
    uint64_t seed;
} loom_gen_ratings_opts;

typedef struct loom_gen_ratings_stats {
    int64_t train, test;    /* ratings written to PREFIX.train and PREFIX.test */
    int32_t users_rated;    /* users with at least one rating */
    int32_t max_degree;     /* the most ratings of one user */
    double planted_rmse;    /* on the test ratings: RMSE of the planted model's
                               noise-free score (clipped to [1, 5] unless real) */
} loom_gen_ratings_stats;

/* The defaults: test_fraction 0.1, noise 0.5, zipf_users 0.4, zipf_items
 * 0.6, rank 10, real 0, seed 1; sizes 0 (the caller must set them). */
void loom_gen_ratings_defaults(loom_gen_ratings_opts *o);

/* Writes PREFIX.train and PREFIX.test: lines "user<TAB>item<TAB>rating"
 * (MovieLens order: 1-based ids, grouped by user).  Every (user, item)
 * pair occurs at most once in the two files together.  Fills *st when not
 * NULL.  Returns LOOM_OK; LOOM_ERR_ARG with the reason in err for bad
 * options; LOOM_ERR_IO with "FILE: strerror"; LOOM_ERR_NOMEM. */
int loom_gen_ratings(const loom_gen_ratings_opts *o, const char *prefix,
                     loom_gen_ratings_stats *st, char *err, size_t errlen);

typedef struct loom_gen_lda_opts {
    int32_t docs, vocab, topics; /* D, V, K */
    double doc_length;           /* mean document length (Poisson) */
    double alpha;                /* document-topic prior: symmetric Dirichlet(alpha) */
    double beta;                 /* topic-word prior: Dirichlet(beta * V * z), z Zipf */
    double zipf;                 /* z_w proportional to (w+1)^-zipf; 0 = symmetric */
    uint64_t seed;
} loom_gen_lda_opts;

typedef struct loom_gen_lda_stats {
    int64_t tokens;   /* sum of the document lengths */
    int64_t nnz;      /* entries of the docword file */
    int32_t empty;    /* documents of length 0 (they have no entries) */
} loom_gen_lda_stats;

/* The defaults: alpha 0.1, beta 0.01, zipf 1.0, seed 1; sizes 0. */
void loom_gen_lda_defaults(loom_gen_lda_opts *o);

/* Writes PREFIX.docword.txt (UCI bag-of-words: D, W, NNZ, then "doc word
 * count" sorted by doc then word), PREFIX.vocab.txt (V synthetic,
 * pronounceable words; word id = rank in the Zipf prior) and
 * PREFIX.topics.txt (the planted topics: K lines of V probabilities
 * "%.6g", line k is topic k's word distribution).  Returns as
 * loom_gen_ratings. */
int loom_gen_lda(const loom_gen_lda_opts *o, const char *prefix, loom_gen_lda_stats *st,
                 char *err, size_t errlen);

/* The synthetic word for id (distinct ids give distinct words) into buf;
 * returns buf.  n >= 16 always suffices. */
char *loom_gen_word(int32_t id, char *buf, size_t n);

/* Reads a topics file (as loom_gen_lda writes) into *phi: *K rows of *V
 * doubles, row-major, malloc'd.  Every line must hold the same number of
 * values.  Returns LOOM_OK, or LOOM_ERR_FORMAT with "FILE:LINE: ..." in
 * err, LOOM_ERR_IO, LOOM_ERR_NOMEM. */
int loom_topics_load(const char *path, int32_t *K, int32_t *V, double **phi, char *err,
                     size_t errlen);

#endif
