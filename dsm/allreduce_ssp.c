/* allreduce_ssp.c — loom_allreduce_ssp: the Sharded-SSP collective of
 * seed 004 (Faustino), in its "Thread" variant.
 *
 * The reduction is cumulative, as in a parameter server: the result holds
 * the reduction of every contribution made so far, by every rank, up to
 * the staleness the slack allows.  The vector is cut into P shards; rank j
 * serves shard j (the "PS shard"), whose state is the reduction of every
 * contribution it has applied.
 *
 * Worker (every rank), at its call in clock c:
 *   1. folds the new contribution into `missed` (contributions not yet
 *      pushed) and, if it holds a credit from every shard, pushes each
 *      shard its part of `missed`, tagged with clock c;
 *   2. waits until its stable snapshot is at most `slack` clocks old
 *      (age >= c - slack), pushing as soon as credits return;
 *   3. returns stable snapshot + own push in flight + missed.
 * A push needs an answer from every shard to the previous one, so at most
 * one own push is beyond the stable snapshot's round: adding it (and
 * missed) means a rank always sees all of its own contributions.
 * A worker owes one push per call.  When credits come back late, the
 * contributions of several calls are coalesced into the first push it
 * owes, and the others go out empty (a header only): every worker pushes
 * as often as it calls, so round r of every shard holds every rank's r-th
 * push and rounds never wait for a push that will not come.
 * Shard: applies a contribution as soon as it arrives; once it has one
 * from every worker it ends a round and sends its state to every worker,
 * tagged with the *minimum* clock of the contributions it holds (seed 004
 * erratum: not the sender's clock).  That update is the worker's credit:
 * a worker never pushes to a shard again before the shard applied its
 * last push, so no contribution is ever overwritten or lost.
 * Stable snapshot: a worker copies its shard updates into `stable` only
 * when all shards are at the same round, so every element of a result
 * folds in the same contributions.
 * With slack 0 every call waits for the round holding clock c from every
 * rank: rounds and clocks advance in lockstep, and the result is exactly
 * the allreduce of all contributions of clocks <= c.  So a slack-0 call
 * takes no shard round at all: once this rank's earlier pushes are all
 * answered (then `stable` holds every rank's pushes, and nothing is
 * missed), it is stable + loom_allreduce(contribution), the tuned
 * synchronous collective (sync_call); the shard states and the snapshot
 * advance by the same sum, so later rounds stay exact.  Every rank must
 * pass slack 0 at the same call (they all enter loom_allreduce).
 *
 * Copies (docs/bench-ssp.md): a push swaps `missed` and `inflight`
 * (pointers, no copy); a contribution folded into an empty `missed` is a
 * copy, not a clear-then-add; the stable snapshot and the newest updates
 * are the two halves of one buffer that swap roles when all shards reach
 * a round (every shard of the new `local` is overwritten before the next
 * snapshot, since a shard's rounds arrive one by one); the result is
 * stable + inflight + missed in one pass.  What is left is the transport's
 * (a push and an update are each copied into a message buffer once).
 *
 * The background progress agent (agent.c) drives the transport between
 * calls, so shards apply and answer while their rank computes.  Locking: each reduction's mutex guards its
 * buffers; nobody sends while holding it (handlers run under the
 * transport lock and take the mutex). */
#include "dsm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AM_CONTRIB 9
#define AM_UPDATE 10
#define MAX_RED 16

