/* ckpt_keep.c — a rank's private state kept in its checkpoints
 * (loom_checkpoint_keep; docs/checkpoint.md, "Private state").
 *
 * State that lives outside Loom allocations — a random generator, the
 * priority schedule's sampling weights, the SSP allreduce's running sums,
 * loom-lda's topic assignments — is registered here as named byte ranges.
 * checkpoint.c writes every registered range into the rank's file after
 * the allocations (CK_KEPT records); restart.c reads them all back in
 * loom_init and hands them here as pending contents, which the next
 * loom_checkpoint_keep of the same name copies in.  A name's contents wait
 * until it is registered again (the priority schedule makes its state at
 * its first loop, long after the restore window of the allocations
 * closed).
 *
 * Also here: the rows of a "local" allocation each rank declares current
 * (loom_checkpoint_rows).  checkpoint.c writes them as the record's
 * layout, so that a restart on another number of ranks can take each row
 * from the rank that held it (restart.c). */
#include "checkpoint.h"
#include "../dsm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kept {
    char name[64];
    void *p;
    size_t n;
};

static struct kept *reg, *pend; /* registered ranges; restored contents (p malloc'd) */
static int nreg, npend;
static size_t capreg, cappend;
struct rows {
    const void *p;
    uint64_t serial; /* the allocation's: a later one at the same address is another */
    size_t first, n;
};
static struct rows *rows; /* declared rows of local allocations, in call order */
static size_t nrows, caprows;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* Room in *v for element n (one more than the n there); 0, or -1 without
 * memory (*v unchanged). */
static int grow(struct kept **v, size_t *cap, int n)
{
    struct kept *w = loom_rt_grow(*v, cap, (size_t)n + 1, sizeof *w);
    if (!w)
        return -1;
    *v = w;
    return 0;
}

int loom_checkpoint_keep(const char *name, void *p, size_t n, int *restored)
{
    if (restored)
        *restored = 0;
    if (!name || !*name || strlen(name) >= sizeof reg->name || (!p && n))
        return LOOM_ERR_ARG;
    pthread_mutex_lock(&mu);
    int rc = LOOM_OK;
    for (int i = 0; i < nreg; i++)
        if (!strcmp(reg[i].name, name))
            rc = LOOM_ERR_ARG; /* a name is kept once */
    if (!rc && grow(&reg, &capreg, nreg))
        rc = LOOM_ERR_NOMEM;
    if (!rc) {
        reg[nreg] = (struct kept){.p = p, .n = n};
        strcpy(reg[nreg++].name, name);
        for (int i = 0; i < npend; i++)
            if (!strcmp(pend[i].name, name)) {
                if (pend[i].n != n)
                    loom_abort(1, "restart: the checkpoint keeps %zu bytes of '%s', this run "
                               "%zu: restart the same program with the same input and options",
                               pend[i].n, name, n);
                memcpy(p, pend[i].p, n);
                free(pend[i].p);
                pend[i] = pend[--npend];
                if (restored)
                    *restored = 1;
                break;
            }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void loom_checkpoint_forget(const void *p)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nreg;)
        if (reg[i].p == p)
            memmove(&reg[i], &reg[i + 1], (size_t)(--nreg - i) * sizeof *reg);
        else
            i++;
    size_t k = 0;
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].p != p)
            rows[k++] = rows[i];
    nrows = k;
    pthread_mutex_unlock(&mu);
}

/* Contract (lib/loom.h): any thread; takes mu.  The declaration lives
 * until loom_checkpoint_forget(p); it names the allocation by address and
 * creation serial, so one freed and made again at p does not inherit it. */
int loom_checkpoint_rows(void *p, size_t first, size_t n)
{
    loom_dsm_alloc *a = p ? loom_dsm_lookup_base(p) : NULL;
    if (!a || !a->policy->plain || first > a->nunits || n > a->nunits - first)
        return LOOM_ERR_ARG;
    if (!n)
        return LOOM_OK;
    pthread_mutex_lock(&mu);
    int rc = LOOM_OK;
    struct rows *w = loom_rt_grow(rows, &caprows, nrows + 1, sizeof *w);
    if (w)
        rows = w;
    else
        rc = LOOM_ERR_NOMEM;
    if (!rc)
        rows[nrows++] = (struct rows){p, a->serial, first, n};
    pthread_mutex_unlock(&mu);
    return rc;
}

size_t loom_ckpt_rows_of(const void *p, uint64_t serial, uint64_t *runs, size_t cap)
{
    pthread_mutex_lock(&mu);
    size_t k = 0;
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].p == p && rows[i].serial == serial) {
            if (k < cap) {
                runs[3 * k] = rows[i].first;
                runs[3 * k + 1] = rows[i].n;
                runs[3 * k + 2] = 1;
            }
            k++;
        }
    pthread_mutex_unlock(&mu);
    return k;
}

int loom_ckpt_kept(int i, const char **name, const void **p, size_t *n)
{
    pthread_mutex_lock(&mu);
    int k = nreg;
    if (i >= 0 && i < nreg) {
        *name = reg[i].name;
        *p = reg[i].p;
        *n = reg[i].n;
    }
    pthread_mutex_unlock(&mu);
    return k;
}

int loom_ckpt_pending(const char *name, void *data, size_t n)
{
    pthread_mutex_lock(&mu);
    int rc = grow(&pend, &cappend, npend);
    if (!rc) {
        pend[npend] = (struct kept){.p = data, .n = n};
        snprintf(pend[npend++].name, sizeof pend->name, "%s", name);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}
