/* slurm.c — how a rank started by srun finds its job when no LOOM_*
 * variable says: the rendezvous address and the job key.
 *
 * PMIx or PMI-2 (srun --mpi=pmix or --mpi=pmi2, or MpiDefault in
 * slurm.conf; PMIX_NAMESPACE or PMI_FD set; pmi.c): rank 0 opens the
 * rendezvous on a free port, draws a fresh random key and puts both into
 * the step's key-value store; after the fence every other rank reads
 * them.  Only the step's own tasks reach that store (each through a
 * socket or server slurmstepd gave it), so no other process learns the
 * key.
 *
 * Without PMI (MpiDefault=none): rank 0 serves at the first node of
 * SLURM_STEP_NODELIST (block distribution puts it there; anything else is
 * refused with a message), on the step's first reserved port
 * (SLURM_STEP_RESV_PORTS, which Slurm never gives two steps of a node) or
 * else on a port derived from the job and step ids, and the key is
 * SipHash-128 of the job and step ids under a secret of the user's own:
 * $HOME/.loom/srun-secret, 0600 in a 0700 directory, created on first
 * use.  Another user can read neither, so cannot derive the key; every
 * node of a step must see the same file (a shared home directory). */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define KV_ADDR "loom-rendezvous"
#define KV_KEY "loom-job-key"

/* The step's node count (SLURM_STEP_NUM_NODES, else SLURM_NNODES), 0 if
 * unknown. */
static int step_nodes(void)
{
    long n;
    const char *s = getenv("SLURM_STEP_NUM_NODES");
    if (!s)
        s = getenv("SLURM_NNODES");
    return s && !loom_rt_parse_int(s, 1, 1 << 20, &n) ? (int)n : 0;
}

/* This task's node as Slurm names it. */
static void my_node(char *out, size_t n)
{
    const char *s = getenv("SLURMD_NODENAME");
    if (s && *s)
        snprintf(out, n, "%s", s);
    else if (gethostname(out, n - 1))
        out[0] = 0;
    out[n - 1] = 0;
}

struct pick {
    const char *skip;
    char name[256];
};

/* loom_rt_hostlist_expand callbacks: the first name (other than skip). */
static int pick_one(const char *name, void *arg)
{
    struct pick *p = arg;
    if (p->skip && !strcmp(name, p->skip))
        return 0;
    snprintf(p->name, sizeof p->name, "%s", name);
    return 1;
}

/* Where rank 0 listens, given that the ranks reach it by address (PMI):
 * loopback for a one-node step, else LOOM_RENDEZVOUS_HOST, else our
 * source address on the route to another node of the step, else every
 * interface (""). */
static void pmi_listen_host(char *out, size_t n)
{
    char me[256], err[200];
    struct pick p = {0};
    out[0] = 0;
    if (step_nodes() == 1) {
        snprintf(out, n, "127.0.0.1");
        return;
    }
    if (loom_rt_icv.rendezvous_host[0]) {
        if ((size_t)snprintf(out, n, "%s", loom_rt_icv.rendezvous_host) >= n)
            out[0] = 0;
        return;
    }
    my_node(me, sizeof me);
    p.skip = me;
    const char *nl = getenv("SLURM_STEP_NODELIST");
    if (!nl || loom_rt_hostlist_expand(nl, pick_one, &p, err, sizeof err) < 0 || !p.name[0])
        return;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai;
    if (getaddrinfo(p.name, "9", &hints, &ai))
        return;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        inet_ntop(AF_INET, &sa.sin_addr, out, (socklen_t)n);
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
}

/* Through the process manager's key-value store (pmi.c), opened as
 * `name`, which says this task is `rank` of `size` (-1: not said). */