struct red {
    int id;
    size_t count, es;
    loom_type type;
    loom_op op;
    pthread_mutex_t mu;
    /* worker side */
    uint64_t clock;          /* calls made */
    char *missed;            /* contributions not pushed yet */
    uint64_t missed_clock;   /* newest clock folded into missed (0: none) */
    uint64_t pushes;         /* pushes made: one is owed per call... */
    uint64_t syncs;          /* ...but slack-0 calls (sync_call) */
    int async;               /* called with slack > 0 since its last slack-0 call */
    uint64_t sync_at;        /* the clock of the slack-0 call under way (0: none) */
    char *inflight;          /* the last push, until the stable snapshot holds it */
    int inflight_live;
    int credits;             /* shards whose last push was answered */
    uint8_t *credit;         /* per shard */
    char *snap;              /* two halves: `local` and `stable` */
    uint64_t which;          /* the half that is `stable` (kept in checkpoints) */
    char *local;             /* newest update of each shard */
    uint64_t *round, *age;   /* per shard: its newest update's round and age */
    char *stable;            /* all shards at one round */
    uint64_t stable_round;
    _Atomic uint64_t stable_age;
    uint64_t waits, wait_ns;  /* LOOM_STATS: calls that waited, and how long */
    /* shard side (this rank's shard) */
    char *state;
    uint8_t *got;            /* per worker: contributed this round */
    uint64_t *wclock;        /* per worker: clock tag of its last contribution */
    uint64_t *wsyncs;        /* per worker: its slack-0 calls before that contribution */
    int ngot;
    uint64_t srounds;
};

struct msg_hdr {
    uint32_t id, src;
    uint64_t clock;   /* CONTRIB: worker's clock tag; UPDATE: age */
    uint64_t round;   /* UPDATE: round; CONTRIB: 1 if empty */
    uint64_t syncs;   /* CONTRIB: the worker's slack-0 calls so far */
};

static struct red *reds[MAX_RED];
static int nreds;

/* Messages for a reduction this rank has not created yet: another rank
 * called loom_allreduce_ssp first, and the progress agent (running for an
 * allocation) took its push before this rank's first call.  Dropping them
 * would hang the job, so they wait here and are handled when the
 * reduction is created.  Until then at most one push per worker can come
 * (each waits for this shard's answer), so more than P is an error. */
struct parked {
    struct parked *next;
    unsigned am;
    struct msg_hdr h;
    void *data;
    size_t len;
};
static struct parked *parked;
static int nparked;
/* Guards reds, nreds and parked between the caller and the handlers. */
static pthread_mutex_t reds_mu = PTHREAD_MUTEX_INITIALIZER;
/* The progress agent is held while some reduction may have rounds in
 * flight: from its first call with slack > 0 until a slack-0 call on it
 * returns.  Every rank makes that call together, each having settled its
 * pushes first, so after it no push or update of the reduction is in
 * flight anywhere, and nothing is left for the agent to serve.  A
 * program that only calls with slack 0 thus has no agent polling beside
 * its ranks (it cost 0.7-0.9 ms of a 2.7 ms call with 4 ranks on 2 cores). */
static int agent_held; /* reductions with rounds possibly in flight */

static size_t shard_off(const struct red *r, int j)
{
    size_t P = (size_t)loom_rt_icv.nranks, base = r->count / P, rem = r->count % P;
    return (size_t)j * base + ((size_t)j < rem ? (size_t)j : rem);
}
static size_t shard_len(const struct red *r, int j) { return shard_off(r, j + 1) - shard_off(r, j); }

/* A message to send once the mutex is released. */
struct out {
    int dst;
    unsigned am;
    struct msg_hdr h;
    void *data;
    size_t len;
};

static void deliver(struct out *o, int n);

/* `stable` is half `which` of snap, `local` the other.  Swapping them
 * (which = !which) makes the newest updates the snapshot; the new local
 * half holds older shards, each overwritten by its next update before all
 * shards are at one round again. */
static void set_halves(struct red *r, uint64_t which)
{
    size_t v = (r->count ? r->count : 1) * r->es;
    r->which = which;
    r->stable = r->snap + which * v;
    r->local = r->snap + (1 - which) * v;
}

/* Worker: if every shard has answered the last push and a push is owed,
 * build the next push (missed, or empty if nothing is missed) to every
 * shard.  Caller holds mu.  Returns how many messages were added to o. */
