/* alloc.c — loom_alloc / loom_free, the release and acquire that
 * loom_dsm_barrier (the public loom_barrier) wraps around the runtime's
 * barrier, and the DSM's part of loom_init and loom_finalize.
 *
 * Both allocation calls are collective and start by agreeing: every rank
 * contributes a hash of what it asked for, and an allreduce of its
 * minimum and maximum tells every rank whether all asked for the same, so
 * that a mismatch is one clear error on every rank, never corruption.  */
#include "dsm.h"

#include <numa.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const struct loom_dsm_ckpt_hooks *loom_dsm_ckpt; /* dsm.h: set by dsm/ckpt/ at loom_init */

/* Whether loom_alloc restores allocations from a checkpoint now. */
static int restoring(void)
{
    return loom_dsm_ckpt && loom_dsm_ckpt->restoring();
}
static uint64_t next_serial = 1; /* creation order of allocations (checkpoints) */
int loom_dsm_check;
int loom_dsm_looping;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* 1 if every rank passed the same v (collective). */
static int agree(uint64_t v)
{
    int64_t lo = (int64_t)v, hi = (int64_t)v;
    loom_allreduce(LOOM_IN_PLACE, &lo, 1, LOOM_INT64, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, &hi, 1, LOOM_INT64, LOOM_MAX);
    return lo == hi;
}

/* The policy for an allocation: its option, else LOOM_COHERENCE_<NAME>,
 * else LOOM_COHERENCE, else bsp; one rank always runs "local". */
static const loom_policy *choose_policy(const char *name, const char *opt)
{
    if (loom_rt_icv.nranks == 1)
        return loom_dsm_policy_find("local");
    const char *want = opt;
    for (int i = 0; !want && i < loom_rt_icv.ncoherence_named; i++)
        if (name && !strcasecmp(loom_rt_icv.coherence_named[i].alloc, name))
            want = loom_rt_icv.coherence_named[i].policy;
    if (!want && loom_rt_icv.coherence[0])
        want = loom_rt_icv.coherence;
    return loom_dsm_policy_find(want ? want : "bsp");
}

/* Bytes of the home store (at least one page, so it can be registered). */
static size_t store_len(const loom_dsm_alloc *a) { return loom_dsm_store_len(a->nhome, a->unit); }

static void destroy(loom_dsm_alloc *a)
{
    if (a->policy_up && a->policy->fini)
        a->policy->fini(a);
    if (a->agent)
        loom_dsm_agent_release();
    size_t plen = (a->mapped + 4095) & ~(size_t)4095;
    loom_dsm_store_free(a);
    if (a->shadow)
        munmap(a->shadow, plen);
    if (a->memfd > 0)
        close(a->memfd);
    if (a->base) {
        if (loom_dsm_arena_contains(a->base))
            loom_dsm_arena_give(a->base, plen);
        else
            munmap(a->base, plen);
    }
    for (size_t u = 0; a->twin && u < a->nunits; u++)
        free(a->twin[u]);
    for (size_t s = 0; a->writer && s < a->nhome; s++)
        free(a->writer[s]);
    free(a->writer);
    free(a->reader);
    free(a->readmark);
    free(a->reads);
    free(a->twin);
    free(a->put);
    free(a->stamp);
    free(atomic_load(&a->dropped));
    free(a->used);
    free(a->cache_res);
    free((void *)a->state);
    free(a->ulock);
    free(a->home);
    free(a->slot);
    free(a->rkeys);
    free(a->store_base);
    free(a->dirty);
    free(a->valid);
    free(a->notice);
    free(a->wrote);
    free(a->avg_base);
    free(a->avg_sum);
    free(a->avg_n);
    free(a->avg_round);
    free(a->avg_move);
    free(a);
}

/* Whether a's home units can live in place (dsm.h): page units, overwrite
 * merge, no check mode, a release-consistency policy, and this rank's home
 * units one contiguous run (then their slots are u - home0, the same
 * numbering as a separate store's).  Sets a->inplace and a->home0. */
