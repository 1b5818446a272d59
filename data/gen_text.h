/* gen_text.h — `loom-gen text`: a news20-shaped multiclass text problem for
 * loom-lr's sparse multinomial model.  A vocabulary of V words with Zipf
 * frequencies is shared by C classes; each class also has words of its
 * own (drawn from the vocabulary, so classes may share some); a document
 * of class c draws each token from its class's words with probability
 * `own`, else from the shared vocabulary.  A sample is a document's word
 * counts as log(1 + count), scaled to unit length (as tf-normalized text
 * is), in LIBSVM format with the class (1..C) as its label.  The output is
 * a function of the options and the seed only.  docs/data.md describes it. */
#ifndef LOOM_GEN_TEXT_H
#define LOOM_GEN_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_gen_text_opts {
    int64_t samples;  /* training documents */
    int64_t test;     /* test documents */
    int64_t features; /* V, the vocabulary */
    int32_t classes;  /* C >= 2 */
    double length;    /* mean tokens a document (uniform in [L/2, 3L/2]) */
    int32_t words;    /* each class's own words */
    double own;       /* a token's chance of being one of its class's words */
    double zipf;      /* exponent of the shared vocabulary's frequencies */
    uint64_t seed;
} loom_gen_text_opts;

/* The defaults: test = samples / 4, length 80, words 300, own 0.04,
 * zipf 1, seed 1; the sizes 0. */
void loom_gen_text_defaults(loom_gen_text_opts *o);

/* Writes PREFIX.train.svm and PREFIX.test.svm; *nnz (when not NULL) gets
 * the non-zeros of both.  Returns LOOM_OK; LOOM_ERR_ARG with the reason in
 * err for bad options; LOOM_ERR_IO with "FILE: strerror"; LOOM_ERR_NOMEM. */
int loom_gen_text(const loom_gen_text_opts *o, const char *prefix, int64_t *nnz, char *err,
                  size_t errlen);

#endif
