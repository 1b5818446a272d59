/* restart.c — resuming a job from its newest checkpoint (LOOM_RESTART,
 * loomrun --restart; docs/checkpoint.md).
 *
 * In loom_init every rank reads DIR/LATEST, the ranks agree on one
 * checkpoint (the oldest any of them names: a crash between two hosts'
 * commits leaves the previous one on both), open their own rank file,
 * check it (magic, version, number of ranks, checksums) and take the clock
 * from it.  Then, until the program's first loom_clock or loom_checkpoint,
 * loom_alloc fills each allocation whose creation order matches one the
 * checkpoint holds: a mismatch of name, size or options stops the job.
 *
 * Every refusal is agreed on: the lowest rank that finds a problem stops
 * the job with its message, so the user reads one line. */
#include "checkpoint.h"
#include "dsm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    int on;                     /* this run resumed from a checkpoint */
    int open;                   /* loom_alloc still restores */
    int fd;                     /* this rank's file */
    char cdir[1100], path[1300];
    struct loom_ckpt_head head;
    struct loom_ckpt_rec *rec;
    uint8_t *claimed;
} S = {.fd = -1};

int loom_restarted(void) { return S.on; }
int loom_restart_open(void) { return S.open; }

/* Collective: if any rank is bad, the lowest bad rank ends the job with
 * its message and the others wait to be stopped. */
static void agree(int bad, const char *why)
{
    int32_t first = bad ? loom_icv.rank : loom_icv.nranks;
    loom_allreduce(LOOM_IN_PLACE, &first, 1, LOOM_INT32, LOOM_MIN);
    if (first == loom_icv.nranks)
        return;
    if (first == loom_icv.rank)
        loom_abort(1, "%s", why);
    loom_coll_barrier(); /* ended by that rank's abort */
    _exit(1);
}