static void choose_inplace(loom_dsm_alloc *a)
{
    if (a->kind != LOOM_UNIT_PAGE || a->merge != LOOM_MERGE_OVERWRITE || loom_dsm_check ||
        !a->nhome || !a->policy->homes_in_place)
        return;
    size_t u0 = 0;
    while (a->home[u0] != loom_rt_icv.rank)
        u0++;
    for (size_t k = 0; k < a->nhome; k++)
        if (u0 + k >= a->nunits || a->home[u0 + k] != loom_rt_icv.rank)
            return;
    a->inplace = 1;
    a->home0 = u0;
}

/* Home store, its registration, and every rank's key and address.  In
 * place, the store is the home run of the working copy (made first), and
 * the program may touch it from now on. */
static int make_store(loom_dsm_alloc *a, const loom_alloc_opts *o)
{
    size_t len = store_len(a);
    void *rkey;
    size_t rlen;
    int mapped = 0;
    if (a->inplace) {
        /* Best: the transport allocates the home run at its global address
         * (peers then read it directly); else the memfd's run, registered. */
        char *at = a->base + a->home0 * a->unit;
        mapped = !loom_rt_tp_mem_alloc_at(at, len, &a->memh, &rkey, &rlen);
        a->store = mapped ? at : a->shadow + a->home0 * a->unit;
        if (!mapped)
            loom_dsm_protect(a, a->home0, a->home0 + a->nhome, PROT_READ | PROT_WRITE);
        for (size_t k = 0; k < a->nhome; k++)
            atomic_store(&a->state[a->home0 + k], U_HOME);
    } else
        a->store = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a->store == MAP_FAILED) {
        a->store = NULL;
        return LOOM_ERR_NOMEM;
    }
    if (numa_available() >= 0 && o->numa_node_set) /* else: first touch, local */
        numa_tonode_memory(a->store, len, o->numa_node);
    if (!mapped && loom_rt_tp_mem_map(a->store, len, &a->memh, &rkey, &rlen))
        return LOOM_ERR_NET;
    loom_dsm_share_keys(a->store, rkey, rlen, a->store_base, a->rkeys);
    return LOOM_OK;
}

