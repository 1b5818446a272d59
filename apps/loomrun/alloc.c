/* alloc.c — the batch allocation loomrun runs inside: Slurm's, PBS's or
 * LSF's hosts and slots from their environment variables, so that
 * `loomrun prog` in an sbatch script fills the allocation as mpirun does.
 * Also the two Slurm list syntaxes this needs: host lists
 * ("node[1-3,5]") and count lists ("2(x3),1"). */
#include "alloc.h"
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOSTS LOOM_HOSTLIST_MAX

/* Append host name with `slots` slots (a host already listed gains
 * them), at most MAX_HOSTS hosts. */
static int alloc_add(loom_hostlist *hl, const char *name, int slots)
{
    return hl->n >= MAX_HOSTS ? -1 : loom_hostlist_add(hl, name, slots);
}

static int add_one(const char *name, void *hl)
{
    return alloc_add(hl, name, 1) ? -1 : 0;
}

int loom_slurm_hostlist(const char *s, loom_hostlist *out, char *err, size_t errlen)
{
    return loom_rt_hostlist_expand(s, add_one, out, err, errlen);
}

int loom_slurm_counts(const char *s, int *counts, int n, char *err, size_t errlen)
{
    int k = 0;
    for (const char *p = s;;) {
        char *e;
        errno = 0;
        long v = strtol(p, &e, 10), times = 1;
        if (e == p || !isdigit((unsigned char)*p) || errno || v < 1 || v > 1 << 20) {
            snprintf(err, errlen, "'%s' is not a list of counts like '2(x3),1'", s);
            return -1;
        }
        p = e;
        if (!strncmp(p, "(x", 2)) {
            p += 2;
            times = strtol(p, &e, 10);
            if (e == p || *e != ')' || times < 1 || times > MAX_HOSTS) {
                snprintf(err, errlen, "'%s' is not a list of counts like '2(x3),1'", s);
                return -1;
            }
            p = e + 1;
        }
        for (long t = 0; t < times; t++, k++)
            if (k < n)
                counts[k] = (int)v;
        if (!*p)
            break;
        if (*p++ != ',') {
            snprintf(err, errlen, "'%s' is not a list of counts like '2(x3),1'", s);
            return -1;
        }
    }
    if (k != n) {
        snprintf(err, errlen, "'%s' gives %d count%s for %d host%s", s, k, k == 1 ? "" : "s", n,
                 n == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

static int slurm(loom_hostlist *out, char *err, size_t errlen)
{
    const char *nl = getenv("SLURM_JOB_NODELIST"), *nlv = "SLURM_JOB_NODELIST";
    if (!nl)
        nl = getenv("SLURM_NODELIST"), nlv = "SLURM_NODELIST";
    if (!nl) {
        snprintf(err, errlen, "SLURM_JOB_ID is set but SLURM_JOB_NODELIST is not: cannot "
                 "tell the Slurm allocation's nodes (give -H hostfile, or unset SLURM_JOB_ID)");
        return -1;
    }
    char e2[300];
    if (loom_slurm_hostlist(nl, out, e2, sizeof e2) < 0) {
        snprintf(err, errlen, "%s='%s': %s", nlv, LOOM_QUOTE(nl), e2);
        return -1;
    }
    const char *cv = "SLURM_TASKS_PER_NODE", *c = getenv(cv);
    if (!c)
        cv = "SLURM_JOB_CPUS_PER_NODE", c = getenv(cv);
    int *counts = calloc((size_t)out->n, sizeof *counts);
    if (!counts) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int total = 0;
    if (c && loom_slurm_counts(c, counts, out->n, e2, sizeof e2)) {
        snprintf(err, errlen, "%s: %s (%s='%s')", cv, e2, nlv, LOOM_QUOTE(nl));
        free(counts);
        return -1;
    }
    for (int i = 0; i < out->n; i++)
        total += out->hosts[i].slots = c ? counts[i] : 1;
    free(counts);
    const char *nt = getenv("SLURM_NTASKS");
    long ntasks;
    if (nt && c && !strcmp(cv, "SLURM_TASKS_PER_NODE") &&
        (loom_rt_parse_int(nt, 1, 1 << 20, &ntasks) || ntasks != total)) {
        snprintf(err, errlen, "the Slurm allocation's task counts disagree: SLURM_NTASKS=%s "
                 "but SLURM_TASKS_PER_NODE='%s' adds up to %d", LOOM_QUOTE(nt),
                 LOOM_QUOTE(c), total);
        return -1;
    }
    return 0;
}

static int pbs(const char *path, loom_hostlist *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "PBS_NODEFILE=%s: %s", path, strerror(errno));
        return -1;
    }
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *save, *h = strtok_r(line, " \t\r\n", &save);
        if (!h)
            continue;
        if (alloc_add(out, h, 1)) {
            snprintf(err, errlen, "PBS_NODEFILE=%s:%d: too many hosts", path, lineno);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    if (!out->n) {
        snprintf(err, errlen, "PBS_NODEFILE=%s: no hosts in the file", path);
        return -1;
    }
    return 0;
}

static int lsf(const char *mcpu, const char *hosts, loom_hostlist *out, char *err,
               size_t errlen)
{
    const char *v = mcpu ? mcpu : hosts, *name = mcpu ? "LSB_MCPU_HOSTS" : "LSB_HOSTS";
    char *copy = strdup(v), *save;
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        long slots = 1;
        if (mcpu) {
            char *s = strtok_r(NULL, " \t", &save);
            if (!s || loom_rt_parse_int(s, 1, 1 << 16, &slots)) {
                snprintf(err, errlen, "%s='%s': expected 'host slots host slots ...'", name,
                         LOOM_QUOTE(v));
                free(copy);
                return -1;
            }
        }
        if (alloc_add(out, t, (int)slots)) {
            snprintf(err, errlen, "%s: too many hosts", name);
            free(copy);
            return -1;
        }
    }
    free(copy);
    if (!out->n) {
        snprintf(err, errlen, "%s is empty", name);
        return -1;
    }
    return 0;
}

int loom_alloc_detect(loom_hostlist *out, const char **kind, char *err, size_t errlen)
{
    const char *pbsf = getenv("PBS_NODEFILE"), *mcpu = getenv("LSB_MCPU_HOSTS"),
               *lsbh = getenv("LSB_HOSTS");
    int r;
    *out = (loom_hostlist){0};
    if (getenv("SLURM_JOB_ID"))
        *kind = "Slurm", r = slurm(out, err, errlen);
    else if (pbsf && *pbsf)
        *kind = "PBS", r = pbs(pbsf, out, err, errlen);
    else if ((mcpu && *mcpu) || (lsbh && *lsbh))
        *kind = "LSF", r = lsf(mcpu && *mcpu ? mcpu : NULL, lsbh, out, err, errlen);
    else
        return 0;
    if (r) {
        loom_hostlist_free(out);
        return -1;
    }
    return 1;
}

void loom_alloc_names(const loom_hostlist *hl, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < hl->n; i++) {
        size_t l = strlen(hl->hosts[i].name);
        if (used + l + 32 > len) {
            snprintf(buf + used, len - used, ",... (%d hosts)", hl->n);
            return;
        }
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
                                 hl->hosts[i].name);
    }
}