static int bootstrap_kvs(const char *name, int rank, int size, loom_rv **server)
{
    char addr[sizeof loom_rt_icv.rendezvous], hex[33];
    if ((size >= 0 && size != loom_rt_icv.nranks) || rank != loom_rt_icv.rank) {
        if (loom_rt_icv.rank == 0) /* srun gave every task the same variables */
            loom_rt_log("the task counts disagree: %s says task %d of %d, SLURM_PROCID and "
                     "SLURM_NTASKS say %d of %d", name, rank, size, loom_rt_icv.rank,
                     loom_rt_icv.nranks);
        return LOOM_ERR_ENV;
    }
    if (rank == 0) {
        char host[200], err[300];
        pmi_listen_host(host, sizeof host);
        if (loom_rt_key_generate(loom_rt_icv.job_key)) {
            loom_rt_log("cannot draw a job key: %s", strerror(errno));
            return LOOM_ERR_ENV;
        }
        *server = loom_rt_rv_open(host[0] ? host : NULL, 0, loom_rt_icv.nranks, loom_rt_icv.job_key,
                               loom_rt_icv.timeout, err, sizeof err);
        if (!*server) {
            loom_rt_log("rank 0 cannot open the rendezvous: %s", err);
            return LOOM_ERR_NET;
        }
        if (!host[0]) /* every interface: the others reach us by our name */
            my_node(host, sizeof host);
        snprintf(addr, sizeof addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
                 loom_rt_rv_port(*server));
        loom_rt_key_format(loom_rt_icv.job_key, hex);
        if (loom_rt_pmi_put(KV_ADDR, addr) || loom_rt_pmi_put(KV_KEY, hex)) {
            loom_rt_log("%s: putting the rendezvous into the key-value store failed", name);
            return LOOM_ERR_ENV;
        }
    }
    if (loom_rt_pmi_fence()) {
        loom_rt_log("%s: the fence failed", name);
        return LOOM_ERR_ENV;
    }
    if (rank != 0 && (loom_rt_pmi_get0(KV_ADDR, addr, sizeof addr) ||
                      loom_rt_pmi_get0(KV_KEY, hex, sizeof hex) ||
                      loom_rt_key_parse(hex, loom_rt_icv.job_key))) {
        loom_rt_log("%s: rank 0 published no rendezvous in the key-value store", name);
        return LOOM_ERR_ENV;
    }
    snprintf(loom_rt_icv.rendezvous, sizeof loom_rt_icv.rendezvous, "%s", addr);
    loom_rt_icv.have_key = 1;
    loom_rt_pmi_close();
    return LOOM_OK;
}

/* The user's secret (fallback): $HOME/.loom/srun-secret, 32 hex digits,
 * created 0600 in a 0700 directory if missing (link(2) makes the first of
 * several racing tasks win).  Refused if the directory or the file is
 * another user's, or group or others may read it. */
