/* test_alloc.c — unit tests for loomrun's allocation detection
 * (apps/loomrun/alloc.c): Slurm host lists ("node[1-3,5]") and count
 * lists ("2(x3),1"), and loom_alloc_detect over Slurm's, PBS's and LSF's
 * variables, their agreement (SLURM_NTASKS) and their malformed values. */
#include "../../apps/loomrun/alloc.h"
#include "../tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[400];

/* The expanded list as "a:1,b:2" (name:slots), or "ERR: reason". */
static const char *hosts(const char *list)
{
    static char buf[2048];
    loom_hostlist hl = {0};
    if (loom_slurm_hostlist(list, &hl, err, sizeof err) < 0) {
        snprintf(buf, sizeof buf, "ERR: %s", err);
        loom_hostlist_free(&hl); /* the hosts before the error */
        return buf;
    }
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < hl.n; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%d", i ? "," : "",
                              hl.hosts[i].name, hl.hosts[i].slots);
    loom_hostlist_free(&hl);
    return buf;
}

static const char *counts(const char *s, int n)
{
    static char buf[512];
    int c[16];
    if (loom_slurm_counts(s, c, n, err, sizeof err)) {
        snprintf(buf, sizeof buf, "ERR: %s", err);
        return buf;
    }
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%d", i ? "," : "", c[i]);
    return buf;
}

static const char *const vars[] = {
    "SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_TASKS_PER_NODE",
    "SLURM_JOB_CPUS_PER_NODE", "SLURM_NTASKS", "PBS_NODEFILE", "LSB_MCPU_HOSTS", "LSB_HOSTS",
};

static void clear(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

/* loom_alloc_detect as "Kind a:1,b:2", "none" or "ERR: reason". */
static const char *detect(void)
{
    static char buf[2048];
    loom_hostlist hl;
    const char *kind = NULL;
    int r = loom_alloc_detect(&hl, &kind, err, sizeof err);
    if (r < 0) {
        snprintf(buf, sizeof buf, "ERR: %s", err);
        return buf;
    }
    if (!r)
        return "none";
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s ", kind);
    for (int i = 0; i < hl.n; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s:%d", i ? "," : "",
                              hl.hosts[i].name, hl.hosts[i].slots);
    loom_hostlist_free(&hl);
    return buf;
}

int main(void)
{
    plan(28);
    is_str(hosts("node1"), "node1:1", "a single host");
    is_str(hosts("node[1-3,5]"), "node1:1,node2:1,node3:1,node5:1", "node[1-3,5]");
    is_str(hosts("gpu[08-11]"), "gpu08:1,gpu09:1,gpu10:1,gpu11:1",
           "zero-padded ranges keep their width, across a carry");
    is_str(hosts("a[1-2],login,b[7]"), "a1:1,a2:1,login:1,b7:1",
           "entries separated by commas outside brackets");
    is_str(hosts("r[1-2]n[1-2]-ib"), "r1n1-ib:1,r1n2-ib:1,r2n1-ib:1,r2n2-ib:1",
           "two bracket groups and a suffix");
    is_str(hosts("n.example.org"), "n.example.org:1", "a dotted name");
    has_str(hosts("node[3-1]"), "ERR: '3-1' is not a number range", "a descending range");
    has_str(hosts("node[1-3"), "ERR: 'node[1-3' is not a host list entry", "an open bracket");
    has_str(hosts("node[]"), "ERR: '[' without a range", "empty brackets");
    has_str(hosts("node[a-b]"), "is not a number range", "letters in a range");
    has_str(hosts("a,,b"), "is not a host list entry", "an empty entry");
    has_str(hosts("no de"), "is not a host list entry", "a space in a name");

    is_str(counts("2(x3),1", 4), "2,2,2,1", "2(x3),1");
    is_str(counts("4", 1), "4", "a single count");
    is_str(counts("1,2,3", 3), "1,2,3", "plain counts");
    has_str(counts("2(x3)", 2), "ERR: '2(x3)' gives 3 counts for 2 hosts", "too many counts");
    has_str(counts("2(x3", 3), "is not a list of counts", "an open repeat");
    has_str(counts("0", 1), "is not a list of counts", "a zero count");
    has_str(counts("2,", 1), "is not a list of counts", "a trailing comma");

    clear();
    is_str(detect(), "none", "no allocation variables: none");
    setenv("SLURM_JOB_ID", "42", 1);
    setenv("SLURM_JOB_NODELIST", "node[1-2]", 1);
    setenv("SLURM_TASKS_PER_NODE", "2(x2)", 1);
    setenv("SLURM_NTASKS", "4", 1);
    is_str(detect(), "Slurm node1:2,node2:2", "Slurm: nodes and tasks per node");
    setenv("SLURM_NTASKS", "3", 1);
    has_str(detect(), "ERR: the Slurm allocation's task counts disagree: SLURM_NTASKS=3 but "
            "SLURM_TASKS_PER_NODE='2(x2)' adds up to 4", "mismatched task counts are named");
    unsetenv("SLURM_NTASKS");
    unsetenv("SLURM_TASKS_PER_NODE");
    setenv("SLURM_JOB_CPUS_PER_NODE", "3,1", 1);
    is_str(detect(), "Slurm node1:3,node2:1", "Slurm without tasks: the CPUs per node");
    unsetenv("SLURM_JOB_NODELIST");
    has_str(detect(), "ERR: SLURM_JOB_ID is set but SLURM_JOB_NODELIST is not",
            "a Slurm job without a node list is named");

    clear();
    char path[] = "/tmp/test_alloc.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("n1\nn1\nn2\n\n", f);
    fclose(f);
    setenv("PBS_NODEFILE", path, 1);
    is_str(detect(), "PBS n1:2,n2:1", "PBS: a line a slot");
    unlink(path);
    has_str(detect(), "ERR: PBS_NODEFILE=/tmp/test_alloc.", "a missing PBS_NODEFILE is named");

    clear();
    setenv("LSB_MCPU_HOSTS", "h1 4 h2 2", 1);
    setenv("LSB_HOSTS", "h1 h1 h1 h1 h2 h2", 1);
    is_str(detect(), "LSF h1:4,h2:2", "LSF: LSB_MCPU_HOSTS");
    setenv("LSB_MCPU_HOSTS", "h1 four", 1);
    has_str(detect(), "ERR: LSB_MCPU_HOSTS='h1 four': expected 'host slots host slots ...'",
            "a malformed LSB_MCPU_HOSTS is named");
    clear();
    return done_testing();
}
