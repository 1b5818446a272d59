/* alloc.h — the batch allocation loomrun runs inside (Slurm, PBS, LSF):
 * its hosts and slots, used when neither -H nor a hostfile is given. */
#ifndef LOOMRUN_ALLOC_H
#define LOOMRUN_ALLOC_H

#include "hostfile.h"
#include <stddef.h>

/* Look for an allocation in the environment, in this order:
 *   Slurm  SLURM_JOB_ID with SLURM_JOB_NODELIST (or SLURM_NODELIST) and
 *          SLURM_TASKS_PER_NODE (else SLURM_JOB_CPUS_PER_NODE, else one
 *          task a node), cross-checked against SLURM_NTASKS when set
 *   PBS    PBS_NODEFILE (a host a line, a line a slot)
 *   LSF    LSB_MCPU_HOSTS ("host slots host slots ...") or LSB_HOSTS
 *          ("host host ...", a word a slot)
 * Returns 1 and fills *out (free with loom_hostlist_free) and *kind
 * ("Slurm", "PBS" or "LSF") when one is found, 0 when there is none, -1
 * with one message naming the variable in err when its variables are
 * inconsistent or malformed.  Reads the environment only. */
int loom_alloc_detect(loom_hostlist *out, const char **kind, char *err, size_t errlen);

/* Expand a Slurm host list ("node[1-3,5],gpu[01-02]x,login") into hosts
 * appended to *out with one slot each (a host named twice is kept twice
 * in the order given, as Slurm does).  Returns the number of hosts, or -1
 * with the reason in err for a malformed list (hosts before the error
 * stay appended: the caller frees *out either way). */
int loom_slurm_hostlist(const char *s, loom_hostlist *out, char *err, size_t errlen);

/* Expand a Slurm count list ("2(x3),1") into exactly n counts.  Returns 0,
 * or -1 with the reason in err when it is malformed or does not give n. */
int loom_slurm_counts(const char *s, int *counts, int n, char *err, size_t errlen);

/* "node1,node2" (cut with ",... (N hosts)" past len) into buf. */
void loom_alloc_names(const loom_hostlist *hl, char *buf, size_t len);

#endif
