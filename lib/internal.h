/* internal.h — declarations shared by the runtime's files, never installed.
 *
 * Module map (one file per concept):
 *   env.c        LOOM_* variables read once into internal control variables
 *   error.c      error strings, fatal messages, loom_abort
 *   jobkey.c     the per-job key and the SipHash MAC that proves it
 *   frame.c      length-prefixed frames on the bootstrap TCP socket
 *   rendezvous.c the rendezvous server (in loomrun, or in rank 0 under srun)
 *   join.c       a rank's side of the rendezvous, and its heartbeat thread
 *   slurm.c      under srun: the rendezvous and key through PMI or the step
 *   pmi.c        the PMI-2 and PMIx key-value stores (dlopen'ed)
 *   hostlist.c   Slurm's compressed host lists, expanded
 *   transport.c  UCX context, worker, endpoints; matched messages over AM
 *   coll.c       barrier, bcast, allreduce
 *   init.c       the runtime's start and end, rank discovery
 *   cores.c      a rank's OpenMP threads: its share of its host's CPUs
 *   time.c       loom_wtime
 * The runtime is the bottom layer: nothing here includes or calls dsm/ or
 * sched/ (docs/architecture.md, "Layers"; tools/layers.sh checks it).
 * What the layers above must tell it, they register: the collectives'
 * bounce test (loom_rt_coll_set_bounce). */
#ifndef LOOM_INTERNAL_H
#define LOOM_INTERNAL_H

#include "loom.h"
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- env.c: internal control variables ------------------------------ */

/* LOOM_RESTART: start afresh, resume (a checkpoint must exist), or resume
 * if there is one. */
enum { LOOM_RESTART_NO = 0, LOOM_RESTART_YES, LOOM_RESTART_AUTO };
/* LOOM_TEST_KILL points (docs/checkpoint.md, "Testing"): after the
 * clock's checkpoint SIGKILL or SIGSTOP; inside the checkpoint, with the
 * rank's file half written or every file in place but LATEST not yet
 * moved. */
enum { LOOM_KILL_CLOCK = 0, LOOM_KILL_STOP, LOOM_KILL_WRITE, LOOM_KILL_COMMIT };

/* Where this rank's identity came from. */
typedef enum { LOOM_SRC_SINGLETON, LOOM_SRC_LOOMRUN, LOOM_SRC_SLURM,
               LOOM_SRC_MPIRUN, LOOM_SRC_PMI } loom_rank_source;

struct loom_rt_icv {
    int rank, nranks, local_rank;
    loom_rank_source source;
    char rendezvous[256];     /* LOOM_RENDEZVOUS host:port, "" if unset */
    uint8_t job_key[16];      /* LOOM_JOB_KEY */
    int have_key;
    double timeout;           /* LOOM_TIMEOUT: heartbeat timeout, seconds */
    double join_timeout;      /* LOOM_JOIN_TIMEOUT: rendezvous wait, seconds */
    int display_env;          /* LOOM_DISPLAY_ENV: 0 no, 1 yes, 2 verbose */
    char coherence[16];       /* LOOM_COHERENCE: default policy, "" = bsp */
    struct { char alloc[64], policy[16]; } coherence_named[16]; /* LOOM_COHERENCE_<NAME> */
    int ncoherence_named;
    int check_dsm;            /* LOOM_CHECK contains dsm (or all) */
    int check_serial;         /* LOOM_CHECK contains serial (or all) */
    int staleness;            /* LOOM_STALENESS: ssp's default slack, clocks */
    int stats;                /* LOOM_STATS: print statistics at finalize */
    int wire_fp16;            /* LOOM_WIRE=fp16 */
    size_t cache_bytes;       /* LOOM_CACHE_BYTES: copies kept per allocation, 0 = no cap */
    int merge_avg;            /* LOOM_MERGE_AVG: 0 unset, 1 false, 2 true */
    size_t dsm_arena;         /* LOOM_DSM_ARENA: bytes of address space */
    char checkpoint_dir[1024];/* LOOM_CHECKPOINT_DIR: where checkpoints go, "" = none */
    long checkpoint_every;    /* LOOM_CHECKPOINT_EVERY: every N-th loom_clock, 0 = never */
    int checkpoint_sync;      /* LOOM_CHECKPOINT_SYNC: fsync files and directories */
    long checkpoint_chain;    /* LOOM_CHECKPOINT_CHAIN: longest chain of incremental checkpoints */
    int restart;              /* LOOM_RESTART: LOOM_RESTART_NO, _YES or _AUTO */
    struct { int rank, point; long clock; } test_kill; /* LOOM_TEST_KILL; rank -1 = off */
    char rsh[256];            /* LOOM_RSH (launcher) */
    char rendezvous_host[256];/* LOOM_RENDEZVOUS_HOST (launcher) */
};
extern struct loom_rt_icv loom_rt_icv;

