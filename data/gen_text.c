/* gen_text.c — `loom-gen text`: the news20-shaped problem of gen_text.h. */
#include "gen_text.h"
#include "rng.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void loom_gen_text_defaults(loom_gen_text_opts *o)
{
    *o = (loom_gen_text_opts){.test = -1, .length = 80, .words = 300, .own = 0.04, .zipf = 1,
                              .seed = 1};
}

/* cdf[k] = Σ_{i <= k} (i + 1)^-s, normalized. */
static double *zipf_cdf(int64_t n, double s)
{
    double *cdf = malloc((size_t)n * sizeof *cdf), t = 0;
    for (int64_t k = 0; cdf && k < n; k++)
        cdf[k] = t += pow((double)(k + 1), -s);
    for (int64_t k = 0; cdf && k < n; k++)
        cdf[k] /= t;
    return cdf;
}

/* The first k with cdf[k] >= u. */
static int64_t draw(const double *cdf, int64_t n, double u)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Writes n documents to f from stream g; adds their non-zeros to *nnz.
 * own[c * words + w] is class c's w-th word. */
static int documents(FILE *f, const loom_gen_text_opts *o, int64_t n, loom_rng *g,
                     const double *vcdf, const double *wcdf, const int64_t *own, int64_t *tok,
                     int64_t *nnz)
{
    for (int64_t d = 0; d < n; d++) {
        int c = (int)(loom_rng_uniform(g) * o->classes);
        int64_t len = (int64_t)(o->length / 2 + loom_rng_uniform(g) * o->length);
        len = len < 1 ? 1 : len;
        for (int64_t t = 0; t < len; t++)
            tok[t] = loom_rng_uniform(g) < o->own
                         ? own[(int64_t)c * o->words + draw(wcdf, o->words, loom_rng_uniform(g))]
                         : draw(vcdf, o->features, loom_rng_uniform(g));
        qsort(tok, (size_t)len, sizeof *tok, cmp_i64);
        double norm = 0;
        for (int64_t t = 0, u; t < len; t = u) {
            for (u = t; u < len && tok[u] == tok[t]; u++)
                ;
            norm += pow(log1p((double)(u - t)), 2);
        }
        norm = sqrt(norm);
        fprintf(f, "%d", c + 1);
        for (int64_t t = 0, u; t < len; t = u) {
            for (u = t; u < len && tok[u] == tok[t]; u++)
                ;
            fprintf(f, " %lld:%.6g", (long long)tok[t] + 1, log1p((double)(u - t)) / norm);
            ++*nnz;
        }
        if (fputc('\n', f) == EOF)
            return -1;
    }
    return 0;
}

int loom_gen_text(const loom_gen_text_opts *o, const char *prefix, int64_t *nnz, char *err,
                  size_t errlen)
{
    if (o->samples < 1 || o->features < 2 || o->classes < 2 || !(o->length >= 1) ||
        o->words < 1 || o->words > o->features || !(o->own >= 0 && o->own <= 1) ||
        !(o->zipf >= 0)) {
        snprintf(err, errlen, "need samples >= 1, features >= 2, classes >= 2, length >= 1, "
                 "1 <= words <= features, 0 <= own <= 1, zipf >= 0");
        return LOOM_ERR_ARG;
    }
    int64_t test = o->test >= 0 ? o->test : o->samples / 4, count = 0;
    double *vcdf = zipf_cdf(o->features, o->zipf), *wcdf = zipf_cdf(o->words, 1);
    int64_t *own = malloc((size_t)o->classes * (size_t)o->words * sizeof *own);
    int64_t *tok = malloc((size_t)(1.5 * o->length + 2) * sizeof *tok);
    int rc = vcdf && wcdf && own && tok ? LOOM_OK : LOOM_ERR_NOMEM;
    if (rc)
        snprintf(err, errlen, "out of memory");
    loom_rng g = loom_rng_stream(o->seed, 0);
    /* a class's words: anywhere past the 2% most frequent, uniformly */
    int64_t skip = o->features / 50 < o->features - o->words ? o->features / 50 : 0;
    for (int64_t k = 0; !rc && k < (int64_t)o->classes * o->words; k++)
        own[k] = skip + (int64_t)(loom_rng_uniform(&g) * (double)(o->features - skip));
    for (int part = 0; !rc && part < 2; part++) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%s.svm", prefix, part ? "test" : "train");
        FILE *f = fopen(path, "w");
        loom_rng s = loom_rng_stream(o->seed, 1 + (uint64_t)part);
        int bad = !f || documents(f, o, part ? test : o->samples, &s, vcdf, wcdf, own, tok, &count);
        if ((f && fclose(f)) || bad) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            rc = LOOM_ERR_IO;
        }
    }
    if (nnz)
        *nnz = count;
    free(vcdf);
    free(wcdf);
    free(own);
    free(tok);
    return rc;
}
