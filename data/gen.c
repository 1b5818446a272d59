/* gen.c — the data generator (see gen.h): planted low-rank ratings and
 * LDA corpora.  Both work in chunks (of users, of documents) generated in
 * parallel into memory buffers and written in order, so output streams at
 * disk speed with bounded memory and does not depend on the thread count. */
#include "gen.h"
#include "grow.h"
#include "mem.h"
#include "lines.h"
#include "rng.h"

#include <loom.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Stream tags: each user, topic and document has its own random stream. */
#define TAG_MODEL     ((uint64_t)1)
#define TAG_ITEM_PERM ((uint64_t)2)
#define TAG_USER_PERM ((uint64_t)3)
#define TAG_USER      ((uint64_t)1 << 40)
#define TAG_TOPIC     ((uint64_t)2 << 40)
#define TAG_DOC       ((uint64_t)3 << 40)

#define CHUNK_RATINGS (1 << 16) /* a chunk's ratings (tokens), roughly */
#define MU 3.6                  /* the planted global mean rating */

/* ---- output ------------------------------------------------------------- */

struct obuf {
    char *p;
    size_t n, cap;
};

/* Room for `more` further bytes; -1 when out of memory. */
static int obuf_reserve(struct obuf *b, size_t more)
{
    char *p = loom_rt_grow(b->p, &b->cap, b->n + more, 1);
    if (!p)
        return -1;
    b->p = p;
    return 0;
}

static inline char *put_u64(char *p, uint64_t x)
{
    char t[20];
    int n = 0;
    do
        t[n++] = (char)('0' + x % 10);
    while (x /= 10);
    while (n)
        *p++ = t[--n];
    return p;
}

/* x with three decimals, as printf("%.3f") for |x| < 1e9. */
static inline char *put_fixed3(char *p, double x)
{
    if (!(x < 999999999.0))
        x = 999999999.0;
    if (!(x > -999999999.0))
        x = -999999999.0;
    int64_t m = llround(x * 1000);
    if (m < 0) {
        *p++ = '-';
        m = -m;
    }
    p = put_u64(p, (uint64_t)(m / 1000));
    int d = (int)(m % 1000);
    p[0] = '.';
    p[1] = (char)('0' + d / 100);
    p[2] = (char)('0' + d / 10 % 10);
    p[3] = (char)('0' + d % 10);
    return p + 4;
}

/* Writes all n bytes; returns 0 or errno. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Creates PREFIX SUFFIX for writing into *fd, its name into path. */
static int create(const char *prefix, const char *suffix, char *path, size_t pathlen, int *fd,
                  char *err, size_t errlen)
{
    if ((size_t)snprintf(path, pathlen, "%s%s", prefix, suffix) >= pathlen)
        return loom_errf(err, errlen, LOOM_ERR_ARG, "%s%s: name too long", prefix, suffix);
    *fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); /* read back: append_file */
    if (*fd < 0)
        return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(errno));
    return LOOM_OK;
}

static int write_err(const char *path, int e, char *err, size_t errlen)
{
    return loom_errf(err, errlen, LOOM_ERR_IO, "%s: %s", path, strerror(e));
}

/* Appends the whole of file `in` (from its start) to `out`: copy_file_range
 * where the kernel can, read/write otherwise.  Returns 0 or errno. */
static int append_file(int out, int in)
{
    if (lseek(in, 0, SEEK_SET) < 0)
        return errno;
    for (;;) {
        ssize_t k = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
        if (k == 0)
            return 0;
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
                return errno;
            break;
        }
    }
    static char buf[1 << 20];
    for (;;) {
        ssize_t k = read(in, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        if (k == 0)
            return 0;
        int e = write_all(out, buf, (size_t)k);
        if (e)
            return e;
    }
}

/* Popularity weights: a random permutation (stream tag) gives each of the
 * n ids a rank r, and id gets weight (r+1)^-s.  NULL when out of memory. */
