/* lr_dist.h — distributed logistic regression: the Loom version of the
 * three models of lr.h (STRADS-AP SyncFor, seed 000 ch. 7), each beside
 * its serial twin.  apps/loom-lr.c is the command line around it (flags,
 * files, the per-epoch report); docs/loom-lr.md explains the distribution.
 *
 * Who holds what, over R ranks x T threads:
 *   - each rank keeps one block of the training and test samples;
 *   - the model is a row allocation with additive merge, "bsp" (staleness
 *     0) or "ssp" (staleness s > 0): the multinomial model's C rows of D
 *     floats (dense), the sparse binary model's weights (dense rows of 64
 *     floats, or a loom_dmap for indices past LOOM_LR_DENSE_MAX) and its
 *     bias (one float, always averaged), or the sparse multinomial model's
 *     rows of G features' C floats;
 *   - an epoch is loom_for(static, .local) over the rank's samples with
 *     .sync = hybrid (threads share the rank's copy, Hogwild; ranks meet
 *     at sync points), bsp (private copies, summed, barrier) or ssp
 *     (private copies, a clock: reads may lag s clocks), a sync point
 *     every `every` samples of each rank (loom_lr_sync_every), where the
 *     ranks' changes are averaged with block momentum (cfg.average) or
 *     add up;
 *   - scoring reads this rank's view of the model (loom_row_get) into a
 *     plain copy; the caller sums the ranks' figures.
 * With cfg.serial the same bodies run over plain memory in file order
 * (the dense model: loom_lr_softmax_epoch), no Loom allocation touched
 * but the one a dense model makes anyway (one rank only).
 *
 * Every function but the per-rank helpers (sumsq, rescale, free of NULL)
 * is collective: all ranks call it, in the same order.  Out of memory
 * ends the job (loom_abort): ranks could not agree otherwise. */
#ifndef LOOM_KERNELS_LR_DIST_H
#define LOOM_KERNELS_LR_DIST_H

#include <loom.h>
#include <stdint.h>

#include "../data/libsvm.h"
#include "lr.h"

/* Feature indices past this go to a loom_dmap (the sparse binary model). */
#define LOOM_LR_DENSE_MAX ((int64_t)1 << 24)

/* How a model trains (every model's). */
typedef struct loom_lr_cfg {
    int serial;           /* 1: the serial twin, one rank */
    loom_sync sync;       /* LOOM_HYBRID, LOOM_BSP or LOOM_SSP */
    int staleness;        /* > 0: an "ssp" allocation */
    int average;          /* 1: weights averaged at a sync point, with block
                             momentum; 0: the ranks' changes summed */
    long long sync_every; /* > 0: as given; else loom_lr_sync_every's default */
    float lambda;         /* L2 regularization */
    void (*tick)(int64_t n); /* told of n samples done, from the worker
                                thread (loom_report_tick); NULL: nobody */
} loom_lr_cfg;

/* One block of dense samples: n rows of D floats (features, then a 1 for
 * the bias), rows first..first+n of the file's total; labels 0..C-1. */
typedef struct loom_lr_dense {
    float *X;
    int32_t *y;
    int64_t n, first, total;
    int D, C;
    int present; /* distinct labels in the file */
} loom_lr_dense;

/* A model under training, with what the caller reports about it. */
typedef struct loom_lr_model {
    int64_t ntrain, ntest, nlocal; /* the job's samples; this rank's training samples */
    int C;                         /* classes: an untrained model scores ln C */
    long long every;               /* the sync interval chosen */
    int64_t features;              /* the sparse binary model: distinct features */
    int map;                       /* ... its weights are a loom_dmap */
    int own;                       /* ... threads keep copies (bsp/ssp, T > 1): the
                                      bias's changes add up within a rank */
    double busy_share;             /* ... the busiest feature's share of the samples */
    double sumsq;                  /* ... this rank's scaled training samples' summed
                                      squared lengths (loom_lr_sumsq_sparse) */
    struct loom_lr_impl *impl;
} loom_lr_model;

/* The sync interval: `given` when > 0, else the default (docs/loom-lr.md,
 * "How often ranks meet"), n a rank's samples an epoch.  Averaging with
 * block momentum, 100 samples, whatever the ranks: each sync point costs a
 * rank about two model's worth of bytes, so adding ranks takes syncs away;
 * but at most n / 3R, since the momentum (1 - 1/R) needs about R sync
 * points to build up and an epoch should hold several times that.
 * Summing, the default keeps the updates of one weight that a rank may not
 * have seen from the others at about 40: M (R - 1)(S + 1) p <= 40 for R
 * ranks at staleness S, p the largest fraction of the samples that update
 * one summed weight (1 where every sample updates every weight, as in the
 * multinomial model), and M at most n.  Not collective. */
