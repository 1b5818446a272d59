/* loom.h — the one header a Loom program includes.
 *
 * Run without loomrun, a Loom program is rank 0 of 1: no network, no
 * daemon, no configuration.  Started by loomrun (or by Slurm's srun or
 * Open MPI's mpirun, see docs/launcher.md) it is one rank of a job whose
 * processes talk over UCX.  Every call returns LOOM_OK or an error code;
 * loom_strerror() names it.  A peer that fails mid-job ends the job with
 * one message (see docs/launcher.md, "Failures"): collectives never hang
 * on a dead rank. */
#ifndef LOOM_H
#define LOOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_VERSION_MAJOR 0
#define LOOM_VERSION_MINOR 1
#define LOOM_VERSION_STRING "0.1"

/* Error codes.  Every function returns one; LOOM_OK is 0. */
typedef enum loom_err {
    LOOM_OK = 0,
    LOOM_ERR_ARG,     /* an argument is out of range or NULL */
    LOOM_ERR_ENV,     /* a LOOM_* environment variable has a bad value */
    LOOM_ERR_NOMEM,   /* out of memory */
    LOOM_ERR_STATE,   /* called before loom_init or after loom_finalize */
    LOOM_ERR_NET,     /* the transport (UCX or the rendezvous) failed */
    LOOM_ERR_PEER,    /* another rank of the job failed */
    LOOM_ERR_KEY,     /* the job key was refused */
    LOOM_ERR_TIMEOUT, /* a peer or the launcher did not answer in time */
    LOOM_ERR_IO,      /* a file could not be read or written */
    LOOM_ERR_FORMAT,  /* malformed input */
    LOOM_ERR_COUNT
} loom_err;

/* A short English sentence for an error code; never NULL. */
const char *loom_strerror(int err);

/* Start the runtime.  Collective over the job: every rank calls it once,
 * before any other loom_ call but loom_wtime and loom_strerror.  argc and
 * argv may be NULL.  On failure it prints one message naming the cause
 * and returns the error; the program should then exit non-zero.  In a job
 * of several ranks with OMP_NUM_THREADS unset, it sets the calling
 * thread's OpenMP team size to the rank's share of its host's CPUs
 * (omp_set_num_threads; docs/launcher.md, "Threads per rank"). */
int loom_init(int *argc, char ***argv);

/* End the runtime.  Collective: waits for every rank, then closes the
 * connections.  Returns LOOM_OK. */
int loom_finalize(void);

/* 1 between loom_init and loom_finalize, else 0. */
int loom_initialized(void);

int loom_rank(void);       /* this process's rank, 0..size-1 (0 before init) */
int loom_size(void);       /* number of ranks in the job (1 before init) */
int loom_host_size(void);  /* ranks of the job on this rank's host, by host name, itself
                            * included (1 before init or alone) */
int loom_local_rank(void); /* rank among the job's processes on this host */

/* Collectives.  Every rank calls them in the same order.  None funnels
 * through rank 0: barrier is a dissemination barrier, bcast a binomial tree
 * (scatter + ring allgather for large buffers), allreduce recursive
 * doubling (reduce-scatter + allgather for large vectors).  The result of
 * an allreduce is bitwise identical on every rank. */
int loom_barrier(void);
int loom_bcast(void *buf, size_t bytes, int root);

typedef enum loom_type { LOOM_INT32, LOOM_INT64, LOOM_FLOAT, LOOM_DOUBLE } loom_type;
typedef enum loom_op { LOOM_SUM, LOOM_MIN, LOOM_MAX } loom_op;

/* Pass as send to reduce recv in place. */
#define LOOM_IN_PLACE ((const void *)1)

/* recv[i] = op over ranks of send[i], for i < count, on every rank. */
int loom_allreduce(const void *send, void *recv, size_t count, loom_type type,
                   loom_op op);

/* The weakly consistent (stale synchronous) allreduce: Sharded-SSP, seed
 * 004.  Cumulative, like a parameter server: result gets the sum of every
 * contribution every rank has made so far in calls with the same (count,
 * type, op), missing at most what other ranks contributed in their last
 * `slack` calls (the age of the result — the smallest clock it fully
 * reflects — is >= this rank's call count - slack), and always including
 * this rank's own.  Slack 0 is an ordinary allreduce of all contributions
 * so far; a last call with a zero contribution and slack 0 gives the exact
 * total.  Only LOOM_SUM.  A background thread applies contributions while
 * ranks compute.  Collective in the sense that every rank makes the same
 * number of calls. */
int loom_allreduce_ssp(void *result, const void *contribution, size_t count, loom_type type,
                       loom_op op, int slack);
