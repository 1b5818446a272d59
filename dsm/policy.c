/* policy.c — the registry of coherence policies: the one list of their
 * names, which loom_alloc, LOOM_COHERENCE and LOOM_COHERENCE_<NAME> are
 * checked against.  Each policy is one file, policy_<name>.c, defining
 * `const loom_policy loom_dsm_policy_<name>`; adding one is that file plus one
 * line in POLICIES below (docs/dsm.md, "Adding a policy"). */
#include "dsm.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define POLICIES(X) \
    X(local)        \
    X(bsp)          \
    X(ssp)          \
    X(ring)         \
    X(priority)     \
    X(writethrough)

#define DECLARE(n) extern const loom_policy loom_dsm_policy_##n;
POLICIES(DECLARE)
#define ENTRY(n) &loom_dsm_policy_##n,
static const loom_policy *const registry[] = {POLICIES(ENTRY)};
#define NPOLICIES (sizeof registry / sizeof registry[0])

const loom_policy *loom_dsm_policy_find(const char *name)
{
    for (size_t i = 0; name && i < NPOLICIES; i++)
        if (!strcasecmp(name, registry[i]->name))
            return registry[i];
    return NULL;
}

void loom_dsm_policy_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NPOLICIES && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s",
                                 !i ? "" : i + 1 < NPOLICIES ? ", " : " or ", registry[i]->name);
}

/* Contract: reads loom_rt_icv only (after loom_rt_env_load); the message, on a
 * name no policy has, is the same one line lib/env.c writes for any other
 * bad variable: the variable, its value, what is allowed. */
int loom_dsm_policy_check_env(char *err, size_t errlen)
{
    char sh[LOOM_SHOWN_BUF];
    char names[256];
    loom_dsm_policy_names(names, sizeof names);
    const char *v = loom_rt_icv.coherence;
    if (v[0] && !loom_dsm_policy_find(v)) {
        snprintf(err, errlen, "LOOM_COHERENCE='%s' is not valid: expected %s",
                 loom_rt_shown(v, strlen(v), sh, sizeof sh), names);
        return LOOM_ERR_ENV;
    }
    for (int i = 0; i < loom_rt_icv.ncoherence_named; i++)
        if (!loom_dsm_policy_find(loom_rt_icv.coherence_named[i].policy)) {
            snprintf(err, errlen, "LOOM_COHERENCE_%s is not valid: expected "
                     "LOOM_COHERENCE_<NAME>=%s, NAME an allocation's name (at most 16 such "
                     "variables)", loom_rt_icv.coherence_named[i].alloc, names);
            return LOOM_ERR_ENV;
        }
    return LOOM_OK;
}

void loom_dsm_policy_setup_all(void)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (registry[i]->setup)
            registry[i]->setup();
}

/* Contract: see policy.h.  Pure; any thread. */
const loom_policy *loom_dsm_policy_rotating(void)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (loom_dsm_policy_rotates(registry[i]))
            return registry[i];
    return NULL;
}
