/* w2v_dist.c — distributed word2vec (w2v_dist.h): the sentence body the
 * loop and its serial twin share, the vectors' allocations and merge, an
 * epoch under loom_for, and the merged rows for the saved file. */
#include "w2v_dist.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 256 /* per-thread sums of the loss and pairs, a cache line each */

/* What the loop body needs. */
struct job {
    const loom_corpus *c;
    loom_w2v_model m;
    float *in, *out;        /* Loom rows, or plain arrays for the serial twin */
    int epoch, epochs;
    int nblocks;            /* the ranks' blocks of the text (equal words)... */
    int64_t *block;         /* ...block k is sentences [block[k], block[k + 1]) */
    float alpha0;
    _Atomic int64_t begun;  /* sentences of this rank's block begun this epoch */
    uint64_t seed;
    loom_w2v_dist_opts o;
    struct { double loss; int64_t pairs; char pad[48]; } slot[SLOTS];
};

/* A row the loop stages: loom_at (the kernel asks where loom_at_base has
 * no plain base for the array this round). */
static float *loom_row(void *ctx, int which, int32_t r)
{
    struct job *j = ctx;
    return loom_at(which ? j->out : j->in, (size_t)r);
}
/* The merged row, for the model's output after the last loop: loom_at
 * outside a loop is address arithmetic on this rank's copy, whose rows are
 * current only where valid (every row here, from the prefetch before
 * training, refreshed by write notices at each sync point and barrier);
 * loom_row_get also fetches a row that is not.  Call after a
 * loom_barrier. */
static float *home_row(void *ctx, int which, int32_t r)
{
    struct job *j = ctx;
    return (float *)loom_row_get(which ? j->out : j->in, (size_t)r);
}

/* The words of sentence i, the loop's weights: its rounds end every
 * sync_every words per rank, so that rounds are equal work whatever the
 * sentences' lengths (the Bible's verses are longer in its first half). */
static long words(long i, void *ctx)
{
    const struct job *j = ctx;
    return (long)(j->c->doc_off[i + 1] - j->c->doc_off[i]);
}

/* Sentence d: its own stream, and α by the rank's progress through its
 * block: the sentences begun before it this epoch (d - first in the
 * serial twin and on one thread; on several, whatever part of the block
 * each thread runs, as word2vec.c's shared word count). */
static void sentence(long d, void *ctx)
{
    struct job *j = ctx;
    int k = 0;
    while (k + 1 < j->nblocks && d >= j->block[k + 1])
        k++;
    int64_t nb = j->block[k + 1] - j->block[k], begun = atomic_fetch_add(&j->begun, 1);
    loom_rng g = loom_rng_stream(j->seed, (uint64_t)j->epoch * (uint64_t)j->c->ndocs + (uint64_t)d);
    double done = ((double)(j->epoch - 1) * (double)nb + (double)begun) /
                  ((double)j->epochs * (double)(nb ? nb : 1));
    float alpha = j->alpha0 * (float)fmax(1e-4, 1 - done);
    int64_t pairs, lo = j->c->doc_off[d], n = j->c->doc_off[d + 1] - lo;
    loom_w2v_model m = j->m;
    if (!m.base[0]) /* Loom rows: by address where loom_at would be that anyway */
        m.base[0] = loom_at_base(j->in), m.base[1] = loom_at_base(j->out);
    double loss = loom_w2v_sentence(&m, j->c->word + lo, n, alpha, &g, &pairs);
    int s = omp_get_thread_num() % SLOTS;
    j->slot[s].loss += loss;
    j->slot[s].pairs += pairs;
    j->o.tick(n);
}

/* Contract: w2v_dist.h. */
long long loom_w2v_sync_every(int merge, int R)
{
    return merge ? (8000 + R - 1) / R : R > 1 ? (5000 + R - 2) / (R - 1) : 5000;
}

static void no_tick(int64_t n) { (void)n; }

