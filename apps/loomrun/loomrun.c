/* loomrun.c — the launcher: options, the rendezvous, and the job's event loop.
 *
 *   loomrun -n N [-H hostfile] [--rsh CMD] [--tag-output|--no-tag-output]
 *           [--output-filename DIR] [--output-rank R] [--restart] [--] program [args...]
 *
 * loomrun listens for the rendezvous, starts N ranks (placed by slot over
 * the hostfile's hosts, all local without one), forwards their output
 * tagged with the rank, and watches them: a rank that exits non-zero, dies
 * by a signal, goes silent (LOOM_TIMEOUT) or aborts ends the job with one
 * message naming it; every other rank is then stopped (SIGTERM, SIGKILL
 * two seconds later) and loomrun exits with the first non-zero code.
 * Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the job the same way.  A job
 * of several ranks none of which called loom_init ran the program that
 * many times over: loomrun says so once at the end. */
#include "internal.h"
#include "loomrun.h"
#include "alloc.h"
#include "../../dsm/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOST_GRACE 1.0 /* s to wait for a better explanation of a loss */
#define KILL_GRACE 2.0 /* s between SIGTERM and SIGKILL */

static int sig_pipe[2];
static job J;
static loom_rv *rv;
static int exit_code;         /* first non-zero exit of a rank, or ours */
static int stopping;          /* the job is being torn down */
static double kill_at;        /* when to SIGKILL what still runs */

static void usage(FILE *f)
{
    fputs("Usage: loomrun [-n N] [-H hostfile] [OPTION]... [--] program [args...]\n"
          "\n"
          "Starts the ranks of a Loom job: N copies of program, local or on the\n"
          "hostfile's hosts, and passes their output through.\n"
          "\n"
          "Options:\n"
          "  -n, --np N          number of ranks (default: the hostfile's slots, else the\n"
          "                      Slurm, PBS or LSF allocation's tasks, else 1)\n"
          "  -H, --hostfile FILE lines 'host [slots=N]'; without it the allocation's nodes,\n"
          "                      or outside one every rank is local\n"
          "      --rsh CMD       remote shell for non-local hosts (default: LOOM_RSH or ssh),\n"
          "                      e.g. --rsh \"ip netns exec\"\n"
          "      --tag-output    prefix output lines with [rank] (default when N > 1)\n"
          "      --no-tag-output pass output through untouched\n"
          "      --output-filename DIR  each rank's output into DIR/rank.N/stdout and\n"
          "                      DIR/rank.N/stderr instead\n"
          "      --output-rank R only rank R's standard output is shown (the others'\n"
          "                      standard error still is)\n"
          "      --restart       resume the job from the newest checkpoint in\n"
          "                      LOOM_CHECKPOINT_DIR (sets LOOM_RESTART=true)\n"
          "  -h, --help          print this help and exit\n"
          "  -V, --version       print the version and exit\n"
          "Environment: LOOM_*, OMP_* and UCX_* are forwarded to every rank; see docs/env.md.\n",
          f);
}