/* The working copy at a->base (and, for pages, its shadow alias). */
static int make_working_copy(loom_dsm_alloc *a)
{
    size_t plen = (a->mapped + 4095) & ~(size_t)4095;
    if (a->kind == LOOM_UNIT_ROW) {
        void *p = mmap(a->base, plen, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        return p == a->base ? LOOM_OK : LOOM_ERR_NOMEM;
    }
    a->memfd = memfd_create(a->name[0] ? a->name : "loom", MFD_CLOEXEC);
    if (a->memfd < 0 || ftruncate(a->memfd, (off_t)plen))
        return LOOM_ERR_NOMEM;
    void *p = mmap(a->base, plen, PROT_NONE, MAP_SHARED | MAP_FIXED, a->memfd, 0);
    a->shadow = mmap(NULL, plen, PROT_READ | PROT_WRITE, MAP_SHARED, a->memfd, 0);
    if (p != a->base || a->shadow == MAP_FAILED) {
        a->shadow = NULL;
        return LOOM_ERR_NOMEM;
    }
    return LOOM_OK;
}

static int validate(size_t bytes, const loom_alloc_opts *o, char *why, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (!bytes)
        snprintf(why, n, "size 0");
    else if (o->unit != LOOM_UNIT_PAGE && o->unit != LOOM_UNIT_ROW)
        snprintf(why, n, "unknown unit kind %d", (int)o->unit);
    else if (o->unit == LOOM_UNIT_ROW && !o->row_size)
        snprintf(why, n, "row units need row_size > 0");
    else if (o->unit == LOOM_UNIT_PAGE && o->page_unit % (size_t)pg)
        snprintf(why, n, "page_unit %zu is not a multiple of the page size %ld", o->page_unit, pg);
    else if ((unsigned)o->dist > LOOM_DIST_EXPLICIT)
        snprintf(why, n, "unknown distribution %d", (int)o->dist);
    else if (o->dist == LOOM_DIST_EXPLICIT && !o->home_of)
        snprintf(why, n, "LOOM_DIST_EXPLICIT needs a home_of function");
    else if (o->staleness_set && o->staleness < 0)
        snprintf(why, n, "staleness %d < 0", o->staleness);
    else if ((unsigned)o->merge > LOOM_MERGE_ADD || (unsigned)o->type > LOOM_DOUBLE)
        snprintf(why, n, "unknown merge mode or element type");
    else if (o->average < 0)
        snprintf(why, n, ".average %d < 0", o->average);
    else if (o->average && !loom_rt_icv.merge_avg &&
             (o->unit != LOOM_UNIT_ROW || o->merge != LOOM_MERGE_ADD ||
              (o->type != LOOM_FLOAT && o->type != LOOM_DOUBLE)))
        snprintf(why, n, ".average needs row units, LOOM_MERGE_ADD and a float or double type");
    else if (o->momentum && o->average < 1)
        snprintf(why, n, ".momentum needs .average >= 1 (got %d)", o->average);
    else if (o->merge == LOOM_MERGE_ADD &&
             (o->unit == LOOM_UNIT_ROW ? o->row_size : o->page_unit ? o->page_unit : 65536) %
                 loom_rt_type_size(o->type))
        snprintf(why, n, "the unit size is not a multiple of the element size");
    else
        return 0;
    return -1;
}

/* How a (laid out, policy chosen) averages (its k, 0: it sums):
 * LOOM_MERGE_AVG (true: the option's k, or 1), else the option, and only
 * add-merge float rows with write notices (the home's mean needs every
 * writer to have started the round from the same rows).  k >= the ranks:
 * no row can have more than k writers, so the merge is the sum, and it
 * runs as one (a dense allocation then merges by allreduce, dense.c). */
static int averages(const loom_dsm_alloc *a, const loom_alloc_opts *o)
{
    int can = a->sparse && a->kind == LOOM_UNIT_ROW && a->merge == LOOM_MERGE_ADD &&
              (a->type == LOOM_FLOAT || a->type == LOOM_DOUBLE);
    if (!can || loom_rt_icv.merge_avg == 1) /* LOOM_MERGE_AVG=false: sum */
        return 0;
    int k = loom_rt_icv.merge_avg == 2 && o->average <= 0 ? 1 : o->average;
    return k >= loom_rt_icv.nranks ? 0 : k;
}

/* The home's averaging state, per home slot (diff.c), averaging by k,
 * with block momentum when asked. */
static int make_average(loom_dsm_alloc *a, int k, int momentum)
{
    size_t n = a->nhome ? a->nhome : 1;
    a->average = k;
    a->avg_base = malloc(n * a->unit);
    a->avg_sum = malloc(n * a->unit);
    a->avg_n = calloc(n, sizeof *a->avg_n);
    a->avg_round = calloc(n, sizeof *a->avg_round);
    a->avg_move = momentum ? calloc(n, a->unit) : NULL;
    return !a->avg_base || !a->avg_sum || !a->avg_n || !a->avg_round || (momentum && !a->avg_move);
}

/* Run the policy's init (once, before a is published); say why it failed. */
static int start_policy(loom_dsm_alloc *a)
{
    int rc = a->policy->init ? a->policy->init(a) : LOOM_OK;
    if (rc)
        loom_rt_log("loom_alloc('%s'): the %s policy could not start: %s", a->name,
                 a->policy->name, loom_strerror(rc));
    a->policy_up = !rc;
    return rc;
}

/* Make a visible to the handlers and the fault path. */
static void publish(loom_dsm_alloc *a, int n)
{
    a->live = 1;
    loom_dsm_allocs[a->id] = a;
    if (a->id == n)
        atomic_store(&loom_dsm_nallocs, n + 1);
}

void *loom_alloc(size_t bytes, const loom_alloc_opts *opts)
{
    static const loom_alloc_opts none;
    const loom_alloc_opts *o = opts ? opts : &none;
    char why[400];
    const char *name = o->name ? o->name : "";
    if (loom_rt_state != 1) {
        loom_rt_log("loom_alloc('%s') called before loom_init", name);
        return NULL;
    }
    int bad = validate(bytes, o, why, sizeof why);
    const loom_policy *pol = bad ? NULL : choose_policy(o->name, o->coherence);
    if (!bad && !pol) {
        char names[256];
        loom_dsm_policy_names(names, sizeof names);
        snprintf(why, sizeof why, "unknown coherence policy '%s' (available: %s)", o->coherence,
                 names);
        bad = 1;
    }
    /* Agree on everything that shapes the allocation. */
    uint64_t h = fnv(0xcbf29ce484222325ULL, &bytes, sizeof bytes);
    size_t shape[10] = {(size_t)o->unit, o->row_size, o->page_unit, (size_t)o->dist,
                        (size_t)o->merge, (size_t)o->type, (size_t)o->staleness_set,
                        (size_t)o->staleness, (size_t)o->average, (size_t)!!o->momentum};
    h = fnv(h, shape, sizeof shape);
    h = fnv(h, pol ? pol->name : "?", pol ? strlen(pol->name) : 1);
    int64_t sizes[2] = {(int64_t)bytes, -(int64_t)bytes};
    int32_t anybad = bad;
    if (loom_rt_icv.nranks > 1) {
        loom_allreduce(LOOM_IN_PLACE, &anybad, 1, LOOM_INT32, LOOM_MAX);
        loom_allreduce(LOOM_IN_PLACE, sizes, 2, LOOM_INT64, LOOM_MAX);
        if (!anybad && !agree(h)) {
            if (sizes[0] != -sizes[1])
                snprintf(why, sizeof why, "ranks asked for different sizes (%lld to %lld bytes)",
                         (long long)-sizes[1], (long long)sizes[0]);
            else
                snprintf(why, sizeof why, "ranks passed different options");
            bad = anybad = 1;
        }
    }
    if (anybad) {
        if (bad)
            loom_rt_log("loom_alloc('%s', %zu bytes): %s", name, bytes, why);
        return NULL;
    }
    int n = atomic_load(&loom_dsm_nallocs), id = 0;
    while (id < n && loom_dsm_allocs[id])
        id++;
    if (id == LOOM_MAX_ALLOCS) {
        loom_rt_log("loom_alloc('%s'): more than %d live allocations", name, LOOM_MAX_ALLOCS);
        return NULL;
    }
    loom_dsm_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->id = id;
    a->serial = next_serial;
    snprintf(a->name, sizeof a->name, "%s", name[0] ? name : "(unnamed)");
    a->bytes = bytes;
    a->kind = o->unit;
    a->unit = o->unit == LOOM_UNIT_ROW ? o->row_size : o->page_unit ? o->page_unit : 65536;
    a->nunits = (bytes + a->unit - 1) / a->unit;
    a->mapped = a->nunits * a->unit;
    a->merge = o->merge;
    a->type = o->type;
    a->esize = loom_rt_type_size(o->type);
    a->replicas = a->kind == LOOM_UNIT_ROW && a->merge == LOOM_MERGE_ADD &&
                          (a->type == LOOM_FLOAT || a->type == LOOM_DOUBLE) &&
                          loom_rt_icv.merge_avg != 1 && (o->average > 0 || loom_rt_icv.merge_avg == 2)
                      ? (o->average > 0 ? o->average : 1)
                      : 0;
    a->policy = pol;
    a->memfd = -1;
    int rc = LOOM_OK;
    size_t plen = (a->mapped + 4095) & ~(size_t)4095;
    if (pol->plain) { /* plain memory */
        if (restoring())
            loom_dsm_ckpt->check(a); /* collective */
        a->base = mmap(NULL, plen, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a->base == MAP_FAILED) {
            a->base = NULL;
            rc = LOOM_ERR_NOMEM;
        } else if (numa_available() >= 0 && o->numa_node_set)
            numa_tonode_memory(a->base, plen, o->numa_node);
        if (!rc && a->kind == LOOM_UNIT_ROW && !(a->ulock = calloc(a->nunits, sizeof *a->ulock)))
            rc = LOOM_ERR_NOMEM; /* rows stay thread-safe */
        if (!rc && restoring())
            loom_dsm_ckpt->fill(a);
    } else {
        rc = loom_dsm_arena_init();
        if (!rc && !(a->base = loom_dsm_arena_take(plen)))
            rc = LOOM_ERR_NOMEM;
        a->home = calloc(a->nunits, sizeof *a->home);
        a->slot = calloc(a->nunits, sizeof *a->slot);
        a->rkeys = calloc((size_t)loom_rt_icv.nranks, sizeof *a->rkeys);
        a->store_base = calloc((size_t)loom_rt_icv.nranks, sizeof *a->store_base);
        a->state = calloc(a->nunits, sizeof *a->state); /* every copy invalid: */
        atomic_store(&a->dropped_gen, 1);                  /* none fresh yet */
        a->ulock = calloc(a->nunits, sizeof *a->ulock);
        a->twin = calloc(a->nunits, sizeof *a->twin);
        a->put = a->kind == LOOM_UNIT_ROW ? calloc(a->nunits, 1) : NULL;
        a->stamp = calloc(a->nunits, sizeof *a->stamp);
        if (loom_dsm_cache_wanted(pol) && loom_dsm_cache_init(a))
            rc = LOOM_ERR_NOMEM;
        a->sparse = loom_dsm_notice_wanted(a, pol);
        a->staleness = !pol->uses_staleness ? 0
                       : o->staleness_set ? o->staleness : loom_rt_icv.staleness;
        if (!rc && (!a->home || !a->slot || !a->rkeys || !a->store_base || !a->state ||
                    !a->ulock || !a->twin || !a->stamp || (a->kind == LOOM_UNIT_ROW && !a->put)))
            rc = LOOM_ERR_NOMEM;
        if (!rc && a->kind == LOOM_UNIT_PAGE)
            rc = loom_dsm_fault_server_start();
        if (!rc)
            rc = loom_dsm_dist_place(a, o->dist, o->home_of, o->home_arg);
        if (!rc && loom_dsm_check)
            a->writer = calloc(a->nhome ? a->nhome : 1, sizeof *a->writer);
        if (!rc && loom_dsm_check && a->kind == LOOM_UNIT_ROW &&
            (!(a->reader = calloc(a->nhome ? a->nhome : 1, sizeof *a->reader)) ||
             !(a->readmark = calloc(a->nunits, 1))))
            rc = LOOM_ERR_NOMEM;
        int k = rc ? 0 : averages(a, o);
        if (k && make_average(a, k, o->momentum))
            rc = LOOM_ERR_NOMEM;
        /* every rank must get this far before keys are exchanged */
        int32_t st = rc;
        loom_allreduce(LOOM_IN_PLACE, &st, 1, LOOM_INT32, LOOM_MAX);
        if (!st && restoring())
            loom_dsm_ckpt->check(a); /* collective: every rank got this far */
        if (!st) { /* the working copy first: an in-place store lives in it */
            st = rc = make_working_copy(a);
            loom_allreduce(LOOM_IN_PLACE, &st, 1, LOOM_INT32, LOOM_MAX);
        }
        if (!st) {
            choose_inplace(a);
            st = rc = make_store(a, o);
        }
        /* Start the policy and register before the last agreement: once
         * any rank is past it, it may send diffs or ring hand-offs here,
         * and they must find the allocation ready. */
        if (!rc)
            rc = start_policy(a);
        if (!rc && restoring()) /* before anyone can fetch from the store */
            loom_dsm_ckpt->fill(a);
        if (!rc)
            publish(a, n);
        st = rc;
        loom_allreduce(LOOM_IN_PLACE, &st, 1, LOOM_INT32, LOOM_MAX);
        if (st && !rc)
            rc = (int)st;
    }
    if (rc) {
        loom_rt_log("loom_alloc('%s', %zu bytes): %s", a->name, bytes, loom_strerror(rc));
        if (a->live) {
            a->live = 0;
            loom_dsm_allocs[id] = NULL;
        }
        destroy(a);
        return NULL;
    }
    if (pol->plain && (rc = start_policy(a))) {
        destroy(a);
        return NULL;
    }
    publish(a, n);
    next_serial++;
    if (!pol->plain) { /* homes must answer while computing */
        loom_dsm_agent_hold();
        a->agent = 1;
    }
    return a->base;
}

static void print_stats(const loom_dsm_alloc *a);

static void (*on_free)(const loom_dsm_alloc *a);

void loom_dsm_on_free(void (*fn)(const loom_dsm_alloc *a))
{
    on_free = fn;
}

/* LOOM_STATS=1 prints the allocation's statistics as it is freed. */
int loom_free(void *p)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    loom_dsm_alloc *a = loom_dsm_lookup_base(p);
    int64_t id = a ? a->id : -1;
    if (loom_rt_icv.nranks > 1 && !agree((uint64_t)id)) {
        loom_rt_log("loom_free(%p): ranks are freeing different allocations", p);
        return LOOM_ERR_ARG;
    }
    if (!a) {
        loom_rt_log("loom_free(%p): not an address loom_alloc returned", p);
        return LOOM_ERR_ARG;
    }
    if (loom_rt_icv.nranks > 1)
        loom_rt_coll_barrier(); /* nobody reads our store any more */
    if (loom_rt_icv.stats)
        print_stats(a);
    if (on_free)
        on_free(a);
    a->live = 0;
    loom_dsm_allocs[a->id] = NULL;
    destroy(a);
    return LOOM_OK;
}

