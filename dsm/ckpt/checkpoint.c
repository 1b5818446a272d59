/* checkpoint.c — loom_checkpoint: every live allocation's data and the
 * clock, written so that a crash at any moment leaves the previous
 * checkpoint whole (docs/checkpoint.md; the format is in checkpoint.h).
 *
 * The protocol, all ranks together:
 *   1. release and barrier: every write has been applied at its home and
 *      nothing is in flight, so the home stores are the whole state;
 *   2. the number: one past the newest checkpoint any rank knows of;
 *   3. each rank writes DIR/ckpt-N/rank-R.tmp, fsyncs it, renames it to
 *      rank-R.ckpt and fsyncs the directory (rank 0 adds INFO likewise);
 *   4. an allreduce of the outcome: if any rank failed, nobody commits;
 *   5. the commit: LATEST.tmp.R written, fsynced and renamed over LATEST,
 *      DIR fsynced — by each host's local rank 0, so that hosts without a
 *      shared file system each get their own pointer; on a shared one they
 *      rename the same contents;
 *   6. checkpoints that neither the new nor the previous one needs (no
 *      chunk of theirs lies there, on any rank) are removed.
 * Until step 5 LATEST names the previous checkpoint, whose files (and the
 * older ones its chunks lie in) are never touched; after it, the new one
 * is complete on disk.
 *
 * Incremental: a rank file holds only the chunks (units, or 4 KiB of
 * rows) whose checksum changed since this rank's last checkpoint, and
 * names for the others the older checkpoint whose file holds them; every
 * chunk is written again at least every LOOM_CHECKPOINT_CHAIN checkpoints,
 * so a checkpoint needs at most that many files per rank, and older ones
 * can go.  Changes are found by checksum, not by watching writes: home
 * stores also change by one-sided stores from peers, which no handler
 * sees, and the checksum is needed anyway. */
#include "checkpoint.h"
#include "../dsm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t loom_ckpt_last_seq;

static inline uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

uint64_t loom_ckpt_sum(const void *p, size_t n, uint64_t seed)
{
    const uint64_t M = 0x9e3779b97f4a7c15ULL;
    const uint8_t *b = p;
    uint64_t h[4] = {seed ^ 0x243f6a8885a308d3ULL, seed ^ 0x13198a2e03707344ULL,
                     seed ^ 0xa4093822299f31d0ULL, seed ^ 0x082efa98ec4e6c89ULL};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++) { /* four independent lanes: several GB/s */
            uint64_t w;
            memcpy(&w, b + i + 8 * l, 8);
            h[l] = (rotl(h[l], 29) ^ w) * M;
        }
    uint64_t x = h[0] ^ rotl(h[1], 16) ^ rotl(h[2], 32) ^ rotl(h[3], 48) ^ n;
    for (; i < n; i++)
        x = (x ^ b[i]) * 0x100000001b3ULL;
    x ^= x >> 31;
    x *= M;
    return x ^ x >> 29;
}

