/* report.c — the apps' per-iteration lines, CSV log and progress ticker
 * (report.h). */
#include "report.h"

#include <loom.h>
#include <numa.h>
#include <omp.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAXCOL 16
#define SLOTS 256

double loom_report_every = 5.0;

struct loom_report {
    char app[64];
    char col[MAXCOL][32];
    int ncol;
    FILE *csv;
    pthread_t ticker;
    int ticking;
    pthread_mutex_t mu; /* the fields below, and stdout */
    int stop, running;
    long iter, rows; /* rows: reported by this process (none after a restart with nothing left) */
    int64_t total;
    double t0, shown;
};

/* One cache line per thread, so that ticks never share a line. */
static struct { _Atomic int64_t n; char pad[56]; } slot[SLOTS];
static _Atomic int nslots;
static __thread _Atomic int64_t *mine;

void loom_report_tick(int64_t n)
{
    if (!mine)
        mine = &slot[atomic_fetch_add(&nslots, 1) % SLOTS].n;
    atomic_store_explicit(mine, atomic_load_explicit(mine, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static int64_t ticks(void)
{
    int64_t s = 0;
    for (int i = 0; i < SLOTS; i++)
        s += atomic_load_explicit(&slot[i].n, memory_order_relaxed);
    return s;
}

/* Every quarter second: if an iteration has run `loom_report_every`
 * seconds since its start or the last progress line, print one. */
static void *tick_main(void *arg)
{
    loom_report *r = arg;
    struct timespec q = {0, 250 * 1000 * 1000};
    for (;;) {
        nanosleep(&q, NULL);
        pthread_mutex_lock(&r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            return NULL;
        }
        double now = loom_wtime();
        if (r->running && now - r->shown >= loom_report_every) {
            int64_t done = ticks();
            if (r->total > 0)
                printf("%s: iter %ld  %.0f%% of this rank's %lld samples  %.1f s\n", r->app,
                       r->iter, 100.0 * (double)done / (double)r->total, (long long)r->total,
                       now - r->t0);
            else
                printf("%s: iter %ld  %lld samples  %.1f s\n", r->app, r->iter,
                       (long long)done, now - r->t0);
            fflush(stdout);
            r->shown = now;
        }
        pthread_mutex_unlock(&r->mu);
    }
}

/* Where to go (docs/launcher.md, "Ranks or threads"): ranks sharing one
 * host beyond one per NUMA node each keep a copy of the model where
 * threads would share one (and exchange changes through messages, unless
 * the app runs each rank alone: loom-lasso's small problems), and on one
 * host several apps were measured slower that way (docs/bench-apps.md).
 * Rank 0 says so once, on stderr, naming the run to compare with. */
static void hint(const char *app)
{
    int here = loom_host_size(), nodes = numa_available() < 0 ? 1 : numa_num_configured_nodes();
    if (here <= (nodes > 1 ? nodes : 1))
        return;
    fprintf(stderr, "%s: hint: %d ranks share this host (%d NUMA node%s), each with a copy of "
            "the model; threads share one: compare one rank with OMP_NUM_THREADS=%d "
            "(docs/launcher.md, \"Ranks or threads\")\n",
            app, here, nodes, nodes == 1 ? "" : "s", here * omp_get_max_threads());
}

loom_report *loom_report_open(const char *app, const char *csv, const char *columns,
                              char *err, size_t errlen)
{
    loom_report *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(r->app, sizeof r->app, "%s", app);
    pthread_mutex_init(&r->mu, NULL);
    for (const char *p = columns; *p && r->ncol < MAXCOL; r->ncol++) {
        size_t n = strcspn(p, ",");
        snprintf(r->col[r->ncol], sizeof r->col[0], "%.*s", (int)n, p);
        p += n + (p[n] == ',');
    }
    if (loom_rank() != 0)
        return r;
    hint(app);
    int resumed = loom_restarted(); /* keep the rows of the run before the restart */
    if (csv && !(r->csv = fopen(csv, resumed ? "a" : "w"))) {
        snprintf(err, errlen, "%s: %s", csv, strerror(errno));
        free(r);
        return NULL;
    }
    if (r->csv && !(resumed && !fseek(r->csv, 0, SEEK_END) && ftell(r->csv) > 0)) {
        fprintf(r->csv, "%s\n", columns);
        fflush(r->csv);
    }
    r->ticking = !pthread_create(&r->ticker, NULL, tick_main, r);
    return r;
}

void loom_report_begin(loom_report *r, long iter, int64_t total)
{
    for (int i = 0; i < SLOTS; i++)
        atomic_store_explicit(&slot[i].n, 0, memory_order_relaxed);
    pthread_mutex_lock(&r->mu);
    r->iter = iter;
    r->total = total;
    r->t0 = r->shown = loom_wtime();
    r->running = 1;
    pthread_mutex_unlock(&r->mu);
}

/* Integral columns (iter, samples, counts) print without decimals. */
static void put(FILE *f, double v)
{
    if (v == (double)(int64_t)v && v < 1e15 && v > -1e15)
        fprintf(f, "%lld", (long long)v);
    else
        fprintf(f, "%.9g", v);
}

/* 1 if LOOM_STATS asks for statistics (lib/env.c has checked its value). */
static int stats_on(void)
{
    const char *v = getenv("LOOM_STATS");
    return v && *v && strcmp(v, "0") && strcasecmp(v, "false") && strcasecmp(v, "no") &&
           strcasecmp(v, "off");
}

/* Bytes this rank's messages carried, sent and received, since the last
 * call (the first: since loom_init), into b[0], b[1]: its allocations'
 * traffic and its collectives (loom-lasso has only those).  Several ranks
 * only; 0 otherwise. */
static void net_bytes(uint64_t b[2])
{
    static uint64_t last[2];
    loom_stats s = {0};
    b[0] = b[1] = 0;
    if (loom_size() < 2 || loom_stats_get(NULL, &s))
        return;
    b[0] = s.wire_sent - last[0];
    b[1] = s.wire_received - last[1];
    last[0] = s.wire_sent;
    last[1] = s.wire_received;
}

void loom_report_row(loom_report *r, const double *values)
{
    uint64_t net[2];
    net_bytes(net); /* this iteration's traffic: on the line, and per rank with LOOM_STATS */
    if (loom_size() > 1 && stats_on())
        fprintf(stderr, "%s: rank %d iter %ld: sent %llu B, received %llu B\n", r->app,
                loom_rank(), r->iter, (unsigned long long)net[0], (unsigned long long)net[1]);
    pthread_mutex_lock(&r->mu);
    r->running = 0;
    r->rows++;
    if (loom_rank() == 0) {
        printf("%s:", r->app);
        for (int c = 0; c < r->ncol; c++) {
            printf(" %s ", r->col[c]);
            put(stdout, values[c]);
        }
        if (loom_size() > 1)
            printf("  rank0_sent_MB %.3f rank0_recv_MB %.3f", (double)net[0] / 1e6,
                   (double)net[1] / 1e6);
        printf("\n");
        fflush(stdout);
        for (int c = 0; r->csv && c < r->ncol; c++) {
            put(r->csv, values[c]);
            fputc(c + 1 < r->ncol ? ',' : '\n', r->csv);
        }
        if (r->csv)
            fflush(r->csv);
    }
    pthread_mutex_unlock(&r->mu);
}

void loom_report_final(loom_report *r, const char *name, double value)
{
    if (!isfinite(value) && !r->rows && loom_restarted()) { /* resumed after the last epoch */
        if (loom_rank() == 0)
            printf("%s: the checkpoint holds the last epoch: nothing left to run; its %s is in "
                   "the log of the run that trained it\n", r->app, name);
        return;
    }
    if (loom_rank() == 0 && !isfinite(value))
        loom_abort(1, "%s: the final %s is %g: training diverged or the input is degenerate "
                   "(try a smaller step)", r->app, name, value);
    pthread_mutex_lock(&r->mu);
    if (loom_rank() == 0) {
        printf("final %s=%.6f\n", name, value);
        fflush(stdout);
    }
    pthread_mutex_unlock(&r->mu);
}

void loom_report_close(loom_report *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_mutex_unlock(&r->mu);
    if (r->ticking)
        pthread_join(r->ticker, NULL);
    if (r->csv)
        fclose(r->csv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* Ends the job with `status` and msg, said by rank `who` alone; the other
 * ranks wait in a barrier that its abort ends. */
static void end_from(int who, int status, const char *msg)
{
    if (who == loom_rank())
        loom_abort(status, "%s", msg);
    loom_barrier();
    exit(status);
}

void loom_report_agree(int failed, const char *msg)
{
    int32_t first = failed ? loom_rank() : loom_size();
    loom_allreduce(LOOM_IN_PLACE, &first, 1, LOOM_INT32, LOOM_MIN);
    if (first < loom_size())
        end_from(first, 1, msg);
}

void loom_report_runaway(const char *app, int epoch, double loss, double untrained,
                         const char *advice)
{
    if (isfinite(loss) && loss <= 1.5 * untrained)
        return;
    char msg[512];
    snprintf(msg, sizeof msg, "%s: training diverged in epoch %d: loss %g, where an untrained "
             "model scores %.3f; nothing was saved.  %s (docs/%s.md, \"Runaway training\")",
             app, epoch, loss, untrained, advice, app);
    end_from(0, 3, msg);
}
