/* lifecycle.h — the lifecycle layer's one internal entry, for programs of
 * this tree that start no job themselves (the launcher): the environment
 * checked as loom_init checks it.  loom_init, loom_finalize and
 * loom_barrier are public (lib/loom.h). */
#ifndef LOOM_LIFECYCLE_H
#define LOOM_LIFECYCLE_H

#include <stddef.h>

/* Reads every LOOM_* variable (the runtime's and the components' tables,
 * lib/env.c) and checks what only a higher layer can (the DSM's registry:
 * the policy names of LOOM_COHERENCE and LOOM_COHERENCE_<NAME>): the
 * first step of loom_init.  No network, no thread.  Returns LOOM_OK, or
 * LOOM_ERR_ENV with one message (naming the variable) in err. */
int loom_lc_env_check(char *err, size_t errlen);

#endif