/* The same promise by seed 004's other design, Hypercube-SSP (log2 P
 * exchanges of whole vectors per call, no background shard); for
 * comparison (docs/bench-ssp.md).  The number of ranks must be a power of
 * two (else LOOM_ERR_ARG).  With either, every rank passes slack 0 at the
 * same calls. */
int loom_allreduce_ssp_hypercube(void *result, const void *contribution, size_t count,
                                 loom_type type, loom_op op, int slack);

/* End the whole job now: prints "loom: rank R: abort: <message>" (or the
 * message alone when it starts with the program's name and a colon, as
 * "loom-mf: FILE:LINE: ..." does), asks the launcher to stop every rank,
 * and exits this process with code (1 if code is not between 1 and 255).
 * Safe to call from any thread. */
__attribute__((noreturn, format(printf, 2, 3)))
void loom_abort(int code, const char *fmt, ...);

/* Wall-clock seconds from an arbitrary fixed origin (monotonic). */
double loom_wtime(void);

/* ---- Distributed shared memory (docs/dsm.md) --------------------------
 *
 * loom_alloc is collective: every rank calls it with the same size and
 * options, in the same order, and gets the same address.  The memory is
 * cut into units (pages, or rows of row_size bytes); each unit has a home
 * rank, given by the distribution, holding its master copy.
 *   page units: plain loads and stores from any rank and thread; a rank's
 *     writes reach the home at release points (loom_barrier,
 *     loom_release, loom_unlock) and merge by the merge mode; after an
 *     acquire (loom_barrier, loom_acquire, loom_lock) a rank sees every
 *     write released before it.
 *   row units: loom_row_get / put / add / prefetch (thread-safe).
 * With one rank an allocation is plain memory: no faults, no copies. */

typedef enum loom_unit_kind { LOOM_UNIT_PAGE = 0, LOOM_UNIT_ROW } loom_unit_kind;
typedef enum loom_dist { LOOM_DIST_BLOCK = 0, LOOM_DIST_CYCLIC, LOOM_DIST_HASH,
                         LOOM_DIST_EXPLICIT } loom_dist;
typedef enum loom_merge { LOOM_MERGE_OVERWRITE = 0, LOOM_MERGE_ADD } loom_merge;

typedef struct loom_alloc_opts {
    const char *name;      /* for messages and LOOM_COHERENCE_<NAME>; may be NULL */
    loom_unit_kind unit;   /* LOOM_UNIT_PAGE (default) or LOOM_UNIT_ROW */
    size_t row_size;       /* row units: bytes per row (any size > 0) */
    size_t page_unit;      /* page units: bytes per unit, a multiple of the OS
                              page; 0 = 64 KiB */
    loom_dist dist;        /* which rank is home of a unit; default block */
    int (*home_of)(size_t unit, int nranks, void *arg); /* LOOM_DIST_EXPLICIT */
    void *home_arg;
    loom_merge merge;      /* how concurrent writes to a unit combine */
    loom_type type;        /* element type for LOOM_MERGE_ADD (default int32) */
    int numa_node;         /* node for home memory; 0 with numa_node_set = 0
                              means "this rank's local node" */
    int numa_node_set;
    const char *coherence; /* policy name; NULL = LOOM_COHERENCE or the default */
    int staleness;         /* ssp: clocks a read may lag; used when staleness_set,
                              else LOOM_STALENESS */
    int staleness_set;
    int average;           /* add merge of float/double rows, bsp or ssp: a sync
                              point makes each row the mean of the versions of
                              the ranks that wrote it, not the sum of their
                              changes (LOOM_MERGE_AVG overrides; docs/dsm.md).
                              k > 1: the changes of up to k writers add, more
                              average to k times their mean; with k or fewer
                              ranks that is the sum, and it runs as one */
    int momentum;          /* with .average = k >= 1: block momentum (BMUF,
                              Chen & Huo 2016): at each sync point a row moves
                              by its n writers' merged change (k = 1: their
                              mean) plus (1 - min(k, n)/n) times its previous
                              move, so that R ranks averaging progress about
                              as far as their summed changes would; docs/dsm.md */
} loom_alloc_opts;

/* Collective.  Returns the allocation's address, the same on every rank, or
 * NULL after printing why (bad options, ranks that disagree, no memory).
 * opts may be NULL (page units, block, overwrite). */
void *loom_alloc(size_t bytes, const loom_alloc_opts *opts);
/* Collective.  Frees what loom_alloc returned; LOOM_ERR_ARG for any other
 * pointer. */
int loom_free(void *p);

/* Push this rank's writes to their homes (release) / drop stale copies so
 * the next access sees released writes (acquire).  loom_barrier does both
 * around the barrier.  Call with no other thread of this rank inside a
 * Loom allocation's accesses. */
int loom_release(void);
int loom_acquire(void);