/* Parse every LOOM_* variable into loom_rt_icv.  Returns LOOM_OK, or
 * LOOM_ERR_ENV after writing one message naming the variable and what it
 * allows into err (size errlen).  Reads the environment only; safe to call
 * more than once (later calls re-read). */
int loom_rt_env_load(char *err, size_t errlen);
/* A component's own environment variables (a coherence policy's knobs),
 * kept with the component as UCX's components carry their config tables:
 * `defaults` restores its values before every load; each variable's `set`
 * parses a value (0, or -1 for a bad one, which loom_rt_env_load reports
 * with `allowed` as lib/env.c's own variables), `show` prints the value
 * for LOOM_DISPLAY_ENV, and the names count as known to
 * loom_rt_env_unknown. */
typedef struct loom_env_var {
    const char *name;
    int (*set)(const char *value);
    void (*show)(char *buf, size_t len);
    const char *allowed;
} loom_env_var;
typedef struct loom_env_table {
    const char *owner;
    void (*defaults)(void);
    const loom_env_var *vars;
    size_t n;
} loom_env_table;
/* Adds a component's table (at most 16 tables).  Called by the
 * component's constructor, before main: so the table is in place when
 * loom_init loads the environment.  Not thread-safe (constructors run
 * one at a time). */
void loom_rt_env_register(const loom_env_table *t);

/* Print the effective values, libgomp style, to stderr.  verbose also
 * prints the launcher-only variables. */
void loom_rt_env_display(int verbose);

/* Names of LOOM_* variables set in the environment that Loom does not know,
 * comma-separated into buf; returns how many. */
int loom_rt_env_unknown(char *buf, size_t len);

/* How much of a rejected value a message quotes (then "..." when cut): a
 * long value must not push "is not valid: expected ..." out of the message
 * buffer. */
#define LOOM_SHOWN_MAX 64
/* A message's quote of input (a value, a file's line, a peer's text): the
 * first LOOM_SHOWN_MAX of len bytes of s into buf (size n, >= 4), every
 * byte that is not printable ASCII shown as '?' (no escape sequence of a
 * file or a peer reaches the terminal), "..." after a cut.  Returns buf. */
#define LOOM_SHOWN_BUF (LOOM_SHOWN_MAX + 4)
const char *loom_rt_shown(const void *s, size_t len, char *buf, size_t n);
/* loom_rt_shown of the string s into a buffer that lives to the end of the
 * enclosing block: loom_rt_log("X='%s' ...", LOOM_QUOTE(x)). */
#define LOOM_QUOTE(s) loom_rt_shown((s), strlen(s), (char[LOOM_SHOWN_BUF]){0}, LOOM_SHOWN_BUF)

/* Low-level parsers, exported for the launcher and the unit tests.  Each
 * returns 0 on success, -1 if s is not a valid value. */
int loom_rt_parse_seconds(const char *s, double *out);

