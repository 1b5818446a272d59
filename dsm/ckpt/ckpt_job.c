/* ckpt_job.c — the job's identity in its checkpoints, and the lock on a
 * checkpoint directory (docs/checkpoint.md, "Job identity and the lock").
 *
 * A job is named by 16 random bytes drawn by rank 0 at its first start
 * and written into every rank file's header; a restart takes the name
 * from the checkpoint it resumes, so it lasts across restarts.  Each run
 * (a start or a restart) also draws a run id of 8 bytes.
 *
 * The lock: DIR/LOCK, held with flock(2) by the process that took it for
 * as long as it lives (the kernel drops it when the process dies, however
 * it dies: a killed job never leaves it stuck), holding one line
 * "job HEX run HEX pid N host NAME" for the message of a job that finds
 * it taken.  Rank 0 takes it first, then each host's local rank 0: on a
 * directory shared by the job's hosts (where the lock may be one for all
 * of them) a rank that finds it held by its own run goes on; on a
 * directory of each host's own, each takes its host's.  A file system
 * without flock support (ENOLCK, EOPNOTSUPP) gets no lock. */
#include "checkpoint.h"
#include "../dsm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static uint8_t job[16], run[8];
static int started;
static struct { char dir[1100]; int fd; } held[8];
static int nheld;

void loom_ckpt_job_start(void)
{
    if (started)
        return;
    uint8_t b[32] = {0};
    if (loom_rt_icv.rank == 0 && (loom_rt_key_generate(b) || loom_rt_key_generate(b + 16)))
        loom_rt_die(1, "cannot draw the job's identity: no random bytes");
    if (loom_rt_icv.nranks > 1)
        loom_bcast(b, sizeof b, 0);
    memcpy(job, b, 16);
    memcpy(run, b + 16, 8);
    started = 1;
}

const uint8_t *loom_ckpt_job(void) { return job; }

/* The lock file's line for this process. */
static int lock_line(char *b, size_t n)
{
    char jh[33], host[64] = "";
    loom_rt_key_format(job, jh);
    gethostname(host, sizeof host - 1);
    int len = snprintf(b, n, "job %s run ", jh);
    for (int i = 0; i < 8; i++)
        len += snprintf(b + len, n - (size_t)len, "%02x", run[i]);
    len += snprintf(b + len, n - (size_t)len, " pid %d host %s\n", (int)getpid(), host);
    return len;
}

static void write_line(int fd)
{
    char line[256];
    int len = lock_line(line, sizeof line);
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)len, 0) == len)
        return; /* the line only explains; the lock is what counts */
}

void loom_ckpt_job_set(const uint8_t id[16])
{
    memcpy(job, id, 16);
    for (int i = 0; i < nheld; i++)
        write_line(held[i].fd);
}

int loom_ckpt_lock(const char *dir, char *why, size_t wn)
{
    for (int i = 0; i < nheld; i++)
        if (!strcmp(held[i].dir, dir))
            return 0;
    char path[1200], line[256], mine[256];
    if (loom_ckpt_make_dirs(dir)) {
        snprintf(why, wn, "checkpoint directory %s: cannot create it: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/LOCK", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(why, wn, "checkpoint directory %s: cannot open %s: %s", dir, path,
                 strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        write_line(fd);
        if (nheld < 8) {
            snprintf(held[nheld].dir, sizeof held[nheld].dir, "%s", dir);
            held[nheld++].fd = fd;
        } /* else: kept locked, just not looked up again */
        return 0;
    }
    int e = errno;
    if (e != EWOULDBLOCK) { /* no flock here (ENOLCK, EOPNOTSUPP): no lock */
        close(fd);
        return 0;
    }
    ssize_t n = pread(fd, line, sizeof line - 1, 0);
    close(fd);
    line[n > 0 ? n : 0] = 0;
    line[strcspn(line, "\n")] = 0;
    lock_line(mine, sizeof mine);
    /* "job J run R": the same run on another host of a shared directory */
    const char *r1 = strstr(line, " run "), *r2 = strstr(mine, " run ");
    if (r1 && r2 && !strncmp(r1, r2, 5 + 16))
        return 0;
    char jh[40] = "", host[80] = "", s1[LOOM_SHOWN_BUF], s2[LOOM_SHOWN_BUF];
    char who[200] = "another job";
    int pid = 0;
    if (sscanf(line, "job %39s run %*s pid %d host %79s", jh, &pid, host) == 3)
        snprintf(who, sizeof who, "job %s (pid %d on host %s)",
                 loom_rt_shown(jh, strlen(jh), s1, sizeof s1), pid,
                 loom_rt_shown(host, strlen(host), s2, sizeof s2));
    snprintf(why, wn, "LOOM_CHECKPOINT_DIR %s is in use by %s: two jobs must not share a "
             "checkpoint directory (give this one its own, or wait for that job to end)",
             dir, who);
    return -1;
}

int loom_ckpt_lock_all(const char *dir, char *why, size_t wn)
{
    int bad = loom_rt_icv.rank == 0 ? loom_ckpt_lock(dir, why, wn) : 0;
    if (loom_rt_icv.nranks > 1) {
        loom_rt_coll_barrier(); /* rank 0's line is in place */
        if (loom_rt_icv.rank != 0 && loom_rt_icv.local_rank == 0)
            bad = loom_ckpt_lock(dir, why, wn);
    }
    return bad;
}
