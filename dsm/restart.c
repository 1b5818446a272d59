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

/* One rank file of a checkpoint: its header and table, checked. */
struct file {
    uint64_t seq;
    int fd;
    char path[1300];
    struct loom_ckpt_head head;
    struct loom_ckpt_rec *rec;
};

static struct {
    int on;                     /* this run resumed from a checkpoint */
    int open;                   /* loom_alloc still restores */
    char cdir[1100];
    struct file f;              /* this rank's file of the checkpoint resumed */
    struct file *older;         /* files of older checkpoints its chunks lie in */
    int nolder;
    uint8_t *claimed;
} S = {.f.fd = -1};

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

/* Open and check this rank's file of checkpoint seq into *f; 0, or -1
 * with why. */
static int open_rank_file(uint64_t seq, struct file *f, char *why, size_t wn)
{
    struct loom_ckpt_head *h = &f->head;
    char cdir[1100];
    snprintf(cdir, sizeof cdir, "%s/ckpt-%06llu", loom_icv.checkpoint_dir,
             (unsigned long long)seq);
    snprintf(f->path, sizeof f->path, "%s/rank-%d.ckpt", cdir, loom_icv.rank);
    f->seq = seq;
    if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(why, wn, "restart: %s: %s%s", f->path, strerror(errno),
                 errno == ENOENT && f == &S.f ? " (does this job have more ranks than the "
                                                "checkpoint's?)" : "");
        return -1;
    }
    if (read_at(f->fd, h, sizeof *h, 0) || memcmp(h->magic, LOOM_CKPT_MAGIC, 8) ||
        h->version != LOOM_CKPT_VERSION) {
        snprintf(why, wn, "restart: %s is not a checkpoint file of this Loom version", f->path);
        return -1;
    }
    if (h->headsum != loom_ckpt_sum(h, offsetof(struct loom_ckpt_head, headsum), 0) ||
        h->seq != seq || h->rank != (uint32_t)loom_icv.rank || h->nallocs > 1u << 20) {
        snprintf(why, wn, "restart: %s is damaged (its header does not check out)", f->path);
        return -1;
    }
    if (h->nranks != (uint32_t)loom_icv.nranks) {
        snprintf(why, wn, "restart: checkpoint %s was written by %u rank%s, but this job has "
                 "%d: restart it with -n %u", cdir, h->nranks, h->nranks == 1 ? "" : "s",
                 loom_icv.nranks, h->nranks);
        return -1;
    }
    if (!(f->rec = calloc((size_t)h->nallocs + 1, sizeof *f->rec))) {
        snprintf(why, wn, "restart: out of memory");
        return -1;
    }
    size_t tab = (size_t)h->nallocs * sizeof *f->rec;
    if (read_at(f->fd, f->rec, tab, sizeof *h) || loom_ckpt_sum(f->rec, tab, 0) != h->tabsum) {
        snprintf(why, wn, "restart: %s is damaged (its table of allocations does not check out)",
                 f->path);
        return -1;
    }
    return 0;
}

static void close_file(struct file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    free(f->rec);
    f->rec = NULL;
}

/* Reads record c's meta (of c->meta_len bytes, malloc'd) from f and checks
 * it; aborts the job on a damaged file. */
static uint64_t *read_meta(const struct file *f, const struct loom_ckpt_rec *c)
{
    uint64_t *m = malloc(c->meta_len + 8);
    if (!m)
        loom_abort(1, "restart: out of memory");
    if (read_at(f->fd, m, c->meta_len, c->meta_off) ||
        loom_ckpt_sum(m, c->meta_len, 0x6d657461) != c->metasum)
        loom_abort(1, "restart: %s: the layout of '%s' is damaged", f->path, c->name);
    return m;
}

/* The kept private ranges (CK_KEPT): read, checked, and handed to
 * ckpt_keep.c until the program keeps them again.  Aborts when damaged. */
