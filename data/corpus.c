/* corpus.c — the corpus loaders (UCI bag-of-words, plain text with one
 * document per line, the latter with a hash-table vocabulary) and the
 * deterministic train/test split by document. */
#include "corpus.h"
#include "grow.h"
#include "lines.h"
#include "mem.h"
#include "rng.h"

#include <loom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- growing arrays --------------------------------------------------- */

struct tokens {
    int32_t *v;
    int64_t n, cap;
};

/* Room for `more` further tokens. */
static int tokens_reserve(struct tokens *t, int64_t more)
{
    size_t cap = (size_t)t->cap;
    int32_t *v = loom_rt_grow(t->v, &cap, (size_t)(t->n + more), sizeof *v);
    if (!v)
        return -1;
    t->v = v;
    t->cap = (int64_t)cap;
    return 0;
}

struct offsets {
    int64_t *v;
    int64_t n, cap;
};

static int offsets_push(struct offsets *o, int64_t x)
{
    if (o->n == o->cap) {
        size_t cap = (size_t)o->cap;
        int64_t *v = loom_rt_grow(o->v, &cap, (size_t)o->n + 1, sizeof *v);
        if (!v)
            return -1;
        o->v = v;
        o->cap = (int64_t)cap;
    }
    o->v[o->n++] = x;
    return 0;
}

/* A vocabulary as one allocation: n pointers, then the n strings.
 * words[k] is the k-th string, of length len[k], at pool + off[k] (or, when
 * off is NULL, the k-th NUL-terminated string of src). */
static char **vocab_pack(int32_t n, const char *pool, const int64_t *off, const int32_t *len,
                         char *const *src)
{
    size_t bytes = 0;
    for (int32_t k = 0; k < n; k++)
        bytes += (off ? (size_t)len[k] : strlen(src[k])) + 1;
    char **v = malloc((size_t)n * sizeof *v + bytes + 1);
    if (!v)
        return NULL;
    char *p = (char *)(v + n);
    for (int32_t k = 0; k < n; k++) {
        size_t l = off ? (size_t)len[k] : strlen(src[k]);
        memcpy(p, off ? pool + off[k] : src[k], l);
        p[l] = '\0';
        v[k] = p;
        p += l + 1;
    }
    return v;
}

void loom_corpus_free(loom_corpus *c)
{
    free(c->doc_off);
    free(c->word);
    free(c->vocab);
    memset(c, 0, sizeof *c);
}

/* ---- UCI bag-of-words --------------------------------------------------- */

struct uci {
    loom_lines *in;
    char *err;
    size_t errlen;
};

/* "FILE:LINE: bad WHAT 'TOKEN' (expected EXPECT)"; returns LOOM_ERR_FORMAT. */
static int uci_bad(const struct uci *u, const char *what, const char *p, const char *e,
                   const char *expect)
{
    char tok[32];
    return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT, "%s:%ld: bad %s '%s' (expected %s)",
                     u->in->path, u->in->lineno, what, loom_token(p, e, tok, sizeof tok), expect);
}

/* One integer field in [lo, hi] ending at a blank or the end of line. */
static const char *uci_int(const char *p, const char *e, int64_t lo, int64_t hi, int64_t *v)
{
    const char *q = loom_scan_i64(p, e, v);
    return q && (q == e || loom_blank(*q)) && *v >= lo && *v <= hi ? q : NULL;
}

/* The header: D, W and NNZ alone on lines 1 to 3. */
static int uci_header(struct uci *u, int64_t h[3])
{
    static const char *const names[3] = {"number of documents D", "vocabulary size W",
                                         "number of entries NNZ"};
    static const int64_t hi[3] = {INT32_MAX - 1, INT32_MAX, INT64_MAX};
    for (int k = 0; k < 3; k++) {
        char *line, shown[44];
        size_t len;
        int have = loom_lines_next(u->in, &line, &len);
        if (have < 0)
            return loom_lines_error(u->in, u->err, u->errlen);
        if (have == 0)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: the file ends inside the header (expected D, W and NNZ "
                             "on lines 1 to 3)",
                             u->in->path, u->in->lineno);
        const char *e = line + len, *p = loom_skip_blanks(line, e), *q = uci_int(p, e, 0, hi[k], &h[k]);
        if (!q || loom_skip_blanks(q, e) != e)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: bad header line '%s' (expected the %s alone)",
                             u->in->path, u->in->lineno,
                             loom_excerpt(line, len, shown, sizeof shown), names[k]);
    }
    return LOOM_OK;
}