static void on_signal(int sig)
{
    unsigned char c = (unsigned char)sig;
    ssize_t w = write(sig_pipe[1], &c, 1);
    (void)w;
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(buf, sizeof buf, "loomrun: ");
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    for (int k = 0; k < n; k++) /* what it quotes (an argument, a rank's text) stays text */
        if ((unsigned char)buf[k] < 0x20 || buf[k] == 0x7f)
            buf[k] = '?';
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

/* Stop the job: print why (if anything to say), tell joined ranks to exit,
 * SIGTERM every child's process group.  Idempotent. */
static void stop_job(int code, const char *why)
{
    if (stopping)
        return;
    stopping = 1;
    if (!exit_code)
        exit_code = code ? code : 1;
    if (why)
        msg("%s; stopping the job", why);
    loom_rt_rv_abort_all(rv, exit_code, why ? why : "the job was stopped");
    for (int i = 0; i < J.n; i++)
        if (J.ranks[i].running) {
            kill(-J.ranks[i].pid, SIGTERM);
            kill(-J.ranks[i].pid, SIGCONT); /* a stopped rank must see it */
        }
    kill_at = loom_wtime() + KILL_GRACE;
}

static const char *where(const rank_proc *p, char *buf, size_t n)
{
    snprintf(buf, n, "rank %d (host %s, pid %d)", p->rank, p->host->name, (int)p->pid);
    return buf;
}

/* A rank's process ended with wait status st. */
static void on_exit_status(rank_proc *p, int st)
{
    char w[400], why[700];
    p->running = 0;
    p->status = st;
    if (stopping)
        return;
    int joined = loom_rt_rv_joined(rv, p->rank);
    if (WIFSIGNALED(st)) {
        snprintf(why, sizeof why, "%s was killed by signal %d (%s)", where(p, w, sizeof w),
                 WTERMSIG(st), strsignal(WTERMSIG(st)));
        stop_job(128 + WTERMSIG(st), why);
        return;
    }
    int code = WEXITSTATUS(st);
    if (code == 0) {
        /* A clean exit is fine unless ranks are waiting for this one. */
        if (!joined && loom_rt_rv_njoined(rv) > 0) {
            snprintf(why, sizeof why, "%s exited before joining the job while other "
                     "ranks wait for it", where(p, w, sizeof w));
            stop_job(1, why);
        }
        return;
    }
    if (code == LOOM_EXIT_PEER || code == LOOM_EXIT_ABORTED) {
        /* It left because of someone else's failure: keep looking for the
         * culprit briefly; stop_job below runs if none shows up. */
        if (!p->lost_at) {
            p->lost_at = loom_wtime();
            snprintf(p->lost_why, sizeof p->lost_why, "%s left the job (exit %d)",
                     where(p, w, sizeof w), code);
        }
        if (!exit_code)
            exit_code = code;
        return;
    }
    if (J.n == 1 && p->host->local) { /* like the program run alone: its own message */
        stop_job(code, NULL);
        return;
    }
    if (!joined && !p->host->local && (code == 255 || code == 127))
        snprintf(why, sizeof why, "%s: the remote shell '%s' failed with status %d before "
                 "the rank started (host unreachable or program missing there?)",
                 where(p, w, sizeof w), J.rsh[0], code);
    else
        snprintf(why, sizeof why, "%s exited with status %d%s", where(p, w, sizeof w),
                 code, joined ? "" : " before joining the job");
    stop_job(code, why);
}

static void on_rv_event(const loom_rv_event *ev);

/* Hand every event the rendezvous has, given what poll(2) said of its
 * fds, to on_rv_event. */
static void rv_drain(const struct pollfd *fds, int n)
{
    loom_rv_event ev;
    for (int k = loom_rt_rv_step(rv, fds, n, &ev); k != LOOM_RV_NONE;
         k = loom_rt_rv_step(rv, fds, 0, &ev))
        on_rv_event(&ev);
}

/* Handle what the rendezvous has for us now, without waiting.  A rank
 * that calls loom_abort sends its ABORT frame before it exits, so the
 * frame is already here when its exit status is: reading it first lets
 * the rank's own reason stop the job, with no second, generic message. */
static void rv_now(void)
{
    static struct pollfd *fds;
    static int cap;
    int need = loom_rt_rv_nfds(rv);
    if (need > cap) {
        struct pollfd *f = realloc(fds, (size_t)need * sizeof *f);
        if (!f)
            return; /* the main loop still reads them, only later */
        fds = f, cap = need;
    }
    int n = loom_rt_rv_pollfds(rv, fds);
    if (poll(fds, (nfds_t)n, 0) > 0)
        rv_drain(fds, n);
}

static void reap(void)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        rv_now();
        for (int i = 0; i < J.n; i++)
            if (J.ranks[i].pid == pid && J.ranks[i].running)
                on_exit_status(&J.ranks[i], st);
    }
}

static void on_rv_event(const loom_rv_event *ev)
{
    if (ev->kind == LOOM_RV_LOST && ev->rank >= 0 && ev->rank < J.n) {
        rank_proc *p = &J.ranks[ev->rank];
        if (p->running && !p->lost_at) {
            p->lost_at = loom_wtime();
            snprintf(p->lost_why, sizeof p->lost_why, "%s", ev->text);
        } else if (!p->running && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0 &&
                   !stopping) {
            char w[400], why[600];
            snprintf(why, sizeof why, "%s exited without calling loom_finalize while the "
                     "job was running", where(p, w, sizeof w));
            stop_job(1, why);
        }
    } else if (ev->kind == LOOM_RV_ABORT) {
        stop_job(ev->code ? ev->code : 1, NULL); /* the rank said why */
    }
}