int loom_release(void)
{
    static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if (loom_rt_icv.nranks == 1)
        return LOOM_OK;
    pthread_mutex_lock(&one_at_a_time);
    loom_dsm_flush_begin();
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++)
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live) {
            if (loom_dsm_allocs[i]->nreads)
                loom_dsm_send_reads(loom_dsm_allocs[i]);
            loom_dsm_allocs[i]->policy->release(loom_dsm_allocs[i]);
        }
    loom_dsm_flush_end();
    pthread_mutex_unlock(&one_at_a_time);
    return LOOM_OK;
}

int loom_acquire(void)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++)
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live)
            loom_dsm_allocs[i]->policy->acquire(loom_dsm_allocs[i]);
    return LOOM_OK;
}

/* A barrier ended an epoch: check mode forgets the epoch's writers. */
static void epoch_end(void)
{
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++)
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live)
            loom_dsm_new_epoch(loom_dsm_allocs[i]);
}

int loom_dsm_barrier(void)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if (loom_rt_icv.nranks == 1)
        return LOOM_OK;
    loom_release();
    loom_dsm_notice_barrier_send();
    loom_rt_coll_barrier();
    loom_dsm_notice_barrier_wait();
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++) { /* acquire: all of it, or what notices say changed */
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (a && a->live)
            loom_dsm_cache_trim(a); /* first: what it drops is not refreshed */
        if (a && a->live && a->sparse)
            loom_dsm_notice_apply(a, loom_dsm_clock_global());
        else if (a && a->live)
            a->policy->acquire(a);
    }
    epoch_end();
    return LOOM_OK;
}

