/* shm.c — a job's own directory for UCX's shared-memory files.
 *
 * UCX (1.13, uct posix) makes each shared-memory segment a file in
 * /dev/shm, fills it (0.5 to 4 MB) to be sure the memory is there, and
 * only then unlinks it; a rank stopped in between (the job ended while
 * the rank was starting UCX) left the file in /dev/shm for good.  So the
 * local ranks get UCX_POSIX_DIR=/dev/shm/loom.XXXXXX, made here before
 * they start, and loomrun removes that directory with whatever is left in
 * it when the job ends.  A user's own UCX_POSIX_DIR is left alone, and so
 * are ranks on other hosts (their remote shell starts them).
 *
 * UCX's SysV segments (shmget, then shmat and IPC_RMID) leak the same way
 * when a rank dies between shmget and IPC_RMID: after the job loomrun
 * removes every segment of its user that no process has attached and that
 * one of its local ranks created (/proc/sysvipc/shm's cpid). */
#include "loomrun.h"

#include <dirent.h>
#include <sys/shm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char shm_dir[64];

const char *loom_shm_dir_make(void)
{
    if (getenv("UCX_POSIX_DIR"))
        return NULL;
    snprintf(shm_dir, sizeof shm_dir, "/dev/shm/loom.XXXXXX");
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