static int push_owed(struct red *r, struct out *o)
{
    int P = loom_rt_icv.nranks;
    if (r->credits < P || r->pushes + r->syncs >= r->clock)
        return 0;
    int empty = !r->missed_clock;
    for (int j = 0; j < P; j++) {
        size_t len = empty ? 0 : shard_len(r, j) * r->es;
        void *d = NULL;
        if (len) {
            if (!(d = malloc(len)))
                loom_rt_die(1, "out of memory");
            memcpy(d, r->missed + shard_off(r, j) * r->es, len);
        }
        o[j] = (struct out){j, AM_CONTRIB, {(uint32_t)r->id, (uint32_t)loom_rt_icv.rank,
                                            r->clock, (uint64_t)empty, r->syncs}, d, len};
        r->credit[j] = 0;
    }
    if (!empty) { /* missed becomes the push in flight; its old buffer is free */
        char *t = r->inflight;
        r->inflight = r->missed;
        r->missed = t;
    }
    r->inflight_live = !empty;
    r->missed_clock = 0;
    r->credits = 0;
    r->pushes++;
    return P;
}

/* While this rank makes call c = sync_at with slack 0: did rank w, by
 * a push tagged `tag` after `syncs` slack-0 calls of its own, make call c
 * with a slack > 0?  If both made the same slack-0 calls before c (the
 * check at every earlier one), a push of call c or later from a rank that
 * also passed slack 0 at c counts more slack-0 calls than this rank has
 * made before c; one that did not, no more.  Then this rank's
 * loom_allreduce would wait for w forever: the job stops with one
 * message. */
static void check_same_slack(const struct red *r, int w, uint64_t tag, uint64_t syncs)
{
    uint64_t c = r->sync_at;
    if (!c || tag < c || syncs > r->syncs)
        return;
    loom_abort(1, "loom_allreduce_ssp: call %llu of reduction %d: this rank passed slack 0 "
                  "and rank %d a slack > 0; every rank must pass slack 0 at the same calls",
               (unsigned long long)c, r->id, w);
}

/* Shard: a contribution from worker w with clock tag. */
static void on_contrib_locked(struct red *r, int w, uint64_t tag, uint64_t syncs, int empty,
                              const void *data, size_t len, struct out *o, int *no)
{
    int me = loom_rt_icv.rank, P = loom_rt_icv.nranks;
    /* a worker's clock tags never decrease (several calls may share one
     * push), and it pushes again only once this shard answered */
    check_same_slack(r, w, tag, syncs);
    if (len != (empty ? 0 : shard_len(r, me) * r->es) || r->got[w] || tag < r->wclock[w] ||
        !tag) {
        loom_rt_log("allreduce_ssp: dropped a contribution from rank %d (bad length, clock %llu "
                 "or no credit)", w, (unsigned long long)tag);
        return;
    }
    if (len)
        loom_rt_reduce_local(r->state, data, len / r->es, r->type, r->op);
    r->got[w] = 1;
    r->wclock[w] = tag;
    r->wsyncs[w] = syncs;
    if (++r->ngot < P)
        return;
    uint64_t age = UINT64_MAX;
    for (int q = 0; q < P; q++)
        if (r->wclock[q] < age)
            age = r->wclock[q];
    r->srounds++;
    size_t slen = shard_len(r, me) * r->es;
    for (int q = 0; q < P; q++) {
        void *d = malloc(slen ? slen : 1);
        if (!d)
            loom_rt_die(1, "out of memory");
        memcpy(d, r->state, slen);
        o[(*no)++] = (struct out){q, AM_UPDATE, {(uint32_t)r->id, (uint32_t)me, age, r->srounds, 0},
                                  d, slen};
    }
    memset(r->got, 0, (size_t)P);
    r->ngot = 0;
}