/* Losses not explained within LOST_GRACE end the job with their report. */
static void check_losses(void)
{
    double now = loom_wtime();
    for (int i = 0; i < J.n && !stopping; i++)
        if (J.ranks[i].lost_at && now - J.ranks[i].lost_at > LOST_GRACE)
            stop_job(exit_code ? exit_code : 1, J.ranks[i].lost_why);
}

/* The address ranks on remote hosts use to reach us: LOOM_RENDEZVOUS_HOST,
 * or our source address on the route to the first remote host. */
static int advertised_host(const loom_hostlist *hl, char *out, size_t n)
{
    if (loom_rt_icv.rendezvous_host[0]) {
        snprintf(out, n, "%s", loom_rt_icv.rendezvous_host);
        return 0;
    }
    for (int i = 0; i < hl->n; i++) {
        if (hl->hosts[i].local)
            continue;
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
        if (getaddrinfo(hl->hosts[i].name, "9", &hints, &ai)) {
            msg("cannot resolve host '%s' to choose the address its ranks use to reach "
                "loomrun: set LOOM_RENDEZVOUS_HOST to an address of this machine",
                hl->hosts[i].name);
            return -1;
        }
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct sockaddr_in me;
        socklen_t ml = sizeof me;
        int ok = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                 getsockname(fd, (struct sockaddr *)&me, &ml) == 0;
        freeaddrinfo(ai);
        if (fd >= 0)
            close(fd);
        if (!ok) {
            msg("host '%s' is unreachable (no route): %s", hl->hosts[i].name,
                strerror(errno));
            return -1;
        }
        inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)n);
        return 0;
    }
    snprintf(out, n, "127.0.0.1");
    return 0;
}

/* 1 if prog can be executed here (as execvp would find it). */
static int runnable(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *s = path ? path : "/usr/bin:/bin"; *s;) {
        size_t l = strcspn(s, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)l, l ? s : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 1;
        s += l + (s[l] == ':');
    }
    return 0;
}

/* After a job of n > 1 ranks that all ended well: if none of them called
 * loom_init, the program ran n times over, each copy doing all the work
 * (an OpenMP program not yet ported): say so once. */
static void never_joined(int n)
{
    if (n < 2 || exit_code || stopping)
        return;
    for (int r = 0; r < n; r++)
        if (loom_rt_rv_joined(rv, r))
            return;
    msg("none of the %d ranks called loom_init: '%s' ran %d times, each copy doing all "
        "the work; a Loom program calls loom_init first (docs/openmp.md)", n, J.argv[0], n);
}

static void event_loop(void)
{
    int cap = loom_rt_rv_nfds(rv) + 2 * J.n + 2 * (2 * J.n + 16) + 8;
    struct pollfd *fds = calloc((size_t)cap, sizeof *fds);
    int *who = calloc((size_t)cap, sizeof *who);
    for (;;) {
        int live = 0, open_streams = 0;
        for (int i = 0; i < J.n; i++) {
            live += J.ranks[i].running;
            open_streams += (J.ranks[i].out.fd >= 0) + (J.ranks[i].err.fd >= 0);
        }
        if (!live && !open_streams)
            break;
        int n = 0;
        fds[n++] = (struct pollfd){.fd = sig_pipe[0], .events = POLLIN};
        int rv0 = n;
        n += loom_rt_rv_pollfds(rv, fds + n);
        int nrv = n - rv0;
        for (int i = 0; i < J.n; i++) {
            if (J.ranks[i].out.fd >= 0) {
                who[n] = 2 * i;
                fds[n++] = (struct pollfd){.fd = J.ranks[i].out.fd, .events = POLLIN};
            }
            if (J.ranks[i].err.fd >= 0) {
                who[n] = 2 * i + 1;
                fds[n++] = (struct pollfd){.fd = J.ranks[i].err.fd, .events = POLLIN};
            }
        }
        if (poll(fds, (nfds_t)n, 100) < 0 && errno != EINTR) {
            perror("loomrun: poll");
            exit(1);
        }
        if (fds[0].revents) {
            unsigned char sigs[64];
            ssize_t k = read(sig_pipe[0], sigs, sizeof sigs);
            for (ssize_t i = 0; i < k; i++) {
                if (sigs[i] == SIGCHLD)
                    continue;
                char why[100];
                snprintf(why, sizeof why, "interrupted by %s", strsignal(sigs[i]));
                if (stopping) { /* a second Ctrl-C: no more grace */
                    kill_at = 0;
                    continue;
                }
                stop_job(128 + sigs[i], why);
            }
        }
        for (int i = rv0 + nrv; i < n; i++)
            if (fds[i].revents) {
                rank_proc *p = &J.ranks[who[i] / 2];
                loom_out_pump(who[i] % 2 ? &p->err : &p->out, p->rank, J.tag);
            }
        reap();
        rv_drain(fds + rv0, nrv);
        check_losses();
        if (stopping && kill_at >= 0 && loom_wtime() >= kill_at) {
            for (int i = 0; i < J.n; i++)
                if (J.ranks[i].running)
                    kill(-J.ranks[i].pid, SIGKILL);
            kill_at = -1;
        }
    }
    free(fds);
    free(who);
}