/* ---- grow.c ------------------------------------------------------------ */
/* p, an array of *cap elements of es bytes, grown to hold at least need
 * (the capacity doubles from at least 16): the array to use from now on
 * (p itself when it already holds need), or NULL when memory ran out (p
 * still valid, *cap unchanged).  The new elements are not zeroed. */
void *loom_rt_grow(void *p, size_t *cap, size_t need, size_t es);
/* A plain decimal number (no sign, hex or exponent tricks) in [lo, hi]
 * into *out; -1 otherwise. */
int loom_rt_parse_number(const char *s, double lo, double hi, double *out);
int loom_rt_parse_int(const char *s, long lo, long hi, long *out);
int loom_rt_parse_bool(const char *s, int *out);
int loom_rt_parse_hostport(const char *s, char *host, size_t hostlen, int *port);
/* Split a command line into words as a POSIX shell would, without any
 * expansion (LOOM_RSH, --rsh): a NULL-terminated array in one allocation
 * (free it with free), or NULL with the reason in err. */
char **loom_rt_parse_words(const char *s, char *err, size_t errlen);

/* ---- error.c --------------------------------------------------------- */

/* Print "loom: rank R: <message>" (or "loom: <message>" before the rank is
 * known) to stderr as one write. */
__attribute__((format(printf, 1, 2)))
void loom_rt_log(const char *fmt, ...);

/* Print like loom_rt_log and _exit(code) at once, without running atexit
 * handlers (other threads may hold UCX locks). */
__attribute__((noreturn, format(printf, 2, 3)))
void loom_rt_die(int code, const char *fmt, ...);

/* The exit status for an abort code: the code itself from 1 to 255, else
 * 1 (exit(256) would report success; a code off the wire may be anything). */
int loom_rt_exit_status(int64_t code);

/* Exit codes a rank uses when the job fails under it. */
#define LOOM_EXIT_PEER 70     /* a peer or the launcher failed */
#define LOOM_EXIT_ABORTED 71  /* the launcher told us to stop */

/* ---- jobkey.c -------------------------------------------------------- */

/* SipHash-2-4 with a 128-bit output: out = MAC(key, msg). */
void loom_rt_siphash128(const uint8_t key[16], const void *msg, size_t len,
                     uint8_t out[16]);
/* 16 random bytes from getrandom(2).  Returns 0 or -1. */
int loom_rt_key_generate(uint8_t key[16]);
/* 32 hex digits <-> 16 bytes.  parse returns 0 or -1. */
int loom_rt_key_parse(const char *hex, uint8_t key[16]);
void loom_rt_key_format(const uint8_t key[16], char hex[33]);
/* The MAC of one rendezvous handshake message: SipHash128(key, tag || n1
 * || n2 || body), n2 optional (NULL).  tag is "JOIN" (a rank's proof) or
 * "TABL" (the server's).  Returns 0, or -1 when out of memory. */
int loom_rt_handshake_mac(const uint8_t key[16], const char tag[4], const uint8_t n1[16],
                       const uint8_t n2[16], const void *body, size_t len, uint8_t out[16]);
/* Constant-time comparison of n bytes: 1 if equal. */
int loom_rt_ct_equal(const void *a, const void *b, size_t n);

/* ---- frame.c: the bootstrap socket's framing ------------------------- */

enum loom_frame_type {
    LOOM_F_HELLO = 1,  /* server -> rank: magic, version, nonce[16] */
    LOOM_F_JOIN,       /* rank -> server: mac, nonce, rank, nranks, pid, host, ucx addr */
    LOOM_F_TABLE,      /* server -> rank: mac, every rank's host and UCX address */
    LOOM_F_REFUSE,     /* server -> rank: reason text */
    LOOM_F_PING,       /* either way: I am alive */
    LOOM_F_ABORT,      /* either way: u32 code + reason text */
    LOOM_F_PEERLOST,   /* rank -> server: u32 peer rank it lost */
    LOOM_F_BYE,        /* rank -> server: finalized cleanly */
};
#define LOOM_FRAME_MAX (1u << 24)
#define LOOM_PROTO_MAGIC 0x4d4f4f4cu /* "LOOM" */
#define LOOM_PROTO_VERSION 2u