/* Worker: shard j's state of round `round`, reflecting clocks >= age. */
static void on_update_locked(struct red *r, int j, uint64_t age, uint64_t round,
                             const void *data, size_t len, struct out *o, int *no)
{
    int P = loom_rt_icv.nranks;
    /* round k of a shard holds every worker's k-th push, so it cannot be
     * beyond this worker's pushes; its age is the oldest clock tag in it,
     * at most this worker's clock */
    if (len != shard_len(r, j) * r->es || round <= r->round[j] || round > r->pushes ||
        age > r->clock) {
        loom_rt_log("allreduce_ssp: dropped an update from shard %d (bad length, round %llu or "
                 "age %llu)", j, (unsigned long long)round, (unsigned long long)age);
        return;
    }
    memcpy(r->local + shard_off(r, j) * r->es, data, len);
    r->round[j] = round;
    r->age[j] = age;
    if (!r->credit[j]) {
        r->credit[j] = 1;
        r->credits++;
    }
    int same = 1;
    uint64_t amin = UINT64_MAX;
    for (int q = 0; q < P; q++) {
        same &= r->round[q] == round;
        if (r->age[q] < amin)
            amin = r->age[q];
    }
    if (same && round > r->stable_round) {
        set_halves(r, !r->which); /* local becomes the snapshot */
        r->stable_round = round;
        if (round >= r->pushes)
            r->inflight_live = 0; /* the snapshot holds every push made */
        atomic_store(&r->stable_age, amin);
    }
    *no += push_owed(r, o + *no); /* what waited for credit */
}

/* Send (or, to this rank, handle in place) the messages in o. */
static void handle(struct red *r, unsigned am, const struct msg_hdr *h, const void *data,
                   size_t len)
{
    struct out o[2 * 64 + 2];
    int n = 0;
    if (loom_rt_icv.nranks > 64)
        loom_rt_die(1, "loom_allreduce_ssp supports at most 64 ranks");
    pthread_mutex_lock(&r->mu);
    if (am == AM_CONTRIB)
        on_contrib_locked(r, (int)h->src, h->clock, h->syncs, h->round != 0, data, len, o, &n);
    else
        on_update_locked(r, (int)h->src, h->clock, h->round, data, len, o, &n);
    pthread_mutex_unlock(&r->mu);
    deliver(o, n);
}

static void deliver(struct out *o, int n)
{
    for (int i = 0; i < n; i++) {
        if (o[i].dst == loom_rt_icv.rank) {
            handle(reds[o[i].h.id], o[i].am, &o[i].h, o[i].data, o[i].len);
            free(o[i].data); /* NULL for an empty push */
        } else /* eager: a shard's peer may be computing, not progressing */
            loom_rt_tp_am_send_eager(o[i].dst, o[i].am, &o[i].h, sizeof o[i].h, o[i].data,
                                  o[i].len, 1);
    }
}

static void on_msg(unsigned am, const void *hdr, size_t hlen, void *data, size_t len)
{
    struct msg_hdr h;
    if (hlen != sizeof h) {
        loom_rt_log("allreduce_ssp: dropped a message with a %zu-byte header", hlen);
        return;
    }
    memcpy(&h, hdr, sizeof h);
    if (h.id >= MAX_RED || h.src >= (uint32_t)loom_rt_icv.nranks ||
        h.src == (uint32_t)loom_rt_icv.rank) {
        loom_rt_log("allreduce_ssp: dropped a message from rank %u for reduction %u", h.src, h.id);
        return;
    }
    pthread_mutex_lock(&reds_mu);
    struct red *r = h.id < (uint32_t)nreds ? reds[h.id] : NULL;
    if (!r) {
        struct parked *k = NULL;
        void *copy = NULL;
        if (am == AM_CONTRIB && nparked < loom_rt_icv.nranks && (k = malloc(sizeof *k)) &&
            (copy = malloc(len ? len : 1))) {
            memcpy(copy, data, len);
            *k = (struct parked){parked, am, h, copy, len};
            parked = k;
            nparked++;
        } else {
            free(k);
            loom_rt_log("allreduce_ssp: dropped a message from rank %u for reduction %u, which "
                     "does not exist here", h.src, h.id);
        }
    }
    pthread_mutex_unlock(&reds_mu);
    if (r)
        handle(r, am, &h, data, len);
}

