/* stopwords.c — the built-in English stop words, a stop-word file, and
 * their removal from a corpus (stopwords.h). */
#include "stopwords.h"
#include "grow.h"

#include "lines.h"

#include <loom.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Function words of English: articles, pronouns, auxiliaries,
 * prepositions, conjunctions and the like (the words that top every topic
 * of a text with no stop list), plus the archaic forms of the King James
 * Bible the tests train on. */
const char *const loom_stopwords_english[] = {
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
    "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
    "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
    "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once",
    "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "upon", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    "yourself", "yourselves", "also", "may", "might", "must", "shall", "s", "t", "one", "us",
    "unto", "thee", "thou", "thy", "thine", "ye", "hath", "saith", "shalt", "wilt", "art",
    "doth", "hast", "o", "let", "said", "say", "says", "like", "get", "got", "many", "much",
    "even", "well", "every", NULL};

static int cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int loom_stopwords_load(const char *path, char ***out, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(errno));
    size_t n = 0, cap = 0;
    char **w = loom_rt_grow(NULL, &cap, 64, sizeof *w), line[256];
    while (w && fgets(line, sizeof line, f)) {
        char *p = line, *e;
        while (isspace((unsigned char)*p))
            p++;
        for (e = p; *e && !isspace((unsigned char)*e); e++)
            *e = (char)tolower((unsigned char)*e);
        *e = '\0';
        if (!*p || *p == '#')
            continue;
        char **m = loom_rt_grow(w, &cap, n + 2, sizeof *w);
        if (!m)
            break;
        w = m;
        if (!(w[n] = strdup(p)))
            break;
        w[++n] = NULL;
    }
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (!w || bad) {
        if (w)
            w[n] = NULL;
        loom_stopwords_free(w);
        return loom_errf(err, errlen, w ? LOOM_ERR_IO : LOOM_ERR_NOMEM, "%s: %s", path,
                         w ? "read error or out of memory" : "out of memory");
    }
    if (!n)
        w[0] = NULL;
    *out = w;
    return LOOM_OK;
}

void loom_stopwords_free(char **words)
{
    for (size_t i = 0; words && words[i]; i++)
        free(words[i]);
    free(words);
}

int64_t loom_corpus_drop_words(loom_corpus *c, const char *const *stop)
{
    size_t ns = 0;
    while (stop[ns])
        ns++;
    const char **sorted = malloc((ns ? ns : 1) * sizeof *sorted);
    int32_t *map = malloc(((size_t)c->nwords + 1) * sizeof *map);
    if (!sorted || !map) {
        free(sorted);
        free(map);
        return -1;
    }
    memcpy(sorted, stop, ns * sizeof *sorted);
    qsort(sorted, ns, sizeof *sorted, cmp);
    int32_t kept = 0;
    for (int32_t w = 0; w < c->nwords; w++) {
        const char *key = c->vocab[w];
        if (ns && bsearch(&key, sorted, ns, sizeof *sorted, cmp)) {
            map[w] = -1; /* its string stays in the vocabulary's one block */
        } else {
            c->vocab[kept] = c->vocab[w];
            map[w] = kept++;
        }
    }
    int64_t out = 0;
    for (int32_t d = 0; d < c->ndocs; d++) {
        int64_t lo = c->doc_off[d], hi = c->doc_off[d + 1];
        c->doc_off[d] = out;
        for (int64_t t = lo; t < hi; t++)
            if (map[c->word[t]] >= 0)
                c->word[out++] = map[c->word[t]];
    }
    c->doc_off[c->ndocs] = out;
    int64_t dropped = c->ntokens - out;
    c->ntokens = out;
    c->nwords = kept;
    free(sorted);
    free(map);
    return dropped;
}
