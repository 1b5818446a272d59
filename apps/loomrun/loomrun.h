/* loomrun.h — what loomrun's files share: one record per rank it started. */
#ifndef LOOMRUN_H
#define LOOMRUN_H

#include "hostfile.h"
#include <sys/types.h>

/* A stream of a rank's output, forwarded line by line with a tag. */
typedef struct out_stream {
    int fd;          /* read end of the pipe, -1 when closed */
    int to;          /* 1 (stdout), 2 (stderr), a file of --output-filename (its lines
                        untagged), or -1: dropped (--output-rank) */
    int file;        /* `to` is a file of this stream's own */
    char buf[8192];
    size_t len;
} out_stream;

typedef struct rank_proc {
    int rank, local_rank;
    const loom_host *host;
    pid_t pid;          /* the child: the program, or the remote shell */
    int running;
    int status;         /* wait status once reaped */
    double lost_at;     /* >0: the rendezvous reported it lost at this time */
    char lost_why[512];
    out_stream out, err;
} rank_proc;

/* What every rank is started with. */
typedef struct job {
    int n;
    rank_proc *ranks;
    char **argv;        /* program and its arguments */
    char **rsh;         /* remote shell command words, NULL-terminated */
    char rendezvous[300];
    char key_hex[33];
    int tag;            /* tag output lines with the rank */
    const char *shm_dir;/* UCX_POSIX_DIR for local ranks (shm.c), or NULL */
} job;

/* spawn.c: start rank p of job j.  Returns 0, or -1 (message printed). */
int loom_spawn(const job *j, rank_proc *p);
/* spawn.c: 1 if rsh names ssh/rsh (the remote side runs a shell). */
int loom_rsh_is_shell(char **rsh);

/* shm.c: make the job's directory for UCX's shared-memory files (NULL
 * when the user set UCX_POSIX_DIR, or none can be made); remove it and
 * what is left in it after the job. */
const char *loom_shm_dir_make(void);
void loom_shm_dir_remove(const char *dir);
/* shm.c: after the job, remove the SysV segments the processes pids (n of
 * them: the local ranks) created and nobody has attached. */
void loom_shm_sweep_sysv(const pid_t *pids, int n);

/* output.c: forward what stream s has; prefix "[rank] " when tag.
 * Returns 0 at EOF (s->fd closed), else 1. */
int loom_out_pump(out_stream *s, int rank, int tag);
/* output.c: flush a partial last line. */
void loom_out_flush(out_stream *s, int rank, int tag);
/* output.c: where rank p's streams go.  dir (may be NULL): into
 * dir/rank.N/stdout and dir/rank.N/stderr instead of loomrun's own
 * (Open MPI's --output-filename); only >= 0: the standard output of the
 * other ranks is dropped unless it goes to a file (their standard error
 * still passes).  Returns 0, or -1 after a message naming the file. */
int loom_out_route(rank_proc *p, const char *dir, int only);

#endif
