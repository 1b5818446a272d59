/* test_corpus.c — unit tests for corpus.c: a UCI bag-of-words corpus read
 * exactly (offsets, word ids, vocabulary), each malformed docword and
 * vocab file named FILE:LINE, plain text tokenized and lowercased into a
 * first-occurrence vocabulary with min_count pruning, and the train/test
 * split (deterministic, disjoint, complete, same tokens). */
#include "../../data/corpus.h"
#include "../data.h"
#include "../tap.h"

#include <loom.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[512];

static int same_i32(const int32_t *got, const int32_t *want, int64_t n)
{
    return !memcmp(got, want, sizeof *got * (size_t)n);
}

static int same_i64(const int64_t *got, const int64_t *want, int64_t n)
{
    return !memcmp(got, want, sizeof *got * (size_t)n);
}

#define DOCWORD "3\n5\n4\n1 1 2\n1 3 1\n3 5 3\n3 2 1\n"
#define VOCAB "apple\nbanana\ncherry\ndate\nelder\n"

static void test_uci(void)
{
    char dw[256], vocab[256];
    snprintf(dw, sizeof dw, "%s", write_file("docword.txt", DOCWORD));
    snprintf(vocab, sizeof vocab, "%s", write_file("vocab.txt", VOCAB));
    loom_corpus c;
    int rc = loom_corpus_load_uci(dw, vocab, &c, err, sizeof err);
    static const int64_t off[] = {0, 3, 3, 7};
    static const int32_t word[] = {0, 0, 2, 4, 4, 4, 1};
    ok(rc == 0 && c.ndocs == 3 && c.nwords == 5 && c.ntokens == 7, "UCI: D 3, W 5, 7 tokens (%s)",
       err);
    ok(rc == 0 && same_i64(c.doc_off, off, 4) && same_i32(c.word, word, 7),
       "UCI: counts expand into tokens; document 2 is empty");
    ok(rc == 0 && c.vocab && !strcmp(c.vocab[0], "apple") && !strcmp(c.vocab[4], "elder"),
       "UCI: the vocabulary, word k on line k");
    loom_corpus_free(&c);

    rc = loom_corpus_load_uci(dw, NULL, &c, err, sizeof err);
    ok(rc == 0 && c.vocab == NULL && c.ntokens == 7, "UCI without a vocabulary file");
    loom_corpus_free(&c);

    rc = loom_corpus_load_uci(write_file("dw0.txt", "0\n0\n0\n"), NULL, &c, err, sizeof err);
    ok(rc == 0 && c.ndocs == 0 && c.ntokens == 0 && c.doc_off[0] == 0, "an empty corpus (%s)",
       err);
    loom_corpus_free(&c);
}

/* docword text must fail with want at FILE:want's line. */
static void bad_dw(const char *text, const char *want)
{
    const char *path = write_file("bad.docword.txt", text);
    char expect[512];
    snprintf(expect, sizeof expect, "%s:%s", path, want);
    loom_corpus c;
    int rc = loom_corpus_load_uci(path, NULL, &c, err, sizeof err);
    ok(rc == LOOM_ERR_FORMAT && !strncmp(err, expect, strlen(expect)) && !c.word && !c.doc_off,
       "docword: %s", err);
    if (strncmp(err, expect, strlen(expect)))
        diag("expected: %s...", expect);
}

static void bad_vocab(const char *text, const char *want)
{
    char dw[256];
    snprintf(dw, sizeof dw, "%s", write_file("docword.txt", DOCWORD));
    const char *path = write_file("bad.vocab.txt", text);
    char expect[512];
    snprintf(expect, sizeof expect, "%s:%s", path, want);
    loom_corpus c;
    int rc = loom_corpus_load_uci(dw, path, &c, err, sizeof err);
    ok(rc == LOOM_ERR_FORMAT && !strncmp(err, expect, strlen(expect)) && !c.vocab,
       "vocab: %s", err);
    if (strncmp(err, expect, strlen(expect)))
        diag("expected: %s...", expect);
}