static double *popularity(int32_t n, double s, uint64_t seed, uint64_t tag)
{
    int32_t *rank = malloc(sizeof *rank * (size_t)n);
    double *w = malloc(sizeof *w * (size_t)n);
    if (!rank || !w) {
        free(rank);
        free(w);
        return NULL;
    }
    loom_rng g = loom_rng_stream(seed, tag);
    for (int32_t k = 0; k < n; k++)
        rank[k] = k;
    for (int32_t k = n - 1; k > 0; k--) {
        int32_t j = (int32_t)loom_rng_below(&g, (uint32_t)k + 1), t = rank[k];
        rank[k] = rank[j];
        rank[j] = t;
    }
    for (int32_t k = 0; k < n; k++)
        w[k] = exp(-s * log((double)rank[k] + 1));
    free(rank);
    return w;
}

/* ---- ratings ---------------------------------------------------------------- */

void loom_gen_ratings_defaults(loom_gen_ratings_opts *o)
{
    *o = (loom_gen_ratings_opts){.rank = 10, .test_fraction = 0.1, .noise = 0.5,
                                 .zipf_users = 0.4, .zipf_items = 0.6, .seed = 1};
}

/* The planted model and the sampling tables, shared read-only by threads. */
struct rgen {
    const loom_gen_ratings_opts *o;
    float *Q, *bi;  /* item factors (items x K) and item biases */
    double *wi;     /* item popularity weights */
    loom_alias ia;  /* alias table over wi */
    int32_t *deg;   /* ratings per user */
    double scale;   /* standard deviation of a factor entry */
};

/* A thread's scratch space. */
struct rscratch {
    uint64_t *bits; /* items already given to the current user */
    int32_t *items;
    float *p;
    struct keyed { double key; int32_t i; } *keys;
};

struct rchunk {
    int64_t u0, u1;
    struct obuf train, test;
    int64_t ntrain, ntest;
    double sse;
    int32_t rated, maxdeg;
    int fail;
};

