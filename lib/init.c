/* init.c — the runtime's start and end (loom_init and loom_finalize, in
 * lifecycle/, call them), and where a rank learns who it is.
 *
 * A rank takes its identity from the first launcher it recognizes:
 *   loomrun  LOOM_RANK, LOOM_NRANKS, LOOM_LOCAL_RANK
 *   Slurm    SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
 *   mpirun   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK (Open MPI)
 *   PMI      PMI_RANK, PMI_SIZE, MPI_LOCALRANKID (MPICH's Hydra)
 * and else is rank 0 of 1: no network at all.  Under a foreign launcher
 * there is no loomrun, so rank 0 serves the rendezvous itself, in a
 * thread, on the address LOOM_RENDEZVOUS names; under srun without it and
 * LOOM_JOB_KEY, slurm.c finds both (PMI-2, or derived from the step). */
#include "internal.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int loom_rt_state;
static loom_peer *peers;
static loom_rv *server;
static pthread_t server_thread;

int loom_rank(void) { return loom_rt_icv.rank; }
int loom_size(void) { return loom_rt_icv.nranks; }
int loom_local_rank(void) { return loom_rt_icv.local_rank; }
int loom_initialized(void) { return loom_rt_state == 1; }

/* Read one launcher's trio of variables.  Returns 1 if rank and size are
 * both set (and valid), 0 if neither, -1 (message in err) otherwise. */
static int try_launcher(const char *rv, const char *sv, const char *lv,
                        char *err, size_t errlen)
{
    char sh[LOOM_SHOWN_BUF];
    const char *r = getenv(rv), *s = getenv(sv), *l = lv ? getenv(lv) : NULL;
    long rank, size, local = 0;
    if (!r && !s)
        return 0;
    if (!r || !s) {
        snprintf(err, errlen, "%s is set but %s is not", r ? rv : sv, r ? sv : rv);
        return -1;
    }
    if (loom_rt_parse_int(s, 1, 1 << 20, &size)) {
        snprintf(err, errlen, "%s='%s' is not valid: expected an integer >= 1", sv,
                 loom_rt_shown(s, strlen(s), sh, sizeof sh));
        return -1;
    }
    if (loom_rt_parse_int(r, 0, size - 1, &rank)) {
        snprintf(err, errlen, "%s='%s' is not valid: expected an integer 0..%ld", rv,
                 loom_rt_shown(r, strlen(r), sh, sizeof sh), size - 1);
        return -1;
    }
    if (l && loom_rt_parse_int(l, 0, 1 << 20, &local)) {
        snprintf(err, errlen, "%s='%s' is not valid: expected an integer >= 0", lv,
                 loom_rt_shown(l, strlen(l), sh, sizeof sh));
        return -1;
    }
    loom_rt_icv.rank = (int)rank;
    loom_rt_icv.nranks = (int)size;
    loom_rt_icv.local_rank = (int)local;
    return 1;
}

int loom_rt_discover_rank(char *err, size_t errlen)
{
    static const struct {
        const char *rank, *size, *local;
        loom_rank_source src;
    } launchers[] = {
        {"LOOM_RANK", "LOOM_NRANKS", "LOOM_LOCAL_RANK", LOOM_SRC_LOOMRUN},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", LOOM_SRC_SLURM},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
         LOOM_SRC_MPIRUN},
        {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", LOOM_SRC_PMI},
    };
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        int r = try_launcher(launchers[i].rank, launchers[i].size, launchers[i].local,
                             err, errlen);
        if (r < 0)
            return LOOM_ERR_ENV;
        if (r > 0) {
            loom_rt_icv.source = launchers[i].src;
            return LOOM_OK;
        }
    }
    loom_rt_icv.rank = 0;
    loom_rt_icv.nranks = 1;
    loom_rt_icv.local_rank = 0;
    loom_rt_icv.source = LOOM_SRC_SINGLETON;
    return LOOM_OK;
}

/* Rank 0's rendezvous under a foreign launcher: serve until every rank has
 * said BYE; on a failure, name it, stop every rank and exit. */
