/* pmi.c — the key-value store a process manager gives the tasks it starts:
 * Slurm's PMI-2 (libpmi2, srun --mpi=pmi2) or PMIx (libpmix, srun
 * --mpi=pmix).  Only what the Slurm bootstrap needs (slurm.c): one task
 * puts, all fence, the others read rank 0's values.
 *
 * Both libraries are loaded at run time (dlopen), so libloom neither
 * links nor needs them where they are not used.  PMIx's two structures
 * used are declared here as its pmix_common.h lays them out (stable since
 * PMIx 2): a process name (namespace of 256 bytes, then a 32-bit rank)
 * and a value (16-bit type, then an 8-byte-aligned union, of which the
 * string pointer is used; the union is padded past its real 24 bytes).
 * One store per process: the state is this file's. */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NONE, PMI2, PMIX };
static int kind;

/* ---- PMI-2 (pmi2.h) ---- */
static struct {
    int (*init)(int *spawned, int *size, int *rank, int *appnum);
    int (*finalize)(void);
    int (*job_getid)(char *jobid, int len);
    int (*put)(const char *key, const char *value);
    int (*fence)(void);
    int (*get)(const char *jobid, int src, const char *key, char *value, int max, int *len);
} p2;
static char p2_jobid[256];

/* ---- PMIx (pmix.h, pmix_common.h) ---- */
typedef struct {
    char nspace[256];
    uint32_t rank;
} px_proc;
typedef struct {
    uint16_t type;
    union {
        char *string;
        char pad[32];
    } data;
} px_value;
#define PX_STRING 3
#define PX_GLOBAL 3
static struct {
    int (*init)(px_proc *me, void *info, size_t ninfo);
    int (*finalize)(const void *info, size_t ninfo);
    int (*put)(uint8_t scope, const char *key, px_value *v);
    int (*commit)(void);
    int (*fence)(const px_proc *procs, size_t n, const void *info, size_t ninfo);
    int (*get)(const px_proc *p, const char *key, const void *info, size_t ninfo,
               px_value **v);
} px;
static px_proc px_me;

/* dlopen the first of names that loads and dlsym each of n symbols into
 * the function pointers at fns; 0, or -1 with the reason in why. */
static int load(const char *const *names, const char *const *syms, void **fns, int n,
                char *why, size_t wl)
{
    void *h = NULL;
    for (; *names && !h; names++)
        h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, wl, "%s", dlerror());
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!(fns[i] = dlsym(h, syms[i]))) {
            snprintf(why, wl, "the library has no %s", syms[i]);
            return -1;
        }
    return 0;
}

/* Contract: see internal.h. */
int loom_rt_pmi_open(const char **name, int *rank, int *size)
{
    char why[300];
    if (getenv("PMIX_NAMESPACE")) {
        static const char *const libs[] = {"libpmix.so.2", "libpmix.so", NULL};
        static const char *const syms[] = {"PMIx_Init", "PMIx_Finalize", "PMIx_Put",
                                           "PMIx_Commit", "PMIx_Fence", "PMIx_Get"};
        *name = "PMIx";
        if (load(libs, syms, (void **)&px, 6, why, sizeof why)) {
            loom_rt_log("srun offers PMIx (PMIX_NAMESPACE is set) but libpmix cannot be loaded: "
                     "%s (install libpmix2, or set LOOM_RENDEZVOUS and LOOM_JOB_KEY)", why);
            return -1;
        }
        int rc = px.init(&px_me, NULL, 0);
        if (rc) {
            loom_rt_log("PMIx_Init failed (status %d): the PMIx server of srun is not there", rc);
            return -1;
        }
        kind = PMIX;
        *rank = (int)px_me.rank;
        *size = -1; /* not asked: SLURM_NTASKS and the rendezvous check it */
        return 1;
    }
    const char *fd = getenv("PMI_FD");
    if (fd && *fd) {
        static const char *const libs[] = {"libpmi2.so.0", "libpmi2.so", NULL};
        static const char *const syms[] = {"PMI2_Init", "PMI2_Finalize", "PMI2_Job_GetId",
                                           "PMI2_KVS_Put", "PMI2_KVS_Fence", "PMI2_KVS_Get"};
        int spawned, appnum;
        *name = "PMI-2";
        if (load(libs, syms, (void **)&p2, 6, why, sizeof why)) {
            loom_rt_log("srun offers PMI-2 (PMI_FD is set) but Slurm's libpmi2 cannot be loaded: "
                     "%s (install libpmi2-0, or set LOOM_RENDEZVOUS and LOOM_JOB_KEY)", why);
            return -1;
        }
        if (p2.init(&spawned, size, rank, &appnum) ||
            p2.job_getid(p2_jobid, sizeof p2_jobid)) {
            loom_rt_log("PMI2_Init failed (PMI_FD=%s): the PMI-2 service of srun is not there", fd);
            return -1;
        }
        kind = PMI2;
        return 1;
    }
    return 0;
}

int loom_rt_pmi_put(const char *key, const char *value)
{
    if (kind == PMI2)
        return p2.put(key, value) ? -1 : 0;
    px_value v = {.type = PX_STRING, .data.string = (char *)value};
    return px.put(PX_GLOBAL, key, &v) || px.commit() ? -1 : 0;
}

int loom_rt_pmi_fence(void)
{
    return (kind == PMI2 ? p2.fence() : px.fence(NULL, 0, NULL, 0)) ? -1 : 0;
}

int loom_rt_pmi_get0(const char *key, char *out, size_t n)
{
    if (kind == PMI2) {
        int len = 0;
        return p2.get(p2_jobid, 0, key, out, (int)n, &len) || len <= 0 || (size_t)len >= n ?
               -1 : 0;
    }
    px_proc zero = px_me;
    px_value *v = NULL;
    zero.rank = 0;
    int bad = px.get(&zero, key, NULL, 0, &v) || !v || v->type != PX_STRING ||
              !v->data.string || (size_t)snprintf(out, n, "%s", v->data.string) >= n;
    if (v) { /* as PMIX_VALUE_RELEASE does */
        if (v->type == PX_STRING)
            free(v->data.string);
        free(v);
    }
    return bad ? -1 : 0;
}

void loom_rt_pmi_close(void)
{
    if (kind == PMI2)
        p2.finalize();
    else if (kind == PMIX)
        px.finalize(NULL, 0);
    kind = NONE;
}