static int by_key_desc(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

/* n distinct items for one user, drawn by popularity without replacement:
 * rejection over the alias table while few are wanted, else (or when
 * rejection stalls on the popular head) Efraimidis-Spirakis keys
 * log(U)/w, the n largest.  Returns 0, or -1 when out of memory. */
static int pick_items(const struct rgen *G, loom_rng *g, int32_t n, struct rscratch *S)
{
    int32_t I = G->o->items, k = 0;
    if ((int64_t)n * 8 <= I) {
        int64_t rejects = 0, limit = 4 * (int64_t)n + 64;
        while (k < n) {
            int32_t i = loom_alias_draw(&G->ia, g);
            if (S->bits[i >> 6] >> (i & 63) & 1) {
                if (++rejects > limit)
                    break;
                continue;
            }
            S->bits[i >> 6] |= (uint64_t)1 << (i & 63);
            S->items[k++] = i;
        }
        for (int32_t j = 0; j < k; j++)
            S->bits[S->items[j] >> 6] = 0;
        if (k == n)
            return 0;
    }
    if (!S->keys && !(S->keys = malloc(sizeof *S->keys * (size_t)I)))
        return -1;
    for (int32_t i = 0; i < I; i++)
        S->keys[i] = (struct keyed){log(loom_rng_uniform_pos(g)) / G->wi[i], i};
    qsort(S->keys, (size_t)I, sizeof *S->keys, by_key_desc);
    for (int32_t j = 0; j < n; j++)
        S->items[j] = S->keys[j].i;
    return 0;
}

/* Users [ch->u0, ch->u1): their ratings as text into ch->train/test. */
static void ratings_chunk(const struct rgen *G, struct rscratch *S, struct rchunk *ch)
{
    const loom_gen_ratings_opts *o = G->o;
    const int32_t K = o->rank;
    ch->train.n = ch->test.n = 0;
    ch->ntrain = ch->ntest = 0;
    ch->sse = 0;
    ch->rated = ch->maxdeg = 0;
    ch->fail = 0;
    for (int64_t u = ch->u0; u < ch->u1; u++) {
        int32_t n = G->deg[u];
        if (!n)
            continue;
        ch->rated++;
        if (n > ch->maxdeg)
            ch->maxdeg = n;
        loom_rng g = loom_rng_stream(o->seed, TAG_USER | (uint64_t)u);
        double bu = 0.4 * loom_rng_normal(&g);
        for (int32_t k = 0; k < K; k++)
            S->p[k] = (float)(G->scale * loom_rng_normal(&g));
        if (pick_items(G, &g, n, S) || obuf_reserve(&ch->train, (size_t)n * 48) ||
            obuf_reserve(&ch->test, (size_t)n * 48)) {
            ch->fail = 1;
            return;
        }
        for (int32_t j = 0; j < n; j++) {
            int32_t i = S->items[j];
            const float *q = G->Q + (size_t)i * (size_t)K;
            float dot = 0;
            for (int32_t k = 0; k < K; k++)
                dot += S->p[k] * q[k];
            double pred = MU + bu + G->bi[i] + dot, x = pred + o->noise * loom_rng_normal(&g);
            int test = loom_rng_uniform(&g) < o->test_fraction;
            struct obuf *b = test ? &ch->test : &ch->train;
            char *p = put_u64(b->p + b->n, (uint64_t)u + 1);
            *p++ = '\t';
            p = put_u64(p, (uint64_t)i + 1);
            *p++ = '\t';
            double val, ref;
            if (o->real) {
                val = x;
                ref = pred;
                p = put_fixed3(p, x);
            } else {
                val = fmin(5, fmax(1, floor(x + 0.5)));
                ref = fmin(5, fmax(1, pred));
                *p++ = (char)('0' + (int)val);
            }
            *p++ = '\n';
            b->n = (size_t)(p - b->p);
            if (test) {
                ch->ntest++;
                ch->sse += (val - ref) * (val - ref);
            } else {
                ch->ntrain++;
            }
        }
    }
}

static int check_ratings_opts(const loom_gen_ratings_opts *o, char *err, size_t errlen)
{
    const char *why = NULL;
    if (o->users < 1)
        why = "users must be at least 1";
    else if (o->items < 1)
        why = "items must be at least 1";
    else if (o->rank < 1 || o->rank > 10000)
        why = "rank must be from 1 to 10000";
    else if (o->samples < 1)
        why = "samples must be at least 1";
    else if (o->samples > (int64_t)o->users * o->items)
        why = "samples must be at most users * items (each pair is rated once)";
    else if (!(o->test_fraction >= 0 && o->test_fraction <= 1))
        why = "test fraction must be from 0 to 1";
    else if (!(o->noise >= 0 && o->noise <= 1e6))
        why = "noise must be from 0 to 1e6";
    else if (!(o->zipf_users >= 0 && o->zipf_users <= 10) ||
             !(o->zipf_items >= 0 && o->zipf_items <= 10))
        why = "zipf exponents must be from 0 to 10";
    return why ? loom_errf(err, errlen, LOOM_ERR_ARG, "%s", why) : LOOM_OK;
}

/* Ratings per user: user u's share of the samples is its weight's share,
 * as floor(N*C_u) - floor(N*C_{u-1}) with C the cumulative share (exactly
 * N in all); more than `items` spill over to the next users. */
static int32_t *degrees(const loom_gen_ratings_opts *o)
{
    double *w = popularity(o->users, o->zipf_users, o->seed, TAG_USER_PERM);
    int32_t *deg = malloc(sizeof *deg * (size_t)o->users);
    if (!w || !deg) {
        free(w);
        free(deg);
        return NULL;
    }
    double total = 0, acc = 0;
    for (int32_t u = 0; u < o->users; u++)
        total += w[u];
    int64_t prev = 0, carry = 0;
    for (int32_t u = 0; u < o->users; u++) {
        acc += w[u];
        int64_t upto = u == o->users - 1 ? o->samples : (int64_t)floor((double)o->samples * (acc / total));
        if (upto > o->samples)
            upto = o->samples;
        if (upto < prev)
            upto = prev;
        int64_t n = upto - prev + carry;
        prev = upto;
        carry = n > o->items ? n - o->items : 0;
        deg[u] = (int32_t)(n - carry);
    }
    for (int32_t u = 0; carry; u = (u + 1) % o->users) {
        int64_t add = o->items - deg[u] < carry ? o->items - deg[u] : carry;
        deg[u] += (int32_t)add;
        carry -= add;
    }
    free(w);
    return deg;
}

int loom_gen_ratings(const loom_gen_ratings_opts *o, const char *prefix,
                     loom_gen_ratings_stats *st, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    int rc = check_ratings_opts(o, err, errlen);
    if (rc)
        return rc;
    const int32_t K = o->rank, I = o->items;
    struct rgen G = {.o = o, .scale = pow(0.64 / K, 0.25)};
    int nth = omp_get_max_threads(), nslot = 4 * nth;
    /* the model, the popularity and alias tables, each thread's item
     * scratch, the users' weights and degrees, before any is touched */
    char what[96];
    snprintf(what, sizeof what, "--users %d --items %d --rank %d", o->users, I, K);
    if ((rc = loom_mem_check(NULL, what,
                             (double)I * (4.0 * K + 4 + 8 + 16 + nth * (4 + 0.125 + 8)) +
                                 (double)o->users * (8 + 4 + 4),
                             err, errlen)))
        return rc;
    int64_t *cut = NULL, ncut = 0;
    struct rscratch *S = calloc((size_t)nth, sizeof *S);
    struct rchunk *slot = calloc((size_t)nslot, sizeof *slot);
    char path[2][4096];
    int fd[2] = {-1, -1};
    loom_gen_ratings_stats s = {0};
    double sse = 0;
    G.Q = malloc(sizeof *G.Q * (size_t)I * (size_t)K);
    G.bi = malloc(sizeof *G.bi * (size_t)I);
    G.wi = popularity(I, o->zipf_items, o->seed, TAG_ITEM_PERM);
    G.deg = degrees(o);
    int fail = !S || !slot || !G.Q || !G.bi || !G.wi || !G.deg;
    for (int t = 0; !fail && t < nth; t++) {
        S[t].bits = calloc((size_t)I / 64 + 1, sizeof *S[t].bits);
        S[t].items = malloc(sizeof *S[t].items * (size_t)I);
        S[t].p = malloc(sizeof *S[t].p * (size_t)K);
        fail = !S[t].bits || !S[t].items || !S[t].p;
    }
    if (!fail && (rc = loom_alias_build(&G.ia, G.wi, I)))
        fail = 1;
    if (!fail) {
        /* The model: item biases and factors from one stream, in item order. */
        loom_rng g = loom_rng_stream(o->seed, TAG_MODEL);
        for (int32_t i = 0; i < I; i++) {
            G.bi[i] = (float)(0.5 * loom_rng_normal(&g));
            for (int32_t k = 0; k < K; k++)
                G.Q[(size_t)i * (size_t)K + (size_t)k] = (float)(G.scale * loom_rng_normal(&g));
        }
        /* Chunks of users holding about CHUNK_RATINGS ratings each. */
        int64_t acc = 0, start = 0;
        size_t cap = 0;
        for (int64_t u = 0; u < o->users && !fail; u++) {
            acc += G.deg[u];
            if (acc >= CHUNK_RATINGS || u - start + 1 >= 65536 || u == o->users - 1) {
                if ((size_t)ncut == cap) {
                    int64_t *c = loom_rt_grow(cut, &cap, (size_t)ncut + 1, sizeof *c);
                    if (!c) {
                        fail = 1;
                        break;
                    }
                    cut = c;
                }
                cut[ncut++] = u + 1;
                acc = 0;
                start = u + 1;
            }
        }
    }
    if (fail) {
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory for %d users, %d items, rank %d",
                       (int)o->users, (int)I, (int)K);
        goto out;
    }
    if ((rc = create(prefix, ".train", path[0], sizeof path[0], &fd[0], err, errlen)) ||
        (rc = create(prefix, ".test", path[1], sizeof path[1], &fd[1], err, errlen)))
        goto out;
    for (int64_t c0 = 0; c0 < ncut; c0 += nslot) {
        int nb = (int)(ncut - c0 < nslot ? ncut - c0 : nslot);
#pragma omp parallel for schedule(dynamic, 1)
        for (int b = 0; b < nb; b++) {
            slot[b].u0 = c0 + b ? cut[c0 + b - 1] : 0;
            slot[b].u1 = cut[c0 + b];
            ratings_chunk(&G, &S[omp_get_thread_num()], &slot[b]);
        }
        for (int b = 0; b < nb; b++) {
            struct rchunk *ch = &slot[b];
            int e = 0;
            if (ch->fail) {
                rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory generating ratings");
                goto out;
            }
            for (int k = 0; k < 2; k++) {
                const struct obuf *ob = k ? &ch->test : &ch->train;
                if ((e = write_all(fd[k], ob->p, ob->n))) {
                    rc = write_err(path[k], e, err, errlen);
                    goto out;
                }
            }
            s.train += ch->ntrain;
            s.test += ch->ntest;
            s.users_rated += ch->rated;
            if (ch->maxdeg > s.max_degree)
                s.max_degree = ch->maxdeg;
            sse += ch->sse;
        }
    }
    s.planted_rmse = s.test ? sqrt(sse / (double)s.test) : 0;
    for (int k = 0; k < 2; k++) {
        if (close(fd[k]) && !rc)
            rc = write_err(path[k], errno, err, errlen);
        fd[k] = -1;
    }
    if (!rc && st)
        *st = s;
out:
    for (int k = 0; k < 2; k++)
        if (fd[k] >= 0)
            close(fd[k]);
    for (int t = 0; S && t < nth; t++) {
        free(S[t].bits);
        free(S[t].items);
        free(S[t].p);
        free(S[t].keys);
    }
    for (int b = 0; slot && b < nslot; b++) {
        free(slot[b].train.p);
        free(slot[b].test.p);
    }
    free(S);
    free(slot);
    free(cut);
    free(G.Q);
    free(G.bi);
    free(G.wi);
    free(G.deg);
    loom_alias_free(&G.ia);
    return rc;
}