static void *serve(void *arg)
{
    loom_rv *rv = arg;
    int cap = 1 + 2 * loom_rt_icv.nranks + 16;
    struct pollfd *fds = calloc((size_t)cap, sizeof *fds);
    int started = 0; /* the table went out */
    if (!fds)
        loom_rt_die(LOOM_EXIT_PEER, "out of memory");
    for (;;) {
        int n = loom_rt_rv_pollfds(rv, fds);
        poll(fds, (nfds_t)n, 200);
        loom_rv_event ev;
        for (int k = loom_rt_rv_step(rv, fds, n, &ev); k != LOOM_RV_NONE;
             k = loom_rt_rv_step(rv, fds, 0, &ev)) {
            if (k == LOOM_RV_ALL_JOINED)
                started = 1;
            if (k == LOOM_RV_LOST && ev.rank == loom_rt_icv.rank && !started)
                continue; /* our own join gave up: loom_rt_join says why, once */
            if (k == LOOM_RV_LOST) {
                loom_rt_log("job failed: %s", ev.text);
                loom_rt_rv_abort_all(rv, LOOM_EXIT_PEER, ev.text);
                _exit(LOOM_EXIT_PEER);
            }
            if (k == LOOM_RV_ABORT) {
                loom_rt_rv_abort_all(rv, ev.code, ev.text);
                _exit(ev.code);
            }
            if (k == LOOM_RV_ALL_DONE) {
                free(fds);
                return NULL;
            }
        }
    }
}

/* Open rank 0's rendezvous at LOOM_RENDEZVOUS, unless the Slurm
 * bootstrap (slurm.c) opened it already, and serve it in a thread. */
static int start_server(void)
{
    char host[256], err[300];
    int port;
    loom_rt_parse_hostport(loom_rt_icv.rendezvous, host, sizeof host, &port);
    if (!server)
        server = loom_rt_rv_open(host, port, loom_rt_icv.nranks, loom_rt_icv.job_key,
                              loom_rt_icv.timeout, err, sizeof err);
    if (!server) {
        loom_rt_log("rank 0 cannot serve the rendezvous: %s (LOOM_RENDEZVOUS must name "
                 "rank 0's host)", err);
        return LOOM_ERR_NET;
    }
    if (pthread_create(&server_thread, NULL, serve, server)) {
        loom_rt_log("cannot start the rendezvous thread");
        return LOOM_ERR_NOMEM;
    }
    return LOOM_OK;
}

/* Contract: see internal.h.  With one rank: no network at all. */
int loom_rt_start(void)
{
    char unknown[512];
    /* Under loomrun stdout is a pipe to the tagger: print lines as they
     * come, so progress shows while the job runs. */
    if (loom_rt_icv.source == LOOM_SRC_LOOMRUN)
        setvbuf(stdout, NULL, _IOLBF, 0);
    if (loom_rt_icv.rank == 0 && loom_rt_env_unknown(unknown, sizeof unknown))
        loom_rt_log("warning: ignoring unknown variable(s) %s (see docs/env.md)", unknown);
    if (loom_rt_icv.display_env && loom_rt_icv.rank == 0)
        loom_rt_env_display(loom_rt_icv.display_env == 2);
    if (loom_rt_icv.nranks == 1) {
        loom_rt_state = 1;
        return LOOM_OK;
    }
    int rc;
    /* srun with neither variable: through PMI-2 or the step (slurm.c). */
    if (loom_rt_icv.source == LOOM_SRC_SLURM && !loom_rt_icv.rendezvous[0] && !loom_rt_icv.have_key &&
        (rc = loom_rt_slurm_bootstrap(&server)))
        return rc;
    if (loom_rt_icv.source != LOOM_SRC_LOOMRUN && loom_rt_icv.rank == 0 &&
        loom_rt_icv.rendezvous[0] && loom_rt_icv.have_key && (rc = start_server()))
        return rc;
    void *addr;
    size_t addrlen;
    double t0 = loom_wtime();
    if ((rc = loom_rt_tp_open(&addr, &addrlen)))
        return rc;
    double t1 = loom_wtime();
    if ((rc = loom_rt_join(addr, addrlen, &peers))) {
        loom_rt_tp_close(); /* the caller may go on, and leak checkers look */
        return rc;
    }
    loom_rt_tp_set_peers(peers, loom_rt_icv.nranks);
    loom_rt_state = 1;
    if (loom_rt_icv.stats) /* where start-up went (docs/launcher.md, "Start-up") */
        loom_rt_log("start-up: UCX %.3f s, rendezvous and the rest %.3f s", t1 - t0,
                 loom_wtime() - t1);
    return LOOM_OK;
}

/* Contract: see internal.h.  Several ranks only; the layers above have
 * sent their last message. */
void loom_rt_finalize(void)
{
    loom_rt_tp_closing();
    loom_rt_coll_barrier();
    loom_rt_tp_close();
    loom_rt_join_leave();
    loom_rt_join_free(peers, loom_rt_icv.nranks);
    peers = NULL;
    if (server) {
        pthread_join(server_thread, NULL);
        loom_rt_rv_close(server);
        server = NULL;
    }
}