/* Without -H: the batch allocation loomrun runs in (alloc.c), whose
 * slots also give the rank count when -n is not given, said on stderr
 * (more ranks than slots is an error); else every rank on this machine.
 * Returns 0, or -1 after one message. */
static int from_allocation(loom_hostlist *hl, int *n, const char **what, char *err,
                           size_t errlen)
{
    const char *kind;
    int a = loom_alloc_detect(hl, &kind, err, errlen);
    if (a < 0) {
        msg("%s", err);
        return -1;
    }
    if (!a) {
        loom_hostlist_local(hl, *n ? *n : 1);
        return 0;
    }
    static char said[64];
    int slots = 0;
    for (int h = 0; h < hl->n; h++)
        slots += hl->hosts[h].slots;
    snprintf(said, sizeof said, "the %s allocation", kind);
    *what = said;
    if (!*n)
        *n = slots;
    if (*n > slots) {
        msg("%s has %d task slot%s for %d ranks: lower -n, ask the batch system for more "
            "tasks, or give -H hostfile", said, slots, slots == 1 ? "" : "s", *n);
        loom_hostlist_free(hl);
        return -1;
    }
    char names[200];
    loom_hostlist used = *hl; /* the hosts the first *n slots are on */
    for (int h = 0, s = 0; h < hl->n; h++)
        if ((s += hl->hosts[h].slots) >= *n) {
            used.n = h + 1;
            break;
        }
    loom_alloc_names(&used, names, sizeof names);
    msg("%d rank%s on %s from %s", *n, *n == 1 ? "" : "s", names, said);
    return 0;
}

/* The local ranks' leaked SysV segments (shm.c). */
static void sweep_sysv(void)
{
    pid_t *pids = calloc((size_t)J.n + 1, sizeof *pids);
    int k = 0;
    for (int r = 0; pids && r < J.n; r++)
        if (J.ranks[r].host->local && J.ranks[r].pid > 0)
            pids[k++] = J.ranks[r].pid;
    if (pids)
        loom_shm_sweep_sysv(pids, k);
    free(pids);
}