int loom_ckpt_read_latest(const char *dir, uint64_t *seq)
{
    char path[1200], buf[64];
    snprintf(path, sizeof path, "%s/LATEST", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -1 : -2;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -2;
    buf[n] = 0;
    /* "ckpt-" and 1 to 15 digits, a newline, nothing else: a number that
     * would overflow is malformed, never "none" */
    uint64_t v = 0;
    ssize_t i = 5;
    if (strncmp(buf, "ckpt-", 5))
        return -2;
    for (; i < n && buf[i] >= '0' && buf[i] <= '9' && i < 5 + 15; i++)
        v = v * 10 + (uint64_t)(buf[i] - '0');
    if (i == 5 || i + 1 != n || buf[i] != '\n' || v == 0)
        return -2;
    *seq = v;
    return 0;
}

uint64_t loom_ckpt_home_hash(loom_dsm_alloc *a)
{
    if (!a->home)
        return 0;
    if (!a->homehash) {
        uint64_t h = loom_ckpt_sum(a->home, a->nunits * sizeof *a->home, 0x686f6d65);
        a->homehash = h ? h : 1;
    }
    return a->homehash;
}

/* LOOM_TEST_KILL: stop or kill this rank at `point` of its configured
 * clock (a testing aid; docs/checkpoint.md). */
static void test_kill(int point)
{
    if (loom_rt_icv.test_kill.rank != loom_rt_icv.rank || loom_rt_icv.test_kill.point != point ||
        loom_clock_now() != (uint64_t)loom_rt_icv.test_kill.clock)
        return;
    fflush(stdout);
    raise(point == LOOM_KILL_STOP ? SIGSTOP : SIGKILL);
}

int loom_ckpt_make_dirs(const char *path)
{
    char p[1200];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

/* fsync, unless LOOM_CHECKPOINT_SYNC=false: then a checkpoint still
 * survives any process crash (renames are atomic, the page cache stays),
 * but not an operating-system crash or a power cut. */
static int sync_fd(int fd)
{
    return loom_rt_icv.checkpoint_sync ? fsync(fd) : 0;
}

static int fsync_dir(const char *path)
{
    if (!loom_rt_icv.checkpoint_sync)
        return 0;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Contract: see checkpoint.h.  No locks; any thread. */
int loom_ckpt_io(int fd, void *p, size_t n, uint64_t off, int write)
{
    char *c = p;
    while (n) {
        ssize_t k = write ? pwrite(fd, c, n, (off_t)off) : pread(fd, c, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

static int write_at(int fd, const void *p, size_t n, uint64_t off)
{
    return loom_ckpt_io(fd, (void *)p, n, off, 1);
}

/* Write `len` bytes from `p` to path atomically: path.tmp, fsync, rename.
 * Returns 0, or -1 with errno. */
static int write_small(const char *path, const void *p, size_t len)
{
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, loom_rt_icv.rank);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int bad = write_at(fd, p, len, 0) || sync_fd(fd);
    int e = errno;
    bad = close(fd) || bad;
    if (!bad && !rename(tmp, path))
        return 0;
    e = bad ? e : errno;
    unlink(tmp); /* a failed write (a full disk) leaves nothing behind */
    errno = e;
    return -1;
}

/* The live allocations in creation order (a malloc'd array; *n of them). */
static loom_dsm_alloc **live_allocs(int *n)
{
    int m = atomic_load(&loom_dsm_nallocs), k = 0;
    loom_dsm_alloc **v = malloc(((size_t)m + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (int i = 0; i < m; i++)
        if (loom_dsm_allocs[i] && loom_dsm_allocs[i]->live)
            v[k++] = loom_dsm_allocs[i];
    for (int i = 1; i < k; i++) /* insertion sort by serial: few allocations */
        for (int j = i; j > 0 && v[j - 1]->serial > v[j]->serial; j--) {
            loom_dsm_alloc *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *n = k;
    return v;
}

/* ---- incremental checkpoints ------------------------------------------ */

uint64_t loom_ckpt_chunk_sum(const void *p, size_t n, uint64_t c)
{
    return loom_ckpt_sum(p, n, 0x636b7074 ^ c * 0x9e3779b97f4a7c15ULL);
}

uint64_t loom_ckpt_data_sum(const uint64_t *chunk_sums, uint64_t nchunks)
{
    return loom_ckpt_sum(chunk_sums, nchunks * sizeof *chunk_sums, 0x64617461);
}

/* What this rank's last committed checkpoint holds of one allocation: the
 * region its record described, each chunk's checksum, and the checkpoint
 * whose file holds the chunk.  A checkpoint being written puts its own in
 * next_*; the commit makes them current, a failure drops every track (the
 * next checkpoint then writes everything). */
struct track {
    uint64_t serial, region, nchunks, *sum, *src;
    uint64_t next_region, next_nchunks, *next_sum, *next_src;
};
static struct track *tracks;
static int ntracks;

static struct track *track_of(uint64_t serial)
{
    for (int i = 0; i < ntracks; i++)
        if (tracks[i].serial == serial)
            return &tracks[i];
    struct track *t = realloc(tracks, ((size_t)ntracks + 1) * sizeof *t);
    if (!t)
        return NULL;
    tracks = t;
    tracks[ntracks] = (struct track){.serial = serial};
    return &tracks[ntracks++];
}

static void track_drop(struct track *t, int committed)
{
    if (committed) {
        free(t->sum);
        free(t->src);
        t->sum = t->src = NULL;
        t->nchunks = 0;
    }
    free(t->next_sum);
    free(t->next_src);
    t->next_sum = t->next_src = NULL;
}

/* After a checkpoint: its chunks become what the next one compares with
 * (ok), or every track is forgotten (a checkpoint failed: what its files
 * hold is not known to be committed).  Tracks of freed allocations go. */
static void tracks_end(int ok)
{
    int k = 0;
    for (int i = 0; i < ntracks; i++) {
        struct track *t = &tracks[i];
        if (ok && t->next_sum) {
            free(t->sum);
            free(t->src);
            t->region = t->next_region;
            t->nchunks = t->next_nchunks;
            t->sum = t->next_sum;
            t->src = t->next_src;
            t->next_sum = t->next_src = NULL;
            tracks[k++] = *t;
        } else {
            track_drop(t, 1);
        }
    }
    ntracks = k;
}

/* The oldest checkpoint whose file this rank's chunks lie in, in the
 * checkpoint just written or the one before it; at most `cap`. */
static uint64_t oldest_needed(uint64_t cap)
{
    uint64_t m = cap;
    for (int i = 0; i < ntracks; i++)
        for (int pass = 0; pass < 2; pass++) {
            const uint64_t *src = pass ? tracks[i].next_src : tracks[i].src;
            uint64_t n = pass ? tracks[i].next_nchunks : tracks[i].nchunks;
            for (uint64_t c = 0; src && c < n; c++)
                m = src[c] < m ? src[c] : m;
        }
    return m;
}

void loom_ckpt_track_set(uint64_t serial, uint64_t region, uint64_t nchunks, uint64_t *sums,
                         uint64_t *src)
{
    struct track *t = track_of(serial);
    if (!t) {
        free(sums);
        free(src);
        return;
    }
    track_drop(t, 1);
    *t = (struct track){.serial = serial, .region = region, .nchunks = nchunks, .sum = sums,
                        .src = src};
}

/* ---- the rank file --------------------------------------------------- */

/* Appends unit u to the layout runs v[0 .. 3 * *n) ({first, count,
 * stride}): extends the last run when u continues it. */
static void run_add(uint64_t *v, uint64_t *n, uint64_t u)
{
    uint64_t *l = *n ? v + 3 * (*n - 1) : NULL;
    if (l && l[1] == 1 && u > l[0])
        l[1] = 2, l[2] = u - l[0];
    else if (l && u == l[0] + l[1] * l[2])
        l[1]++;
    else
        v[3 * *n] = u, v[3 * *n + 1] = 1, v[3 * *n + 2] = 1, ++*n;
}

/* The layout of a's record on this rank (checkpoint.h): a malloc'd array
 * of *nruns runs, or NULL with *nruns 0 (none, or out of memory: then a
 * restart on another number of ranks is refused, never wrong). */
static uint64_t *layout(loom_dsm_alloc *a, uint32_t what, uint64_t *nruns)
{
    *nruns = 0;
    if (what == CK_LOCAL) {
        size_t k = loom_ckpt_rows_of(a->base, a->serial, NULL, 0);
        uint64_t *v = k ? malloc(k * 3 * sizeof *v) : NULL;
        size_t got = v ? loom_ckpt_rows_of(a->base, a->serial, v, k) : 0;
        *nruns = got < k ? got : k; /* another thread may have declared more since */
        return v;
    }
    if (what != CK_HOME || !a->nhome)
        return NULL;
    uint64_t *units = malloc(a->nhome * sizeof *units), *v = malloc(a->nhome * 3 * sizeof *v);
    if (units && v) {
        for (size_t u = 0; u < a->nunits; u++) /* in store-slot order */
            if (a->home[u] == loom_rt_icv.rank)
                units[a->slot[u]] = u;
        for (size_t k = 0; k < a->nhome; k++)
            run_add(v, nruns, units[k]);
    }
    free(units);
    return *nruns ? v : (free(v), NULL);
}

/* What rank `loom_rt_icv.rank` saves of a: the record (without the places
 * and checksums), the meta's ring boundaries (into bounds, P + 1 entries,
 * *nb bytes) and the data. */
static void describe(loom_dsm_alloc *a, struct loom_ckpt_rec *r, uint64_t *bounds, size_t *nb,
                     const void **data, size_t *dlen)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", a->name);
    snprintf(r->policy, sizeof r->policy, "%s", a->policy->name);
    r->serial = a->serial;
    r->kind = (uint32_t)a->kind;
    r->merge = (uint32_t)a->merge;
    r->type = (uint32_t)a->type;
    r->bytes = a->bytes;
    r->unit = a->unit;
    r->nunits = a->nunits;
    r->nhome = a->nhome;
    r->homehash = loom_ckpt_home_hash(a);
    *nb = 0;
    int j = 0;
    if (a->policy->plain) {
        r->what = CK_LOCAL;
        *data = a->base;
        *dlen = a->bytes;
    } else if (loom_dsm_policy_rotates(a->policy)) {
        const size_t *lo = a->policy->bounds(a, &j);
        r->what = CK_RING;
        r->ring_t = a->policy->subepoch(a);
        for (int q = 0; q <= loom_rt_icv.nranks; q++)
            bounds[q] = lo[q];
        *nb = ((size_t)loom_rt_icv.nranks + 1) * sizeof *bounds;
        *data = loom_dsm_unit_data(a, lo[j]);
        *dlen = (lo[j + 1] - lo[j]) * a->unit;
    } else {
        r->what = CK_HOME;
        *data = a->store;
        *dlen = a->nhome * a->unit;
    }
    /* chunks: whole page units, or 4 KiB of rows (file-system blocks) */
    r->chunk = a->unit % 4096 == 0 ? a->unit : 4096;
    uint64_t id[4] = {r->what, (uint64_t)j, *dlen, r->chunk};
    r->region = loom_ckpt_sum(bounds, *nb, loom_ckpt_sum(id, sizeof id, r->homehash));
}

/* Writes one record's meta (the nb bytes of bounds, then the chunk map)
 * and data (dlen bytes) from *off on: only the chunks that changed since
 * the checkpoint t last committed, or that it holds in a file
 * LOOM_CHECKPOINT_CHAIN checkpoints old (t NULL: all of them).  Fills the
 * record's places and checksums, t's next_* and *written; -1 with errno
 * on a failed write. */
static int write_record(int fd, uint64_t seq, struct loom_ckpt_rec *r, const void *bounds,
                        size_t nb, const uint64_t *lay, uint64_t nruns, const char *data,
                        size_t dlen, struct track *t, uint64_t *off, uint64_t *written)
{
    uint64_t chunk = r->chunk, nc = dlen ? (dlen + chunk - 1) / chunk : 0;
    uint64_t *sums = malloc((nc + 1) * sizeof *sums);
    char *meta = malloc(nb + (nc + 1 + 3 * nruns) * sizeof *sums);
    if (!sums || !meta) {
        free(sums);
        free(meta);
        errno = ENOMEM;
        return -1;
    }
    uint64_t *map = (uint64_t *)(void *)(meta + nb);
    memcpy(meta, bounds, nb);
    int old = t && t->sum && t->region == r->region && t->nchunks == nc;
    uint64_t chain = (uint64_t)loom_rt_icv.checkpoint_chain;
    for (uint64_t c = 0; c < nc; c++) {
        uint64_t len = c + 1 < nc ? chunk : dlen - c * chunk;
        sums[c] = loom_ckpt_chunk_sum(data + c * chunk, len, c);
        map[c] = old && t->sum[c] == sums[c] && t->src[c] + chain > seq ? t->src[c] : seq;
    }
    if (nruns)
        memcpy(map + nc, lay, 3 * nruns * sizeof *lay);
    r->nruns = nruns;
    r->meta_off = *off;
    r->meta_len = nb + (nc + 3 * nruns) * sizeof *map;
    r->metasum = loom_ckpt_sum(meta, r->meta_len, 0x6d657461);
    r->off = (r->meta_off + r->meta_len + 4095) & ~(uint64_t)4095; /* page-aligned */
    r->len = dlen;
    r->nchunks = nc;
    r->sum = loom_ckpt_data_sum(sums, nc);
    int rc = write_at(fd, meta, r->meta_len, r->meta_off);
    for (uint64_t c = 0, e; !rc && c < nc; c = e) { /* runs of chunks written here */
        for (e = c + 1; e < nc && (map[e] == seq) == (map[c] == seq); e++)
            ;
        if (map[c] != seq)
            continue;
        uint64_t len = (e < nc ? e * chunk : dlen) - c * chunk;
        rc = write_at(fd, data + c * chunk, len, r->off + c * chunk);
        *written += len;
    }
    *off = r->off + dlen;
    if (rc || !t) {
        free(sums);
        free(meta);
        return rc;
    }
    uint64_t *src = malloc((nc + 1) * sizeof *src);
    if (!src) {
        free(sums);
        free(meta);
        errno = ENOMEM;
        return -1;
    }
    memcpy(src, map, nc * sizeof *src);
    free(meta);
    track_drop(t, 0);
    t->next_region = r->region;
    t->next_nchunks = nc;
    t->next_sum = sums;
    t->next_src = src;
    return 0;
}

/* Contract: step 3 for this rank — DIR/ckpt-N/rank-R.ckpt complete and
 * durable, or -1 with why filled.  *written, *total: data bytes written
 * and saved.  No locks: the caller made the data still (release, barrier;
 * no thread inside an allocation). */
static int write_rank_file(const char *cdir, uint64_t seq, loom_dsm_alloc **v, int n,
                           uint64_t *written, uint64_t *total, char *why, size_t wn)
{
    size_t P = (size_t)loom_rt_icv.nranks;
    int nkept = loom_ckpt_kept(-1, NULL, NULL, NULL), m = n + nkept;
    struct loom_ckpt_rec *rec = calloc((size_t)m + 1, sizeof *rec);
    uint64_t *bounds = calloc(P + 1, sizeof *bounds);
    char path[1300], tmp[1300];
    snprintf(path, sizeof path, "%s/rank-%d.ckpt", cdir, loom_rt_icv.rank);
    snprintf(tmp, sizeof tmp, "%s/rank-%d.tmp", cdir, loom_rt_icv.rank);
    int fd = -1, rc = -1;
    if (!rec || !bounds) {
        snprintf(why, wn, "out of memory");
        goto out;
    }
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        goto io;
    uint64_t off = sizeof(struct loom_ckpt_head) + (size_t)m * sizeof *rec;
    for (int i = 0; i < m; i++) {
        const void *data;
        size_t dlen, nb = 0;
        struct track *t = NULL;
        uint64_t *lay = NULL, nruns = 0;
        if (i < n) {
            describe(v[i], &rec[i], bounds, &nb, &data, &dlen);
            lay = layout(v[i], rec[i].what, &nruns);
            if (!(t = track_of(v[i]->serial))) {
                errno = ENOMEM;
                goto io;
            }
        } else { /* a kept range: small, always whole */
            const char *name;
            loom_ckpt_kept(i - n, &name, &data, &dlen);
            snprintf(rec[i].name, sizeof rec[i].name, "%s", name);
            rec[i].what = CK_KEPT;
            rec[i].bytes = dlen;
            rec[i].chunk = dlen ? dlen : 1;
        }
        int bad = write_record(fd, seq, &rec[i], bounds, nb, lay, nruns, data, dlen, t, &off,
                               written);
        free(lay);
        if (bad)
            goto io;
        *total += dlen;
        if (i == 0)
            test_kill(LOOM_KILL_WRITE); /* a file with one payload and no header */
    }
    if (m == 0)
        test_kill(LOOM_KILL_WRITE);
    struct loom_ckpt_head h = {.version = LOOM_CKPT_VERSION, .rank = (uint32_t)loom_rt_icv.rank,
                               .nranks = (uint32_t)P, .nallocs = (uint32_t)m, .seq = seq,
                               .clock = loom_dsm_clock(), .calls = loom_clock_now()};
    memcpy(h.magic, LOOM_CKPT_MAGIC, 8);
    memcpy(h.job, loom_ckpt_job(), sizeof h.job);
    h.tabsum = loom_ckpt_sum(rec, (size_t)m * sizeof *rec, 0);
    h.headsum = loom_ckpt_sum(&h, offsetof(struct loom_ckpt_head, headsum), 0);
    if (write_at(fd, &h, sizeof h, 0) || write_at(fd, rec, (size_t)m * sizeof *rec, sizeof h) ||
        ftruncate(fd, (off_t)off) || sync_fd(fd))
        goto io;
    if (close(fd)) {
        fd = -1;
        goto io;
    }
    fd = -1;
    if (rename(tmp, path))
        goto io;
    rc = 0;
    goto out;
io:
    snprintf(why, wn, "%s: %s", tmp, strerror(errno));
    unlink(tmp); /* a failed write (a full disk) leaves nothing behind */
out:
    if (fd >= 0)
        close(fd);
    free(rec);
    free(bounds);
    return rc;
}

/* Rank 0: a summary for people, DIR/ckpt-N/INFO. */
static int write_info(const char *cdir, uint64_t seq, loom_dsm_alloc **v, int n)
{
    size_t cap = 512 + (size_t)n * 200, len = 0;
    char *t = malloc(cap), path[1300], jh[33];
    if (!t)
        return -1;
    loom_rt_key_format(loom_ckpt_job(), jh);
    len += (size_t)snprintf(t + len, cap - len,
                            "loom checkpoint %llu\njob %s\nranks %d\nclock %llu\n"
                            "loom_clock calls %llu\n",
                            (unsigned long long)seq, jh, loom_rt_icv.nranks,
                            (unsigned long long)loom_dsm_clock(),
                            (unsigned long long)loom_clock_now());
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "allocation %llu '%s': %zu bytes, %zu %s of %zu B, %s\n",
                                (unsigned long long)v[i]->serial, v[i]->name, v[i]->bytes,
                                v[i]->nunits, v[i]->kind == LOOM_UNIT_ROW ? "rows" : "page units",
                                v[i]->unit, v[i]->policy->name);
    snprintf(path, sizeof path, "%s/INFO", cdir);
    int rc = write_small(path, t, len);
    free(t);
    return rc;
}

/* Remove DIR/ckpt-K for every K < keep: neither of the newest two
 * checkpoints needs it.  Errors are ignored (another host may be
 * removing them). */
static void prune(const char *dir, uint64_t keep)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned long long k;
        int used = 0;
        if (sscanf(e->d_name, "ckpt-%llu%n", &k, &used) != 1 || e->d_name[used] || k >= keep)
            continue;
        char sub[1300];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        DIR *s = opendir(sub);
        struct dirent *f;
        while (s && (f = readdir(s))) {
            char p[1600];
            if (strcmp(f->d_name, ".") && strcmp(f->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", sub, f->d_name);
                unlink(p);
            }
        }
        if (s)
            closedir(s);
        rmdir(sub);
    }
    closedir(d);
}

/* A checkpoint that was not taken: this rank's files of it go (and rank
 * 0's INFO, and the directory once empty), so that a failed write on a
 * full disk does not keep the disk full.  No committed checkpoint is
 * touched: this one's number is past every one LATEST ever named. */
static void discard(const char *cdir)
{
    char p[1300];
    snprintf(p, sizeof p, "%s/rank-%d.ckpt", cdir, loom_rt_icv.rank);
    unlink(p);
    if (loom_rt_icv.rank == 0) {
        snprintf(p, sizeof p, "%s/INFO", cdir);
        unlink(p);
    }
    rmdir(cdir); /* fails while another rank's file is still there */
}

int loom_checkpoint(const char *dir)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if (!dir || !*dir)
        dir = loom_rt_icv.checkpoint_dir;
    if (!*dir) {
        if (loom_rt_icv.rank == 0)
            loom_rt_log("loom_checkpoint: no directory: pass one, or set LOOM_CHECKPOINT_DIR");
        return LOOM_ERR_ARG;
    }
    if (strlen(dir) > 1000) {
        if (loom_rt_icv.rank == 0)
            loom_rt_log("loom_checkpoint: the directory name is longer than 1000 bytes");
        return LOOM_ERR_ARG;
    }
    loom_ckpt_restart_close();
    int P = loom_rt_icv.nranks;
    double t0 = loom_wtime();
    /* the job's identity for the headers; the lock of a directory other
     * than LOOM_CHECKPOINT_DIR (that one is taken at start: restart.c) */
    loom_ckpt_job_start();
    if (strcmp(dir, loom_rt_icv.checkpoint_dir)) {
        char lwhy[1600] = "";
        int32_t lk = loom_ckpt_lock_all(dir, lwhy, sizeof lwhy) ? 1 : 0, mine = lk;
        loom_allreduce(LOOM_IN_PLACE, &lk, 1, LOOM_INT32, LOOM_MAX);
        if (lk) {
            if (mine)
                loom_rt_log("checkpoint not taken: %s", lwhy);
            return LOOM_ERR_IO;
        }
    }
    if (P > 1) { /* step 1: the homes hold everything, no SSP allreduce is in flight */
        loom_dsm_allreduce_ssp_quiesce();
        loom_release();
        loom_rt_coll_barrier();
    }
    uint64_t latest = 0;
    loom_ckpt_read_latest(dir, &latest);
    int64_t seq = (int64_t)(latest > loom_ckpt_last_seq ? latest : loom_ckpt_last_seq) + 1;
    loom_allreduce(LOOM_IN_PLACE, &seq, 1, LOOM_INT64, LOOM_MAX);
    char cdir[1100], why[1500] = "";
    snprintf(cdir, sizeof cdir, "%s/ckpt-%06llu", dir, (unsigned long long)seq);
    int n = 0, rc = 0;
    uint64_t written = 0, total = 0;
    loom_dsm_alloc **v = live_allocs(&n);
    if (!v)
        rc = -1, snprintf(why, sizeof why, "out of memory");
    else if (loom_ckpt_make_dirs(cdir) || fsync_dir(dir))
        rc = -1, snprintf(why, sizeof why, "cannot create it: %s", strerror(errno));
    else if (write_rank_file(cdir, (uint64_t)seq, v, n, &written, &total, why, sizeof why))
        rc = -1;
    else if (loom_rt_icv.rank == 0 && write_info(cdir, (uint64_t)seq, v, n))
        rc = -1, snprintf(why, sizeof why, "%s/INFO: %s", cdir, strerror(errno));
    else if (fsync_dir(cdir))
        rc = -1, snprintf(why, sizeof why, "%s: %s", cdir, strerror(errno));
    free(v);
    if (rc)
        loom_rt_log("checkpoint %s: %s", cdir, why);
    int32_t st = rc ? 1 : 0; /* step 4 */
    loom_allreduce(LOOM_IN_PLACE, &st, 1, LOOM_INT32, LOOM_MAX);
    if (st) {
        if (loom_rt_icv.rank == 0)
            loom_rt_log("checkpoint %s was not taken; %s/LATEST still names the previous one",
                     cdir, dir);
        discard(cdir);
        tracks_end(0);
        return LOOM_ERR_IO;
    }
    test_kill(LOOM_KILL_COMMIT);
    if (loom_rt_icv.local_rank == 0 || P == 1) { /* step 5 */
        char path[1100], text[64];
        snprintf(path, sizeof path, "%s/LATEST", dir);
        int len = snprintf(text, sizeof text, "ckpt-%06llu\n", (unsigned long long)seq);
        if (write_small(path, text, (size_t)len) || fsync_dir(dir)) {
            loom_rt_log("checkpoint %s: cannot update %s: %s", cdir, path, strerror(errno));
            st = 1;
        }
    }
    loom_allreduce(LOOM_IN_PLACE, &st, 1, LOOM_INT32, LOOM_MAX);
    loom_ckpt_last_seq = (uint64_t)seq;
    if (st) {
        tracks_end(0);
        return LOOM_ERR_IO;
    }
    /* step 6: keep the previous checkpoint and every file a chunk of it or
     * of the new one lies in, on any rank */
    int64_t keep = (int64_t)oldest_needed((uint64_t)seq - 1);
    loom_allreduce(LOOM_IN_PLACE, &keep, 1, LOOM_INT64, LOOM_MIN);
    tracks_end(1);
    if (loom_rt_icv.local_rank == 0 || P == 1)
        prune(dir, (uint64_t)keep);
    if (loom_rt_icv.stats)
        loom_rt_log("stats checkpoint %s: %llu of %llu data bytes written (%.1f%%), %.3f s",
                 cdir, (unsigned long long)written, (unsigned long long)total,
                 total ? 100.0 * (double)written / (double)total : 100.0, loom_wtime() - t0);
    return LOOM_OK;
}

/* Contract: loom_clock's tail, on every rank at its calls-th clock (so
 * collective like loom_clock's other work).  Closes the restart window,
 * takes the automatic checkpoint, and runs LOOM_TEST_KILL's clock points. */
int loom_ckpt_on_clock(uint64_t calls)
{
    int rc = LOOM_OK;
    loom_ckpt_restart_close();
    if (loom_rt_icv.checkpoint_every > 0 && calls % (uint64_t)loom_rt_icv.checkpoint_every == 0)
        rc = loom_checkpoint(NULL);
    test_kill(LOOM_KILL_CLOCK);
    test_kill(LOOM_KILL_STOP);
    return rc;
}
