/* dsm_select.c — what an allocation's options and LOOM_COHERENCE_<NAME>
 * select, observed from the program.
 *
 *   dsm_select named   two row allocations, "alpha" and "beta", with no
 *                      .coherence option: rank 1 writes 42 into row 0 of
 *                      each, then a barrier; rank 0 prints what it reads
 *                      ("named: alpha A beta B").  Under bsp it reads 42;
 *                      under local (each rank its own memory) 0, so the
 *                      line shows which policy each allocation got.
 *   dsm_select numa    a 1 MiB allocation with .numa_node_set and
 *                      .numa_node = 0, and one without: after a first
 *                      touch of the pages this rank is home of (all of
 *                      them on one rank; its block on several, where the
 *                      home store lies under the working copy),
 *                      get_mempolicy on the placed one must say MPOL_BIND
 *                      to node 0 and move_pages must find each of those
 *                      pages on node 0; the other keeps the default
 *                      policy.  Each rank prints "numa: ok ..." or what
 *                      differed.
 * Exits non-zero on a failure. */
#include <loom.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <string.h>

static int named(void)
{
    loom_alloc_opts o = {.unit = LOOM_UNIT_ROW, .row_size = 8, .type = LOOM_INT64};
    o.name = "alpha";
    int64_t *a = loom_alloc(64, &o);
    o.name = "beta";
    int64_t *b = loom_alloc(64, &o);
    if (!a || !b)
        return 1;
    loom_barrier();
    if (loom_rank() == 1) {
        int64_t v = 42;
        loom_row_put(a, 0, &v);
        loom_row_put(b, 0, &v);
    }
    loom_barrier();
    if (loom_rank() == 0)
        printf("named: alpha %lld beta %lld\n", (long long)*(const int64_t *)loom_row_get(a, 0),
               (long long)*(const int64_t *)loom_row_get(b, 0));
    loom_barrier();
    loom_free(b);
    loom_free(a);
    return 0;
}

/* The policy of the page holding p (MPOL_F_ADDR) and its node mask. */
static int policy_of(void *p, unsigned long *mask)
{
    int mode = -1;
    *mask = 0;
    if (get_mempolicy(&mode, mask, 8 * sizeof *mask, p, MPOL_F_ADDR)) {
        perror("dsm_select: get_mempolicy");
        return -1;
    }
    return mode;
}

static int numa(void)
{
    enum { LEN = 1 << 20, NPAGES = LEN / 4096 };
    if (numa_available() < 0) {
        printf("numa: no NUMA support here\n");
        return 1;
    }
    char *p = loom_alloc(LEN, &(loom_alloc_opts){.name = "placed", .numa_node_set = 1,
                                                 .numa_node = 0});
    char *q = loom_alloc(LEN, &(loom_alloc_opts){.name = "plain"});
    if (!p || !q)
        return 1;
    /* this rank's home block (the default block distribution of pages) */
    int n = NPAGES / loom_size(), first = loom_rank() * n;
    char *hp = p + (size_t)first * 4096, *hq = q + (size_t)first * 4096;
    memset(hp, 1, (size_t)n * 4096); /* first touch */
    memset(hq, 1, (size_t)n * 4096);
    unsigned long mp, mq;
    int pp = policy_of(hp, &mp), pq = policy_of(hq, &mq);
    void *pages[NPAGES];
    int status[NPAGES];
    for (int i = 0; i < n; i++)
        pages[i] = hp + (size_t)i * 4096;
    long rc = move_pages(0, (unsigned long)n, pages, NULL, status, 0); /* nodes NULL: ask */
    int off = 0;
    for (int i = 0; i < n && rc == 0; i++)
        off += status[i] != 0;
    int ok = pp == MPOL_BIND && mp == 1 && pq == MPOL_DEFAULT && rc == 0 && off == 0;
    printf("numa: %s placed policy %d mask %#lx, plain policy %d; move_pages %ld, %d of %d "
           "home pages off node 0\n", ok ? "ok" : "FAILED", pp, mp, pq, rc, off, n);
    loom_barrier();
    loom_free(q);
    loom_free(p);
    return !ok;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    int rc = 2;
    if (argc > 1 && !strcmp(argv[1], "named"))
        rc = named();
    else if (argc > 1 && !strcmp(argv[1], "numa"))
        rc = numa();
    else
        fprintf(stderr, "usage: dsm_select named | numa\n");
    loom_finalize();
    return rc;
}