/* An input buffer for one non-blocking connection. */
typedef struct loom_fbuf {
    uint8_t *data;
    size_t len, cap;
} loom_fbuf;

/* Write one frame (type + payload) whole; returns 0 or -1 (errno set).
 * Blocking; callers serialize writes to one fd. */
int loom_rt_frame_send(int fd, int type, const void *payload, size_t len);
/* Read what fd has into fb: 1 data read, 0 EOF, -1 error (EAGAIN is 1). */
int loom_rt_fbuf_fill(int fd, loom_fbuf *fb);
/* If fb holds a whole frame, return its type and point payload and len at it
 * without consuming it; 0 if none; -1 if malformed (bad length). */
int loom_rt_fbuf_next(loom_fbuf *fb, const uint8_t **payload, size_t *len);
/* Drop the frame loom_rt_fbuf_next returned. */
void loom_rt_fbuf_pop(loom_fbuf *fb);
void loom_rt_fbuf_free(loom_fbuf *fb);
/* Blocking read of one whole frame through fd's persistent buffer fb, with
 * a deadline (loom_wtime seconds).  Returns the type, 0 on EOF, -1 on
 * error, timeout or a malformed frame; *payload is malloc'd. */
int loom_rt_frame_recv(int fd, loom_fbuf *fb, double deadline, uint8_t **payload,
                    size_t *len);

/* 1 if the n bytes at p may be a host name on the wire (JOIN, TABLE):
 * shorter than `room`, printable ASCII without blanks.  A NUL inside
 * would make two different names compare equal. */
int loom_rt_wire_host_ok(const uint8_t *p, size_t n, size_t room);

/* Little-endian packing helpers. */
void loom_rt_put32(uint8_t *p, uint32_t v);
uint32_t loom_rt_get32(const uint8_t *p);

/* ---- hostlist.c ------------------------------------------------------ */

/* Called with each name of a host list: 0 goes on, 1 stops (a success:
 * the caller has what it wanted), -1 fails (out of memory). */
typedef int (*loom_host_fn)(const char *name, void *arg);
#define LOOM_HOSTLIST_MAX 65536
/* Expand a Slurm host list ("node[1-3,5],login,r[1-2]n[01-02]"; a range
 * keeps its first bound's width) in order, calling fn with every name.
 * Returns the number of names passed to fn (including one that stopped
 * the walk), or -1 with the reason in err for a malformed list or a
 * failing fn.  Pure: reads nothing but its arguments. */
int loom_rt_hostlist_expand(const char *s, loom_host_fn fn, void *arg, char *err, size_t errlen);

/* ---- pmi.c ----------------------------------------------------------- */

/* Open the key-value store srun offers this task: PMIx when PMIX_NAMESPACE
 * is set, else PMI-2 when PMI_FD is (libpmix / libpmi2, dlopen'ed).
 * Returns 1 with the store's name ("PMIx", "PMI-2"), this task's rank and
 * the task count (-1 if the store does not say), 0 when none is offered,
 * -1 after one message (library missing, service not answering).  Then:
 * put (and commit) a string, fence (collective: every task of the step),
 * read rank 0's value of a key into out (n bytes), close.  Each returns 0
 * or -1.  One store per process; slurm.c's bootstrap only. */
int loom_rt_pmi_open(const char **name, int *rank, int *size);
int loom_rt_pmi_put(const char *key, const char *value);
int loom_rt_pmi_fence(void);
int loom_rt_pmi_get0(const char *key, char *out, size_t n);
void loom_rt_pmi_close(void);

/* ---- slurm.c --------------------------------------------------------- */