static int read_at(int fd, void *p, size_t n, uint64_t off)
{
    char *c = p;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* Open and check this rank's file of checkpoint seq; 0, or -1 with why. */
static int open_rank_file(uint64_t seq, char *why, size_t wn)
{
    struct loom_ckpt_head *h = &S.head;
    snprintf(S.cdir, sizeof S.cdir, "%s/ckpt-%06llu", loom_icv.checkpoint_dir,
             (unsigned long long)seq);
    snprintf(S.path, sizeof S.path, "%s/rank-%d.ckpt", S.cdir, loom_icv.rank);
    if ((S.fd = open(S.path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(why, wn, "restart: %s: %s%s", S.path, strerror(errno),
                 errno == ENOENT ? " (does this job have more ranks than the checkpoint's?)" : "");
        return -1;
    }
    if (read_at(S.fd, h, sizeof *h, 0) || memcmp(h->magic, LOOM_CKPT_MAGIC, 8) ||
        h->version != LOOM_CKPT_VERSION) {
        snprintf(why, wn, "restart: %s is not a checkpoint file of this Loom version", S.path);
        return -1;
    }
    if (h->headsum != loom_ckpt_sum(h, offsetof(struct loom_ckpt_head, headsum), 0) ||
        h->seq != seq || h->rank != (uint32_t)loom_icv.rank || h->nallocs > LOOM_MAX_ALLOCS) {
        snprintf(why, wn, "restart: %s is damaged (its header does not check out)", S.path);
        return -1;
    }
    if (h->nranks != (uint32_t)loom_icv.nranks) {
        snprintf(why, wn, "restart: checkpoint %s was written by %u rank%s, but this job has "
                 "%d: restart it with -n %u", S.cdir, h->nranks, h->nranks == 1 ? "" : "s",
                 loom_icv.nranks, h->nranks);
        return -1;
    }
    S.rec = calloc((size_t)h->nallocs + 1, sizeof *S.rec);
    S.claimed = calloc((size_t)h->nallocs + 1, 1);
    if (!S.rec || !S.claimed) {
        snprintf(why, wn, "restart: out of memory");
        return -1;
    }
    size_t tab = (size_t)h->nallocs * sizeof *S.rec;
    if (read_at(S.fd, S.rec, tab, sizeof *h) || loom_ckpt_sum(S.rec, tab, 0) != h->tabsum) {
        snprintf(why, wn, "restart: %s is damaged (its table of allocations does not check out)",
                 S.path);
        return -1;
    }
    return 0;
}

void loom_restart_init(void)
{
    if (loom_icv.restart == LOOM_RESTART_NO)
        return;
    const char *dir = loom_icv.checkpoint_dir;
    uint64_t seq = 0;
    int r = loom_ckpt_read_latest(dir, &seq);
    int64_t lo = r ? r : (int64_t)seq, hi = lo; /* -1 none, -2 malformed */
    loom_allreduce(LOOM_IN_PLACE, &lo, 1, LOOM_INT64, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, &hi, 1, LOOM_INT64, LOOM_MAX);
    char why[1600] = "";
    int bad = 0;
    if (hi == -1 && loom_icv.restart == LOOM_RESTART_AUTO) {
        if (loom_icv.rank == 0)
            loom_log("restart: no checkpoint in %s yet; starting from the beginning", dir);
        return;
    }
    if (hi == -1)
        bad = loom_icv.rank == 0, snprintf(why, sizeof why, "restart: no checkpoint to resume "
                                           "from: %s/LATEST does not exist", dir);
    else if (r == -2)
        bad = 1, snprintf(why, sizeof why, "restart: %s/LATEST does not name a checkpoint "
                          "(expected one line 'ckpt-NNNNNN')", dir);
    else if (r == -1)
        bad = 1, snprintf(why, sizeof why, "restart: %s/LATEST is missing here, but other ranks "
                          "resume checkpoint %lld: every host needs the same directory (or a "
                          "copy of it)", dir, (long long)hi);
    agree(bad, why);
    bad = open_rank_file((uint64_t)lo, why, sizeof why) != 0;
    agree(bad, why);
    loom_clock_restore(S.head.clock, S.head.calls);
    loom_ckpt_last_seq = (uint64_t)lo;
    S.on = S.open = 1;
    if (loom_icv.rank == 0)
        loom_log("restart: resuming from %s (loom_clock %llu, %u allocation%s)", S.cdir,
                 (unsigned long long)S.head.calls, S.head.nallocs,
                 S.head.nallocs == 1 ? "" : "s");
}

static struct loom_ckpt_rec *find(const loom_dsm_alloc *a, size_t *idx)
{
    for (size_t i = 0; S.open && i < S.head.nallocs; i++)
        if (S.rec[i].serial == a->serial) {
            *idx = i;
            return &S.rec[i];
        }
    return NULL;
}

/* "'H' (1682 rows of 80 B, 134560 bytes, ring)" */
static void shape(char *b, size_t n, const char *name, uint64_t bytes, uint32_t kind,
                  uint64_t nunits, uint64_t unit, const char *policy)
{
    snprintf(b, n, "'%s' (%llu %s of %llu B, %llu bytes, %s)", name, (unsigned long long)nunits,
             kind == LOOM_UNIT_ROW ? "rows" : "page units", (unsigned long long)unit,
             (unsigned long long)bytes, policy);
}

void loom_restart_check(loom_dsm_alloc *a)
{
    size_t i;
    const struct loom_ckpt_rec *c = find(a, &i);
    if (!c)
        return; /* every rank: same table, same serial */
    char mine[300], theirs[300], why[2000];
    const char *diff = NULL;
    if (strcmp(c->name, a->name) || c->bytes != a->bytes || c->kind != (uint32_t)a->kind ||
        c->unit != a->unit || c->nunits != a->nunits || strcmp(c->policy, a->policy->name))
        diff = "";
    else if (c->merge != (uint32_t)a->merge || c->type != (uint32_t)a->type)
        diff = " (its merge mode or element type differs)";
    else if (c->nhome != a->nhome || c->homehash != loom_ckpt_home_hash(a))
        diff = " (its units have other homes: another distribution)";
    if (diff) {
        shape(mine, sizeof mine, a->name, a->bytes, (uint32_t)a->kind, a->nunits, a->unit,
              a->policy->name);
        shape(theirs, sizeof theirs, c->name, c->bytes, c->kind, c->nunits, c->unit, c->policy);
        snprintf(why, sizeof why, "restart: allocation #%llu of this run is %s, but in checkpoint "
                 "%s it is %s%s: restart the same program with the same input and options",
                 (unsigned long long)a->serial, mine, S.cdir, theirs, diff);
    }
    agree(diff != NULL, why);
}

void loom_restart_fill(loom_dsm_alloc *a)
{
    size_t i;
    const struct loom_ckpt_rec *c = find(a, &i);
    if (!c)
        return;
    size_t P = (size_t)loom_icv.nranks;
    uint64_t off = c->off, len = c->len, sum = 0x636b7074;
    char *dst;
    if (c->what == CK_RING && a->policy == &loom_policy_ring) {
        uint64_t *lo = calloc(P + 1, sizeof *lo);
        if (!lo || len < (P + 1) * 8 || read_at(S.fd, lo, (P + 1) * 8, off) ||
            loom_ring_restore(a, c->ring_t, lo))
            loom_abort(1, "restart: %s: the ring state of '%s' is damaged", S.path, a->name);
        sum = loom_ckpt_sum(lo, (P + 1) * 8, sum);
        off += (P + 1) * 8;
        len -= (P + 1) * 8;
        int j;
        const size_t *b = loom_ring_bounds(a, &j);
        dst = (a->kind == LOOM_UNIT_PAGE ? a->shadow : a->base) + b[j] * a->unit;
        if (len != (b[j + 1] - b[j]) * a->unit)
            loom_abort(1, "restart: %s: the partition of '%s' has the wrong size", S.path,
                       a->name);
        free(lo);
    } else if (c->what == CK_LOCAL && a->policy == &loom_policy_local && len == a->bytes) {
        dst = a->base;
    } else if (c->what == CK_HOME && a->store && len == a->nhome * a->unit) {
        dst = a->store;
    } else {
        loom_abort(1, "restart: %s: '%s' was saved in another form (internal error)", S.path,
                   a->name);
    }
    errno = 0;
    if (read_at(S.fd, dst, len, off))
        loom_abort(1, "restart: %s: cannot read '%s': %s", S.path, a->name,
                   errno ? strerror(errno) : "the file is too short");
    if (loom_ckpt_sum(dst, len, sum) != c->sum)
        loom_abort(1, "restart: %s: the data of '%s' is damaged (checksum mismatch)", S.path,
                   a->name);
    S.claimed[i] = 1;
}

void loom_restart_close(void)
{
    if (!S.open)
        return;
    S.open = 0;
    for (size_t i = 0; loom_icv.rank == 0 && i < S.head.nallocs; i++)
        if (!S.claimed[i])
            loom_log("restart: warning: allocation #%llu '%s' of %s was not allocated again "
                     "before the first loom_clock; its contents are dropped",
                     (unsigned long long)S.rec[i].serial, S.rec[i].name, S.cdir);
    close(S.fd);
    S.fd = -1;
    free(S.rec);
    free(S.claimed);
    S.rec = NULL;
    S.claimed = NULL;
}