/* Make [p, p + len) of a page-unit allocation readable now (write = 0) or
 * writable (write = 1), as touching every unit would.  System calls do not
 * fault: read(2) into, or write(2) from, Loom memory fails with EFAULT
 * unless the range was touched since the last acquire.  Call this first. */
int loom_touch(void *p, size_t len, int write);

/* Row units.  loom_row_get returns a pointer to row `row` of the row-unit
 * allocation `array` (the address loom_alloc returned), fresh as the
 * coherence policy promises, valid until the next release or acquire; NULL
 * (with a message) for a bad array or row.  Read through it; write with
 * put (overwrite the row) or add (element-wise, merged at the home by
 * addition: nothing is lost).  All are thread-safe. */
const void *loom_row_get(void *array, size_t row);
int loom_row_put(void *array, size_t row, const void *data);
int loom_row_add(void *array, size_t row, const void *delta);
int loom_row_prefetch(void *array, const size_t *rows, size_t n);

/* The clock (docs/dsm.md, "Clocks and ssp").  loom_clock ends this rank's
 * clock: its writes are released, and its copies older than the
 * allocation's staleness allows are dropped.  Not collective: fast ranks
 * run ahead by up to the staleness. */
int loom_clock(void);

/* How many times this program has called loom_clock, counting the calls
 * made before the checkpoint it resumed from (0 at the start of a fresh
 * run).  A restartable loop starts from it: for (e = loom_clock_now(); ...). */
uint64_t loom_clock_now(void);

/* ---- Checkpoint and restart (docs/checkpoint.md) ----------------------
 *
 * loom_checkpoint writes every live allocation's data (home stores; each
 * rank's own copy of a "local" allocation; each ring owner's partition
 * with the ring's position), the ranges given to loom_checkpoint_keep and
 * the clock into a new checkpoint under dir (NULL: LOOM_CHECKPOINT_DIR),
 * then makes it the one DIR/LATEST names.  Incremental: a rank writes only
 * what changed since its last checkpoint (LOOM_CHECKPOINT_CHAIN).
 * Atomic: a crash at any moment leaves the previous checkpoint whole.
 * Collective: every rank calls it, with no other thread of the rank
 * inside an allocation (as for loom_release).  Returns LOOM_OK, or
 * LOOM_ERR_IO on every rank (after a message) when any rank could not
 * write, and then LATEST is unchanged.  LOOM_CHECKPOINT_EVERY=N makes
 * every N-th loom_clock call it.
 *
 * A job started with LOOM_RESTART=true (loomrun --restart) resumes: in
 * loom_init the clock comes back (loom_clock_now), and the program's n-th
 * loom_alloc gets the contents the n-th allocation had, if it was live in
 * the checkpoint — same name, size and options, or the job stops with one
 * message.  Allocations must be made again before the first loom_clock
 * after the restart. */
int loom_checkpoint(const char *dir);
/* 1 if this run resumed from a checkpoint (allocations come back with
 * their contents: do not initialize them again), else 0. */
int loom_restarted(void);
/* Private state in checkpoints: every checkpoint saves the n bytes at p
 * in this rank's file under `name` (at most 63 bytes, once per rank), until
 * loom_checkpoint_forget(p).  For what a program keeps outside Loom
 * allocations and cannot rebuild from loom_clock_now(): a random
 * generator, per-rank arrays, where a loop stopped.  On a restart whose
 * checkpoint holds `name`, its saved contents are copied into p now and
 * *restored (may be NULL) is set to 1; a saved size other than n stops the
 * job with one message.  Not collective; p stays the caller's.  Returns
 * LOOM_OK, LOOM_ERR_ARG (a bad or repeated name) or LOOM_ERR_NOMEM. */
int loom_checkpoint_keep(const char *name, void *p, size_t n, int *restored);
void loom_checkpoint_forget(const void *p);
/* For a restart on another number of ranks (docs/checkpoint.md,
 * "Another number of ranks"): declares that this rank's copy of the
 * "local" allocation p holds the current contents of its units [first,
 * first + n).  Calls add up; loom_checkpoint_forget(p) drops them.  Every
 * checkpoint records the declarations; a restart on another number of
 * ranks gives every new rank the whole allocation, each unit taken from
 * the old rank that declared it (from old rank 0's copy if none did).
 * Without any declaration a local allocation ties the checkpoint to its
 * number of ranks.  Not collective.  Returns LOOM_OK, or LOOM_ERR_ARG when
 * p is not a local allocation's base or the range leaves it. */
int loom_checkpoint_rows(void *p, size_t first, size_t n);