/* Reads W words, one per line (trailing blanks dropped; blank lines
 * allowed only after the last word). */
static int uci_vocab(const char *path, const char *docword, int32_t W, char ***out, char *err,
                     size_t errlen)
{
    loom_lines in;
    int rc = loom_lines_open(&in, path, err, errlen);
    if (rc)
        return rc;
    char *pool = NULL;
    int64_t *off = malloc(sizeof *off * ((size_t)W + 1));
    int32_t *len = malloc(sizeof *len * ((size_t)W + 1));
    size_t pool_n = 0, pool_cap = 0;
    int32_t n = 0;
    char *line;
    size_t l;
    int have = 0;
    if (!off || !len)
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
    while (!rc && (have = loom_lines_next(&in, &line, &l)) == 1) {
        while (l && loom_blank(line[l - 1]))
            l--;
        if (n == W) {
            if (l)
                rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                               "%s:%ld: more words than the W = %d declared on line 2 of %s",
                               path, in.lineno, (int)W, docword);
            continue;
        }
        if (!l) {
            rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                           "%s:%ld: empty line (expected one word per line)", path, in.lineno);
            break;
        }
        char *p = loom_rt_grow(pool, &pool_cap, pool_n + l, 1);
        if (!p) {
            rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        pool = p;
        memcpy(pool + pool_n, line, l);
        off[n] = (int64_t)pool_n;
        len[n++] = (int32_t)l;
        pool_n += l;
    }
    if (!rc && have < 0)
        rc = loom_lines_error(&in, err, errlen);
    if (!rc && n < W)
        rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                       "%s:%ld: the file ends after %d words, but %s declares W = %d on line 2",
                       path, in.lineno, (int)n, docword, (int)W);
    if (!rc && !(*out = vocab_pack(W, pool, off, len, NULL)))
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
    loom_lines_close(&in);
    free(pool);
    free(off);
    free(len);
    return rc;
}

/* The entries "docID wordID count", NNZ of them, grouped by docID. */
static int uci_entries(struct uci *u, const int64_t h[3], loom_corpus *c, struct tokens *t)
{
    const int64_t D = h[0], W = h[1], NNZ = h[2];
    int64_t nent = 0, cur = 0; /* cur: 0-based document being filled */
    char *line, tok[32];
    size_t len;
    int have;
    c->doc_off[0] = 0;
    while ((have = loom_lines_next(u->in, &line, &len)) == 1) {
        const char *e = line + len, *p = loom_skip_blanks(line, e), *q;
        if (p == e)
            continue;
        if (nent == NNZ)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: more entries than the NNZ = %lld declared on line 3",
                             u->in->path, u->in->lineno, (long long)NNZ);
        int64_t d, w, n;
        if (!(q = uci_int(p, e, 1, INT64_MAX, &d)))
            return uci_bad(u, "docID", p, e, "an integer >= 1");
        if (d > D)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: docID %lld is beyond the D = %lld declared on line 1",
                             u->in->path, u->in->lineno, (long long)d, (long long)D);
        if ((p = loom_skip_blanks(q, e)) == e)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: missing the wordID (expected 'docID wordID count')",
                             u->in->path, u->in->lineno);
        if (!(q = uci_int(p, e, 1, INT64_MAX, &w)))
            return uci_bad(u, "wordID", p, e, "an integer >= 1");
        if (w > W)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: wordID %lld is beyond the W = %lld declared on line 2",
                             u->in->path, u->in->lineno, (long long)w, (long long)W);
        if ((p = loom_skip_blanks(q, e)) == e)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: missing the count (expected 'docID wordID count')",
                             u->in->path, u->in->lineno);
        if (!(q = uci_int(p, e, 1, INT32_MAX, &n)))
            return uci_bad(u, "count", p, e, "an integer from 1 to 2147483647");
        if ((p = loom_skip_blanks(q, e)) < e)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: unexpected '%s' after the count (expected 'docID wordID "
                             "count')",
                             u->in->path, u->in->lineno, loom_token(p, e, tok, sizeof tok));
        if (d - 1 < cur)
            return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                             "%s:%ld: docID %lld comes after docID %lld (entries must be grouped "
                             "by document in increasing docID order)",
                             u->in->path, u->in->lineno, (long long)d, (long long)cur + 1);
        for (; cur < d - 1; cur++)
            c->doc_off[cur + 1] = t->n;
        if (t->n + n > t->cap) { /* a token costs 4 bytes here and 16 in loom-lda */
            char what[96];
            snprintf(what, sizeof what, "line %ld: %lld tokens", u->in->lineno,
                     (long long)(t->n + n));
            int rc = loom_mem_check(u->in->path, what, 20.0 * (double)(t->n + n), u->err,
                                    u->errlen);
            if (rc)
                return rc;
        }
        if (tokens_reserve(t, n))
            return loom_errf(u->err, u->errlen, LOOM_ERR_NOMEM,
                             "%s:%ld: out of memory after %lld tokens", u->in->path,
                             u->in->lineno, (long long)t->n);
        for (int64_t k = 0; k < n; k++)
            t->v[t->n++] = (int32_t)(w - 1);
        nent++;
    }
    if (have < 0)
        return loom_lines_error(u->in, u->err, u->errlen);
    if (nent < NNZ)
        return loom_errf(u->err, u->errlen, LOOM_ERR_FORMAT,
                         "%s:%ld: the file ends after %lld of the NNZ = %lld entries declared "
                         "on line 3",
                         u->in->path, u->in->lineno, (long long)nent, (long long)NNZ);
    for (; cur < D; cur++)
        c->doc_off[cur + 1] = t->n;
    return LOOM_OK;
}

