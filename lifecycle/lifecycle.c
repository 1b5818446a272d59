/* lifecycle.c — loom_init, loom_finalize and loom_barrier: the one place
 * that knows every layer, and the order they start and stop in.
 *
 * Loom is four layers (this one over the other three), each calling only
 * the ones below it (docs/architecture.md, "Layers"): the runtime (lib/: environment, rank,
 * transport, collectives), the DSM (dsm/: allocations, coherence policies,
 * checkpoints) and the scheduler (sched/: loom_for).  loom_init starts
 * them bottom up, as ArgoDSM's argo::init does; loom_finalize stops them
 * top down; loom_barrier is the DSM's synchronization point (release, the
 * runtime's barrier, acquire), which the scheduler also uses directly. */
#include "../dsm/dsm.h"
#include "../dsm/ckpt/checkpoint.h"
#include "../sched/sched.h"

/* Contract: what loom.h promises.  The environment is read and checked
 * whole (the DSM checks the policy names) before anything starts, so a bad
 * variable is one message and no network.  Then the runtime, the DSM
 * (with LOOM_RESTART, the checkpoint is read here) and the scheduler. */
int loom_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (loom_rt_state == 1) {
        loom_rt_log("loom_init called twice");
        return LOOM_ERR_STATE;
    }
    char err[512];
    if (loom_rt_env_load(err, sizeof err) || loom_dsm_policy_check_env(err, sizeof err) ||
        loom_rt_discover_rank(err, sizeof err)) {
        loom_rt_log("%s", err);
        return LOOM_ERR_ENV;
    }
    int rc = loom_rt_start();
    if (!rc)
        rc = loom_dsm_init();
    if (!rc) /* checkpointing's hooks into the DSM; a restart's clock */
        loom_ckpt_start();
    /* OMP_NUM_THREADS unset: this rank's share of its host.  Not before the
     * DSM is up: a collective progresses the worker, and a faster rank's
     * first DSM message could then arrive before its handler (it hung the
     * final barrier once; now the transport ends the job on it instead:
     * docs/dsm.md, "Message handlers"). */
    if (!rc && loom_rt_icv.nranks > 1)
        loom_rt_share_cores();
    if (!rc)
        loom_sched_init();
    return rc;
}

/* Contract: what loom.h promises.  Top down: the DSM sends its last
 * messages (the final barrier releases what is still dirty) and frees its
 * allocations, the runtime closes the transport and leaves the job, and
 * only then the DSM frees what a late message could still have reached. */
int loom_finalize(void)
{
    if (loom_rt_state != 1)
        return LOOM_ERR_STATE;
    if (loom_rt_icv.nranks > 1) {
        loom_dsm_quiesce();
        loom_dsm_barrier();
        loom_dsm_fini();
        loom_rt_finalize();
        loom_dsm_fini_records();
    }
    loom_rt_state = 2;
    return LOOM_OK;
}

int loom_barrier(void)
{
    return loom_dsm_barrier();
}
