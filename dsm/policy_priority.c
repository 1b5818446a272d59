/* policy_priority.c — Bösen's managed communication (seed 001 ch. 2).
 *
 * The ssp guarantee (same hooks as ssp, same flush at every clock), plus a
 * background sender that spends a bandwidth budget between clocks on the
 * buffered deltas that matter most, so that readers see important updates
 * before the clock forces them out.
 *
 * Every TICK the sender thread adds LOOM_BANDWIDTH (Mbit/s per rank) worth
 * of bytes to a token bucket (capped at 200 ms worth: enough to catch up
 * when the thread was descheduled, too little to save idle time up into
 * bursts); it sends while the bucket is positive and carries an overshoot
 * as debt, so the long-run rate is the budget.  If fewer than MAX_UNACKED
 * of this rank's diff messages await acknowledgement (else it backs off),
 * it ranks the rows of every priority allocation that hold pending
 * additions by LOOM_PRIORITY:
 *   relative    sum |delta_i| / (|a_i| + 1e-6), a = the row's current value
 *   absolute    sum |delta_i|
 *   random      a random key
 *   roundrobin  the next rows after the last one sent
 * and moves their deltas, best first, in batches of LOOM_PRIORITY_QUEUE
 * rows (one bounded DIFF message per home each) while the bucket lasts.  The rows' own
 * writes stay visible here; what was moved is simply no longer pending.
 * LOOM_WIRE=fp16 carries float deltas as half precision.  The same thread
 * drives the transport every tick, so that as a home this rank applies
 * what others send early even while its own threads compute.
 *
 * Early sending applies to row units with add merge (a parameter server's
 * tables).  Page units are written in place by the program's threads, and
 * diffing them mid-clock would race those writes: they go at the clock, as
 * under ssp. */
#include "dsm.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define TICK_S 0.005
#define MAX_UNACKED 32

extern const loom_policy loom_dsm_policy_priority; /* the table, at the end of this file */

static pthread_t sender;
static int sender_running;
static _Atomic int sender_stop;
static _Atomic int nprio; /* live priority allocations */
static pthread_mutex_t sender_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the policy's knobs (its own environment table, lib/env.c) ---- */

enum { ORDER_RELATIVE = 0, ORDER_ABSOLUTE, ORDER_RANDOM, ORDER_ROUNDROBIN };
static const char *const order_names[] = {"relative", "absolute", "random", "roundrobin"};
static struct {
    double bandwidth_mbit; /* LOOM_BANDWIDTH: the budget, Mbit/s per rank */
    int order;             /* LOOM_PRIORITY: ORDER_* */
    int queue;             /* LOOM_PRIORITY_QUEUE: rows per send at most */
} knob;

static void knob_defaults(void)
{
    knob.bandwidth_mbit = 100, knob.order = ORDER_RELATIVE, knob.queue = 64;
}
static int set_bandwidth(const char *v) { return loom_rt_parse_number(v, 0, 1e6, &knob.bandwidth_mbit); }
static int set_order(const char *v)
{
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(v, order_names[i]))
            return knob.order = i, 0;
    return -1;
}
static int set_queue(const char *v)
{
    long x;
    return loom_rt_parse_int(v, 1, 1 << 20, &x) ? -1 : (knob.queue = (int)x, 0);
}
static void show_bandwidth(char *b, size_t n) { snprintf(b, n, "%g", knob.bandwidth_mbit); }
static void show_order(char *b, size_t n) { snprintf(b, n, "%s", order_names[knob.order]); }
static void show_queue(char *b, size_t n) { snprintf(b, n, "%d", knob.queue); }

static const loom_env_var knob_vars[] = {
    {"LOOM_BANDWIDTH", set_bandwidth, show_bandwidth,
     "a number of Mbit/s >= 0 (priority's budget per rank; 0 = no early sending)"},
    {"LOOM_PRIORITY", set_order, show_order, "relative, absolute, random or roundrobin"},
    {"LOOM_PRIORITY_QUEUE", set_queue, show_queue, "an integer >= 1 (rows per early send at most)"},
};
static const loom_env_table knobs = {"priority", knob_defaults, knob_vars, 3};

/* Before main: the table is in place when loom_init loads the
 * environment (lib/env.c). */
__attribute__((constructor)) static void register_knobs(void)
{
    knob_defaults();
    loom_rt_env_register(&knobs);
}

struct cand {
    size_t row;
    double key;
};