int loom_dsm_init(void)
{
    if (loom_rt_icv.nranks > 1) {
        loom_dsm_check = loom_rt_icv.check_dsm;
        loom_dsm_wire_init();
        loom_dsm_lock_init();
        loom_dsm_clock_init();
        loom_dsm_allreduce_ssp_init();
        loom_dsm_policy_setup_all();
        /* the collectives copy Loom memory aside (lib/coll.c) */
        loom_rt_coll_set_bounce(loom_dsm_arena_contains);
        int rc = loom_dsm_fault_init();
        if (rc)
            return rc;
    }
    return LOOM_OK;
}

void loom_dsm_quiesce(void)
{
    loom_dsm_allreduce_ssp_quiesce();
}

static void print_all_stats(void);

/* At finalize, after the last barrier: free what the program left
 * allocated, so no registration outlives the transport. */
void loom_dsm_fini(void)
{
    loom_dsm_allreduce_ssp_fini();
    if (loom_rt_icv.stats)
        print_all_stats();
    loom_dsm_agent_fini();
    loom_dsm_fault_fini();
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++) {
        loom_dsm_alloc *a = loom_dsm_allocs[i];
        if (a) {
            a->live = 0;
            loom_dsm_allocs[i] = NULL;
            destroy(a);
        }
    }
}