int loom_corpus_load_uci(const char *docword_path, const char *vocab_path, loom_corpus *c,
                         char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (err && errlen)
        err[0] = '\0';
    loom_lines in;
    int rc = loom_lines_open(&in, docword_path, err, errlen);
    if (rc)
        return rc;
    struct uci u = {&in, err, errlen};
    struct tokens t = {0};
    int64_t h[3];
    char what[96];
    if (!(rc = uci_header(&u, h))) /* a declared document costs 24 bytes: its offset here
                                      and loom-lda's two per document */
        snprintf(what, sizeof what, "D = %lld documents", (long long)h[0]),
        rc = loom_mem_check(docword_path, what, 24.0 * ((double)h[0] + 1), err, errlen);
    if (!rc) {
        c->ndocs = (int32_t)h[0];
        c->nwords = (int32_t)h[1];
        c->doc_off = malloc(sizeof *c->doc_off * ((size_t)h[0] + 1));
        if (!c->doc_off)
            rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory for D = %lld",
                           docword_path, (long long)h[0]);
    }
    if (!rc)
        rc = uci_entries(&u, h, c, &t);
    loom_lines_close(&in);
    if (!rc && vocab_path)
        rc = uci_vocab(vocab_path, docword_path, c->nwords, &c->vocab, err, errlen);
    if (rc) {
        free(t.v);
        loom_corpus_free(c);
        return rc;
    }
    c->word = t.v;
    c->ntokens = t.n;
    return LOOM_OK;
}

/* ---- plain text ----------------------------------------------------------- */

/* The vocabulary being built: open addressing over word ids. */
struct vocab {
    int32_t *slot; /* word id + 1; 0 = empty */
    uint64_t mask;
    int32_t n, cap;
    int64_t *off, *count;
    int32_t *len;
    uint64_t *hash;
    char *pool;
    size_t pool_n, pool_cap;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then mixed */
    for (size_t k = 0; k < n; k++)
        h = (h ^ (unsigned char)s[k]) * 0x100000001b3ULL;
    return loom_mix64(h);
}

/* Rebuilds the slot table with `slots` (a power of 2) entries. */
static int vocab_rehash(struct vocab *v, uint64_t slots)
{
    int32_t *slot = calloc(slots, sizeof *slot);
    if (!slot)
        return -1;
    for (int32_t k = 0; k < v->n; k++) {
        uint64_t j = v->hash[k] & (slots - 1);
        while (slot[j])
            j = (j + 1) & (slots - 1);
        slot[j] = k + 1;
    }
    free(v->slot);
    v->slot = slot;
    v->mask = slots - 1;
    return 0;
}

