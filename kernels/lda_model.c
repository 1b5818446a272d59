/* lda_model.c — an LDA model on disk (lda_model.h): the topics' top
 * words, the vocabulary, the word-topic counts, the document-topic
 * proportions written rank after rank, and the match against planted
 * topics. */
#include "lda_model.h"

#include <loom.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Contract: lda_model.h.  Collective. */
int loom_lda_model_theta(const char *dir, const char *name, loom_lda_ring *g, int test,
                         int32_t iters, uint64_t seed, char *err, size_t errlen)
{
    char path[4096], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* this rank's lines first (for held-out documents that is collective),
     * then the ranks append them in turn */
    FILE *m = open_memstream(&text, &len);
    int failed = !m || loom_lda_ring_write_theta(g, test, iters, seed, m) != 0;
    if (m && fclose(m))
        failed = 1;
    if (loom_rank() == 0 && mkdir(dir, 0777) && errno != EEXIST)
        failed = 1;
    for (int r = 0; r < loom_size(); r++) {
        if (r == loom_rank() && !failed) {
            FILE *f = fopen(path, r ? "a" : "w");
            failed = !f || fwrite(text, 1, len, f) != len;
            if (f && fclose(f))
                failed = 1;
        }
        loom_barrier();
    }
    free(text);
    loom_allreduce(LOOM_IN_PLACE, &failed, 1, LOOM_INT32, LOOM_MAX);
    if (failed)
        snprintf(err, errlen, "%s: cannot write the document-topic proportions", path);
    return failed ? -1 : 0;
}

/* Contract: lda_model.h. */
int loom_lda_model_save(const char *dir, const loom_lda_params *p, const int32_t *wt,
                        char **vocab, int32_t top, char *err, size_t errlen)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t len = strlen(dir) + 32;
    char *path = malloc(len);
    int32_t *tw = malloc(sizeof *tw * (size_t)p->K * (size_t)top);
    if (!path || !tw)
        loom_abort(1, "out of memory");
    int rc = 0;
    snprintf(path, len, "%s/topics.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        loom_lda_top_words(p, wt, (size_t)p->K, top, tw);
        for (int32_t k = 0; k < p->K; k++) {
            fprintf(f, "%d\t", (int)k);
            for (int32_t i = 0; i < top && tw[(size_t)k * top + i] >= 0; i++) {
                int32_t w = tw[(size_t)k * top + i];
                if (vocab)
                    fprintf(f, "%s%s", i ? " " : "", vocab[w]);
                else
                    fprintf(f, "%s%d", i ? " " : "", (int)w + 1);
            }
            fputc('\n', f);
        }
        rc = fclose(f);
    }
    if (!f || rc)
        goto fail;
    snprintf(path, len, "%s/vocab.txt", dir); /* word k of word_topic.txt on line k */
    f = vocab ? fopen(path, "w") : NULL;
    for (int32_t w = 0; f && w < p->V; w++)
        fprintf(f, "%s\n", vocab[w]);
    if (vocab && (!f || fclose(f)))
        goto fail;
    snprintf(path, len, "%s/word_topic.txt", dir);
    f = fopen(path, "w");
    if (f) {
        int64_t nnz = 0;
        for (size_t x = 0; x < (size_t)p->V * (size_t)p->K; x++)
            nnz += wt[x] != 0;
        fprintf(f, "%d\n%d\n%lld\n", (int)p->V, (int)p->K, (long long)nnz);
        for (int32_t w = 0; w < p->V; w++)
            for (int32_t k = 0; k < p->K; k++)
                if (wt[(size_t)w * p->K + k])
                    fprintf(f, "%d %d %d\n", (int)w + 1, (int)k + 1,
                            (int)wt[(size_t)w * p->K + k]);
        rc = fclose(f);
    }
    if (!f || rc)
        goto fail;
    free(path);
    free(tw);
    return 0;
fail:
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    free(path);
    free(tw);
    return -1;
}

/* Contract: lda_model.h. */
double loom_lda_model_match(const loom_lda_params *p, const int32_t *wt, const int64_t *nk,
                            const double *planted, int32_t Kp)
{
    double *phi = malloc(sizeof *phi * (size_t)p->K * (size_t)p->V);
    if (!phi)
        loom_abort(1, "out of memory");
    loom_lda_phi(p, wt, (size_t)p->K, nk, phi);
    double h = loom_lda_match_topics(planted, Kp, phi, p->K, p->V, NULL);
    free(phi);
    return h;
}