static void add_stats(const loom_dsm_alloc *a, loom_stats *o)
{
    o->bytes_sent += atomic_load(&a->stats.bytes_sent);
    o->bytes_received += atomic_load(&a->stats.bytes_recv);
    o->hits += atomic_load(&a->stats.hits);
    o->misses += atomic_load(&a->stats.misses);
    o->blocked_reads += atomic_load(&a->stats.blocked);
    o->blocked_seconds += (double)atomic_load(&a->stats.blocked_ns) * 1e-9;
    o->forwarded += atomic_load(&a->stats.forwarded);
    o->early_bytes += atomic_load(&a->stats.early_bytes);
    o->prefetched += atomic_load(&a->stats.prefetched);
    o->evicted += atomic_load(&a->stats.evicted);
    o->cached_bytes += atomic_load(&a->stats.cached);
    o->rehomed += atomic_load(&a->stats.rehomed);
    o->dense_merges += atomic_load(&a->stats.dense_merges);
    o->staged_whole += atomic_load(&a->stats.staged_whole);
    o->raw_handoffs += atomic_load(&a->stats.raw_handoffs);
    for (int i = 0; i < 8; i++)
        o->age[i] += atomic_load(&a->stats.age[i]);
}

int loom_stats_get(void *array, loom_stats *out)
{
    if (!out)
        return LOOM_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (array) {
        loom_dsm_alloc *a = loom_dsm_lookup_base(array);
        if (!a)
            return LOOM_ERR_ARG;
        add_stats(a, out);
        return LOOM_OK;
    }
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++)
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live)
            add_stats(loom_dsm_allocs[i], out);
    loom_rt_tp_bytes(&out->wire_sent, &out->wire_received);
    return LOOM_OK;
}