/* The id of word s[0..n), added if new; -1 when out of memory. */
static int32_t vocab_id(struct vocab *v, const char *s, size_t n)
{
    uint64_t h = hash_bytes(s, n), j = h & v->mask;
    for (int32_t id; (id = v->slot[j]); j = (j + 1) & v->mask)
        if (v->hash[id - 1] == h && (size_t)v->len[id - 1] == n &&
            !memcmp(v->pool + v->off[id - 1], s, n))
            return id - 1;
    if (v->n == INT32_MAX)
        return -1;
    if (v->n == v->cap) { /* the four arrays grow alike */
        size_t c[4] = {(size_t)v->cap, (size_t)v->cap, (size_t)v->cap, (size_t)v->cap},
               need = (size_t)v->n + 1;
        int64_t *off = loom_rt_grow(v->off, &c[0], need, sizeof *off);
        if (off)
            v->off = off;
        int64_t *count = loom_rt_grow(v->count, &c[1], need, sizeof *count);
        if (count)
            v->count = count;
        int32_t *len = loom_rt_grow(v->len, &c[2], need, sizeof *len);
        if (len)
            v->len = len;
        uint64_t *hash = loom_rt_grow(v->hash, &c[3], need, sizeof *hash);
        if (hash)
            v->hash = hash;
        if (!off || !count || !len || !hash)
            return -1;
        v->cap = c[0] > INT32_MAX ? INT32_MAX : (int32_t)c[0];
    }
    char *pool = loom_rt_grow(v->pool, &v->pool_cap, v->pool_n + n, 1);
    if (!pool)
        return -1;
    v->pool = pool;
    int32_t id = v->n++;
    memcpy(v->pool + v->pool_n, s, n);
    v->off[id] = (int64_t)v->pool_n;
    v->len[id] = (int32_t)n;
    v->hash[id] = h;
    v->count[id] = 0;
    v->pool_n += n;
    if ((uint64_t)v->n * 2 > v->mask + 1) {
        if (vocab_rehash(v, 2 * (v->mask + 1)))
            return -1;
    } else {
        v->slot[j] = id + 1;
    }
    return id;
}

static void vocab_free(struct vocab *v)
{
    free(v->slot);
    free(v->off);
    free(v->count);
    free(v->len);
    free(v->hash);
    free(v->pool);
}

static inline int word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Drops words seen fewer than min_count times: renumbers the survivors in
 * their order and compacts every document's tokens. */
static int prune(loom_corpus *c, struct vocab *v, int64_t min_count)
{
    int32_t *map = malloc(sizeof *map * ((size_t)v->n + 1)), kept = 0;
    if (!map)
        return -1;
    for (int32_t k = 0; k < v->n; k++) {
        map[k] = v->count[k] >= min_count ? kept : -1;
        if (map[k] >= 0) {
            v->off[kept] = v->off[k];
            v->len[kept] = v->len[k];
            kept++;
        }
    }
    int64_t out = 0;
    for (int32_t d = 0; d < c->ndocs; d++) {
        int64_t from = c->doc_off[d], to = c->doc_off[d + 1];
        c->doc_off[d] = out;
        for (int64_t k = from; k < to; k++)
            if (map[c->word[k]] >= 0)
                c->word[out++] = map[c->word[k]];
    }
    c->doc_off[c->ndocs] = out;
    c->ntokens = out;
    v->n = kept;
    free(map);
    return 0;
}

int loom_corpus_load_text(const char *path, int64_t min_count, loom_corpus *c, char *err,
                          size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (err && errlen)
        err[0] = '\0';
    loom_lines in;
    int rc = loom_lines_open(&in, path, err, errlen);
    if (rc)
        return rc;
    struct vocab v = {.cap = 1024, .pool_cap = 1 << 16};
    struct tokens t = {0};
    struct offsets o = {0};
    v.off = malloc(sizeof *v.off * (size_t)v.cap);
    v.count = malloc(sizeof *v.count * (size_t)v.cap);
    v.len = malloc(sizeof *v.len * (size_t)v.cap);
    v.hash = malloc(sizeof *v.hash * (size_t)v.cap);
    v.pool = malloc(v.pool_cap);
    int fail = !v.off || !v.count || !v.len || !v.hash || !v.pool || vocab_rehash(&v, 2048) ||
               offsets_push(&o, 0);
    char *line;
    size_t len;
    int have = 0;
    while (!fail && (have = loom_lines_next(&in, &line, &len)) == 1) {
        if (o.n > INT32_MAX - 1) {
            rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                           "%s:%ld: more than 2147483646 documents", path, in.lineno);
            break;
        }
        const char *nul = memchr(line, '\0', len);
        if (nul) { /* a binary file: gzip'd text, a docword.gz, an index */
            rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                           "%s:%ld: a NUL byte at column %zu: this is not a text file "
                           "(decompress a compressed one first)", path, in.lineno,
                           (size_t)(nul - line) + 1);
            break;
        }
        for (size_t k = 0; k < len;) {
            while (k < len && !word_byte((unsigned char)line[k]))
                k++;
            size_t s = k;
            for (; k < len && word_byte((unsigned char)line[k]); k++)
                if (line[k] >= 'A' && line[k] <= 'Z')
                    line[k] = (char)(line[k] - 'A' + 'a');
            if (k == s)
                break;
            int32_t id = vocab_id(&v, line + s, k - s);
            if (id < 0 || tokens_reserve(&t, 1)) {
                fail = 1;
                break;
            }
            v.count[id]++;
            t.v[t.n++] = id;
        }
        if (!fail && offsets_push(&o, t.n))
            fail = 1;
    }
    if (!rc && !fail && have < 0)
        rc = loom_lines_error(&in, err, errlen);
    if (!rc && fail)
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s:%ld: out of memory", path, in.lineno);
    loom_lines_close(&in);
    if (!rc) {
        c->ndocs = (int32_t)(o.n - 1);
        c->doc_off = o.v;
        c->word = t.v;
        c->ntokens = t.n;
        o.v = NULL;
        t.v = NULL;
        if (min_count > 1 && prune(c, &v, min_count))
            rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
    }
    if (!rc) {
        c->nwords = v.n;
        if (!(c->vocab = vocab_pack(v.n, v.pool, v.off, v.len, NULL)))
            rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
    }
    vocab_free(&v);
    free(o.v);
    free(t.v);
    if (rc)
        loom_corpus_free(c);
    return rc;
}

