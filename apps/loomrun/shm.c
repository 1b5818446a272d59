/* shm.c — a job's own directory for UCX's shared-memory files.
 *
 * UCX (1.13, uct posix) makes each shared-memory segment a file in
 * /dev/shm, fills it (0.5 to 4 MB) to be sure the memory is there, and
 * only then unlinks it; a rank stopped in between (the job ended while
 * the rank was starting UCX) left the file in /dev/shm for good.  So the
 * local ranks get UCX_POSIX_DIR=/dev/shm/loom.PID.XXXXXX, made here before
 * they start, and loomrun removes that directory with whatever is left in
 * it when the job ends.  Its name holds loomrun's pid: a loomrun killed
 * with SIGKILL leaves it, and the next one removes it.  A user's own UCX_POSIX_DIR is left alone, and so
 * are ranks on other hosts (their remote shell starts them).
 *
 * UCX's SysV segments (shmget, then shmat and IPC_RMID) leak the same way
 * when a rank dies between shmget and IPC_RMID: after the job loomrun
 * removes every segment of its user that no process has attached and that
 * one of its local ranks created (/proc/sysvipc/shm's cpid). */
#include "loomrun.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char shm_dir[64];

/* Directories of loomruns that died without removing theirs (SIGKILL):
 * /dev/shm/loom.PID.XXXXXX of this user whose PID is gone. */
static void sweep_stale(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid = 0, used = 0;
        char p[128];
        struct stat st;
        if (sscanf(e->d_name, "loom.%d.%*6[A-Za-z0-9]%n", &pid, &used) != 1 ||
            e->d_name[used] || pid <= 0 ||
            snprintf(p, sizeof p, "/dev/shm/%s", e->d_name) >= (int)sizeof p ||
            lstat(p, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
            kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        loom_shm_dir_remove(p);
    }
    if (d)
        closedir(d);
}

const char *loom_shm_dir_make(void)
{
    if (getenv("UCX_POSIX_DIR"))
        return NULL;
    sweep_stale();
    snprintf(shm_dir, sizeof shm_dir, "/dev/shm/loom.%d.XXXXXX", (int)getpid());
    return mkdtemp(shm_dir) ? shm_dir : NULL; /* no /dev/shm: UCX's default */
}

void loom_shm_dir_remove(const char *dir)
{
    if (!dir)
        return;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[128];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

void loom_shm_sweep_sysv(const pid_t *pids, int n)
{
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    char line[512];
    if (!f)
        return;
    if (!fgets(line, sizeof line, f)) { /* the header */
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        long long key, size;
        int id, perms, cpid, lpid, nattch, uid;
        if (sscanf(line, "%lld %d %o %lld %d %d %d %d", &key, &id, &perms, &size, &cpid, &lpid,
                   &nattch, &uid) != 8 || nattch != 0 || (uid_t)uid != geteuid())
            continue;
        for (int r = 0; r < n; r++)
            if (pids[r] == cpid) {
                shmctl(id, IPC_RMID, NULL);
                break;
            }
    }
    fclose(f);
}