/* LOOM_STATS=1: one allocation's line, on this rank. */
static void print_stats(const loom_dsm_alloc *a)
{
    loom_stats s = {0};
    add_stats(a, &s);
    char cache[256] = "";
    if (a->used)
        snprintf(cache, sizeof cache, ", evicted %llu, cached %llu B",
                 (unsigned long long)s.evicted, (unsigned long long)s.cached_bytes);
    if (s.rehomed)
        snprintf(cache + strlen(cache), sizeof cache - strlen(cache), ", rehomed %llu",
                 (unsigned long long)s.rehomed);
    if (s.staged_whole)
        snprintf(cache + strlen(cache), sizeof cache - strlen(cache),
                 ", staged whole %llu, dense merges %llu", (unsigned long long)s.staged_whole,
                 (unsigned long long)s.dense_merges);
    if (s.raw_handoffs)
        snprintf(cache + strlen(cache), sizeof cache - strlen(cache), ", raw hand-offs %llu",
                 (unsigned long long)s.raw_handoffs);
    char merge[48] = "";
    const char *mom = a->avg_move ? ", block momentum" : "";
    if (a->average == 1)
        snprintf(merge, sizeof merge, ", averaged%s", mom);
    else if (a->average)
        snprintf(merge, sizeof merge, ", capped at %d ranks%s", a->average, mom);
    loom_rt_log("stats '%s' (%s%s): sent %llu B, received %llu B, hits %llu, misses %llu "
             "(prefetched %llu), "
             "blocked %llu (%.3f s), age 0..7+ [%llu %llu %llu %llu %llu %llu %llu %llu], "
             "forwarded %llu, sent early %llu B, refreshed %llu%s", a->name, a->policy->name, merge,
             (unsigned long long)s.bytes_sent, (unsigned long long)s.bytes_received,
             (unsigned long long)s.hits, (unsigned long long)s.misses,
             (unsigned long long)s.prefetched, (unsigned long long)s.blocked_reads,
             s.blocked_seconds,
             (unsigned long long)s.age[0], (unsigned long long)s.age[1],
             (unsigned long long)s.age[2], (unsigned long long)s.age[3],
             (unsigned long long)s.age[4], (unsigned long long)s.age[5],
             (unsigned long long)s.age[6], (unsigned long long)s.age[7],
             (unsigned long long)s.forwarded, (unsigned long long)s.early_bytes,
             (unsigned long long)atomic_load(&a->stats.refreshed), cache);
}

void loom_dsm_fini_records(void)
{
    loom_dsm_lock_fini();
}

/* LOOM_STATS=1 at finalize: the allocations still live (loom_free printed
 * the others). */
static void print_all_stats(void)
{
    int n = atomic_load(&loom_dsm_nallocs);
    for (int i = 0; i < n; i++)
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live)
            print_stats(loom_dsm_allocs[i]);
}