/* ---- train/test split ------------------------------------------------------ */

int loom_corpus_split(const loom_corpus *c, double test_fraction, uint64_t seed,
                      loom_corpus *train, loom_corpus *test, uint8_t *test_doc)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (!(test_fraction >= 0 && test_fraction <= 1))
        return LOOM_ERR_ARG;
    /* Document d is held out when the top 53 bits of its hash, as a
     * fraction, fall below test_fraction. */
    uint8_t *is_test = test_doc ? test_doc : malloc((size_t)c->ndocs + 1);
    if (!is_test)
        return LOOM_ERR_NOMEM;
    int32_t nd[2] = {0, 0};
    int64_t nt[2] = {0, 0};
    for (int32_t d = 0; d < c->ndocs; d++) {
        double x = (double)(loom_mix64(loom_mix64(seed) ^ (uint64_t)d) >> 11) * 0x1p-53;
        is_test[d] = x < test_fraction;
        nd[is_test[d]]++;
        nt[is_test[d]] += c->doc_off[d + 1] - c->doc_off[d];
    }
    loom_corpus *out[2] = {train, test};
    int rc = LOOM_OK;
    for (int s = 0; s < 2 && !rc; s++) {
        out[s]->ndocs = nd[s];
        out[s]->nwords = c->nwords;
        out[s]->ntokens = nt[s];
        out[s]->doc_off = malloc(sizeof(int64_t) * ((size_t)nd[s] + 1));
        out[s]->word = malloc(sizeof(int32_t) * ((size_t)nt[s] + 1));
        if (c->vocab)
            out[s]->vocab = vocab_pack(c->nwords, NULL, NULL, NULL, c->vocab);
        if (!out[s]->doc_off || !out[s]->word || (c->vocab && !out[s]->vocab))
            rc = LOOM_ERR_NOMEM;
        else
            out[s]->doc_off[0] = 0;
    }
    if (!rc) {
        int32_t k[2] = {0, 0};
        for (int32_t d = 0; d < c->ndocs; d++) {
            loom_corpus *o = out[is_test[d]];
            int32_t *kk = &k[is_test[d]];
            int64_t from = c->doc_off[d], n = c->doc_off[d + 1] - from, at = o->doc_off[*kk];
            if (n) /* an empty corpus has no word array at all */
                memcpy(o->word + at, c->word + from, sizeof(int32_t) * (size_t)n);
            o->doc_off[++*kk] = at + n;
        }
    }
    if (!test_doc)
        free(is_test);
    if (rc) {
        loom_corpus_free(train);
        loom_corpus_free(test);
    }
    return rc;
}

int32_t loom_corpus_block(const loom_corpus *c, int part, int parts)
{
    if (part >= parts)
        return c->ndocs;
    int64_t at = (int64_t)((__int128)c->ntokens * part / parts);
    int32_t lo = 0, hi = c->ndocs; /* the first d with doc_off[d] >= at */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (c->doc_off[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