/* Under srun without LOOM_RENDEZVOUS and LOOM_JOB_KEY: find them through
 * Slurm's PMIx or PMI-2 service (rank 0 opens the rendezvous on a free port and
 * publishes it and a fresh key in the step's key-value store), or else
 * derive them from the step (rank 0 at the first node of
 * SLURM_STEP_NODELIST, a port per job and step, a key from the user's
 * private secret file).  Fills loom_rt_icv.rendezvous, job_key and have_key;
 * on rank 0 *server gets the rendezvous it opened.  Called once, by
 * loom_rt_start, before the transport opens.  Returns LOOM_OK, or an
 * error after one message naming what is missing. */
typedef struct loom_rv loom_rv;
int loom_rt_slurm_bootstrap(loom_rv **server);

/* ---- rendezvous.c ---------------------------------------------------- */

typedef struct loom_rv loom_rv;

/* What a call to loom_rt_rv_step reports to its caller. */
typedef enum {
    LOOM_RV_NONE = 0,
    LOOM_RV_ALL_JOINED, /* the table went out */
    LOOM_RV_LOST,       /* rank `rank` died or went silent: reason in text */
    LOOM_RV_ABORT,      /* rank `rank` called loom_abort(code) */
    LOOM_RV_ALL_DONE,   /* every rank said BYE */
} loom_rv_event_kind;

typedef struct {
    loom_rv_event_kind kind;
    int rank, code;
    char text[512];
} loom_rv_event;

/* Listen on host:port (port 0 picks one) for a job of nranks ranks with
 * this key.  Returns NULL and fills err on failure. */
loom_rv *loom_rt_rv_open(const char *host, int port, int nranks,
                      const uint8_t key[16], double timeout,
                      char *err, size_t errlen);
int loom_rt_rv_port(const loom_rv *rv);
/* Fill fds (room for loom_rt_rv_nfds) for poll(2); returns the count. */
int loom_rt_rv_nfds(const loom_rv *rv);
int loom_rt_rv_pollfds(const loom_rv *rv, struct pollfd *fds);
/* Handle whatever the polled fds report and run the heartbeat clock.
 * Fills ev with at most one event and returns its kind.  Never blocks. */
loom_rv_event_kind loom_rt_rv_step(loom_rv *rv, const struct pollfd *fds, int nfds,
                                loom_rv_event *ev);
int loom_rt_rv_joined(const loom_rv *rv, int rank); /* 1 if rank ever joined */
int loom_rt_rv_njoined(const loom_rv *rv);
/* Tell every connected rank to stop (they _exit), then close them. */
void loom_rt_rv_abort_all(loom_rv *rv, int code, const char *why);
void loom_rt_rv_close(loom_rv *rv);

/* ---- join.c ---------------------------------------------------------- */

/* One peer's entry in the table every rank receives. */
typedef struct loom_peer {
    char host[64];
    uint8_t *addr;     /* UCX worker address */
    size_t addrlen;
} loom_peer;

/* Connect to the rendezvous, prove the key, publish our UCX address and
 * receive every rank's.  peers[] gets nranks entries (caller frees with
 * loom_rt_join_free).  Starts the heartbeat thread.  Fatal errors print one
 * message and return an error code. */
int loom_rt_join(const void *addr, size_t addrlen, loom_peer **peers);
/* Decode a TABLE frame's payload (u32 nranks, then per rank u8 hostlen,
 * host, u32 addrlen, UCX address) into nranks entries of *out (free with
 * loom_rt_join_free).  Returns 0, or -1 for any payload that is not exactly
 * that, with nothing allocated. */
int loom_rt_join_parse_table(const uint8_t *p, size_t n, int nranks, loom_peer **out);
void loom_rt_join_free(loom_peer *peers, int n);
/* Report that peer `rank` became unreachable, then die quietly: the
 * launcher names the culprit. */
__attribute__((noreturn)) void loom_rt_join_peer_lost(int rank, const char *why);
/* Send an ABORT frame (if joined). */
void loom_rt_join_abort(int code, const char *why);
/* Say BYE and stop the heartbeat thread. */
void loom_rt_join_leave(void);