static void test_uci_errors(void)
{
    bad_dw("3\n5\n2\n1 1 2\n4 1 1\n", "5: docID 4 is beyond the D = 3 declared on line 1");
    bad_dw("3\n5\n2\n1 1 2\n2 6 1\n", "5: wordID 6 is beyond the W = 5 declared on line 2");
    bad_dw("3\n5\n2\n1 1 2\n2 2 0\n", "5: bad count '0' (expected an integer from 1 to");
    bad_dw("3\n5\n2\n1 1 2\n2 2 -1\n", "5: bad count '-1'");
    bad_dw("3\n5\n2\n1 1 2\n2 x 1\n", "5: bad wordID 'x'");
    bad_dw("3\n5\n2\n1 1 2\n0 1 1\n", "5: bad docID '0'");
    bad_dw("3\n5\n2\n1 1 2\n2 1\n", "5: missing the count");
    bad_dw("3\n5\n2\n1 1 2\n2 1 1 x\n", "5: unexpected 'x' after the count");
    bad_dw("3\nfive\n2\n", "2: bad header line 'five' (expected the vocabulary size W alone)");
    bad_dw("3\n5 2\n2\n", "2: bad header line '5 2'");
    bad_dw("3\n5\n", "2: the file ends inside the header");
    bad_dw("3\n5\n5\n1 1 2\n1 3 1\n3 5 3\n3 2 1\n",
           "7: the file ends after 4 of the NNZ = 5 entries declared on line 3");
    bad_dw("3\n5\n3\n1 1 2\n1 3 1\n3 5 3\n3 2 1\n",
           "7: more entries than the NNZ = 3 declared on line 3");
    bad_dw("3\n5\n2\n2 1 1\n1 1 1\n",
           "5: docID 1 comes after docID 2 (entries must be grouped by document");

    bad_vocab("apple\nbanana\ncherry\ndate\n", "4: the file ends after 4 words, but");
    bad_vocab(VOCAB "fig\n", "6: more words than the W = 5 declared on line 2 of");
    bad_vocab("apple\n\ncherry\ndate\nelder\n", "2: empty line (expected one word per line)");

    loom_corpus c;
    int rc = loom_corpus_load_uci(scratch("docword.txt"), "/nonexistent/vocab.txt", &c, err,
                                  sizeof err);
    ok(rc == LOOM_ERR_IO && !strcmp(err, "/nonexistent/vocab.txt: No such file or directory"),
       "a missing vocabulary file: %s", err);
    rc = loom_corpus_load_uci("/nonexistent/dw.txt", NULL, &c, err, sizeof err);
    ok(rc == LOOM_ERR_IO && !strcmp(err, "/nonexistent/dw.txt: No such file or directory"),
       "a missing docword file: %s", err);
}

static void test_text(void)
{
    const char *text = "The cat sat on the mat.\n\nThe DOG, the cat!  Dogs-and-cats 42\n"
                       "na\xc3\xafve caf\xc3\xa9\n";
    const char *path = write_file("text.txt", text);
    loom_corpus c;
    int rc = loom_corpus_load_text(path, 1, &c, err, sizeof err);
    static const char *const words[] = {"the", "cat",  "sat",  "on", "mat", "dog",
                                        "dogs", "and", "cats", "42", "na\xc3\xafve",
                                        "caf\xc3\xa9"};
    static const int64_t off[] = {0, 6, 6, 14, 16};
    static const int32_t tok[] = {0, 1, 2, 3, 0, 4, 0, 5, 0, 1, 6, 7, 8, 9, 10, 11};
    int vocab_ok = rc == 0 && c.nwords == 12;
    for (int k = 0; vocab_ok && k < 12; k++)
        vocab_ok = !strcmp(c.vocab[k], words[k]);
    ok(rc == 0 && c.ndocs == 4 && c.ntokens == 16, "text: 4 documents (one empty), 16 tokens (%s)",
       err);
    ok(vocab_ok, "text: lowercased words in first-occurrence order, UTF-8 kept inside words");
    ok(rc == 0 && same_i64(c.doc_off, off, 5) && same_i32(c.word, tok, 16),
       "text: every document's word ids");
    loom_corpus_free(&c);

    rc = loom_corpus_load_text(path, 2, &c, err, sizeof err);
    static const int64_t off2[] = {0, 3, 3, 6, 6};
    static const int32_t tok2[] = {0, 1, 0, 0, 0, 1};
    ok(rc == 0 && c.nwords == 2 && !strcmp(c.vocab[0], "the") && !strcmp(c.vocab[1], "cat") &&
           c.ndocs == 4 && c.ntokens == 6 && same_i64(c.doc_off, off2, 5) &&
           same_i32(c.word, tok2, 6),
       "text, min_count 2: only 'the' and 'cat' stay; documents keep their lines");
    loom_corpus_free(&c);

    static const char binary[] = "fine words\nstill fine\nbad\0byte\n";
    FILE *bf = fopen(scratch("binary.txt"), "wb");
    fwrite(binary, 1, sizeof binary - 1, bf);
    fclose(bf);
    char want[512];
    snprintf(want, sizeof want, "%s:3: a NUL byte at column 4: this is not a text file "
             "(decompress a compressed one first)", scratch("binary.txt"));
    rc = loom_corpus_load_text(scratch("binary.txt"), 1, &c, err, sizeof err);
    ok(rc == LOOM_ERR_FORMAT && !strcmp(err, want) && c.ndocs == 0 && !c.word,
       "text: a NUL byte is named FILE:LINE and column: %s", err);

    rc = loom_corpus_load_text("/nonexistent/t.txt", 1, &c, err, sizeof err);
    ok(rc == LOOM_ERR_IO && !strcmp(err, "/nonexistent/t.txt: No such file or directory"),
       "text: a missing file: %s", err);

    /* Many distinct words: the hash table grows many times. */
    FILE *f = fopen(scratch("many.txt"), "w");
    for (int d = 0; d < 2000; d++) {
        for (int k = 0; k < 50; k++)
            fprintf(f, "W%d ", (d * 50 + k) % 30011);
        fputc('\n', f);
    }
    fclose(f);
    rc = loom_corpus_load_text(scratch("many.txt"), 1, &c, err, sizeof err);
    int ids_ok = rc == 0;
    for (int64_t t = 0; ids_ok && t < c.ntokens; t++) {
        char w[16];
        snprintf(w, sizeof w, "w%d", (int)(t % 30011));
        ids_ok = !strcmp(c.vocab[c.word[t]], w);
    }
    ok(rc == 0 && c.ndocs == 2000 && c.nwords == 30011 && c.ntokens == 100000 && ids_ok,
       "text: 30011 distinct words, every token maps back to its word");
    loom_corpus_free(&c);
}

