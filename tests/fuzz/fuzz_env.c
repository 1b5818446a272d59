/* fuzz_env.c — the environment parser (lib/env.c) and rank discovery
 * (lib/init.c): the input is an environment, one NAME=VALUE a line (bytes
 * after the first '=' are the value), installed as environ for one call of
 * loom_rt_env_load (with the policy-name check, dsm/policy.c), loom_rt_discover_rank
 * and loom_rt_env_unknown; every value also
 * goes through the low-level parsers.  Invariants of an accepted
 * environment: every control variable inside the range env.md gives;
 * rank discovery yields 0 <= rank < nranks; a refusal says which variable. */
#include "fuzz.h"
#include "internal.h"
#include "policy.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

static void each_value(const char *v)
{
    char host[64];
    int port;
    double sec;
    long x;
    int b;
    if (!loom_rt_parse_hostport(v, host, sizeof host, &port))
        FUZZ_CHECK(port >= 1 && port <= 65535 && host[0] && strlen(host) < sizeof host,
                   "'%s' parsed as host '%s' port %d", v, host, port);
    if (!loom_rt_parse_seconds(v, &sec))
        FUZZ_CHECK(sec >= 1e-3 && sec <= 1e6, "'%s' parsed as %g s", v, sec);
    if (!loom_rt_parse_int(v, -5, 5, &x))
        FUZZ_CHECK(x >= -5 && x <= 5, "'%s' parsed as %ld", v, x);
    if (!loom_rt_parse_bool(v, &b))
        FUZZ_CHECK(b == 0 || b == 1, "'%s' parsed as %d", v, b);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    char *text = malloc(n + 1), *envp[65];
    FUZZ_CHECK(text != NULL, "%s", "memory");
    memcpy(text, d, n);
    text[n] = '\0';
    int k = 0;
    for (char *line = text, *next; line && k < 64; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strchr(line, '=') > line) /* NAME=..., NAME not empty */
            envp[k++] = line;
    }
    envp[k] = NULL;
    for (int i = 0; i < k; i++)
        each_value(strchr(envp[i], '=') + 1);

    char **saved = environ, err[512] = "", unknown[256];
    environ = envp;
    loom_rt_icv.rank = 0;
    loom_rt_icv.nranks = 1;
    int rc = loom_rt_env_load(err, sizeof err);
    if (rc == LOOM_OK) /* as loom_init: the DSM checks the policy names */
        rc = loom_dsm_policy_check_env(err, sizeof err);
    if (rc == LOOM_OK) {
        const struct loom_rt_icv *c = &loom_rt_icv;
        FUZZ_CHECK(c->timeout > 0 && c->timeout <= 1e6 && c->join_timeout > 0 &&
                       c->join_timeout <= 1e6, "timeouts %g, %g", c->timeout, c->join_timeout);
        /* (the priority policy's LOOM_BANDWIDTH, LOOM_PRIORITY and
         * LOOM_PRIORITY_QUEUE are its own, parsed here through its table:
         * dsm/policy_priority.c keeps them) */
        FUZZ_CHECK(c->staleness >= 0, "staleness %d", c->staleness);
        FUZZ_CHECK(c->dsm_arena > 0 && c->dsm_arena % (2u << 20) == 0 &&
                       c->dsm_arena <= ((size_t)1 << 46) + (2u << 20),
                   "arena %zu bytes", c->dsm_arena);
        FUZZ_CHECK(!c->coherence[0] || loom_dsm_policy_find(c->coherence), "coherence '%s'",
                   c->coherence);
        for (int i = 0; i < c->ncoherence_named; i++)
            FUZZ_CHECK(loom_dsm_policy_find(c->coherence_named[i].policy), "policy '%s' for '%s'",
                       c->coherence_named[i].policy, c->coherence_named[i].alloc);
        char host[256];
        int port;
        FUZZ_CHECK(!c->rendezvous[0] ||
                       !loom_rt_parse_hostport(c->rendezvous, host, sizeof host, &port),
                   "rendezvous '%s'", c->rendezvous);
        rc = loom_rt_discover_rank(err, sizeof err);
        if (rc == LOOM_OK)
            FUZZ_CHECK(c->nranks >= 1 && c->rank >= 0 && c->rank < c->nranks &&
                           c->local_rank >= 0, "rank %d of %d, local %d", c->rank, c->nranks,
                       c->local_rank);
    }
    if (rc != LOOM_OK)
        FUZZ_CHECK(rc == LOOM_ERR_ENV && strstr(err, "not"), "refused (%d): '%s'", rc, err);
    loom_rt_env_unknown(unknown, sizeof unknown);
    FUZZ_CHECK(strlen(unknown) < sizeof unknown, "%s", "unknown-variable list overflows");
    environ = saved;
    free(text);
    return 0;
}