/* ---- LDA corpora -------------------------------------------------------------- */

void loom_gen_lda_defaults(loom_gen_lda_opts *o)
{
    *o = (loom_gen_lda_opts){.alpha = 0.1, .beta = 0.01, .zipf = 1.0, .seed = 1};
}

char *loom_gen_word(int32_t id, char *buf, size_t n)
{
    /* Words of 2 syllables for the first 70^2 ids, then 3, 4, ...: a
     * bijection, so distinct ids give distinct words. */
    static const char cons[] = "bdfgklmnprstvz", vow[] = "aeiou";
    uint64_t x = id > 0 ? (uint64_t)id : 0, span = 70 * 70;
    int len = 2, k = 0;
    char t[32];
    while (x >= span) {
        x -= span;
        span *= 70;
        len++;
    }
    for (int j = 0; j < len; j++, x /= 70) {
        t[k++] = cons[x % 70 / 5];
        t[k++] = vow[x % 70 % 5];
    }
    snprintf(buf, n, "%.*s", k, t);
    return buf;
}

struct lgen {
    const loom_gen_lda_opts *o;
    loom_alias *topic; /* K alias tables over the vocabulary */
};

struct lscratch {
    int32_t *count, *touched; /* per word, zeroed between documents */
    double *cum;              /* cumulative theta */
};

