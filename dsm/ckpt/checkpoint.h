/* checkpoint.h — the on-disk format of a checkpoint, shared by its writer
 * (checkpoint.c) and its reader (restart.c).  docs/checkpoint.md.
 *
 *   DIR/LATEST                   "ckpt-000007\n": the newest complete checkpoint
 *   DIR/ckpt-000007/rank-R.ckpt  rank R's part:
 *       struct loom_ckpt_head
 *       struct loom_ckpt_rec x nallocs   live allocations in creation order,
 *                                        then the kept private ranges
 *       per record: its meta (ring boundaries, chunk map, layout) and its data
 *   DIR/ckpt-000007/INFO         a summary for people (rank 0)
 *
 * A record's data is a home store (CK_HOME), the rank's own copy of a
 * "local" allocation (CK_LOCAL), the ring partition the rank owns
 * (CK_RING; its meta starts with the ring's P + 1 partition boundaries) or
 * a range given to loom_checkpoint_keep (CK_KEPT).  The data is cut into
 * chunks (a unit, or 4 KiB of rows); the meta's chunk map names, per
 * chunk, the checkpoint whose file of this rank holds it: this one, or an
 * older one when the chunk did not change (an incremental checkpoint, at
 * most LOOM_CHECKPOINT_CHAIN checkpoints back).  Chunk c lies at
 * off + c * chunk in the file that holds it; in the others it is a hole.
 * The layout says which units the data holds, so that a job can resume on
 * another number of ranks (restart.c): for CK_HOME the units this rank
 * homes, in store-slot order (the k-th unit listed is at k * unit); for
 * CK_LOCAL the rows the program declared current on this rank
 * (loom_checkpoint_rows; each at its own place in the copy).  It is a list
 * of runs {first, count, stride} (uint64 each): one run for a block or
 * cyclic distribution.
 * Integers are in the machine's byte order: a checkpoint is read back on
 * the same kind of machine, which the magic and version check. */
#ifndef LOOM_DSM_CHECKPOINT_H
#define LOOM_DSM_CHECKPOINT_H

#include "../dsm.h"

#include <stddef.h>
#include <stdint.h>

#define LOOM_CKPT_MAGIC "LOOMCKPT"
#define LOOM_CKPT_VERSION 4u

enum { CK_HOME = 1, CK_LOCAL = 2, CK_RING = 3, CK_KEPT = 4 };

struct loom_ckpt_head {
    char magic[8];
    uint32_t version, rank, nranks, nallocs;
    uint64_t seq;       /* the checkpoint's number (ckpt-NNNNNN) */
    uint64_t clock;     /* the DSM clock (loom_dsm_clock) */
    uint64_t calls;     /* the program's loom_clock calls (loom_clock_now) */
    uint8_t job[16];    /* the job's identity (ckpt_job.c): every file of a
                           checkpoint, and of the older ones it uses, the same */
    uint64_t tabsum;    /* checksum of the records */
    uint64_t headsum;   /* checksum of this header up to here */
};

struct loom_ckpt_rec {
    char name[64];
    char policy[16];
    uint64_t serial;    /* creation order: the program's n-th loom_alloc (0: CK_KEPT) */
    uint32_t kind, merge, type, what; /* loom_unit_kind, loom_merge, loom_type, CK_* */
    uint64_t bytes, unit, nunits, nhome;
    uint64_t homehash;  /* hash of the unit -> home map (0 for local) */
    uint64_t ring_t;    /* CK_RING: the sub-epoch */
    uint64_t region;    /* a hash of what the data is (kind, partition, size): an
                           older record's chunks are used only if it matches */
    uint64_t meta_off, meta_len; /* [ring boundaries] chunk map (uint64 seq each) [layout] */
    uint64_t nruns;     /* the layout's runs at the meta's end (3 uint64 each) */
    uint64_t metasum;   /* its checksum */
    uint64_t off, len;  /* the data: len bytes from off, page-aligned */
    uint64_t chunk, nchunks;
    uint64_t sum;       /* checksum of the whole data: of its chunks' checksums */
};

/* A fast 64-bit checksum of n bytes, chained through seed (checksum of
 * a then b = loom_ckpt_sum(b, nb, loom_ckpt_sum(a, na, seed))).  Catches a
 * damaged or truncated file; it is not a cryptographic hash. */
uint64_t loom_ckpt_sum(const void *p, size_t n, uint64_t seed);
/* All n bytes of p written to fd (write) or read from it, at offset off,
 * whatever the short transfers and EINTRs; 0, or -1 (errno set; a read
 * that meets the end of the file is -1 too).  The one pwrite/pread loop
 * of checkpoint.c and restart.c. */