/* ---- cores.c --------------------------------------------------------- */

/* Unless OMP_NUM_THREADS is set, give this rank its share of the CPUs it
 * may run on (loom_rt_cores_share over the masks of the ranks on its host),
 * and warn once per host whose ranks run more threads than it has CPUs.
 * Collective: every rank of a job of several calls it once, from
 * loom_init once the layers are up. */
void loom_rt_share_cores(void);
/* The share of a rank with mask mine, among n other ranks' masks on its
 * host: Σ over mine's CPUs of 1 / (ranks that have it), rounded down, at
 * least 1. */
int loom_rt_cores_share(const cpu_set_t *mine, const cpu_set_t *others, int n);
/* Whether `ranks` ranks of a host running `threads` OpenMP threads in all
 * on its `cpus` CPUs put a rank on every CPU of a host of 8 or more,
 * leaving none to their progress agents and UCX threads
 * (loom_rt_share_cores warns).
 * Pure; test_cores.c checks it. */
int loom_rt_cores_full(int ranks, long long threads, int cpus);

/* ---- transport.c ----------------------------------------------------- */

/* Bring up UCX: context + worker.  The worker address is returned for the
 * rendezvous.  Returns LOOM_OK or LOOM_ERR_NET. */
int loom_rt_tp_open(void **addr, size_t *addrlen);
/* Adopt the peers' addresses (kept; endpoints are made lazily). */
void loom_rt_tp_set_peers(loom_peer *peers, int n);
/* Rank r's host name, as it joined ("" before the peers are known). */
const char *loom_rt_tp_host(int r);
/* Generic active messages: handlers run in whichever thread drives
 * progress, under the transport lock; they must not block.  Their data is
 * 8-byte aligned.  Ids 2..15. */
typedef void (*loom_am_fn)(const void *hdr, size_t hlen, void *data, size_t len);
void loom_rt_tp_am_register(unsigned id, loom_am_fn fn);
/* Send header + data to dst without waiting; data (malloc'd or NULL) is
 * freed when the send completes. */
void loom_rt_tp_am_send(int dst, unsigned id, const void *hdr, size_t hlen, void *data,
                     size_t len);
/* The same; eager = 1 forces UCX's eager protocol (copies, but no
 * rendezvous handshake that needs the receiver to make progress first). */
void loom_rt_tp_am_send_eager(int dst, unsigned id, const void *hdr, size_t hlen, void *data,
                           size_t len, int eager);
/* Register [addr, addr+len) for remote reads; *rkey is a packed key of
 * *rkey_len bytes to hand to peers (free with loom_rt_tp_rkey_buffer_free). */
int loom_rt_tp_mem_map(void *addr, size_t len, void **memh, void **rkey, size_t *rkey_len);
/* The same for memory the transport allocates itself at addr (replacing
 * what was mapped there), so that peers on this host can read it directly
 * (one-sided) where the transport allows; LOOM_ERR_NET, quietly, where it
 * cannot. */
int loom_rt_tp_mem_alloc_at(void *addr, size_t len, void **memh, void **rkey, size_t *rkey_len);
void loom_rt_tp_mem_unmap(void *memh);
long loom_rt_tp_live_registrations(void); /* for leak tests */
void loom_rt_tp_rkey_buffer_free(void *rkey_buf);
void *loom_rt_tp_rkey_unpack(int peer, const void *buf);
void loom_rt_tp_rkey_destroy(void *rkey);
/* Start reading len bytes at peer's raddr into buf; *done becomes 1. */
void loom_rt_tp_get(int peer, void *buf, size_t len, uint64_t raddr, void *rkey,
                 volatile int *done);
/* A completion flag set by one thread (a transport callback, a handler)
 * and polled by another: release on set, acquire on read, so whatever was
 * written before the set (the received bytes) is visible after the read. */