struct lchunk {
    int32_t d0, d1;
    struct obuf out;
    int64_t tokens, nnz;
    int32_t empty;
    int fail;
};

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Documents [d0, d1): theta ~ Dir(alpha), length ~ Poisson(L), each token's
 * topic from theta and word from the topic; "doc word count" lines. */
static void lda_chunk(const struct lgen *G, struct lscratch *S, struct lchunk *ch)
{
    const loom_gen_lda_opts *o = G->o;
    const int32_t K = o->topics;
    ch->out.n = 0;
    ch->tokens = ch->nnz = 0;
    ch->empty = 0;
    ch->fail = 0;
    for (int32_t d = ch->d0; d < ch->d1; d++) {
        loom_rng g = loom_rng_stream(o->seed, TAG_DOC | (uint64_t)d);
        loom_rng_dirichlet(&g, NULL, o->alpha, K, S->cum);
        for (int32_t k = 1; k < K; k++)
            S->cum[k] += S->cum[k - 1];
        int64_t len = loom_rng_poisson(&g, o->doc_length);
        ch->tokens += len;
        if (!len) {
            ch->empty++;
            continue;
        }
        int32_t nt = 0;
        for (int64_t t = 0; t < len; t++) {
            double x = loom_rng_uniform(&g) * S->cum[K - 1];
            int32_t lo = 0, hi = K - 1;
            while (lo < hi) {
                int32_t mid = (lo + hi) / 2;
                if (S->cum[mid] > x)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            int32_t w = loom_alias_draw(&G->topic[lo], &g);
            if (!S->count[w]++)
                S->touched[nt++] = w;
        }
        qsort(S->touched, (size_t)nt, sizeof *S->touched, cmp_i32);
        if (obuf_reserve(&ch->out, (size_t)nt * 36)) {
            ch->fail = 1;
            return;
        }
        char *p = ch->out.p + ch->out.n;
        for (int32_t j = 0; j < nt; j++) {
            int32_t w = S->touched[j];
            p = put_u64(p, (uint64_t)d + 1);
            *p++ = ' ';
            p = put_u64(p, (uint64_t)w + 1);
            *p++ = ' ';
            p = put_u64(p, (uint64_t)S->count[w]);
            *p++ = '\n';
            S->count[w] = 0;
        }
        ch->out.n = (size_t)(p - ch->out.p);
        ch->nnz += nt;
    }
}

static int check_lda_opts(const loom_gen_lda_opts *o, char *err, size_t errlen)
{
    const char *why = NULL;
    if (o->docs < 1 || o->docs > INT32_MAX - 1)
        why = "docs must be from 1 to 2147483646";
    else if (o->vocab < 1)
        why = "vocab must be at least 1";
    else if (o->topics < 1 || o->topics > 100000)
        why = "topics must be from 1 to 100000";
    else if (!(o->doc_length > 0 && o->doc_length <= 1e7))
        why = "doc length must be above 0 and at most 1e7";
    else if (!(o->alpha > 0 && o->alpha <= 1e6))
        why = "alpha must be above 0 and at most 1e6";
    else if (!(o->beta > 0 && o->beta <= 1e6))
        why = "beta must be above 0 and at most 1e6";
    else if (!(o->zipf >= 0 && o->zipf <= 10))
        why = "zipf exponent must be from 0 to 10";
    return why ? loom_errf(err, errlen, LOOM_ERR_ARG, "%s", why) : LOOM_OK;
}

/* The planted topics: phi_k ~ Dir(beta V z) from stream k, computed in
 * parallel, written in order to PREFIX.topics.txt, each into an alias
 * table of G->topic. */
static int lda_topics(struct lgen *G, const char *prefix, int nslot, char *err, size_t errlen)
{
    const loom_gen_lda_opts *o = G->o;
    const int32_t V = o->vocab, K = o->topics;
    char path[4096];
    int fd = -1, rc = LOOM_OK, fail = 0;
    double *bw = malloc(sizeof *bw * (size_t)V), zsum = 0;
    double **phi = calloc((size_t)nslot, sizeof *phi);
    struct obuf *line = calloc((size_t)nslot, sizeof *line);
    if (!bw || !phi || !line)
        fail = 1;
    for (int b = 0; !fail && b < nslot; b++)
        fail = !(phi[b] = malloc(sizeof **phi * (size_t)V));
    if (!fail) {
        for (int32_t w = 0; w < V; w++)
            zsum += bw[w] = exp(-o->zipf * log((double)w + 1));
        for (int32_t w = 0; w < V; w++)
            bw[w] *= o->beta * V / zsum;
        rc = create(prefix, ".topics.txt", path, sizeof path, &fd, err, errlen);
    }
    for (int32_t k0 = 0; !fail && !rc && k0 < K; k0 += nslot) {
        int nb = K - k0 < nslot ? K - k0 : nslot;
#pragma omp parallel for schedule(dynamic, 1)
        for (int b = 0; b < nb; b++) {
            loom_rng g = loom_rng_stream(o->seed, TAG_TOPIC | (uint64_t)(k0 + b));
            loom_rng_dirichlet(&g, bw, 0, V, phi[b]);
            line[b].n = 0;
            int bad = obuf_reserve(&line[b], (size_t)V * 16) ||
                      loom_alias_build(&G->topic[k0 + b], phi[b], V);
            for (int32_t w = 0; !bad && w < V; w++)
                line[b].n += (size_t)snprintf(line[b].p + line[b].n, 16, "%.6g%c", phi[b][w],
                                              w + 1 < V ? ' ' : '\n');
            if (bad) {
#pragma omp atomic write
                fail = 1;
            }
        }
        for (int b = 0; !fail && !rc && b < nb; b++) {
            int e = write_all(fd, line[b].p, line[b].n);
            if (e)
                rc = write_err(path, e, err, errlen);
        }
    }
    if (fd >= 0 && close(fd) && !rc && !fail)
        rc = write_err(path, errno, err, errlen);
    if (fail && !rc)
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory for %d topics of %d words",
                       (int)K, (int)V);
    for (int b = 0; phi && b < nslot; b++)
        free(phi[b]);
    for (int b = 0; line && b < nslot; b++)
        free(line[b].p);
    free(phi);
    free(line);
    free(bw);
    return rc;
}