/* The ring policy (docs/dsm.md, "Ring").  An allocation with coherence
 * "ring" is cut into P partitions of whole units (rows or pages); in
 * sub-epoch t rank p owns partition (p - t) mod P and works on it in place,
 * with no coherence traffic.  loom_ring_part gives the owned partition:
 * its first unit, unit count and bytes at *start.  loom_ring_done(array,
 * first, n) forwards finished units [first, first + n) of the owned
 * partition to the next owner at once, in one message (optional);
 * loom_ring_rotate ends the sub-epoch of every ring allocation: forwards
 * what is left, waits for the next partition; every P rotations it is a
 * barrier.  loom_ring_collect (collective) gives every rank a read-only
 * copy of every partition, e.g. to evaluate or save the model.  With one
 * rank the whole allocation is the one partition. */
int loom_ring_part(void *array, void **start, size_t *bytes, size_t *first_unit,
                   size_t *nunits);
int loom_ring_done(void *array, size_t first, size_t n);
int loom_ring_rotate(void);
int loom_ring_collect(void *array);

/* One rotation of a ring allocation's `rows` rows among every worker (rank
 * x OpenMP thread) for a body over a block of rows (sched/ring_for.c,
 * docs/loop.md "Ring rotation"): the rows are cut into ranks x threads
 * floor-cut blocks; in each of loom_size() sub-epochs every thread of the
 * rank owning partition j runs body on each of the partition's blocks in
 * turn (block j T + (i + s) mod T at sub-step s, a team barrier between),
 * then the ring rotates.  Each block has one worker at a time, and each
 * worker meets every block once.  `last` marks a worker's final block of
 * the sub-epoch: rows it finishes may go on at once (loom_ring_done).
 * Collective; returns LOOM_OK or LOOM_ERR_ARG. */
typedef struct loom_ring_block {
    int thread;  /* the OpenMP thread running the block (0 .. threads-1) */
    long lo, hi; /* rows [lo, hi), this worker's alone until body returns */
    int last;    /* 1: the worker's last block before the ring rotates */
} loom_ring_block;
int loom_for_ring(void *array, long rows, void (*body)(const loom_ring_block *b, void *ctx),
                  void *ctx);

/* Statistics of one allocation (array = its address) or, with NULL, of all
 * of this rank's live allocations together, and the rank's whole traffic
 * (wire_sent, wire_received: what its messages of every kind carried since
 * loom_init, collectives and freed allocations included). */
typedef struct loom_stats {
    uint64_t bytes_sent;      /* diffs this rank sent to homes */
    uint64_t bytes_received;  /* units and rows fetched, diffs applied as home */
    uint64_t hits;            /* row reads served from a valid copy */
    uint64_t misses;          /* units and rows fetched (prefetched ones included) */
    uint64_t blocked_reads;   /* fetches that waited for slower ranks (ssp/bsp clocks) */
    double blocked_seconds;   /* time they waited */
    uint64_t age[8];          /* reads by age of the data in clocks: 0..6, 7+ */
    uint64_t forwarded;       /* ring: units handed to the next owner (early, by
                                 loom_ring_done, or at the rotation); priority:
                                 rows sent early */
    uint64_t early_bytes;     /* bandwidth used: bytes priority's sender spent */
    uint64_t prefetched;      /* of the misses: rows loom_row_prefetch fetched, in batches */
    uint64_t evicted;         /* copies LOOM_CACHE_BYTES dropped at sync points */
    uint64_t cached_bytes;    /* bytes of copies kept at the last sync point (bounded
                                 allocations only) */
    uint64_t rehomed;         /* rows whose home moved here (placement by accessor) */
    uint64_t wire_sent;       /* with NULL only: every payload byte this rank sent, */
    uint64_t wire_received;   /* and received: collectives, allocations, freed ones */
    uint64_t dense_merges;    /* loop sync points that merged the array by one allreduce
                                 (docs/dsm.md, "Dense merge") */
    uint64_t staged_whole;    /* loop rounds that staged the array whole (every row
                                 fetched and copied at the round's start) */
    uint64_t raw_handoffs;    /* ring: sub-epochs whose partition went on raw, not
                                 compared with its arrival (docs/dsm.md) */
} loom_stats;
int loom_stats_get(void *array, loom_stats *out);

/* Distributed locks on an id (e.g. a global address cast to uint64_t), with
 * acquire/release semantics: loom_lock acquires, loom_unlock releases. */
int loom_lock(uint64_t id);
int loom_unlock(uint64_t id);