int main(int argc, char **argv)
{
    int n = 0, tag = -1, only = -1;
    const char *hostfile = NULL, *rsh = NULL, *outdir = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        long v;
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--np") || !strcmp(a, "-np")) {
            if (i + 1 >= argc || loom_rt_parse_int(argv[i + 1], 1, 1 << 20, &v)) {
                msg("%s needs a number of ranks >= 1", a);
                return 2;
            }
            n = (int)v;
            i++;
        } else if (!strcmp(a, "-H") || !strcmp(a, "--hostfile")) {
            if (i + 1 >= argc) {
                msg("%s needs a file", a);
                return 2;
            }
            hostfile = argv[++i];
        } else if (!strcmp(a, "--rsh")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                msg("--rsh needs a command");
                return 2;
            }
            rsh = argv[++i];
        } else if (!strcmp(a, "--output-filename")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                msg("--output-filename needs a directory");
                return 2;
            }
            outdir = argv[++i];
        } else if (!strcmp(a, "--output-rank")) {
            if (i + 1 >= argc || loom_rt_parse_int(argv[i + 1], 0, 1 << 20, &v)) {
                msg("--output-rank needs a rank number >= 0");
                return 2;
            }
            only = (int)v;
            i++;
        } else if (!strcmp(a, "--tag-output"))
            tag = 1;
        else if (!strcmp(a, "--no-tag-output"))
            tag = 0;
        else if (!strcmp(a, "--restart")) {
            const char *d = getenv("LOOM_CHECKPOINT_DIR");
            if (!d || !*d) {
                msg("--restart needs LOOM_CHECKPOINT_DIR: the directory of the checkpoints "
                    "to resume from (docs/checkpoint.md)");
                return 2;
            }
            setenv("LOOM_RESTART", "true", 1); /* forwarded to every rank */
        }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
            printf("loomrun (Loom) %s\n", LOOM_VERSION_STRING);
            return 0;
        } else {
            msg("unknown option '%s' (see loomrun --help)", a);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char err[600];
    if (loom_rt_env_load(err, sizeof err) || loom_dsm_policy_check_env(err, sizeof err)) {
        msg("%s", err);
        return 1;
    }
    loom_hostlist hl;
    const char *what = "this machine";
    if (hostfile) {
        if (loom_hostfile_parse(hostfile, &hl, err, sizeof err)) {
            msg("%s", err);
            return 1;
        }
        if (!n)
            for (int h = 0; h < hl.n; h++)
                n += hl.hosts[h].slots;
    } else if (from_allocation(&hl, &n, &what, err, sizeof err))
        return 1;
    if (!n)
        n = 1;
    J.n = n;
    J.argv = argv + i;
    J.tag = tag >= 0 ? tag : n > 1;
    J.rsh = loom_rt_parse_words(rsh ? rsh : loom_rt_icv.rsh, err, sizeof err);
    if (!J.rsh) {
        msg("%s is not a command loomrun can run: %s", rsh ? "--rsh" : "LOOM_RSH", err);
        loom_hostlist_free(&hl);
        return 2;
    }
    J.ranks = calloc((size_t)n, sizeof *J.ranks);
    int *host_of = calloc((size_t)n, sizeof *host_of), *lrank = calloc((size_t)n, sizeof *lrank);
    int placed = loom_place(&hl, n, host_of, lrank, hostfile ? hostfile : what, err,
                            sizeof err) == 0;
    int any_local = 0, any_remote = 0;
    for (int r = 0; placed && r < n; r++) {
        J.ranks[r] = (rank_proc){.rank = r, .local_rank = lrank[r],
                                 .host = &hl.hosts[host_of[r]]};
        any_local |= J.ranks[r].host->local;
        any_remote |= !J.ranks[r].host->local;
    }
    free(host_of);
    free(lrank);
    if (!placed) {
        msg("%s", err);
        return 1;
    }
    if (any_local && !runnable(J.argv[0])) {
        msg("cannot run '%s': %s", J.argv[0],
            strchr(J.argv[0], '/') ? strerror(errno) : "not found in PATH");
        return 127;
    }
    /* The rendezvous listens where the ranks are told to connect and
     * nowhere else: loopback for a local job, else the advertised address. */
    uint8_t key[16];
    char host[256];
    if (loom_rt_key_generate(key)) {
        msg("cannot draw a job key: %s", strerror(errno));
        return 1;
    }
    loom_rt_key_format(key, J.key_hex);
    if (advertised_host(&hl, host, sizeof host))
        return 1;
    rv = loom_rt_rv_open(any_remote ? host : "127.0.0.1", 0, n, key, loom_rt_icv.timeout, err,
                      sizeof err);
    if (!rv) {
        msg("%s", err);
        return 1;
    }
    snprintf(J.rendezvous, sizeof J.rendezvous, strchr(host, ':') ? "[%s]:%d" : "%s:%d",
             host, loom_rt_rv_port(rv));
    /* A local job's ranks talk over shared memory and loopback: keep UCX's
     * TCP transport off the machine's other interfaces (it listens on every
     * device it uses) unless the user chose devices. */
    if (!any_remote)
        setenv("UCX_NET_DEVICES", "lo", 0);
    /* Signals arrive through a pipe into the event loop. */
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
        perror("loomrun: pipe");
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};
    for (size_t s = 0; s < sizeof sigs / sizeof *sigs; s++)
        sigaction(sigs[s], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (only >= n) {
        msg("--output-rank %d: the job has ranks 0 to %d", only, n - 1);
        return 2;
    }
    if (any_local)
        J.shm_dir = loom_shm_dir_make();
    for (int r = 0; r < n && !stopping; r++)
        if (loom_spawn(&J, &J.ranks[r]) || loom_out_route(&J.ranks[r], outdir, only))
            stop_job(1, "could not start every rank");
    event_loop();
    never_joined(n);
    loom_shm_dir_remove(J.shm_dir);
    sweep_sysv();
    loom_rt_rv_close(rv);
    free(J.ranks);
    free(J.rsh); /* one allocation (loom_rt_parse_words) */
    loom_hostlist_free(&hl);
    return exit_code;
}