/* PREFIX.vocab.txt: loom_gen_word(w) for every word id, one per line. */
static int lda_vocab(const loom_gen_lda_opts *o, const char *prefix, char *err, size_t errlen)
{
    char path[4096];
    int fd, rc = create(prefix, ".vocab.txt", path, sizeof path, &fd, err, errlen), e = 0;
    if (rc)
        return rc;
    struct obuf b = {0};
    for (int32_t w = 0; w < o->vocab && !e; w++) {
        if (obuf_reserve(&b, 32)) {
            close(fd);
            return loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory");
        }
        loom_gen_word(w, b.p + b.n, 32);
        b.n += strlen(b.p + b.n);
        b.p[b.n++] = '\n';
        if (b.n >= (1 << 20) || w + 1 == o->vocab) {
            e = write_all(fd, b.p, b.n);
            b.n = 0;
        }
    }
    free(b.p);
    if (close(fd) && !e)
        e = errno;
    return e ? write_err(path, e, err, errlen) : LOOM_OK;
}

int loom_gen_lda(const loom_gen_lda_opts *o, const char *prefix, loom_gen_lda_stats *st,
                 char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    int rc = check_lda_opts(o, err, errlen);
    if (rc)
        return rc;
    const int32_t V = o->vocab, K = o->topics, D = o->docs;
    int nth = omp_get_max_threads(), nslot = 4 * nth;
    char what[96];
    snprintf(what, sizeof what, "--vocab %d --topics %d --docs %d", V, K, D);
    if ((rc = loom_mem_check(NULL, what,
                             (double)V * (8.0 * K + 8 + nth * 8.0) + (double)K * 16 * (nth + 1),
                             err, errlen)))
        return rc;
    struct lgen G = {.o = o, .topic = calloc((size_t)K, sizeof *G.topic)};
    struct lscratch *S = calloc((size_t)nth, sizeof *S);
    struct lchunk *slot = calloc((size_t)nslot, sizeof *slot);
    char path[4096], tmp[4096];
    int fd = -1, tfd = -1, fail = !G.topic || !S || !slot;
    loom_gen_lda_stats s = {0};
    for (int t = 0; !fail && t < nth; t++) {
        S[t].count = calloc((size_t)V, sizeof *S[t].count);
        S[t].touched = malloc(sizeof *S[t].touched * (size_t)V);
        S[t].cum = malloc(sizeof *S[t].cum * (size_t)K);
        fail = !S[t].count || !S[t].touched || !S[t].cum;
    }
    if (fail) {
        rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory for %d words, %d topics",
                       (int)V, (int)K);
        goto out;
    }
    if ((rc = lda_vocab(o, prefix, err, errlen)) || (rc = lda_topics(&G, prefix, nslot, err, errlen)))
        goto out;
    /* The body first (NNZ is known only at the end), then header + body. */
    if ((rc = create(prefix, ".docword.txt.tmp", tmp, sizeof tmp, &tfd, err, errlen)))
        goto out;
    int64_t per = (int64_t)(CHUNK_RATINGS / o->doc_length);
    per = per < 1 ? 1 : per > 65536 ? 65536 : per;
    for (int64_t d0 = 0; d0 < D; d0 += per * nslot) {
        int nb = (int)((D - d0 + per - 1) / per < nslot ? (D - d0 + per - 1) / per : nslot);
#pragma omp parallel for schedule(dynamic, 1)
        for (int b = 0; b < nb; b++) {
            slot[b].d0 = (int32_t)(d0 + b * per);
            slot[b].d1 = (int32_t)(d0 + (b + 1) * per < D ? d0 + (b + 1) * per : D);
            lda_chunk(&G, &S[omp_get_thread_num()], &slot[b]);
        }
        for (int b = 0; b < nb; b++) {
            if (slot[b].fail) {
                rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "out of memory generating documents");
                goto out;
            }
            int e = write_all(tfd, slot[b].out.p, slot[b].out.n);
            if (e) {
                rc = write_err(tmp, e, err, errlen);
                goto out;
            }
            s.tokens += slot[b].tokens;
            s.nnz += slot[b].nnz;
            s.empty += slot[b].empty;
        }
    }
    if ((rc = create(prefix, ".docword.txt", path, sizeof path, &fd, err, errlen)))
        goto out;
    char head[96];
    int hn = snprintf(head, sizeof head, "%d\n%d\n%lld\n", (int)D, (int)V, (long long)s.nnz), e;
    if ((e = write_all(fd, head, (size_t)hn)) || (e = append_file(fd, tfd))) {
        rc = write_err(path, e, err, errlen);
        goto out;
    }
    if (close(fd)) {
        fd = -1;
        rc = write_err(path, errno, err, errlen);
        goto out;
    }
    fd = -1;
    if (st)
        *st = s;
