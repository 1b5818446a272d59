/* corpus.h — loading a document corpus for the topic-model apps: UCI
 * bag-of-words (docword + vocab files) or plain text with one document
 * per line, into a CSR-like token array; and a deterministic split into
 * training and held-out documents.  Formats, messages: docs/data.md. */
#ifndef LOOM_CORPUS_H
#define LOOM_CORPUS_H

#include <stddef.h>
#include <stdint.h>

/* Document d's tokens are word[doc_off[d] .. doc_off[d+1]), each a 0-based
 * word id below nwords.  A UCI entry "d w c" becomes c consecutive tokens
 * w, in file order.  Everything is malloc'd and owned by the corpus. */
typedef struct loom_corpus {
    int32_t ndocs;     /* D */
    int32_t nwords;    /* W, the vocabulary size */
    int64_t ntokens;   /* doc_off[D] */
    int64_t *doc_off;  /* D + 1 offsets into word */
    int32_t *word;     /* ntokens word ids */
    char **vocab;      /* nwords NUL-terminated words, or NULL (UCI without
                          a vocabulary file) */
} loom_corpus;

/* Reads a UCI bag-of-words corpus: docword_path holds three header lines
 * D, W, NNZ, then NNZ lines "docID wordID count" (1-based ids, grouped by
 * document in increasing docID order, as the UCI files are); vocab_path,
 * when not NULL, holds exactly W lines, word k on line k.  Returns
 * LOOM_OK; or LOOM_ERR_FORMAT with "FILE:LINE: what is wrong" in err,
 * LOOM_ERR_IO with "FILE: strerror", LOOM_ERR_NOMEM.  On error *c is
 * left empty. */
int loom_corpus_load_uci(const char *docword_path, const char *vocab_path, loom_corpus *c,
                         char *err, size_t errlen);

/* Reads plain text, one document per line (an empty line is an empty
 * document): words are maximal runs of ASCII letters and digits, and of
 * bytes >= 0x80 (so UTF-8 letters stay inside words), lowercased (ASCII).
 * Word ids follow first occurrence.  Words occurring fewer than min_count
 * times in the whole file are dropped (min_count <= 1 keeps all); the
 * documents keep their line numbers even if they end up empty.  A NUL
 * byte (a binary or compressed file) is a format error, "FILE:LINE: a NUL
 * byte at column C: ...".  Returns as loom_corpus_load_uci. */
int loom_corpus_load_text(const char *path, int64_t min_count, loom_corpus *c, char *err,
                          size_t errlen);

/* Frees everything and empties *c. */
void loom_corpus_free(loom_corpus *c);

/* Splits c by document: document d goes to *test when a hash of (seed, d)
 * falls below test_fraction (0 <= test_fraction <= 1), else to *train, so
 * the choice of each document depends only on the seed and its index.
 * Both keep c's word ids and get their own copy of the vocabulary; c is
 * unchanged.  If test_doc is not NULL it receives c->ndocs flags (1 =
 * test).  Returns LOOM_OK, LOOM_ERR_ARG or LOOM_ERR_NOMEM. */
int loom_corpus_split(const loom_corpus *c, double test_fraction, uint64_t seed,
                      loom_corpus *train, loom_corpus *test, uint8_t *test_doc);

/* Where block `part` (0 <= part <= parts) of `parts` contiguous blocks of
 * about ntokens / parts tokens each begins: the first document starting
 * at or after token ntokens * part / parts, and ndocs for part == parts.
 * Block k is documents [block(k), block(k + 1)).  Splitting by tokens,
 * not documents, gives ranks equal work when documents differ in length. */
int32_t loom_corpus_block(const loom_corpus *c, int part, int parts);

#endif