long long loom_lr_sync_every(const loom_lr_cfg *cfg, double p, int64_t n);

/* Summed squared lengths of a block's samples (the bias's 1 included):
 * the step's default follows from them.  This rank's only. */
double loom_lr_sumsq_dense(const loom_lr_dense *d);
double loom_lr_sumsq_sparse(const loom_libsvm *d);

/* scale[f] = the largest |value| of feature f in d over all ranks (1 when
 * none), f < F, and d's values divided by it (loom_lr_rescale), so that
 * every feature lies in [-1, 1] as the IDX images' bytes / 255 do and one
 * step size fits any data.  Returns scale (malloc'd).  Collective. */
float *loom_lr_scales(loom_libsvm *d, int64_t F);
void loom_lr_rescale(loom_libsvm *d, const float *scale);

/* The classes of LIBSVM training data d (this rank's share; path names
 * it): its distinct labels, which must be integers, class c being the
 * c-th smallest, into label[] (at most LOOM_LR_MAXC); returns how many.
 * Refuses data the model cannot learn from (no rows, no features, one
 * class, labels that are not class ids) through agree (collective, one
 * message, and it does not return when some rank failed: the apps pass
 * loom_report_agree).  Collective. */
int loom_lr_classes(const char *path, const loom_libsvm *d, double *label,
                    void (*agree)(int failed, const char *msg));

/* Rewrites d's labels as class ids (0..C-1) by label[] (sorted); a label
 * that is not a class of the training data is refused through agree.
 * Collective. */
void loom_lr_relabel(const char *path, loom_libsvm *d, const double *label, int C,
                     void (*agree)(int failed, const char *msg));

/* The multinomial model over dense rows: C rows of D floats.  tr and te
 * stay the caller's.  Prints nothing. */
loom_lr_model *loom_lr_dense_new(const loom_lr_dense *tr, const loom_lr_dense *te,
                                 const loom_lr_cfg *cfg);

/* The sparse binary model (two classes, labels 0/1) over F features (the
 * largest index + 1): dense weights, or past LOOM_LR_DENSE_MAX a map
 * whose rows replace the indices in tr and te (keys: rank 0 keeps every
 * slot's index, for loom_lr_save).  Scales tr and te (loom_lr_scales).
 * The model keeps tr and te (loom_lr_model_free frees them). */
loom_lr_model *loom_lr_binary_new(loom_libsvm *tr, loom_libsvm *te, int64_t F, int keys,
                                  const loom_lr_cfg *cfg);

/* The sparse multinomial model (C >= 3 classes, F <= LOOM_LR_DENSE_MAX,
 * values already scaled by scale[], which the model keeps for the saved
 * file's units): (F + 1) x C weights, twice (the Loom rows and the plain
 * view scoring reads), no dense rows.  tr and te stay the caller's. */
loom_lr_model *loom_lr_multi_new(const loom_libsvm *tr, const loom_libsvm *te, int64_t F, int C,
                                 const float *scale, const loom_lr_cfg *cfg);

/* One epoch at step: the serial twin's loop or the Loom loop (a failure
 * ends the job). */
void loom_lr_epoch(loom_lr_model *m, float step);

/* s[0] = this rank's training samples' summed loss, s[1] its test
 * samples' correct predictions, against its view of the model (made
 * current first). */
void loom_lr_score(loom_lr_model *m, double s[2]);

/* Rank 0 (the others read nothing and return): writes the model to path,
 * in the input's units (docs/loom-lr.md).  Dense: line c = class c, the
 * weights for pixels / 255 (dense_scale: the pixels' divisors), then the
 * bias.  Sparse binary: one weight per line for features 1..F, then the
 * bias; map: "INDEX WEIGHT" per feature in index order (zero_based: the
 * file's numbering from 0), then "bias WEIGHT".  Sparse multinomial: as
 * the dense model, in the file's units.  Ends the job on a write error. */
void loom_lr_save(loom_lr_model *m, const char *path, const float *dense_scale, int zero_based);

/* Frees the model (NULL is fine). */
void loom_lr_model_free(loom_lr_model *m);

#endif