static void on_contrib(const void *h, size_t hl, void *d, size_t l) { on_msg(AM_CONTRIB, h, hl, d, l); }
static void on_update(const void *h, size_t hl, void *d, size_t l) { on_msg(AM_UPDATE, h, hl, d, l); }

void loom_dsm_allreduce_ssp_init(void)
{
    loom_rt_tp_am_register(AM_CONTRIB, on_contrib);
    loom_rt_tp_am_register(AM_UPDATE, on_update);
    loom_dsm_allreduce_hypercube_init(); /* the other design, same lifecycle */
}

/* Checkpoints (docs/checkpoint.md): what a reduction carries from call to
 * call once nothing is in flight (loom_checkpoint quiesces first: every
 * push made and answered) — the running sums, clocks and rounds — is kept
 * in every checkpoint (loom_checkpoint_keep), and comes back on a restart
 * when the reduction is made again (same creation order: same id).  The
 * rest is what a quiesced reduction holds anyway: every credit back,
 * nothing missed or in flight.  forget: stop keeping it (finalize). */
static void keep_red(struct red *r, int forget)
{
    size_t P = (size_t)loom_rt_icv.nranks, v = (r->count ? r->count : 1) * r->es;
    struct { const char *what; void *p; size_t n; } k[] = {
        {"clock", &r->clock, 8}, {"pushes", &r->pushes, 8}, {"syncs", &r->syncs, 8},
        {"stable_round", &r->stable_round, 8}, {"srounds", &r->srounds, 8},
        {"stable_age", (void *)&r->stable_age, 8}, {"which", &r->which, 8},
        {"snap", r->snap, 2 * v}, {"state", r->state, (shard_len(r, loom_rt_icv.rank) + 1) * r->es},
        {"round", r->round, P * 8}, {"age", r->age, P * 8}, {"wclock", r->wclock, P * 8},
        {"wsyncs", r->wsyncs, P * 8}};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        char name[64];
        snprintf(name, sizeof name, "allreduce_ssp %d %s", r->id, k[i].what);
        if (forget)
            loom_checkpoint_forget(k[i].p);
        else if (loom_checkpoint_keep(name, k[i].p, k[i].n, NULL))
            loom_rt_die(1, "out of memory");
    }
}

/* The reduction for (count, type, op): created at the first call, which
 * every rank makes in the same order, so ids agree. */
static struct red *get_red(size_t count, loom_type type, loom_op op)
{
    pthread_mutex_lock(&reds_mu);
    for (int i = 0; i < nreds; i++)
        if (reds[i]->count == count && reds[i]->type == type && reds[i]->op == op) {
            struct red *r = reds[i];
            pthread_mutex_unlock(&reds_mu);
            return r;
        }
    pthread_mutex_unlock(&reds_mu);
    if (nreds == MAX_RED)
        return NULL;
    int P = loom_rt_icv.nranks;
    struct red *r = calloc(1, sizeof *r);
    size_t es = loom_rt_type_size(type);
    r->id = nreds;
    r->count = count;
    r->es = es;
    r->type = type;
    r->op = op;
    pthread_mutex_init(&r->mu, NULL);
    r->missed = calloc(count ? count : 1, es);
    r->snap = calloc(2 * (count ? count : 1), es);
    r->inflight = calloc(count ? count : 1, es);
    r->credit = malloc((size_t)P);
    r->round = calloc((size_t)P, sizeof *r->round);
    r->age = calloc((size_t)P, sizeof *r->age);
    r->got = calloc((size_t)P, 1);
    r->wclock = calloc((size_t)P, sizeof *r->wclock);
    r->wsyncs = calloc((size_t)P, sizeof *r->wsyncs);
    r->state = calloc(shard_len(r, loom_rt_icv.rank) + 1, es);
    memset(r->credit, 1, (size_t)P);
    r->credits = P;
    keep_red(r, 0); /* a restart: the sums, clocks and rounds of the checkpoint */
    set_halves(r, r->which);
    /* publish, then take what waited for it (handled outside reds_mu:
     * handling sends) */
    struct parked *mine = NULL;
    pthread_mutex_lock(&reds_mu);
    reds[nreds] = r;
    nreds++;
    for (struct parked **pp = &parked; *pp;) {
        struct parked *k = *pp;
        if (k->h.id == (uint32_t)r->id) {
            *pp = k->next;
            k->next = mine;
            mine = k;
            nparked--;
        } else
            pp = &k->next;
    }
    pthread_mutex_unlock(&reds_mu);
    while (mine) {
        struct parked *k = mine;
        mine = k->next;
        handle(r, k->am, &k->h, k->data, k->len);
        free(k->data);
        free(k);
    }
    return r;
}