static int by_key_desc(const void *x, const void *y)
{
    double a = ((const struct cand *)x)->key, b = ((const struct cand *)y)->key;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The priority of row r's pending deltas (caller holds its lock). */
static double priority_of(loom_dsm_alloc *a, size_t r, uint64_t *rnd)
{
    const char *d = a->twin[r], *v = a->base + r * a->unit;
    size_t n = a->unit / a->esize;
    double key = 0;
    switch (knob.order) {
    case ORDER_RANDOM:
        *rnd = *rnd * 6364136223846793005ULL + 1442695040888963407ULL;
        return (double)(*rnd >> 11);
    case ORDER_ROUNDROBIN:
        return 0; /* ordered by position below */
    default:
        break;
    }
    for (size_t i = 0; i < n; i++) {
        double x, y = 0;
        switch (a->type) {
        case LOOM_INT32: { int32_t t; memcpy(&t, d + 4 * i, 4); x = t; memcpy(&t, v + 4 * i, 4); y = t; break; }
        case LOOM_INT64: { int64_t t; memcpy(&t, d + 8 * i, 8); x = (double)t; memcpy(&t, v + 8 * i, 8); y = (double)t; break; }
        case LOOM_FLOAT: { float t; memcpy(&t, d + 4 * i, 4); x = t; memcpy(&t, v + 4 * i, 4); y = t; break; }
        default: { double t; memcpy(&t, d + 8 * i, 8); x = t; memcpy(&t, v + 8 * i, 8); y = t; break; }
        }
        key += knob.order == ORDER_ABSOLUTE ? fabs(x) : fabs(x) / (fabs(y) + 1e-6);
    }
    return key;
}

/* Move the pending deltas of row r into msgs[home] (caller holds its lock).
 * Returns the bytes added. */
static size_t take_row(loom_dsm_alloc *a, size_t r, uint8_t **bufs, size_t *lens, size_t *caps,
                       uint32_t *nrec)
{
    int h = a->home[r];
    size_t before = lens[h];
    if (loom_rt_icv.wire_fp16 && a->type == LOOM_FLOAT) {
        size_t n = a->unit / 4;
        loom_half *half = malloc(n * sizeof *half);
        if (!half)
            loom_rt_die(1, "out of memory");
        for (size_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, (char *)a->twin[r] + 4 * i, 4);
            half[i] = (loom_half)f;
        }
        loom_dsm_rec_append(&bufs[h], &lens[h], &caps[h], r, 0, half, n * sizeof *half, REC_ADD16);
        free(half);
    } else
        loom_dsm_rec_append(&bufs[h], &lens[h], &caps[h], r, 0, a->twin[r], a->unit, REC_ADD);
    memset(a->twin[r], 0, a->unit);
    a->put[r] &= (uint8_t)~2; /* nothing pending any more */
    nrec[h]++;
    atomic_fetch_add(&a->stats.forwarded, 1);
    return lens[h] - before;
}

/* One tick for one allocation: send up to `queue` rows while the bucket
 * holds.  Returns bytes sent. */