static void read_kept(void)
{
    for (uint32_t i = 0; i < S.f.head.nallocs; i++) {
        const struct loom_ckpt_rec *c = &S.f.rec[i];
        if (c->what != CK_KEPT)
            continue;
        char *d = malloc(c->len + 1);
        uint64_t *m = read_meta(&S.f, c);
        if (!d || c->nchunks > 1 || (c->nchunks && m[0] != S.f.seq) ||
            (c->len && read_at(S.f.fd, d, c->len, c->off)) ||
            loom_ckpt_data_sum((uint64_t[]){loom_ckpt_chunk_sum(d, c->len, 0)}, c->nchunks) !=
                c->sum)
            loom_abort(1, "restart: %s: the kept state '%s' is damaged", S.f.path, c->name);
        free(m);
        if (loom_ckpt_pending(c->name, d, c->len))
            loom_abort(1, "restart: out of memory");
    }
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
    snprintf(S.cdir, sizeof S.cdir, "%s/ckpt-%06llu", dir, (unsigned long long)lo);
    bad = open_rank_file((uint64_t)lo, &S.f, why, sizeof why) != 0;
    if (!bad && !(S.claimed = calloc((size_t)S.f.head.nallocs + 1, 1)))
        bad = 1, snprintf(why, sizeof why, "restart: out of memory");
    agree(bad, why);
    read_kept();
    loom_clock_restore(S.f.head.clock, S.f.head.calls);
    loom_ckpt_last_seq = (uint64_t)lo;
    S.on = S.open = 1;
    uint32_t na = 0;
    for (uint32_t i = 0; i < S.f.head.nallocs; i++)
        na += S.f.rec[i].what != CK_KEPT;
    if (loom_icv.rank == 0)
        loom_log("restart: resuming from %s (loom_clock %llu, %u allocation%s)", S.cdir,
                 (unsigned long long)S.f.head.calls, na, na == 1 ? "" : "s");
}

