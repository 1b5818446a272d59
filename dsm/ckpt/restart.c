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
 * On another number of ranks than the checkpoint's (a machine lost, a
 * smaller allocation) every rank reads every old rank's file, rebuilds
 * each allocation's whole contents from the old layout that the files
 * record (home stores by their unit lists, ring partitions by their
 * boundaries, local copies by the rows each rank declared current) and
 * keeps what its new role needs: the units it homes, the partition it
 * owns, or the whole copy.  Kept private state cannot be split: such a
 * checkpoint is refused with one message, as is a local allocation whose
 * rows no rank declared (docs/checkpoint.md, "Another number of ranks").
 *
 * Every refusal is agreed on: the lowest rank that finds a problem stops
 * the job with its message, so the user reads one line. */
#include "checkpoint.h"
#include "../dsm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One rank file of a checkpoint: its header and table, checked. */
struct file {
    uint64_t seq;
    uint32_t rank;              /* the old rank that wrote it */
    int fd;
    char path[1300];
    struct loom_ckpt_head head;
    struct loom_ckpt_rec *rec;
};

static struct {
    int on;                     /* this run resumed from a checkpoint */
    int open;                   /* loom_alloc still restores */
    int reshape;                /* the checkpoint has another number of ranks */
    uint32_t oldP;              /* the checkpoint's number of ranks */
    char cdir[1100];
    struct file f;              /* this rank's file of the checkpoint resumed
                                   (reshape: old rank 0's) */
    struct file **more;         /* every other file opened: other old ranks', and
                                   older checkpoints' that chunks lie in */
    int nmore;
    uint8_t *claimed;
    int ref_set;                /* ref: old rank 0's header of the resumed checkpoint, */
    struct loom_ckpt_head ref;  /* whose job every file must be of (and whose clock */
    char refpath[1300];         /* every file of that checkpoint must have) */
} S = {.f.fd = -1};

int loom_restarted(void) { return S.on; }
int loom_ckpt_restart_open(void) { return S.open; }

/* Collective: if any rank is bad, the lowest bad rank ends the job with
 * its message and the others wait to be stopped. */
static void agree(int bad, const char *why)
{
    int32_t first = bad ? loom_rt_icv.rank : loom_rt_icv.nranks;
    loom_allreduce(LOOM_IN_PLACE, &first, 1, LOOM_INT32, LOOM_MIN);
    if (first == loom_rt_icv.nranks)
        return;
    if (first == loom_rt_icv.rank)
        loom_abort(1, "%s", why);
    loom_rt_coll_barrier(); /* ended by that rank's abort */
    _exit(1);
}

/* 0 if h (of file path) is of the reference's job and, when of the
 * resumed checkpoint, of its clock; else -1 and one line naming both. */
static int same_job(const struct loom_ckpt_head *h, const char *path, char *why, size_t wn)
{
    if (!S.ref_set || (!memcmp(h->job, S.ref.job, 16) &&
                       (h->seq != S.ref.seq ||
                        (h->clock == S.ref.clock && h->calls == S.ref.calls))))
        return 0;
    char a[33], b[33];
    loom_rt_key_format(h->job, a);
    loom_rt_key_format(S.ref.job, b);
    snprintf(why, wn, "restart: %s is of job %s at loom_clock %llu (DSM clock %llu), but %s of "
             "job %s at loom_clock %llu (DSM clock %llu): a checkpoint's files must come from "
             "one job at one clock (did two jobs share LOOM_CHECKPOINT_DIR?)", path, a,
             (unsigned long long)h->calls, (unsigned long long)h->clock, S.refpath, b,
             (unsigned long long)S.ref.calls, (unsigned long long)S.ref.clock);
    return -1;
}

static int read_at(int fd, void *p, size_t n, uint64_t off)
{
    return loom_ckpt_io(fd, p, n, off, 0);
}

/* Open and check old rank q's file of checkpoint seq into *f, written by
 * a job of P ranks (0: any); 0, or -1 with why. */