static inline void loom_rt_flag_set(volatile int *f) { __atomic_store_n(f, 1, __ATOMIC_RELEASE); }
static inline int loom_rt_flag_get(const volatile int *f) { return __atomic_load_n(f, __ATOMIC_ACQUIRE); }

/* Drive progress until *flag is set / *v reaches target. */
void loom_rt_tp_wait_flag(volatile int *flag);
void loom_rt_tp_wait_flag_until(_Atomic uint64_t *v, uint64_t target);
/* Drive progress until done(arg) (message handlers run between calls);
 * as the waits above, the calling thread drives the transport meanwhile
 * (loom_rt_tp_foreground) and gives the core away while nothing happens. */
void loom_rt_tp_wait_until(int (*done)(void *), void *arg);
/* Progress until nothing more happens; returns the events handled. */
unsigned loom_rt_tp_drain(void);
/* After loom_rt_tp_drain: sleep until an event arrives or timeout_ms passes. */
void loom_rt_tp_wait(int timeout_ms);
/* 1 if the calling thread is inside the transport (holds its lock). */
int loom_rt_tp_busy(void);
/* 1 while a thread of this process waits in the transport (and drives it). */
int loom_rt_tp_foreground(void);
/* Payload bytes this rank has sent and received through the transport, of
 * every kind (collectives, the DSM's messages, remote reads). */
void loom_rt_tp_bytes(uint64_t *sent, uint64_t *received);

/* From now on a peer's disconnect is expected, not a failure. */
void loom_rt_tp_closing(void);
void loom_rt_tp_close(void);

typedef struct loom_sreq loom_sreq;
/* Start sending len bytes to rank dst under tag; buf must stay valid until
 * loom_rt_tp_wait_send.  Returns a handle (NULL if it completed at once). */
loom_sreq *loom_rt_tp_isend(int dst, uint64_t tag, const void *buf, size_t len);
void loom_rt_tp_wait_send(loom_sreq *r);
/* Receive exactly len bytes from src under tag into buf (blocking). */
void loom_rt_tp_recv(int src, uint64_t tag, void *buf, size_t len);

/* ---- coll.c ---------------------------------------------------------- */
/* The runtime's barrier (the public loom_barrier adds the DSM's release
 * and acquire around it). */
int loom_rt_coll_barrier(void);
/* Memory that loom_bcast and loom_allreduce must not work in, but on a
 * private copy (the DSM registers its arena test at init); NULL: none. */
void loom_rt_coll_set_bounce(int (*is_loom_memory)(const void *p));
size_t loom_rt_type_size(loom_type t);
/* Every rank's len bytes, in rank order, into all (P * len bytes). */
int loom_rt_allgather(const void *mine, void *all, size_t len);
/* a[i] = a[i] op b[i] for i < n; a and b are the same array or do not
 * overlap (the loops are vectorized).  Exported for the unit tests. */
void loom_rt_reduce_local(void *a, const void *b, size_t n, loom_type t, loom_op op);

/* ---- init.c ---------------------------------------------------------- */
extern int loom_rt_state; /* 0 before init, 1 running, 2 finalized */
/* The runtime's part of loom_init, after loom_rt_env_load and
 * loom_rt_discover_rank: the unknown-variable warning, LOOM_DISPLAY_ENV,
 * then with several ranks (under a foreign launcher rank 0's rendezvous)
 * UCX, the rendezvous, the peers; loom_rt_state becomes 1.  Returns LOOM_OK or an
 * error after one message.  loom_rt_finalize: the last runtime barrier,
 * the transport closed, BYE said, the rendezvous thread joined.  Both
 * from lifecycle/lifecycle.c only. */
int loom_rt_start(void);
void loom_rt_finalize(void);
/* Discover rank/size from loomrun, Slurm, mpirun or PMI variables.
 * Fills loom_rt_icv.rank/nranks/local_rank/source; returns LOOM_OK or
 * LOOM_ERR_ENV with a message in err. */
int loom_rt_discover_rank(char *err, size_t errlen);

#endif