/* out = a + b + c (b, c may be NULL: left out), element by element, in
 * one pass.  out may not overlap the others. */
static void sum3(const struct red *r, void *out, const void *a, const void *b, const void *c)
{
    size_t n = r->count;
#define SUM3(T)                                                                     \
    do {                                                                            \
        T *o = out;                                                                 \
        const T *x = a, *y = b, *z = c;                                             \
        if (y && z)                                                                 \
            for (size_t i = 0; i < n; i++) o[i] = x[i] + y[i] + z[i];              \
        else if (y || z)                                                            \
            for (size_t i = 0; i < n; i++) o[i] = x[i] + (y ? y : z)[i];           \
        else                                                                        \
            memcpy(o, x, n * sizeof(T));                                            \
    } while (0)
    switch (r->type) {
    case LOOM_INT32: SUM3(uint32_t); break; /* unsigned: wraps, as loom_rt_reduce_local */
    case LOOM_INT64: SUM3(uint64_t); break;
    case LOOM_FLOAT: SUM3(float); break;
    case LOOM_DOUBLE: SUM3(double); break;
    }
#undef SUM3
}

/* Until every push this rank owes is made and answered: then `stable`
 * holds every rank's pushes up to this rank's last (each shard ended that
 * round, which holds every rank's push of that number) and nothing is
 * missed or in flight.  Needs the other ranks to keep calling or
 * quiescing.  Caller holds no lock. */
static int settled(void *arg)
{
    struct red *r = arg;
    pthread_mutex_lock(&r->mu);
    int done = r->pushes + r->syncs == r->clock && r->credits == loom_rt_icv.nranks;
    pthread_mutex_unlock(&r->mu);
    return done;
}

static void settle(struct red *r)
{
    loom_rt_tp_wait_until(settled, r);
}

/* A slack-0 call (see the top of the file): settle, then result = stable
 * + loom_allreduce(contribution) of every rank's call of this number; the
 * snapshot and this rank's shard state take the same sum, so the rounds
 * that follow stay exact.  It is no push (every rank's push count stays
 * put), and its age is its clock.  Every rank makes this call with slack
 * 0 at the same point. */
static int sync_call(struct red *r, void *result, const void *contribution)
{
    double t0 = loom_wtime();
    settle(r);
    pthread_mutex_lock(&r->mu);
    r->sync_at = r->clock + 1; /* pushes that come from now on are checked, and so is */
    for (int q = 0; q < loom_rt_icv.nranks; q++) /* the last one that came already */
        check_same_slack(r, q, r->wclock[q], r->wsyncs[q]);
    pthread_mutex_unlock(&r->mu);
    int rc = loom_allreduce(contribution, result, r->count, r->type, r->op);
    if (rc)
        return rc;
    int me = loom_rt_icv.rank;
    pthread_mutex_lock(&r->mu);
    uint64_t c = ++r->clock;
    r->sync_at = 0;
    r->syncs++; /* no push owed for this call */
    loom_rt_reduce_local(r->state, (char *)result + shard_off(r, me) * r->es, shard_len(r, me),
                      r->type, r->op);
    loom_rt_reduce_local(result, r->stable, r->count, r->type, r->op);
    memcpy(r->stable, result, r->count * r->es);
    atomic_store(&r->stable_age, c);
    r->waits++;
    r->wait_ns += (uint64_t)((loom_wtime() - t0) * 1e9);
    pthread_mutex_unlock(&r->mu);
    return LOOM_OK;
}