static void test_split(void)
{
    loom_corpus c, tr, te, tr2, te2;
    int rc = loom_corpus_load_text(scratch("many.txt"), 1, &c, err, sizeof err);
    uint8_t *flag = malloc((size_t)c.ndocs), *flag2 = malloc((size_t)c.ndocs);
    rc |= loom_corpus_split(&c, 0.3, 5, &tr, &te, flag);
    int ntest = 0;
    for (int32_t d = 0; d < c.ndocs; d++)
        ntest += flag[d];
    ok(rc == 0 && tr.ndocs + te.ndocs == c.ndocs && te.ndocs == ntest &&
           tr.ntokens + te.ntokens == c.ntokens,
       "split: %d train + %d test documents, every token once", tr.ndocs, te.ndocs);
    ok(te.ndocs > 500 && te.ndocs < 700, "split: about 30%% held out (%d of 2000)", te.ndocs);
    /* Each side's documents are the originals, in order. */
    int32_t k[2] = {0, 0};
    int copies_ok = 1;
    for (int32_t d = 0; d < c.ndocs && copies_ok; d++) {
        loom_corpus *o = flag[d] ? &te : &tr;
        int32_t j = k[flag[d]]++;
        int64_t n = c.doc_off[d + 1] - c.doc_off[d];
        copies_ok = o->doc_off[j + 1] - o->doc_off[j] == n &&
                    same_i32(o->word + o->doc_off[j], c.word + c.doc_off[d], n);
    }
    ok(copies_ok, "split: each document keeps its tokens, in the original order");
    ok(tr.vocab && te.vocab && tr.vocab != c.vocab && !strcmp(tr.vocab[7], c.vocab[7]) &&
           !strcmp(te.vocab[30010], c.vocab[30010]) && tr.nwords == c.nwords,
       "split: both sides own a copy of the vocabulary");
    rc = loom_corpus_split(&c, 0.3, 5, &tr2, &te2, flag2);
    ok(rc == 0 && !memcmp(flag, flag2, (size_t)c.ndocs) && tr2.ntokens == tr.ntokens,
       "split: the same seed gives the same split");
    loom_corpus_free(&tr2);
    loom_corpus_free(&te2);
    rc = loom_corpus_split(&c, 0.3, 6, &tr2, &te2, flag2);
    ok(rc == 0 && memcmp(flag, flag2, (size_t)c.ndocs), "split: another seed, another split");
    loom_corpus_free(&tr2);
    loom_corpus_free(&te2);
    rc = loom_corpus_split(&c, 0, 5, &tr2, &te2, NULL);
    ok(rc == 0 && te2.ndocs == 0 && tr2.ndocs == c.ndocs, "split: fraction 0 holds nothing out");
    loom_corpus_free(&tr2);
    loom_corpus_free(&te2);
    rc = loom_corpus_split(&c, 1.5, 5, &tr2, &te2, NULL);
    ok(rc == LOOM_ERR_ARG, "split: fraction 1.5 is refused");
    loom_corpus_free(&tr);
    loom_corpus_free(&te);
    loom_corpus_free(&c);
    free(flag);
    free(flag2);
}

/* Blocks of equal tokens: documents of lengths 10, 0, 1, 1, 1, 1, 6, 0
 * (20 tokens). */
static void test_block(void)
{
    int64_t off[] = {0, 10, 10, 11, 12, 13, 14, 20, 20};
    loom_corpus c = {.ndocs = 8, .ntokens = 20, .doc_off = off};
    ok(loom_corpus_block(&c, 0, 2) == 0 && loom_corpus_block(&c, 1, 2) == 1 &&
           loom_corpus_block(&c, 2, 2) == 8,
       "block: 2 parts split at token 10, before the empty document (docs 0 | 1..7)");
    int want3[] = {0, 1, 5, 8}, want4[] = {0, 1, 1, 7, 8}, good = 1;
    for (int k = 0; k <= 3; k++) /* at tokens 0, 6, 13 (rounded down), end */
        good &= loom_corpus_block(&c, k, 3) == want3[k];
    for (int k = 0; k <= 4; k++) /* at tokens 0, 5, 10, 15, end: part 1 is empty */
        good &= loom_corpus_block(&c, k, 4) == want4[k];
    ok(good, "block: 3 and 4 parts begin at the first document at or after k * 20 / parts");
    ok(loom_corpus_block(&c, 1, 1) == 8, "block: the end of the last part is ndocs, "
                                         "past trailing empty documents");
}

int main(void)
{
    test_uci();
    test_uci_errors();
    test_text();
    test_split();
    test_block();
    return done_testing();
}