/* ---- The distributed map (docs/dmap.md) -------------------------------
 *
 * uint64 keys to values of a fixed size, for key spaces that are sparse
 * and unknown in advance.  Keys are sharded by hash over the ranks; the
 * values are rows of a row allocation made with the caller's options
 * (coherence policy, merge mode and type, staleness, name), so they are
 * exactly as fresh as rows of that allocation: with bsp, a value put or
 * added before the last barrier is seen by every rank after it.
 * loom_dmap_create is collective (same arguments on every rank, in the
 * same order; at most 64 maps per program) and makes room for at least
 * `capacity` keys; a map that overflows stops the job with a message.
 * get (found = 0 and a zeroed value for a key not in the map), put
 * (inserts), add (inserts at zero; needs .merge = LOOM_MERGE_ADD and its
 * .type) and prefetch (one message per owning rank for the keys this rank
 * has not seen yet, then loom_row_prefetch) are thread-safe.
 * loom_dmap_shard lists the keys this rank's shard holds (up to max into
 * keys; returns how many there are), e.g. to save the map: each rank
 * saves its own shard.  The map checkpoints and restarts with the job.
 * For loops at full speed, loom_dmap_rows resolves a batch of keys once
 * (one message per owning rank; insert = 1 adds the absent ones, else
 * they come back as LOOM_DMAP_ABSENT) into rows of loom_dmap_values(m,
 * &nrows), an ordinary row allocation of nrows rows that the body then
 * reaches through loom_at like any other; a key's row never changes. */
typedef struct loom_dmap loom_dmap;
loom_dmap *loom_dmap_create(size_t capacity, size_t value_size, const loom_alloc_opts *opts);
int loom_dmap_free(loom_dmap *m);
int loom_dmap_get(loom_dmap *m, uint64_t key, void *value, int *found);
int loom_dmap_put(loom_dmap *m, uint64_t key, const void *value);
int loom_dmap_add(loom_dmap *m, uint64_t key, const void *delta);
int loom_dmap_prefetch(loom_dmap *m, const uint64_t *keys, size_t n);
size_t loom_dmap_shard(loom_dmap *m, uint64_t *keys, size_t max);
#define LOOM_DMAP_ABSENT ((size_t)-1)
int loom_dmap_rows(loom_dmap *m, const uint64_t *keys, size_t n, int insert, size_t *rows);
void *loom_dmap_values(loom_dmap *m, size_t *nrows);

/* ---- The parallel loop (docs/loop.md) ---------------------------------
 *
 * loom_for runs body(i, ctx) once for every i in [begin, end), on every
 * rank and every OpenMP thread.  By default [begin, end) is the job's
 * whole range, split into one block per rank; with .local = 1 each rank
 * passes its own range (its share of the data) and the job's loop is the
 * union.  Schedules:
 *   LOOM_STATIC, LOOM_DYNAMIC, LOOM_GUIDED  OpenMP's meanings, inside each
 *       rank; data-parallel: writes to shared rows race (Hogwild) or are
 *       staged by .sync, see below.  On one rank this is exactly
 *       `#pragma omp parallel for schedule(...)`, but for a loop with a
 *       sync interval that reaches small model replicas (.average, at
 *       most 1 MiB): its threads then work on their own copies in rounds
 *       and average them in (docs/loop.md).  On several, dynamic and
 *       guided on the job's range also share it among the ranks by speed:
 *       each rank starts on its block, each round goes to the ranks in
 *       proportion to the rates they showed, and a rank whose block is
 *       done takes from the back of another's (docs/loop.md, "Dynamic
 *       across ranks"); which rank runs an iteration then depends on
 *       timing.  Static keeps the blocks.
 *   LOOM_SERIALIZABLE  the result equals some serial execution of the
 *       iterations: the planner learns what each iteration reads and
 *       writes (.deps, or a reconnaissance run of the body through
 *       loom_at / loom_at_r) and never runs two conflicting iterations
 *       at once.  Arrays are Loom row allocations.
 *   LOOM_PRIORITY  STRADS-Dynamic coordinate rounds; see loom_priority.
 * Collective when loom_size() > 1: every rank calls it, in the same order. */
typedef enum loom_schedule {
    LOOM_STATIC = 0, LOOM_DYNAMIC, LOOM_GUIDED, LOOM_SERIALIZABLE, LOOM_PRIORITY
} loom_schedule;

/* How a data-parallel loop combines its threads' and ranks' writes to the
 * rows it reaches through loom_at (docs/loop.md, "Data-parallel modes"):
 *   LOOM_HYBRID  threads share the rank's copy (Hogwild); ranks merge at
 *                every sync point through the arrays' coherence policy.
 *   LOOM_BSP     every thread writes a private copy; at a sync point all
 *                threads' and ranks' changes are summed and everyone sees
 *                the sum (bulk synchronous).
 *   LOOM_SSP     as BSP inside a rank; across ranks a clock, so reads may
 *                lag by the arrays' staleness. */
typedef enum loom_sync { LOOM_HYBRID = 0, LOOM_BSP, LOOM_SSP } loom_sync;

/* What one iteration reads and writes, named by .deps (like OpenMP's
 * depend clause): rows of Loom row allocations. */
typedef struct loom_deps loom_deps;
void loom_reads(loom_deps *d, void *array, size_t row);
void loom_writes(loom_deps *d, void *array, size_t row);

