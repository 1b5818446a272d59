/* checkpoint.h — the on-disk format of a checkpoint, shared by its writer
 * (checkpoint.c) and its reader (restart.c).  docs/checkpoint.md.
 *
 *   DIR/LATEST                   "ckpt-000007\n": the newest complete checkpoint
 *   DIR/ckpt-000007/rank-R.ckpt  rank R's part:
 *       struct loom_ckpt_head
 *       struct loom_ckpt_rec x nallocs   live allocations, in creation order
 *       payloads, each at its record's offset
 *   DIR/ckpt-000007/INFO         a summary for people (rank 0)
 *
 * A payload is a home store (CK_HOME), the rank's own copy of a "local"
 * allocation (CK_LOCAL), or the ring partition the rank owns, after the
 * ring's P + 1 partition boundaries as uint64 (CK_RING).  Integers are in
 * the machine's byte order: a checkpoint is read back on the same kind of
 * machine, which the magic and version check. */
#ifndef LOOM_DSM_CHECKPOINT_H
#define LOOM_DSM_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#define LOOM_CKPT_MAGIC "LOOMCKPT"
#define LOOM_CKPT_VERSION 1u

enum { CK_HOME = 1, CK_LOCAL = 2, CK_RING = 3 };

struct loom_ckpt_head {
    char magic[8];
    uint32_t version, rank, nranks, nallocs;
    uint64_t seq;       /* the checkpoint's number (ckpt-NNNNNN) */
    uint64_t clock;     /* the DSM clock (loom_dsm_clock) */
    uint64_t calls;     /* the program's loom_clock calls (loom_clock_now) */
    uint64_t tabsum;    /* checksum of the records */
    uint64_t headsum;   /* checksum of this header up to here */
};

struct loom_ckpt_rec {
    char name[64];
    char policy[16];
    uint64_t serial;    /* creation order: the program's n-th loom_alloc */
    uint32_t kind, merge, type, what; /* loom_unit_kind, loom_merge, loom_type, CK_* */
    uint64_t bytes, unit, nunits, nhome;
    uint64_t homehash;  /* hash of the unit -> home map (0 for local) */
    uint64_t ring_t;    /* CK_RING: the sub-epoch */
    uint64_t off, len;  /* the payload's place in the file */
    uint64_t sum;       /* its checksum */
};

/* A fast 64-bit checksum of n bytes, chained through seed (checksum of
 * a then b = loom_ckpt_sum(b, nb, loom_ckpt_sum(a, na, seed))).  Catches a
 * damaged or truncated file; it is not a cryptographic hash. */
uint64_t loom_ckpt_sum(const void *p, size_t n, uint64_t seed);

/* Read DIR/LATEST: 0 and *seq, -1 if there is none, -2 if it does not
 * name a checkpoint. */
int loom_ckpt_read_latest(const char *dir, uint64_t *seq);

/* The checkpoint this job last wrote or resumed from (0: none). */
extern uint64_t loom_ckpt_last_seq;

#endif