static double send_some(loom_dsm_alloc *a, double budget, size_t *cursor, uint64_t *rnd)
{
    int P = loom_rt_icv.nranks;
    while (atomic_flag_test_and_set_explicit(&a->dirty_lock, memory_order_acquire))
        sched_yield();
    size_t nd = a->ndirty;
    size_t *rows = malloc((nd ? nd : 1) * sizeof *rows);
    if (rows && nd)
        memcpy(rows, a->dirty, nd * sizeof *rows);
    atomic_flag_clear_explicit(&a->dirty_lock, memory_order_release);
    if (!rows)
        return 0;
    struct cand *c = malloc((nd ? nd : 1) * sizeof *c);
    size_t nc = 0;
    for (size_t i = 0; c && i < nd; i++) {
        size_t r = rows[i];
        loom_dsm_unit_lock(a, r);
        if ((a->put[r] & 2) && !(a->put[r] & 1)) { /* pending adds, no put */
            double key = knob.order == ORDER_ROUNDROBIN
                             ? -(double)((r + a->nunits - *cursor) % a->nunits)
                             : priority_of(a, r, rnd);
            c[nc++] = (struct cand){r, key};
        }
        loom_dsm_unit_unlock(a, r);
    }
    free(rows);
    if (!c || !nc) {
        free(c);
        return 0;
    }
    qsort(c, nc, sizeof *c, by_key_desc);
    uint8_t **bufs = calloc((size_t)P, sizeof *bufs);
    size_t *lens = calloc((size_t)P, sizeof *lens), *caps = calloc((size_t)P, sizeof *caps);
    uint32_t *nrec = calloc((size_t)P, sizeof *nrec);
    double sent = 0;
    /* In batches of LOOM_PRIORITY_QUEUE rows (one bounded message per home
     * each), best first, while the bucket lasts. */
    for (size_t i = 0; bufs && i < nc && sent < budget;) {
        size_t end = i + (size_t)knob.queue;
        for (; i < nc && i < end && sent < budget; i++) {
            loom_dsm_unit_lock(a, c[i].row);
            if (a->put[c[i].row] & 2)
                sent += (double)take_row(a, c[i].row, bufs, lens, caps, nrec);
            loom_dsm_unit_unlock(a, c[i].row);
            *cursor = (c[i].row + 1) % a->nunits;
        }
        for (int h = 0; h < P; h++)
            if (nrec[h]) {
                loom_dsm_send_diff(h, a, bufs[h], lens[h], nrec[h]);
                bufs[h] = NULL;
                lens[h] = caps[h] = 0;
                nrec[h] = 0;
            }
    }
    atomic_fetch_add(&a->stats.early_bytes, (uint64_t)sent);
    free(bufs);
    free(lens);
    free(caps);
    free(nrec);
    free(c);
    return sent;
}

static void *sender_main(void *arg)
{
    (void)arg;
    double rate = knob.bandwidth_mbit * 1e6 / 8; /* bytes per second */
    double bucket = 0, cap = 0.2 * rate, last = loom_wtime();
    size_t cursor = 0;
    uint64_t rnd = 0x853c49e6748fea9bULL ^ (uint64_t)loom_rt_icv.rank;
    struct timespec ts = {0, (long)(TICK_S * 1e9)};
    while (!sender_stop) {
        nanosleep(&ts, NULL);
        loom_rt_tp_drain(); /* as a home, apply what others sent early */
        double now = loom_wtime();
        bucket += (now - last) * rate;
        if (bucket > cap)
            bucket = cap;
        last = now;
        if (loom_dsm_unacked() >= MAX_UNACKED) /* back off */
            continue;
        /* under sender_lock: loom_free's fini waits for the tick to end */
        pthread_mutex_lock(&sender_lock);
        int n = atomic_load(&loom_dsm_nallocs);
        for (int i = 0; i < n && bucket > 0; i++) {
            loom_dsm_alloc *a = loom_dsm_allocs[i];
            if (a && a->live && a->policy == &loom_dsm_policy_priority && a->kind == LOOM_UNIT_ROW &&
                a->merge == LOOM_MERGE_ADD)
                bucket -= send_some(a, bucket, &cursor, &rnd);
        }
        pthread_mutex_unlock(&sender_lock);
    }
    return NULL;
}

static int init(loom_dsm_alloc *a)
{
    (void)a;
    pthread_mutex_lock(&sender_lock);
    atomic_fetch_add(&nprio, 1);
    if (!sender_running && knob.bandwidth_mbit > 0) {
        sender_stop = 0;
        sender_running = !pthread_create(&sender, NULL, sender_main, NULL);
    }
    pthread_mutex_unlock(&sender_lock);
    return LOOM_OK;
}

static void fini(loom_dsm_alloc *a)
{
    (void)a;
    /* Taking the lock waits for a tick that may be using a; the sender is
     * joined after releasing it (it takes the lock every tick). */
    pthread_mutex_lock(&sender_lock);
    int last = atomic_fetch_sub(&nprio, 1) == 1 && sender_running;
    if (last)
        sender_stop = 1;
    pthread_mutex_unlock(&sender_lock);
    if (last) {
        pthread_join(sender, NULL);
        sender_running = 0;
    }
}

const loom_policy loom_dsm_policy_priority = {
    .name = "priority",
    .uses_staleness = 1,
    .homes_in_place = 1,
    .background = 1,
    .read_miss = loom_dsm_rc_read_miss,
    .first_write = loom_dsm_rc_first_write,
    .row_miss = loom_dsm_rc_row_miss,
    .release = loom_dsm_rc_release,
    .acquire = loom_dsm_rc_acquire,
    .clock = loom_dsm_rc_clock,
    .init = init,
    .fini = fini,
};