/* Row accessors for loop bodies: a pointer to row `row` of the row
 * allocation `array`, to read and write (loom_at) or only read
 * (loom_at_r).  Outside loops and on the plain path they are address
 * arithmetic; in a reconnaissance run they record the access (loom_at
 * then returns a scratch copy: writes are discarded); under
 * LOOM_CHECK=serial they record what the iteration really touched; in
 * BSP/SSP loops they return the thread's private copy. */
void *loom_at(void *array, size_t row);
const void *loom_at_r(void *array, size_t row);
/* Where loom_at is address arithmetic for this thread now — outside
 * loops, on the plain path, or in a data-parallel round that works on
 * the whole array in the rank's own copy — its row 0, so that row r is at
 * the result + r * row_size, the address loom_at would return; NULL where
 * loom_at must be asked row by row (it records, checks or stages).  For a
 * hot kernel: ask once per iteration, not across iterations (the answer
 * may change from one round to the next). */
void *loom_at_base(void *array);
/* 1 while the calling thread runs a reconnaissance (dry) iteration: a body
 * skips its own side effects (e.g. summing a loss) when this is set. */
int loom_recording(void);

/* STRADS-Dynamic (seed 000 ch. 5): coordinates j in [begin, end).  Each
 * round samples `candidates` coordinates with probability proportional
 * to delta_j^2 + eta, keeps up to `select` of them that pass conflict()
 * (0 = may run together; prepare(), if set, sees the candidates first)
 * against every coordinate kept in the window (`pipeline` rounds in flight
 * together), runs push(j) for the window's kept ones in parallel on every
 * rank and thread (each rank over its own data, writing `width` doubles of
 * partial results), sums the partials over ranks in one allreduce, and
 * calls pull(j, sum) on every rank in round order, which applies the
 * update and returns the new delta_j.  On one rank with one thread the
 * coordinates run one at a time instead (push then pull, rounds x select
 * of them), with no conflict() or prepare() calls.  Every rank samples
 * the same coordinates.  Sampling weights persist between calls with the
 * same push function and range. */
typedef struct loom_priority {
    long rounds;       /* rounds per loom_for call (default: (end-begin)/select) */
    long candidates;   /* L': sampled per round at most (default 2 * select; drawn one
                          at a time until select pass, all of them with prepare) */
    long select;       /* L: run per round at most (default: threads * ranks) */
    double eta;        /* weight floor, keeps every coordinate reachable (default 1e-6) */
    int width;         /* doubles per push result (default 1) */
    uint64_t seed;
    int (*conflict)(long a, long b, void *ctx);          /* may be NULL */
    void (*push)(long j, double *partial, void *ctx);
    double (*pull)(long j, const double *sum, void *ctx);
    /* may be NULL: called on every rank with the coordinates already kept
     * in the window (see pipeline) followed by the round's candidates in
     * draw order, before conflict() is asked about any of them.  Every rank
     * gets the same list, so it may be collective: e.g. one allreduce that
     * computes what conflict() needs over every rank's data.  Not called on one rank with one thread, where
     * coordinates run one at a time and conflict() is not needed. */
    void (*prepare)(const long *cand, long n, void *ctx);
    int restart;       /* 1: forget the persisted weights first (every coordinate
                          back to 1 + eta), e.g. when the problem changed */
    int pipeline;      /* rounds in flight at once (default 1): their pushes see
                          the state before any of their pulls (docs/loop.md) */
    /* may be NULL: a rank's threads then share each coordinate's work by
     * its data instead of taking whole coordinates.  Every thread of the
     * window's team calls push(j) for every kept coordinate over its own
     * share of the rank's data (omp_get_thread_num() of
     * omp_get_num_threads()); the threads' partials are added in thread
     * order; pull(j, sum) runs once per coordinate, on one thread, and may
     * change only what no push or apply reads for another coordinate of the
     * window (the model, not the data); then every thread calls apply(j)
     * for every kept coordinate over its share.  On one rank with one
     * thread: push, pull, apply per coordinate, with a team of one. */
    void (*apply)(long j, void *ctx);
    int whole_data;    /* 1: every rank holds all of the data, so each runs the
                          whole schedule by itself, as one rank does: no
                          messages, and the same draws and updates on every
                          rank (push sums over all of it; the ranks' rows
                          are not added up) */
} loom_priority;

/* A field of a record that names a row the record's iteration touches
 * (reads and writes): row *(field) of the row allocation `array`.  The
 * field is an integer of `size` bytes (4 or 8, signed or unsigned) at
 * `offset` in the record; -1 (all bits set) means no row of that array.
 * LOOM_FIELD(W, loom_rating, u) fills one in from a struct member. */
typedef struct loom_field {
    void *array;
    size_t offset, size;
} loom_field;
#define LOOM_FIELD(array, type, member) \
    ((loom_field){(array), offsetof(type, member), sizeof(((type *)0)->member)})

