/* spawn.c — start one rank: a local child, or a child through the remote shell.
 *
 * A rank's environment is the launcher's, plus LOOM_RANK, LOOM_NRANKS,
 * LOOM_LOCAL_RANK, LOOM_RENDEZVOUS and LOOM_JOB_KEY.  A local child simply
 * inherits it (and gets the job's UCX_POSIX_DIR: shm.c).  A remote one gets the job variables and every LOOM_*,
 * OMP_* and UCX_* variable of the launcher on the command line through
 * env(1):  RSH... HOST env VAR=VALUE... PROGRAM ARGS...
 * For ssh and rsh, whose remote side runs a shell, every word is quoted
 * and the command first moves to the launcher's working directory; other
 * remote shells (e.g. "ip netns exec") run the words as they are.
 *
 * Every child leads its own process group, so loomrun can stop it and
 * whatever it started, and gets SIGKILL if loomrun dies. */
#include "internal.h"
#include "loomrun.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

int loom_rsh_is_shell(char **rsh)
{
    const char *b = strrchr(rsh[0], '/');
    b = b ? b + 1 : rsh[0];
    return !strcmp(b, "ssh") || !strcmp(b, "rsh");
}

/* Append s to the growing string *out, single-quoted for a POSIX shell. */
static void append_quoted(char **out, size_t *len, size_t *cap, const char *s)
{
    size_t need = *len + 4 * strlen(s) + 4;
    if (need > *cap) {
        *cap = need * 2;
        *out = realloc(*out, *cap);
        if (!*out)
            _exit(127);
    }
    char *p = *out + *len;
    if (*len)
        *p++ = ' ';
    *p++ = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            memcpy(p, "'\\''", 4);
            p += 4;
        } else
            *p++ = *s;
    }
    *p++ = '\'';
    *p = 0;
    *len = (size_t)(p - *out);
}

static int forwarded(const char *kv)
{
    return !strncmp(kv, "LOOM_", 5) || !strncmp(kv, "OMP_", 4) || !strncmp(kv, "UCX_", 4);
}

/* In the child: build the remote command and exec the remote shell. */
static void exec_remote(const job *j, const rank_proc *p, char **jobvars)
{
    int nrsh = 0, nenv = 0, nargs = 0;
    while (j->rsh[nrsh]) nrsh++;
    while (environ[nenv]) nenv++;
    while (j->argv[nargs]) nargs++;
    char **words = calloc((size_t)(nenv + nargs + 16), sizeof *words);
    int w = 0;
    words[w++] = "env";
    for (int i = 0; jobvars[i]; i++)
        words[w++] = jobvars[i];
    for (int i = 0; i < nenv; i++)
        if (forwarded(environ[i]))
            words[w++] = environ[i];
    for (int i = 0; i < nargs; i++)
        words[w++] = j->argv[i];
    words[w] = NULL;
    char **av = calloc((size_t)(nrsh + w + 4), sizeof *av);
    int a = 0;
    for (int i = 0; i < nrsh; i++)
        av[a++] = j->rsh[i];
    av[a++] = (char *)p->host->name;
    if (loom_rsh_is_shell(j->rsh)) {
        char *cmd = NULL, cwd[4096];
        size_t len = 0, cap = 0;
        if (getcwd(cwd, sizeof cwd)) {
            append_quoted(&cmd, &len, &cap, "cd");
            append_quoted(&cmd, &len, &cap, cwd);
            /* "2>/dev/null ;" must stay unquoted */
            cmd = realloc(cmd, len + 32);
            strcpy(cmd + len, " 2>/dev/null; exec");
            len += strlen(" 2>/dev/null; exec");
            cap = len + 1;
        }
        for (int i = 0; i < w; i++)
            append_quoted(&cmd, &len, &cap, words[i]);
        av[a++] = cmd;
    } else
        for (int i = 0; i < w; i++)
            av[a++] = words[i];
    av[a] = NULL;
    execvp(av[0], av);
    fprintf(stderr, "loomrun: cannot run the remote shell '%s': %s\n", av[0],
            strerror(errno));
    _exit(127);
}

int loom_spawn(const job *j, rank_proc *p)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    if (j->tag && (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))) {
        perror("loomrun: pipe");
        return -1;
    }
    char v[5][400];
    snprintf(v[0], sizeof v[0], "LOOM_RANK=%d", p->rank);
    snprintf(v[1], sizeof v[1], "LOOM_NRANKS=%d", j->n);
    snprintf(v[2], sizeof v[2], "LOOM_LOCAL_RANK=%d", p->local_rank);
    snprintf(v[3], sizeof v[3], "LOOM_RENDEZVOUS=%s", j->rendezvous);
    snprintf(v[4], sizeof v[4], "LOOM_JOB_KEY=%s", j->key_hex);
    char *jobvars[] = {v[0], v[1], v[2], v[3], v[4], NULL};
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("loomrun: fork");
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (j->tag) {
            dup2(po[1], 1);
            dup2(pe[1], 2);
        }
        if (p->rank != 0) {
            int nul = open("/dev/null", O_RDONLY);
            if (nul >= 0)
                dup2(nul, 0);
        }
        if (!p->host->local)
            exec_remote(j, p, jobvars);
        for (int i = 0; jobvars[i]; i++)
            putenv(jobvars[i]);
        if (j->shm_dir)
            setenv("UCX_POSIX_DIR", j->shm_dir, 1);
        execvp(j->argv[0], j->argv);
        fprintf(stderr, "loomrun: cannot run '%s': %s\n", j->argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here, against the race with kill(-pid) */
    p->pid = pid;
    p->running = 1;
    if (j->tag) {
        close(po[1]);
        close(pe[1]);
        p->out = (out_stream){.fd = po[0], .to = 1};
        p->err = (out_stream){.fd = pe[0], .to = 2};
    } else {
        p->out.fd = p->err.fd = -1;
    }
    return 0;
}
