/* fuzz_corpus.c — the corpus loaders (data/corpus.c): UCI bag-of-words
 * (docword, and optionally vocab) and plain text, then the train/test
 * split.  Input: byte 0 picks the loader (mod 3: UCI docword alone, UCI
 * with a vocabulary, plain text) and, for text, min_count (byte 0 / 3);
 * for UCI with a vocabulary bytes 1-2 give the docword file's length and
 * the vocabulary follows it.  Invariants of an accepted corpus: offsets
 * start at 0, never decrease and end at ntokens; every word id is below
 * nwords; a vocabulary has nwords strings; the split puts every document
 * in exactly one half with its tokens; a refusal leaves it empty. */
#include "fuzz.h"
#include "corpus.h"

#include <stdlib.h>
#include <string.h>

static void check(const loom_corpus *c)
{
    FUZZ_CHECK(c->ndocs >= 0 && c->nwords >= 0 && c->doc_off && c->doc_off[0] == 0 &&
                   c->doc_off[c->ndocs] == c->ntokens,
               "%d documents, %lld tokens", c->ndocs, (long long)c->ntokens);
    for (int32_t k = 0; k < c->ndocs; k++)
        FUZZ_CHECK(c->doc_off[k] <= c->doc_off[k + 1], "document %d ends before it starts", k);
    for (int64_t t = 0; t < c->ntokens; t++)
        FUZZ_CHECK(c->word[t] >= 0 && c->word[t] < c->nwords, "token %lld is word %d of %d",
                   (long long)t, c->word[t], c->nwords);
    for (int32_t w = 0; c->vocab && w < c->nwords; w++)
        FUZZ_CHECK(c->vocab[w] != NULL, "word %d has no string", w);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!n)
        return 0;
    int mode = d[0] % 3;
    loom_corpus c;
    char err[512];
    int rc;
    if (mode == 2) {
        rc = loom_corpus_load_text(fuzz_file(0, d + 1, n - 1), d[0] / 3, &c, err, sizeof err);
    } else if (mode == 0) {
        rc = loom_corpus_load_uci(fuzz_file(0, d + 1, n - 1), NULL, &c, err, sizeof err);
    } else {
        size_t dl = fuzz_u16(d + 1, d + n), rest = n > 3 ? n - 3 : 0;
        if (dl > rest)
            dl = rest;
        rc = loom_corpus_load_uci(fuzz_file(0, d + 3, dl), fuzz_file(1, d + 3 + dl, rest - dl),
                                  &c, err, sizeof err);
    }
    if (rc) {
        FUZZ_CHECK(!c.doc_off && !c.word && !c.vocab && !c.ndocs && err[0],
                   "refused (%d) but not empty", rc);
        return 0;
    }
    check(&c);
    FUZZ_CHECK(mode != 1 || c.vocab, "%s", "the vocabulary was not loaded");
    loom_corpus train, test;
    uint8_t *is_test = malloc((size_t)c.ndocs + 1);
    FUZZ_CHECK(is_test, "%s", "memory");
    if (!loom_corpus_split(&c, (d[0] & 0xf0) / 240.0, d[0], &train, &test, is_test)) {
        check(&train);
        check(&test);
        FUZZ_CHECK(train.ndocs + test.ndocs == c.ndocs && train.ntokens + test.ntokens ==
                   c.ntokens, "split %d + %d of %d documents", train.ndocs, test.ndocs, c.ndocs);
        int32_t k[2] = {0, 0};
        for (int32_t doc = 0; doc < c.ndocs; doc++) {
            const loom_corpus *half = is_test[doc] ? &test : &train;
            int32_t j = k[is_test[doc]]++;
            int64_t len = c.doc_off[doc + 1] - c.doc_off[doc];
            FUZZ_CHECK(half->doc_off[j + 1] - half->doc_off[j] == len &&
                           (!len || !memcmp(half->word + half->doc_off[j], c.word + c.doc_off[doc],
                                            sizeof(int32_t) * (size_t)len)),
                       "document %d changed in the split", doc);
        }
        loom_corpus_free(&train);
        loom_corpus_free(&test);
    }
    free(is_test);
    loom_corpus_free(&c);
    return 0;
}