static int user_secret(uint8_t secret[16])
{
    const char *home = getenv("HOME");
    char dir[1024], path[1100], tmp[1100], buf[80];
    struct stat st;
    if (!home || !*home) {
        loom_rt_log("HOME is not set: srun without PMI keeps the secret the job key is "
                 "derived from in $HOME/.loom/srun-secret (or run srun --mpi=pmix or pmi2)");
        return -1;
    }
    snprintf(dir, sizeof dir, "%s/.loom", home);
    snprintf(path, sizeof path, "%s/srun-secret", dir);
    if (mkdir(dir, 0700) && errno != EEXIST) {
        loom_rt_log("cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077)) {
        loom_rt_log("%s must be a directory of this user's that no one else may read "
                 "(chmod 700 %s): it holds the secret of srun's job keys", dir, dir);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        uint8_t s[16];
        char hex[34];
        snprintf(tmp, sizeof tmp, "%s/.srun-secret.XXXXXX", dir);
        int t = mkstemp(tmp); /* mode 0600 */
        if (t < 0 || loom_rt_key_generate(s)) {
            loom_rt_log("cannot create %s: %s", path, strerror(errno));
            if (t >= 0)
                close(t), unlink(tmp);
            return -1;
        }
        loom_rt_key_format(s, hex);
        hex[32] = '\n';
        int wrote = write(t, hex, 33) == 33 && fsync(t) == 0;
        close(t);
        if (!wrote || (link(tmp, path) && errno != EEXIST)) {
            loom_rt_log("cannot create %s: %s", path, strerror(errno));
            unlink(tmp);
            return -1;
        }
        unlink(tmp);
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        loom_rt_log("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    ssize_t n = fstat(fd, &st) ? -1 : read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
        loom_rt_log("%s must be a file of this user's that no one else may read (chmod 600)",
                 path);
        return -1;
    }
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    if (loom_rt_key_parse(buf, secret)) {
        loom_rt_log("%s does not hold 32 hexadecimal digits: remove it (a new one is drawn)",
                 path);
        return -1;
    }
    return 0;
}

static int bootstrap_step(loom_rv **server)
{
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID"),
               *nodes = getenv("SLURM_STEP_NODELIST");
    if (!step)
        step = getenv("SLURM_STEPID");
    if (job && !step && !nodes) {
        if (loom_rt_icv.rank == 0)
            loom_rt_log("started by Slurm's batch script, not by srun (SLURM_PROCID is set, "
                     "SLURM_STEP_ID is not): start the job's ranks with srun, or with loomrun, "
                     "which fills the allocation");
        return LOOM_ERR_ENV;
    }
    if (!job || !step || !nodes) {
        if (loom_rt_icv.rank == 0 || !job) /* srun gives every task the same variables */
            loom_rt_log("started by Slurm (SLURM_PROCID) without LOOM_RENDEZVOUS and LOOM_JOB_KEY, "
                     "without a PMI service (neither PMIX_NAMESPACE nor PMI_FD is set: srun "
                     "--mpi=pmix or --mpi=pmi2) and "
                     "without %s%s%s%s%s to derive them from: start the job with srun, or "
                     "set LOOM_RENDEZVOUS and LOOM_JOB_KEY (docs/launcher.md)",
                     job ? "" : "SLURM_JOB_ID", !job && (!step || !nodes) ? ", " : "",
                     step ? "" : "SLURM_STEP_ID", !step && !nodes ? ", " : "",
                     nodes ? "" : "SLURM_STEP_NODELIST");
        return LOOM_ERR_ENV;
    }
    long jid, sid;
    if (loom_rt_parse_int(job, 0, 0x7fffffffL, &jid) || loom_rt_parse_int(step, 0, 0x7fffffffL, &sid)) {
        loom_rt_log("SLURM_JOB_ID='%s' and SLURM_STEP_ID='%s' must be whole numbers",
                 LOOM_QUOTE(job), LOOM_QUOTE(step));
        return LOOM_ERR_ENV;
    }
    char err[300], me[256];
    struct pick first = {0};
    if (loom_rt_hostlist_expand(nodes, pick_one, &first, err, sizeof err) < 0) {
        loom_rt_log("SLURM_STEP_NODELIST='%s': %s", LOOM_QUOTE(nodes), err);
        return LOOM_ERR_ENV;
    }
    /* The port: the step's first reserved one, else 10000-32767 by job
     * and step (below Linux's ephemeral ports). */
    long port;
    const char *resv = getenv("SLURM_STEP_RESV_PORTS");
    char pbuf[16];
    if (resv && *resv) {
        snprintf(pbuf, sizeof pbuf, "%.*s", (int)strcspn(resv, "-,"), resv);
        if (loom_rt_parse_int(pbuf, 1, 65535, &port)) {
            loom_rt_log("SLURM_STEP_RESV_PORTS='%s' does not start with a port",
                     LOOM_QUOTE(resv));
            return LOOM_ERR_ENV;
        }
    } else
        port = 10000 + (jid * 8 + sid % 8) % 22768;
    uint8_t secret[16];
    if (user_secret(secret))
        return LOOM_ERR_ENV;
    char msgb[64];
    int ml = snprintf(msgb, sizeof msgb, "loom srun job key %ld.%ld", jid, sid);
    loom_rt_siphash128(secret, msgb, (size_t)ml, loom_rt_icv.job_key);
    loom_rt_icv.have_key = 1;
    int one_node = step_nodes() == 1;
    const char *host = one_node ? "127.0.0.1" : loom_rt_icv.rendezvous_host[0] ?
                       loom_rt_icv.rendezvous_host : first.name;
    snprintf(loom_rt_icv.rendezvous, sizeof loom_rt_icv.rendezvous,
             strchr(host, ':') ? "[%s]:%ld" : "%s:%ld", host, port);
    if (loom_rt_icv.rank != 0)
        return LOOM_OK;
    my_node(me, sizeof me);
    if (strcmp(me, first.name)) {
        loom_rt_log("rank 0 runs on %s, not on the first node of the step (%s), where the other "
                 "ranks look for it without PMI: use srun's default distribution (block), "
                 "or srun --mpi=pmix or --mpi=pmi2", me, first.name);
        return LOOM_ERR_ENV;
    }
    /* Several nodes: every interface, since rank 0 cannot know which of
     * its addresses the others resolve its name to (the key keeps
     * strangers out). */
    *server = loom_rt_rv_open(host == first.name ? NULL : host, (int)port, loom_rt_icv.nranks, loom_rt_icv.job_key,
                           loom_rt_icv.timeout, err, sizeof err);
    if (!*server) {
        loom_rt_log("rank 0 cannot open the rendezvous: %s%s", err,
                 resv && *resv ? "" : " (the port is derived from the job and step ids; "
                 "Slurm reserves ports per step with MpiParams=ports=... in slurm.conf and "
                 "srun --resv-ports, or use srun --mpi=pmix or --mpi=pmi2)");
        return LOOM_ERR_NET;
    }
    return LOOM_OK;
}

/* Contract: see internal.h. */
int loom_rt_slurm_bootstrap(loom_rv **server)
{
    const char *name;
    int rank, size;
    *server = NULL;
    int r = loom_rt_pmi_open(&name, &rank, &size);
    return r < 0 ? LOOM_ERR_ENV : r ? bootstrap_kvs(name, rank, size, server)
                                    : bootstrap_step(server);
}