out:
    if (fd >= 0)
        close(fd);
    if (tfd >= 0) {
        close(tfd);
        unlink(tmp);
    }
    for (int t = 0; S && t < nth; t++) {
        free(S[t].count);
        free(S[t].touched);
        free(S[t].cum);
    }
    for (int b = 0; slot && b < nslot; b++)
        free(slot[b].out.p);
    for (int32_t k = 0; G.topic && k < K; k++)
        loom_alias_free(&G.topic[k]);
    free(G.topic);
    free(S);
    free(slot);
    return rc;
}

/* ---- reading planted topics back ------------------------------------------------ */

int loom_topics_load(const char *path, int32_t *K, int32_t *V, double **phi, char *err,
                     size_t errlen)
{
    *K = *V = 0;
    *phi = NULL;
    if (err && errlen)
        err[0] = '\0';
    loom_lines in;
    int rc = loom_lines_open(&in, path, err, errlen), have;
    if (rc)
        return rc;
    double *v = NULL;
    int64_t n = 0, width = -1;
    size_t cap = 0;
    char *line;
    size_t len;
    while (!rc && (have = loom_lines_next(&in, &line, &len)) == 1) {
        const char *p = line, *e = line + len;
        int64_t count = 0;
        for (;;) {
            while (p < e && (*p == ' ' || *p == '\t'))
                p++;
            if (p == e)
                break;
            char *q, tok[32];
            double x = strtod(p, &q);
            if (q == p || q > e || (q < e && *q != ' ' && *q != '\t') || !(x >= 0 && x <= 1)) {
                rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                               "%s:%ld: bad probability '%s' (expected a number from 0 to 1)",
                               path, in.lineno, loom_token(p, e, tok, sizeof tok));
                break;
            }
            if ((size_t)n == cap) {
                double *nv = loom_rt_grow(v, &cap, (size_t)n + 1, sizeof *nv);
                if (!nv) {
                    rc = loom_errf(err, errlen, LOOM_ERR_NOMEM, "%s: out of memory", path);
                    break;
                }
                v = nv;
            }
            v[n++] = x;
            count++;
            p = q;
        }
        if (!rc && width < 0)
            width = count;
        if (!rc && (count != width || count == 0 || count > INT32_MAX))
            rc = loom_errf(err, errlen, LOOM_ERR_FORMAT,
                           "%s:%ld: %lld values, but line 1 has %lld (expected one topic of V "
                           "probabilities per line)",
                           path, in.lineno, (long long)count, (long long)width);
    }
    if (!rc && have < 0)
        rc = loom_lines_error(&in, err, errlen);
    if (!rc && width < 0)
        rc = loom_errf(err, errlen, LOOM_ERR_FORMAT, "%s:%ld: no topics in the file", path,
                       in.lineno);
    loom_lines_close(&in);
    if (rc) {
        free(v);
        return rc;
    }
    *V = (int32_t)width;
    *K = (int32_t)(n / width);
    *phi = v;
    return LOOM_OK;
}