int loom_ckpt_io(int fd, void *p, size_t n, uint64_t off, int write);

/* Read DIR/LATEST: 0 and *seq, -1 if there is none, -2 if it does not
 * name a checkpoint. */
int loom_ckpt_read_latest(const char *dir, uint64_t *seq);

/* The checkpoint this job last wrote or resumed from (0: none). */
extern uint64_t loom_ckpt_last_seq;

/* The checksum of chunk c (n bytes at p), and of a record's whole data
 * from its chunks' checksums. */
uint64_t loom_ckpt_chunk_sum(const void *p, size_t n, uint64_t c);
uint64_t loom_ckpt_data_sum(const uint64_t *chunk_sums, uint64_t nchunks);

/* restart.c -> checkpoint.c: after restoring the allocation of `serial`
 * from a chain, what its chunks hold (sums) and where they live (src), so
 * the next checkpoint writes only what changes.  Takes both arrays. */
void loom_ckpt_track_set(uint64_t serial, uint64_t region, uint64_t nchunks, uint64_t *sums,
                         uint64_t *src);

/* mkdir -p; 0, or -1 with errno. */
int loom_ckpt_make_dirs(const char *path);

/* ckpt_job.c.  Collective, once (later calls return at once): rank 0
 * draws the job's identity and this run's id and every rank gets them. */
void loom_ckpt_job_start(void);
/* The job's identity (zeros before loom_ckpt_job_start). */
const uint8_t *loom_ckpt_job(void);
/* A restart: the job is the one whose checkpoint it resumes. */
void loom_ckpt_job_set(const uint8_t id[16]);
/* Not collective: take the lock on checkpoint directory dir (creating
 * it) for this process's lifetime.  0 (taken, held by this run on another
 * host, or no flock on that file system), or -1 with one line in why
 * naming the job that holds it. */
int loom_ckpt_lock(const char *dir, char *why, size_t wn);
/* Collective: rank 0 takes the lock on dir, then each host's local rank 0
 * (after a barrier, so that rank 0's line is there to be recognized).
 * Returns this rank's outcome as loom_ckpt_lock does. */
int loom_ckpt_lock_all(const char *dir, char *why, size_t wn);

/* ckpt_keep.c -> checkpoint.c: the rows of the local allocation at p
 * (creation serial `serial`) this rank declared current
 * (loom_checkpoint_rows), as layout runs {first, count, 1}: copies up to
 * cap runs into runs, returns how many there are. */
size_t loom_ckpt_rows_of(const void *p, uint64_t serial, uint64_t *runs, size_t cap);

/* ---- the hooks' implementations and their helpers ---------------------- */
/* Collective, from lifecycle's loom_init once the DSM is up (no allocation
 * exists, no clock message has been sent): sets the core's hooks
 * (loom_dsm_ckpt) and, with LOOM_RESTART, finds the checkpoint to resume
 * from and restores the clock (one message and the job stops when it
 * cannot be used).  restart.c. */
void loom_ckpt_start(void);
/* loom_clock's part: LOOM_CHECKPOINT_EVERY and LOOM_TEST_KILL at the
 * program's calls-th clock.  Collective like loom_clock. */
int loom_ckpt_on_clock(uint64_t calls);
/* A hash of a's unit -> home map (cached in a->homehash). */
uint64_t loom_ckpt_home_hash(loom_dsm_alloc *a);
/* 1 between a restart and the first loom_clock or loom_checkpoint after
 * it: loom_alloc restores allocations. */
int loom_ckpt_restart_open(void);
/* Collective, from loom_alloc while restoring: compare a (fully laid out,
 * not yet filled) with the checkpoint's allocation of the same serial;
 * on a mismatch the job stops with one message. */
void loom_ckpt_restart_check(loom_dsm_alloc *a);
/* Fill a from the checkpoint (home store, own copy or ring partition),
 * before a is published; a damaged file stops the job. */
void loom_ckpt_restart_fill(loom_dsm_alloc *a);
/* The program clocked or checkpointed: stop restoring; name (rank 0)
 * checkpointed allocations this run did not make again. */
void loom_ckpt_restart_close(void);
/* ckpt_keep.c: the i-th kept range (returns how many there are; fills
 * the outputs when i is one of them), and, on restart, the saved contents
 * of `name` (data malloc'd, taken over; -1 if out of memory). */
int loom_ckpt_kept(int i, const char **name, const void **p, size_t *n);
int loom_ckpt_pending(const char *name, void *data, size_t n);


#endif