typedef struct loom_for_opts {
    loom_schedule schedule;
    long chunk;            /* static/dynamic/guided chunk (0 = OpenMP's default) */
    int local;             /* the range is this rank's own (see above) */
    /* serializable */
    void (*deps)(long i, loom_deps *d, void *ctx); /* NULL = reconnaissance */
    int repeated;          /* same access pattern every call: cache the plan
                              (serializable); prefetch each round's rows in one
                              batch from the second call on (data-parallel,
                              several ranks: docs/loop.md) */
    /* serializable loom_for_records, instead of .deps: the record's fields
     * name every row its iteration touches (unused: .array NULL) */
    loom_field fields[2];
    int ordered;           /* serializable loom_for_records with .fields (several ranks:
                              .local, .fields[0] local, .fields[1] a ring): keep
                              the index order of conflicting records (Orion's ordered
                              2D wavefront, docs/loop.md): bitwise the serial result */
    int in_place;          /* serializable loom_for_records with .fields of 4-byte rows:
                              lay the records out in plan order in data itself (which
                              must be writable; its order afterwards is the plan's)
                              instead of in a copy, which saves the records' size and
                              the planner's 8 bytes a record (docs/loop.md) */
    /* data-parallel */
    loom_sync sync;
    long sync_every;       /* iterations per rank between sync points (0 = end only);
                              with .sync_weight, that much weight */
    long (*sync_weight)(long i, void *ctx); /* iteration i's weight (the words of
                              sentence i; below 0 counts as 0): a rank's round then
                              ends at the iteration where its running total of
                              weights reaches the next multiple of sync_every
                              (dynamic and guided on the job's range: a round
                              moves R x sync_every weight, shared by speed).
                              Called once per iteration of the rank's range (of
                              the job's range, there) as the loop starts, on the
                              calling thread */
    int accessor_reads;    /* several ranks: 1 asserts that code after this loop reads
                              its arrays' rows only through loom_at, loom_at_r,
                              loom_at_base or loom_row_get (each makes a row current
                              itself), so the loop's end leaves the ranks' copies as
                              the last sync point left them instead of making each
                              whole copy current for plain loads (which costs up to
                              the arrays' size a call: docs/openmp.md, "Code between
                              loops") */
    /* priority */
    const loom_priority *priority;
} loom_for_opts;

/* Runs the loop; returns LOOM_OK, or an error after one message (bad
 * options, an access set the planner cannot serialize).  opts may be NULL
 * (static).  With LOOM_PRIORITY, body is unused (pass NULL). */
int loom_for(long begin, long end, void (*body)(long i, void *ctx), void *ctx,
             const loom_for_opts *opts);
/* The same for the data-parallel schedules with a body over a range of
 * iterations [lo, hi) — each thread's block (static) or one chunk at a
 * time — so a streaming kernel's inner loop can be inlined and vectorized
 * as in hand-written OpenMP. */
int loom_for_range(long begin, long end, void (*body)(long lo, long hi, void *ctx), void *ctx,
                   const loom_for_opts *opts);

/* A loop over n records (data, size bytes each): iteration i is record i,
 * and body gets a block of records at a time, body(recs, m, ctx) for m
 * consecutive records, so its loop is an ordinary loop the compiler can
 * inline and vectorize.  .deps(i, ...) names what record i touches, or
 * (serializable) .fields name the record's fields that hold its rows, e.g.
 *     .fields = {LOOM_FIELD(W, loom_rating, u), LOOM_FIELD(H, loom_rating, i)}
 * and the planner reads them straight from the records (docs/loop.md).
 *   LOOM_SERIALIZABLE: the first call (once for a .repeated site, keyed by
 *     body, ctx and data) copies the records into plan order, contiguous
 *     per cell (a worker's share of a sub-block), or with .in_place moves
 *     them into that order where they are; each cell is then one
 *     call.  The records must not change while the site is cached.  One
 *     worker (one rank, one thread) gets all records in one call, in
 *     order.  Under LOOM_CHECK=serial the body gets one record at a time,
 *     each checked.
 *   data-parallel schedules: blocks as loom_for_range's, in place. */
int loom_for_records(const void *data, size_t size, long n,
                     void (*body)(const void *recs, long n, void *ctx), void *ctx,
                     const loom_for_opts *opts);