int loom_allreduce_ssp(void *result, const void *contribution, size_t count, loom_type type,
                       loom_op op, int slack)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if ((unsigned)type > LOOM_DOUBLE || op != LOOM_SUM || slack < 0 ||
        (count && (!result || !contribution)))
        return LOOM_ERR_ARG; /* cumulative: sums only */
    size_t bytes = count * loom_rt_type_size(type);
    struct red *r = get_red(count, type, op);
    if (!r)
        return LOOM_ERR_NOMEM;
    if (loom_rt_icv.nranks == 1) { /* cumulative, no one to wait for */
        loom_rt_reduce_local(r->stable, contribution, count, type, op);
        memcpy(result, r->stable, bytes);
        return LOOM_OK;
    }
    if (slack == 0) {
        int rc = sync_call(r, result, contribution);
        if (r->async) {
            r->async = 0;
            if (--agent_held == 0)
                loom_dsm_agent_release();
        }
        return rc;
    }
    if (!r->async) {
        r->async = 1;
        if (agent_held++ == 0)
            loom_dsm_agent_hold();
    }
    struct out o[64];
    pthread_mutex_lock(&r->mu);
    uint64_t c = ++r->clock;
    if (r->missed_clock)
        loom_rt_reduce_local(r->missed, contribution, count, type, op);
    else
        memcpy(r->missed, contribution, bytes);
    r->missed_clock = c;
    int n = push_owed(r, o);
    pthread_mutex_unlock(&r->mu);
    deliver(o, n);
    uint64_t need = c > (uint64_t)slack ? c - (uint64_t)slack : 0;
    if (atomic_load(&r->stable_age) < need) {
        double t0 = loom_wtime();
        loom_rt_tp_wait_flag_until(&r->stable_age, need);
        r->waits++;
        r->wait_ns += (uint64_t)((loom_wtime() - t0) * 1e9);
    }
    pthread_mutex_lock(&r->mu);
    sum3(r, result, r->stable, r->inflight_live ? r->inflight : NULL,
         r->missed_clock ? r->missed : NULL);
    pthread_mutex_unlock(&r->mu);
    return LOOM_OK;
}

/* At finalize, before the last barrier: wait until every push this rank
 * owes has been made and answered.  Once every rank has, no message of
 * any reduction is in flight. */
void loom_dsm_allreduce_ssp_quiesce(void)
{
    for (int i = 0; i < nreds; i++)
        settle(reds[i]);
}

/* At finalize, after the last barrier: frees every reduction, printing
 * its statistics first under LOOM_STATS=1. */
void loom_dsm_allreduce_ssp_fini(void)
{
    loom_dsm_allreduce_hypercube_fini();
    if (agent_held) {
        agent_held = 0;
        loom_dsm_agent_release();
    }
    for (int i = 0; i < nreds; i++) {
        struct red *r = reds[i];
        if (loom_rt_icv.stats)
            loom_rt_log("stats allreduce_ssp #%d (%zu elements): %llu calls, %llu waited for "
                     "the slack (%.3f s), %llu pushes", r->id, r->count,
                     (unsigned long long)r->clock, (unsigned long long)r->waits,
                     (double)r->wait_ns * 1e-9, (unsigned long long)r->pushes);
        keep_red(r, 1);
        free(r->missed); free(r->snap); free(r->inflight); free(r->credit);
        free(r->round); free(r->age); free(r->got); free(r->wclock); free(r->wsyncs); free(r->state);
        pthread_mutex_destroy(&r->mu);
        free(r);
        reds[i] = NULL;
    }
    nreds = 0;
    while (parked) { /* pushes for a reduction this rank never called */
        struct parked *k = parked;
        parked = k->next;
        free(k->data);
        free(k);
    }
    nparked = 0;
}