static struct loom_ckpt_rec *find(const loom_dsm_alloc *a, size_t *idx)
{
    for (size_t i = 0; S.open && i < S.f.head.nallocs; i++)
        if (S.f.rec[i].serial == a->serial && S.f.rec[i].what != CK_KEPT) {
            *idx = i;
            return &S.f.rec[i];
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

/* The file of this rank in checkpoint seq, opened once (the newest's, or
 * an older one of its chain); aborts the job if it is missing or bad. */
static struct file *file_of(uint64_t seq)
{
    if (seq == S.f.seq)
        return &S.f;
    for (int i = 0; i < S.nolder; i++)
        if (S.older[i].seq == seq)
            return &S.older[i];
    struct file *o = realloc(S.older, ((size_t)S.nolder + 1) * sizeof *o);
    char why[1600];
    if (!o)
        loom_abort(1, "restart: out of memory");
    S.older = o;
    struct file *f = &S.older[S.nolder++];
    *f = (struct file){.fd = -1};
    if (seq > S.f.seq || open_rank_file(seq, f, why, sizeof why))
        loom_abort(1, "%s (checkpoint %s needs it: its unchanged data lies there)",
                   seq > S.f.seq ? "restart: a chunk map names a newer checkpoint" : why,
                   S.cdir);
    return f;
}

/* Record `serial` of f, whose data must be the region c describes. */
static const struct loom_ckpt_rec *older_rec(const struct file *f,
                                             const struct loom_ckpt_rec *c)
{
    for (uint32_t i = 0; i < f->head.nallocs; i++) {
        const struct loom_ckpt_rec *o = &f->rec[i];
        if (o->serial == c->serial && o->what == c->what && o->region == c->region &&
            o->chunk == c->chunk && o->len == c->len)
            return o;
    }
    loom_abort(1, "restart: %s does not hold the data of '%s' that %s names there", f->path,
               c->name, S.cdir);
}

void loom_restart_fill(loom_dsm_alloc *a)
{
    size_t i;
    const struct loom_ckpt_rec *c = find(a, &i);
    if (!c)
        return;
    size_t P = (size_t)loom_icv.nranks, nb = c->what == CK_RING ? (P + 1) * 8 : 0;
    uint64_t *meta = c->meta_len == nb + c->nchunks * 8 && c->chunk &&
                     c->nchunks == (c->len + c->chunk - 1) / c->chunk
                         ? read_meta(&S.f, c) : NULL;
    uint64_t *map = meta ? meta + nb / 8 : NULL;
    char *dst = NULL;
    if (!meta) {
        loom_abort(1, "restart: %s: the layout of '%s' is damaged", S.f.path, a->name);
    } else if (c->what == CK_RING && loom_policy_rotates(a->policy)) {
        if (a->policy->restore(a, c->ring_t, meta))
            loom_abort(1, "restart: %s: the ring state of '%s' is damaged", S.f.path, a->name);
        int j;
        const size_t *b = a->policy->bounds(a, &j);
        dst = (a->kind == LOOM_UNIT_PAGE ? a->shadow : a->base) + b[j] * a->unit;
        if (c->len != (b[j + 1] - b[j]) * a->unit)
            loom_abort(1, "restart: %s: the partition of '%s' has the wrong size", S.f.path,
                       a->name);
    } else if (c->what == CK_LOCAL && a->policy->plain && c->len == a->bytes) {
        dst = a->base;
    } else if (c->what == CK_HOME && a->store && c->len == a->nhome * a->unit) {
        dst = a->store;
    } else {
        loom_abort(1, "restart: %s: '%s' was saved in another form (internal error)", S.f.path,
                   a->name);
    }
    /* runs of chunks that lie in the same file */
    uint64_t nc = c->nchunks, ch = c->chunk;
    for (uint64_t k = 0, e; k < nc; k = e) {
        for (e = k + 1; e < nc && map[e] == map[k]; e++)
            ;
        struct file *f = file_of(map[k]);
        const struct loom_ckpt_rec *o = f == &S.f ? c : older_rec(f, c);
        uint64_t len = (e < nc ? e * ch : c->len) - k * ch;
        errno = 0;
        if (read_at(f->fd, dst + k * ch, len, o->off + k * ch))
            loom_abort(1, "restart: %s: cannot read '%s': %s", f->path, a->name,
                       errno ? strerror(errno) : "the file is too short");
    }
    uint64_t *sums = malloc((nc + 1) * sizeof *sums), *src = malloc((nc + 1) * sizeof *src);
    if (!sums || !src)
        loom_abort(1, "restart: out of memory");
    for (uint64_t k = 0; k < nc; k++)
        sums[k] = loom_ckpt_chunk_sum(dst + k * ch, k + 1 < nc ? ch : c->len - k * ch, k);
    if (loom_ckpt_data_sum(sums, nc) != c->sum)
        loom_abort(1, "restart: %s: the data of '%s' is damaged (checksum mismatch)", S.f.path,
                   a->name);
    memcpy(src, map, nc * sizeof *src);
    loom_ckpt_track_set(c->serial, c->region, nc, sums, src); /* the next one is incremental */
    free(meta);
    S.claimed[i] = 1;
}

void loom_restart_close(void)
{
    if (!S.open)
        return;
    S.open = 0;
    for (size_t i = 0; loom_icv.rank == 0 && i < S.f.head.nallocs; i++)
        if (!S.claimed[i] && S.f.rec[i].what != CK_KEPT)
            loom_log("restart: warning: allocation #%llu '%s' of %s was not allocated again "
                     "before the first loom_clock; its contents are dropped",
                     (unsigned long long)S.f.rec[i].serial, S.f.rec[i].name, S.cdir);
    close_file(&S.f);
    for (int i = 0; i < S.nolder; i++)
        close_file(&S.older[i]);
    free(S.older);
    free(S.claimed);
    S.older = NULL;
    S.nolder = 0;
    S.claimed = NULL;
}