/* Contract: w2v_dist.h. */
loom_w2v_dist *loom_w2v_dist_new(const loom_corpus *c, const float *keep, const loom_alias *neg,
                                 const loom_w2v_dist_opts *o)
{
    int R = loom_size(), me = loom_rank();
    int32_t V = c->nwords;
    struct job *j = aligned_alloc(64, (sizeof *j + 63) / 64 * 64); /* per-thread slots */
    if (!j)
        loom_abort(1, "loom-w2v: out of memory");
    memset(j, 0, sizeof *j);
    j->o = *o;
    j->o.tick = o->tick ? o->tick : no_tick;
    j->c = c;
    j->nblocks = R; /* serial: one rank, one block */
    if (!(j->block = malloc(((size_t)j->nblocks + 1) * sizeof *j->block)))
        loom_abort(1, "loom-w2v: out of memory");
    for (int k = 0; k <= j->nblocks; k++)
        j->block[k] = loom_corpus_block(c, k, j->nblocks);
    j->epochs = o->epochs;
    j->alpha0 = (float)o->alpha;
    j->seed = o->seed;
    j->m = (loom_w2v_model){.p = o->p, .keep = keep, .neg = neg, .row = loom_row, .ctx = j};
    size_t row = (size_t)o->p.dim * sizeof(float), bytes = (size_t)V * row;
    if (o->serial) {
        j->in = malloc(bytes);
        j->out = calloc((size_t)V * (size_t)o->p.dim, sizeof(float));
    } else {
        loom_alloc_opts a = {.unit = LOOM_UNIT_ROW, .row_size = row, .merge = LOOM_MERGE_ADD,
                             .type = LOOM_FLOAT, .coherence = o->staleness ? "ssp" : "bsp",
                             .staleness = o->staleness, .staleness_set = 1,
                             .average = o->merge, .momentum = o->merge != 0};
        a.name = "in";
        j->in = loom_alloc(bytes, &a);
        a.name = "out";
        j->out = loom_alloc(bytes, &a);
    }
    if (!j->in || !j->out)
        loom_abort(1, "loom-w2v: cannot allocate 2 x %d vectors of %d floats", V, o->p.dim);
    if (o->serial) /* the twin's rows are plain arrays */
        j->m.base[0] = j->in, j->m.base[1] = j->out;
    if (o->serial)
        loom_w2v_init_rows(j->in, 0, V, o->p.dim, o->seed);
    else if (!loom_restarted()) { /* rank 0 writes the first vectors; the barrier publishes them */
        float *v = malloc(row);
        for (int32_t w = 0; me == 0 && v && w < V; w++) {
            loom_w2v_init_rows(v, w, 1, o->p.dim, o->seed);
            loom_row_put(j->in, (size_t)w, v);
        }
        free(v);
        loom_barrier();
    }
    if (!o->serial) { /* every rank reads nearly every row: fetch both tables in one batch
                       * each, not a round trip per row at its first use */
        size_t *all = malloc((size_t)V * sizeof *all);
        for (int32_t w = 0; all && w < V; w++)
            all[w] = (size_t)w;
        if (all && (loom_row_prefetch(j->in, all, (size_t)V) ||
                    loom_row_prefetch(j->out, all, (size_t)V)))
            loom_abort(1, "loom-w2v: cannot fetch the vectors");
        free(all);
    }
    return (loom_w2v_dist *)j;
}

/* Contract: w2v_dist.h. */
void loom_w2v_dist_epoch(loom_w2v_dist *d, int e, double s[2])
{
    struct job *j = (struct job *)d;
    const loom_corpus *c = j->c;
    j->epoch = e;
    atomic_store(&j->begun, 0);
    memset(j->slot, 0, sizeof j->slot);
    if (j->o.serial)
        for (int64_t i = 0; i < c->ndocs; i++)
            sentence((long)i, j);
    else if (loom_for(0, c->ndocs, sentence, j, &(loom_for_opts){.schedule = LOOM_DYNAMIC,
                      .chunk = 16, .sync = j->o.staleness ? LOOM_SSP : LOOM_HYBRID,
                      .sync_every = j->o.sync_every,
                      .sync_weight = words, /* sync_every counts words */
                      .accessor_reads = 1})) /* the vectors are read by loom_row_get */
        loom_abort(1, "loom-w2v: the training loop failed in epoch %d", e);
    s[0] = s[1] = 0;
    for (int k = 0; k < SLOTS; k++)
        s[0] += j->slot[k].loss, s[1] += (double)j->slot[k].pairs;
    loom_allreduce(LOOM_IN_PLACE, s, 2, LOOM_DOUBLE, LOOM_SUM);
}

/* Contract: w2v_dist.h (the serial twin: nothing to wait for). */
void loom_w2v_dist_finish(loom_w2v_dist *d)
{
    if (!((struct job *)d)->o.serial)
        loom_barrier(); /* every rank's last changes are home: save reads them there */
}

/* Contract: w2v_dist.h. */
int loom_w2v_dist_save(loom_w2v_dist *d, const char *path, char *const *vocab)
{
    struct job *j = (struct job *)d;
    loom_w2v_model view = j->m;
    if (!j->o.serial)
        view.row = home_row;
    return loom_w2v_save(path, vocab, j->c->nwords, j->o.p.dim, &view);
}

/* Contract: w2v_dist.h.  Collective (loom_free) but for the serial twin. */
void loom_w2v_dist_free(loom_w2v_dist *d)
{
    struct job *j = (struct job *)d;
    if (!j)
        return;
    if (j->o.serial) {
        free(j->in);
        free(j->out);
    } else {
        loom_free(j->in);
        loom_free(j->out);
    }
    free(j->block);
    free(j);
}
