/* stopwords.h — dropping stop words from a text corpus: a built-in
 * English list (loom_stopwords_english) or a file of one word per line,
 * removed from the corpus's vocabulary and tokens (loom-lda --stopwords). */
#ifndef LOOM_DATA_STOPWORDS_H
#define LOOM_DATA_STOPWORDS_H

#include <stddef.h>

#include "corpus.h"

/* The built-in list: about 170 common English function words, lowercase,
 * ended by NULL. */
extern const char *const loom_stopwords_english[];

/* Reads path: one word per line, lowercased as the text reader does;
 * blank lines and lines starting with '#' skipped.  Returns a NULL-ended
 * malloc'd array of malloc'd words in *out (free with
 * loom_stopwords_free), LOOM_OK; or LOOM_ERR_IO "FILE: strerror",
 * LOOM_ERR_NOMEM. */
int loom_stopwords_load(const char *path, char ***out, char *err, size_t errlen);
void loom_stopwords_free(char **words);

/* Removes every word of `stop` (NULL-ended) from c: its tokens go, the
 * vocabulary keeps the other words in their order with ids renumbered
 * 0..nwords-1.  c must have a vocabulary (text corpora do).  Returns the
 * number of tokens removed, or -1 when out of memory (c unchanged). */
int64_t loom_corpus_drop_words(loom_corpus *c, const char *const *stop);

#endif