/* The per-iteration data-parallel loop, inlined, with OpenMP's clauses:
 *
 *     LOOM_FOR(i, 0, n, NULL)
 *         step(i, &ctx);          // any statement; a static function inlines
 *     LOOM_FOR(i, 0, n, NULL, private(j) schedule(dynamic, 64))
 *         for (j = 0; j < m; j++) ...
 *
 * is `#pragma omp parallel for CLAUSES` over this rank's block of
 * [begin, end) (the whole range on one rank; .local as for loom_for), and
 * a barrier after it on several ranks.  The clauses (any after opts:
 * private, firstprivate, lastprivate, schedule, collapse, ...) go to the
 * pragma as written and act inside the rank; a variable declared in the
 * body is private by construction.  The body is compiled in the caller's
 * file, so the compiler inlines and vectorizes it as in hand-written
 * OpenMP.  opts: only LOOM_STATIC with LOOM_HYBRID and no chunk (anything
 * else stops the job); the body reaches plain memory (loom_at stages
 * nothing here).  loom_for_span/_end are its helpers.
 *
 *     LOOM_FOR_REDUCE(i, 0, n, NULL, SUM, total)
 *         total += x[i];
 *
 * adds `reduction(+ : total)` (SUM, MIN or MAX: OpenMP's +, min, max) and
 * then combines the ranks: total ends, on every rank, as the value it had
 * before the loop (the same on every rank, as sequential code makes it)
 * combined with every iteration of every thread of every rank.  total is
 * an int, long, long long, float or double variable; more clauses may
 * follow it.  On one rank it is exactly the OpenMP loop. */
typedef struct loom_span { long lo, hi; int more; } loom_span;
loom_span loom_for_span(long begin, long end, const loom_for_opts *opts);
int loom_for_span_end(loom_span *s);
loom_span loom_for_span_reduce(long begin, long end, const loom_for_opts *opts, void *var,
                               loom_type type, loom_op op);
int loom_for_span_reduce_end(loom_span *s, void *var, loom_type type, loom_op op);
#define LOOM_PRAGMA_(...) _Pragma(#__VA_ARGS__)
#define LOOM_PRAGMA(...) LOOM_PRAGMA_(__VA_ARGS__)
#define LOOM_FOR(i, begin, end, opts, ...)                                          \
    for (loom_span loom_span_ = loom_for_span((begin), (end), (opts)); loom_span_.more; \
         loom_span_.more = loom_for_span_end(&loom_span_))                          \
        LOOM_PRAGMA(omp parallel for __VA_ARGS__)                                   \
        for (long i = loom_span_.lo; i < loom_span_.hi; i++)
#define LOOM_TYPE_OF(x)                                                              \
    _Generic((x), int: LOOM_INT32, long: LOOM_INT64, long long: LOOM_INT64,          \
             float: LOOM_FLOAT, double: LOOM_DOUBLE)
#define LOOM_OMP_OP_SUM +
#define LOOM_OMP_OP_MIN min
#define LOOM_OMP_OP_MAX max
#define LOOM_FOR_REDUCE(i, begin, end, opts, op, var, ...)                           \
    for (loom_span loom_span_ = loom_for_span_reduce((begin), (end), (opts), &(var),     \
                                                     LOOM_TYPE_OF(var), LOOM_##op);      \
         loom_span_.more;                                                            \
         loom_span_.more = loom_for_span_reduce_end(&loom_span_, &(var),             \
                                                    LOOM_TYPE_OF(var), LOOM_##op))   \
        LOOM_PRAGMA(omp parallel for reduction(LOOM_OMP_OP_##op : var) __VA_ARGS__) \
        for (long i = loom_span_.lo; i < loom_span_.hi; i++)

/* This rank's block of [begin, end): the iterations LOOM_FOR and a static
 * loom_for give it (all of them on one rank), for a program's own
 * `#pragma omp parallel` region or loop:
 *     loom_span b = loom_block(0, n);
 *     #pragma omp parallel for
 *     for (long i = b.lo; i < b.hi; i++) ...
 * Not collective; the same blocks on every call. */
loom_span loom_block(long begin, long end);

/* Sequential code between loops, once for the whole job (OpenMP's
 * `single`, across ranks):
 *     LOOM_SINGLE {
 *         for (int k = 0; k < K; k++)
 *             centre[k] = sum[k] / count[k];
 *     }
 * runs the block on rank 0 only, then every rank waits until its writes
 * are released and sees them: page units by plain loads; rows written
 * through loom_at in the block (or loom_row_put / loom_row_add) by any
 * means, plain loads included.  Plain stores to a row allocation's
 * memory reach only rank 0's copy: write rows through loom_at.  Code
 * outside such a block runs on every rank (docs/openmp.md, "Code between
 * loops").  Collective: every rank reaches it, with no other thread inside
 * an allocation; leave the block only at its end (no break, return or
 * goto out of it). */
int loom_single_begin(void);
int loom_single_end(void);
#define LOOM_SINGLE                                                                  \
    for (int loom_single_ = loom_single_begin(); loom_single_;                        \
         loom_single_ = loom_single_end())                                           \
        if (loom_single_ == 1)

#ifdef __cplusplus
}
#endif
#endif
