/* hostfile.h — the Open MPI hostfile format loomrun reads, and rank placement. */
#ifndef LOOMRUN_HOSTFILE_H
#define LOOMRUN_HOSTFILE_H

#include <stddef.h>

typedef struct loom_host {
    char name[256];
    int slots;
    int local; /* started as a child process, not through the remote shell */
} loom_host;

typedef struct loom_hostlist {
    loom_host *hosts;
    int n;
} loom_hostlist;

/* The most slots a hostfile may give in all: loomrun's largest -n. */
#define LOOM_SLOTS_MAX (1 << 20)

/* Parse a hostfile: lines "host [slots=N] [max_slots=N]", '#' comments and
 * blank lines allowed; a host named twice adds up its slots.  Returns 0, or
 * -1 with "FILE:LINE: what is wrong" (or "FILE: reason") in err. */
int loom_hostfile_parse(const char *path, loom_hostlist *out, char *err, size_t errlen);

/* The one-host list used without -H: localhost with `slots` slots. */
void loom_hostlist_local(loom_hostlist *out, int slots);
/* Append host name with `slots` slots; a host already listed gains them
 * instead.  Returns 0, or -1 without memory. */
int loom_hostlist_add(loom_hostlist *hl, const char *name, int slots);

/* 1 if name is this machine: localhost, a loopback address, or our
 * hostname. */
int loom_host_is_local(const char *name);

/* Place n ranks by slot (fill each host in file order).  host_of[r] gets
 * the host index of rank r, local_rank[r] its rank on that host.  Returns
 * 0, or -1 with the reason in err (too few slots). */
int loom_place(const loom_hostlist *hl, int n, int *host_of, int *local_rank,
               const char *what, char *err, size_t errlen);

void loom_hostlist_free(loom_hostlist *hl);

#endif