static int open_rank_file(uint64_t seq, uint32_t q, uint32_t P, struct file *f, char *why,
                          size_t wn)
{
    struct loom_ckpt_head *h = &f->head;
    char cdir[1100];
    snprintf(cdir, sizeof cdir, "%s/ckpt-%06llu", loom_rt_icv.checkpoint_dir,
             (unsigned long long)seq);
    snprintf(f->path, sizeof f->path, "%s/rank-%u.ckpt", cdir, q);
    f->seq = seq;
    f->rank = q;
    if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(why, wn, "restart: %s: %s%s", f->path, strerror(errno),
                 errno == ENOENT && S.reshape ? " (a restart on another number of ranks reads "
                 "every rank's file: every host needs all of them, e.g. a shared directory)" : "");
        return -1;
    }
    if (read_at(f->fd, h, sizeof *h, 0) || memcmp(h->magic, LOOM_CKPT_MAGIC, 8) ||
        h->version != LOOM_CKPT_VERSION) {
        snprintf(why, wn, "restart: %s is not a checkpoint file of this Loom version", f->path);
        return -1;
    }
    if (h->headsum != loom_ckpt_sum(h, offsetof(struct loom_ckpt_head, headsum), 0) ||
        h->seq != seq || h->rank != q || h->nranks == 0 || h->nallocs > 1u << 20) {
        snprintf(why, wn, "restart: %s is damaged (its header does not check out)", f->path);
        return -1;
    }
    if (same_job(h, f->path, why, wn))
        return -1;
    if (P && h->nranks != P) {
        snprintf(why, wn, "restart: %s was written by a job of %u ranks, but the other files of "
                 "its checkpoint by one of %u: it is misplaced or damaged", f->path, h->nranks, P);
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
 * it: nb bytes of ring boundaries first, then the chunk map and c->nruns
 * layout runs (nb < 0: any shape, for kept ranges).  Aborts the job on a
 * damaged file. */
static uint64_t *read_meta(const struct file *f, const struct loom_ckpt_rec *c, long nb)
{
    uint64_t *m = malloc(c->meta_len + 8);
    if (!m)
        loom_abort(1, "restart: out of memory");
    if ((nb >= 0 && (!c->chunk || c->nchunks != (c->len + c->chunk - 1) / c->chunk ||
                     c->nruns > c->meta_len || c->nchunks > c->meta_len ||
                     c->meta_len != (uint64_t)nb + (c->nchunks + 3 * c->nruns) * 8)) ||
        read_at(f->fd, m, c->meta_len, c->meta_off) ||
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
        uint64_t *m = read_meta(&S.f, c, -1);
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

/* Opens old rank q's file of checkpoint seq (of the resumed checkpoint's
 * number of ranks) and keeps it with the others; NULL with why. */
static struct file *open_more(uint32_t q, uint64_t seq, char *why, size_t wn)
{
    struct file **m = realloc(S.more, ((size_t)S.nmore + 1) * sizeof *m);
    struct file *f = malloc(sizeof *f);
    if (m)
        S.more = m;
    if (!m || !f) {
        free(f);
        snprintf(why, wn, "restart: out of memory");
        return NULL;
    }
    *f = (struct file){.fd = -1};
    S.more[S.nmore++] = f;
    if (seq > S.f.seq) {
        snprintf(why, wn, "restart: a chunk map names a newer checkpoint");
        return NULL;
    }
    return open_rank_file(seq, q, S.oldP, f, why, wn) ? NULL : f;
}

/* Old rank q's file of checkpoint seq (the resumed one, or an older one
 * its chunks lie in), opened once; aborts the job if it is missing or
 * bad. */
static struct file *file_of(uint32_t q, uint64_t seq)
{
    if (seq == S.f.seq && q == S.f.rank)
        return &S.f;
    for (int i = 0; i < S.nmore; i++)
        if (S.more[i]->seq == seq && S.more[i]->rank == q)
            return S.more[i];
    char why[1600];
    struct file *f = open_more(q, seq, why, sizeof why);
    if (!f)
        loom_abort(1, "%s (checkpoint %s needs it: its unchanged data lies there)", why,
                   S.cdir);
    return f;
}

/* The first range kept with loom_checkpoint_keep in any old rank's file,
 * or NULL. */
static const char *first_kept(void)
{
    for (uint32_t q = 0; q < S.oldP; q++) {
        const struct file *f = file_of(q, S.f.seq);
        for (uint32_t i = 0; i < f->head.nallocs; i++)
            if (f->rec[i].what == CK_KEPT)
                return f->rec[i].name;
    }
    return NULL;
}

/* The first local allocation of a checkpoint of several ranks whose rows
 * no old rank declared (loom_checkpoint_rows), or NULL. */
static const char *first_undeclared(void)
{
    for (uint32_t i = 0; S.oldP > 1 && i < S.f.head.nallocs; i++) {
        const struct loom_ckpt_rec *c = &S.f.rec[i];
        uint64_t runs = 0;
        for (uint32_t q = 0; c->what == CK_LOCAL && q < S.oldP; q++) {
            const struct file *f = file_of(q, S.f.seq);
            for (uint32_t k = 0; k < f->head.nallocs; k++)
                if (f->rec[k].serial == c->serial && f->rec[k].what == CK_LOCAL)
                    runs += f->rec[k].nruns;
        }
        if (c->what == CK_LOCAL && !runs)
            return c->name;
    }
    return NULL;
}

/* A restart on another number of ranks: 1 and why when the checkpoint
 * holds what cannot be split among them, else 0.  Every rank finds the
 * same. */
static int unsplittable(char *why, size_t wn)
{
    const char *name = first_kept(), *what = "private state of each rank "
        "(loom_checkpoint_keep), which cannot be split among another number of ranks";
    if (!name && (name = first_undeclared()))
        what = "a local allocation whose rows no rank declared current "
               "(loom_checkpoint_rows), so each rank's copy is its own";
    if (name)
        snprintf(why, wn, "restart: checkpoint %s was written by %u rank%s and this job has %d, "
                 "but it holds '%s', %s: restart it with -n %u", S.cdir, S.oldP,
                 S.oldP == 1 ? "" : "s", loom_rt_icv.nranks, name, what, S.oldP);
    return name != NULL;
}

/* With LOOM_RESTART, the checkpoint to resume from and the clock restored
 * (loom_ckpt_start). */
static void restart_init(void)
{
    const char *dir = loom_rt_icv.checkpoint_dir;
    char why[1600] = "";
    if (!dir[0])
        return;
    /* every job that checkpoints to or resumes from DIR holds its lock */
    loom_ckpt_job_start();
    agree(loom_ckpt_lock_all(dir, why, sizeof why) != 0, why);
    if (loom_rt_icv.restart == LOOM_RESTART_NO)
        return;
    uint64_t seq = 0;
    int r = loom_ckpt_read_latest(dir, &seq);
    int64_t lo = r ? r : (int64_t)seq, hi = lo; /* -1 none, -2 malformed */
    loom_allreduce(LOOM_IN_PLACE, &lo, 1, LOOM_INT64, LOOM_MIN);
    loom_allreduce(LOOM_IN_PLACE, &hi, 1, LOOM_INT64, LOOM_MAX);
    int bad = 0;
    if (hi == -1 && loom_rt_icv.restart == LOOM_RESTART_AUTO) {
        if (loom_rt_icv.rank == 0)
            loom_rt_log("restart: no checkpoint in %s yet; starting from the beginning", dir);
        return;
    }
    if (hi == -1)
        bad = loom_rt_icv.rank == 0, snprintf(why, sizeof why, "restart: no checkpoint to resume "
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
    /* this rank's own file; old rank 0's says how many ranks wrote the
     * checkpoint (on several hosts without a shared directory each host
     * has only its own ranks' files: enough for the same number) */
    uint32_t P = (uint32_t)loom_rt_icv.nranks, me = (uint32_t)loom_rt_icv.rank;
    int have = !open_rank_file((uint64_t)lo, me, 0, &S.f, why, sizeof why);
    int64_t oldP = have && me == 0 ? S.f.head.nranks : 0;
    agree(me == 0 && !have, why);
    loom_allreduce(LOOM_IN_PLACE, &oldP, 1, LOOM_INT64, LOOM_MAX);
    S.oldP = (uint32_t)oldP;
    S.reshape = S.oldP != P;
    /* old rank 0's header: the job and clock every file must be of */
    if (me == 0)
        S.ref = S.f.head;
    if (P > 1)
        loom_bcast(&S.ref, sizeof S.ref, 0);
    S.ref_set = 1;
    snprintf(S.refpath, sizeof S.refpath, "%s/rank-0.ckpt", S.cdir);
    if (!S.reshape) {
        bad = !have || same_job(&S.f.head, S.f.path, why, sizeof why);
        if (have && !bad && S.f.head.nranks != P)
            bad = 1, snprintf(why, sizeof why, "restart: %s was written by a job of %u ranks, but "
                              "rank 0's file of its checkpoint by one of %u: it is misplaced or "
                              "damaged", S.f.path, S.f.head.nranks, P);
    } else if (me) { /* another number: old rank 0's file leads, then every other */
        close_file(&S.f);
        bad = open_rank_file((uint64_t)lo, 0, S.oldP, &S.f, why, sizeof why) != 0;
    }
    for (uint32_t q = 1; S.reshape && !bad && q < S.oldP; q++)
        bad = !open_more(q, (uint64_t)lo, why, sizeof why);
    if (!bad && !(S.claimed = calloc((size_t)S.f.head.nallocs + 1, 1)))
        bad = 1, snprintf(why, sizeof why, "restart: out of memory");
    agree(bad, why);
    if (S.reshape)
        agree(unsplittable(why, sizeof why), why);
    else
        read_kept();
    loom_ckpt_job_set(S.f.head.job);
    loom_dsm_clock_restore(S.f.head.clock, S.f.head.calls);
    loom_ckpt_last_seq = (uint64_t)lo;
    S.on = S.open = 1;
    uint32_t na = 0;
    for (uint32_t i = 0; i < S.f.head.nallocs; i++)
        na += S.f.rec[i].what != CK_KEPT;
    char from[80] = "";
    if (S.reshape)
        snprintf(from, sizeof from, "; written by %u rank%s, redistributed to %u", S.oldP,
                 S.oldP == 1 ? "" : "s", P);
    if (loom_rt_icv.rank == 0)
        loom_rt_log("restart: resuming from %s (loom_clock %llu, %u allocation%s%s)", S.cdir,
                 (unsigned long long)S.f.head.calls, na, na == 1 ? "" : "s", from);
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

/* An allocation whose homes moved after it was made (placement,
 * rehome.c) was saved with other homes than loom_alloc gives it now: put
 * the saved homes back, so that every rank's record fits its store again.
 * Every rank's record lists the units it homed (its layout's runs); one
 * allreduce of a word per unit gives every rank the whole map.  Collective
 * (the same number of ranks; every rank's hash disagrees alike), from
 * loom_ckpt_restart_check: the store is not made yet.  Returns 0 when the
 * homes now hash as saved. */
static int rehome_as_saved(loom_dsm_alloc *a, const struct loom_ckpt_rec *c)
{
    if (c->what != CK_HOME || !loom_dsm_rehome_eligible(a))
        return -1; /* the same on every rank: the same allocation */
    int32_t *home = malloc((a->nunits + 1) * sizeof *home);
    uint64_t *m = read_meta(&S.f, c, 0);
    int32_t bad = !home;
    for (size_t u = 0; !bad && u < a->nunits; u++)
        home[u] = -1;
    const uint64_t *run = m + c->nchunks;
    for (uint64_t r = 0; !bad && r < c->nruns; r++, run += 3)
        for (uint64_t k = 0, u = run[0]; !bad && k < run[1]; k++, u += run[2])
            if (!(bad = u >= a->nunits))
                home[u] = loom_rt_icv.rank;
    free(m);
    loom_allreduce(LOOM_IN_PLACE, &bad, 1, LOOM_INT32, LOOM_MAX);
    if (!bad)
        loom_allreduce(LOOM_IN_PLACE, home, a->nunits, LOOM_INT32, LOOM_MAX);
    for (size_t u = 0; !bad && u < a->nunits; u++)
        bad = home[u] < 0; /* a unit nobody homed: a record without its layout */
    if (!bad)
        loom_dsm_set_homes(a, home); /* before loom_alloc makes the store: maps only */
    free(home);
    return bad || c->homehash != loom_ckpt_home_hash(a);
}

void loom_ckpt_restart_check(loom_dsm_alloc *a)
{
    size_t i;
    const struct loom_ckpt_rec *c = find(a, &i);
    if (!c)
        return; /* every rank: same table, same serial */
    char mine[300], theirs[300], why[2000];
    const char *diff = NULL;
    /* one rank runs every allocation "local": its policy may differ then */
    int policy = !S.reshape || (S.oldP > 1 && loom_rt_icv.nranks > 1);
    if (strcmp(c->name, a->name) || c->bytes != a->bytes || c->kind != (uint32_t)a->kind ||
        c->unit != a->unit || c->nunits != a->nunits ||
        (policy && strcmp(c->policy, a->policy->name)))
        diff = "";
    else if (c->merge != (uint32_t)a->merge || c->type != (uint32_t)a->type)
        diff = " (its merge mode or element type differs)";
    else if (!S.reshape && ((c->homehash != loom_ckpt_home_hash(a) && rehome_as_saved(a, c)) ||
                            c->nhome != a->nhome)) /* after rehome_as_saved: it sets nhome */
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

/* Reads the data of record c of f (chunk map `map`) into dst: each run of
 * chunks from the file of f's rank that holds it (f's, or an older
 * checkpoint's), then checks the whole against c->sum.  Returns the
 * chunks' checksums (malloc'd); aborts the job on a damaged or missing
 * file. */
static uint64_t *read_data(const struct file *f, const struct loom_ckpt_rec *c,
                           const uint64_t *map, char *dst)
{
    uint64_t nc = c->nchunks, ch = c->chunk;
    for (uint64_t k = 0, e; k < nc; k = e) {
        for (e = k + 1; e < nc && map[e] == map[k]; e++)
            ;
        struct file *h = file_of(f->rank, map[k]);
        const struct loom_ckpt_rec *o = h->seq == f->seq ? c : older_rec(h, c);
        uint64_t len = (e < nc ? e * ch : c->len) - k * ch;
        errno = 0;
        if (read_at(h->fd, dst + k * ch, len, o->off + k * ch))
            loom_abort(1, "restart: %s: cannot read '%s': %s", h->path, c->name,
                       errno ? strerror(errno) : "the file is too short");
    }
    uint64_t *sums = malloc((nc + 1) * sizeof *sums);
    if (!sums)
        loom_abort(1, "restart: out of memory");
    for (uint64_t k = 0; k < nc; k++)
        sums[k] = loom_ckpt_chunk_sum(dst + k * ch, k + 1 < nc ? ch : c->len - k * ch, k);
    if (loom_ckpt_data_sum(sums, nc) != c->sum)
        loom_abort(1, "restart: %s: the data of '%s' is damaged (checksum mismatch)", f->path,
                   c->name);
    return sums;
}

/* The same number of ranks: this rank's record c (index i) goes back
 * where it was saved from, and the next checkpoint is incremental. */
static void fill_same(loom_dsm_alloc *a, const struct loom_ckpt_rec *c)
{
    size_t P = (size_t)loom_rt_icv.nranks, nb = c->what == CK_RING ? (P + 1) * 8 : 0;
    uint64_t *meta = read_meta(&S.f, c, (long)nb);
    uint64_t *map = meta + nb / 8;
    char *dst = NULL;
    if (c->what == CK_RING && loom_dsm_policy_rotates(a->policy)) {
        if (a->policy->restore(a, c->ring_t, meta))
            loom_abort(1, "restart: %s: the ring state of '%s' is damaged", S.f.path, a->name);
        int j;
        const size_t *b = a->policy->bounds(a, &j);
        dst = loom_dsm_unit_data(a, b[j]);
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
    uint64_t *sums = read_data(&S.f, c, map, dst), *src = malloc((c->nchunks + 1) * sizeof *src);
    if (!src)
        loom_abort(1, "restart: out of memory");
    memcpy(src, map, c->nchunks * sizeof *src);
    loom_ckpt_track_set(c->serial, c->region, c->nchunks, sums, src);
    free(meta);
}

/* Copies old rank q's saved data d of record c (meta m: ring boundaries,
 * chunk map, layout) to its places in g, the allocation's whole contents
 * (N units of U bytes); owner[u] = q for each unit it homed.  Aborts the
 * job when the layout does not fit the allocation. */
static void scatter(const struct file *f, const struct loom_ckpt_rec *c, const uint64_t *m,
                    const char *d, char *g, size_t N, size_t U, int *owner)
{
    uint32_t q = f->rank, P = S.oldP;
    const uint64_t *run = m + (c->what == CK_RING ? P + 1 : 0) + c->nchunks;
    uint64_t k = 0; /* CK_HOME: the units' store slots, in order */
    int bad = 0;
    if (c->what == CK_RING) { /* the partition q owned at sub-epoch ring_t */
        uint32_t j = (uint32_t)loom_dsm_policy_rotating()->saved_part(c->ring_t, (int)q, (int)P);
        bad = m[0] != 0 || m[P] != N || m[j] > m[j + 1] || m[j + 1] > N ||
              c->len != (m[j + 1] - m[j]) * U;
        if (!bad)
            memcpy(g + m[j] * U, d, c->len);
    } else if (c->what == CK_LOCAL) { /* old rank 0's copy, then every declared row */
        bad = c->len != N * U;
        if (!bad && q == 0)
            memcpy(g, d, c->len);
    }
    for (uint64_t r = 0; !bad && c->what != CK_RING && r < c->nruns; r++, run += 3)
        for (uint64_t i = 0, u = run[0]; !bad && i < run[1]; i++, u += run[2]) {
            if ((bad = u >= N || (c->what == CK_HOME && (k + 1) * U > c->len)))
                break;
            if (c->what == CK_HOME) {
                memcpy(g + u * U, d + k++ * U, U);
                owner[u] = (int)q;
            } else {
                memcpy(g + u * U, d + u * U, U);
            }
        }
    if (bad || (c->what == CK_HOME && k * U != c->len))
        loom_abort(1, "restart: %s: the layout of '%s' does not fit it (damaged)", f->path,
                   c->name);
}

/* Another number of ranks: rebuilds a's whole contents from every old
 * rank's record of it, and keeps what this rank's new role needs (the
 * whole copy, the units it homes, or the ring partition it owns: the
 * ring starts a fresh rotation with this job's boundaries).  No
 * incremental track: the next checkpoint is whole. */
static void fill_reshaped(loom_dsm_alloc *a)
{
    size_t N = a->nunits, U = a->unit;
    int whole = a->policy->plain, homes = 0;
    char *g = whole ? a->base : malloc(N * U + 1);
    int *owner = malloc((N + 1) * sizeof *owner);
    if (!g || !owner)
        loom_abort(1, "restart: out of memory rebuilding '%s' (%zu bytes)", a->name, N * U);
    for (size_t u = 0; u < N; u++)
        owner[u] = -1;
    for (uint32_t q = 0; q < S.oldP; q++) {
        const struct file *f = file_of(q, S.f.seq);
        const struct loom_ckpt_rec *c = NULL;
        for (uint32_t k = 0; !c && k < f->head.nallocs; k++)
            if (f->rec[k].serial == a->serial && f->rec[k].what != CK_KEPT)
                c = &f->rec[k];
        if (!c)
            loom_abort(1, "restart: %s holds no data of '%s' (damaged)", f->path, a->name);
        long nb = c->what == CK_RING ? ((long)S.oldP + 1) * 8 : 0;
        uint64_t *m = read_meta(f, c, nb);
        char *d = malloc(c->len + 1);
        if (!d)
            loom_abort(1, "restart: out of memory");
        free(read_data(f, c, m + nb / 8, d));
        scatter(f, c, m, d, g, N, U, owner);
        homes |= c->what == CK_HOME;
        free(m);
        free(d);
    }
    if (homes) { /* every unit had one home, and the map is the one the checkpoint hashed */
        size_t i;
        uint64_t h = loom_ckpt_sum(owner, N * sizeof *owner, 0x686f6d65);
        for (i = 0; i < N && owner[i] >= 0; i++)
            ;
        if (i < N || (h ? h : 1) != find(a, &i)->homehash)
            loom_abort(1, "restart: %s: the homes of '%s' do not add up (damaged)", S.cdir,
                       a->name);
    }
    if (whole) {
        /* g is the copy */
    } else if (loom_dsm_policy_rotates(a->policy)) {
        int j;
        const size_t *b = a->policy->bounds(a, &j);
        memcpy(loom_dsm_unit_data(a, b[j]), g + b[j] * U, (b[j + 1] - b[j]) * U);
    } else {
        for (size_t u = 0; u < N; u++)
            if (a->home[u] == loom_rt_icv.rank)
                memcpy(a->store + (size_t)a->slot[u] * U, g + u * U, U);
    }
    if (!whole)
        free(g);
    free(owner);
}

void loom_ckpt_restart_fill(loom_dsm_alloc *a)
{
    size_t i;
    const struct loom_ckpt_rec *c = find(a, &i);
    if (!c)
        return;
    if (S.reshape)
        fill_reshaped(a);
    else
        fill_same(a, c);
    S.claimed[i] = 1;
}

void loom_ckpt_restart_close(void)
{
    if (!S.open)
        return;
    S.open = 0;
    for (size_t i = 0; loom_rt_icv.rank == 0 && i < S.f.head.nallocs; i++)
        if (!S.claimed[i] && S.f.rec[i].what != CK_KEPT)
            loom_rt_log("restart: warning: allocation #%llu '%s' of %s was not allocated again "
                     "before the first loom_clock; its contents are dropped",
                     (unsigned long long)S.f.rec[i].serial, S.f.rec[i].name, S.cdir);
    close_file(&S.f);
    for (int i = 0; i < S.nmore; i++) {
        close_file(S.more[i]);
        free(S.more[i]);
    }
    free(S.more);
    free(S.claimed);
    S.more = NULL;
    S.nmore = 0;
    S.claimed = NULL;
}

/* The core's hooks (dsm.h): the clock's checkpoints, and restoring
 * allocations while a restart is open. */
static const struct loom_dsm_ckpt_hooks hooks = {
    .clock = loom_ckpt_on_clock,
    .restoring = loom_ckpt_restart_open,
    .check = loom_ckpt_restart_check,
    .fill = loom_ckpt_restart_fill,
};

/* Contract: see checkpoint.h.  Collective; from loom_init only. */
void loom_ckpt_start(void)
{
    loom_dsm_ckpt = &hooks;
    restart_init();
}
