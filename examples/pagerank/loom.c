/* pagerank — PageRank by power iteration on a generated web graph; omp.c
 * is the plain OpenMP program, loom.c its port to Loom (`diff omp.c
 * loom.c` shows the port).
 *
 *   pagerank [N]      N pages (default 1000000), 1 to 16 links out of each
 *
 * Each iteration gives every page (1 - d) / N plus d times the rank its
 * in-links pass on (a source's rank shared over its out-links), pages
 * split among the threads (and ranks), until the ranks move by less than
 * 1e-7 in all (L1) or after 100 iterations.  A page's new rank reads the
 * old ranks of pages anywhere in the graph.  Its sum runs over the page's
 * in-links in one order, so the ranks are the same on any layout; only the
 * L1 change is summed in an order that varies.  Prints the iterations, the
 * sum of the ranks and the five highest. */
#include <loom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The graph: page v links to outdeg[v] pages; in-links of v, as sources,
 * are src[first[v] .. first[v + 1]) (compressed rows). */
typedef struct graph {
    long n, *first, *src;
    int *outdeg;
} graph;

static unsigned long mix(unsigned long x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185UL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dUL;
    return x ^ (x >> 33);
}

/* Page v's k-th link: a few pages are linked to most (a power law), and
 * they are spread over the numbers (x -> 1000003 x + 12345 mod n permutes
 * them), as a real crawl's ids are not sorted by popularity. */
static long target(long n, long v, int k)
{
    unsigned long h = mix((unsigned long)v * 131 + (unsigned long)k);
    double r = (double)(h >> 11) / 9007199254740992.0;
    long x = (long)((double)n * r * r * r) % n;
    return (x * 1000003 + 12345) % n;
}

static int make_graph(graph *g, long n)
{
    g->n = n;
    g->outdeg = malloc((size_t)n * sizeof *g->outdeg);
    g->first = calloc((size_t)n + 1, sizeof *g->first);
    if (!g->outdeg || !g->first)
        return -1;
    for (long v = 0; v < n; v++) {
        g->outdeg[v] = 1 + (int)(mix((unsigned long)v) % 16);
        for (int k = 0; k < g->outdeg[v]; k++)
            g->first[target(n, v, k) + 1]++;
    }
    for (long v = 0; v < n; v++)
        g->first[v + 1] += g->first[v];
    long *fill = malloc((size_t)n * sizeof *fill);
    g->src = malloc((size_t)g->first[n] * sizeof *g->src);
    if (!fill || !g->src)
        return -1;
    for (long v = 0; v < n; v++)
        fill[v] = g->first[v];
    for (long v = 0; v < n; v++)
        for (int k = 0; k < g->outdeg[v]; k++) {
            long t = target(n, v, k);
            g->src[fill[t]++] = v;
        }
    free(fill);
    return 0;
}

static void free_graph(graph *g)
{
    free(g->outdeg);
    free(g->first);
    free(g->src);
}

/* The result, from the final ranks r: their sum in one order, the top 5. */
static void report(const double *r, long n, int iters)
{
    double sum = 0;
    long top[5] = {-1, -1, -1, -1, -1};
    for (long v = 0; v < n; v++) {
        sum += r[v];
        for (int k = 0; k < 5; k++)
            if (top[k] < 0 || r[v] > r[top[k]]) {
                for (int m = 4; m > k; m--)
                    top[m] = top[m - 1];
                top[k] = v;
                break;
            }
    }
    printf("pagerank: %ld pages, %d iterations, sum %.12f\n", n, iters, sum);
    for (int k = 0; k < 5; k++)
        printf("page %ld: %.12e\n", top[k], r[top[k]]);
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const double d = 0.85;
    graph g;
    if (make_graph(&g, n))
        return 1;
    double *r = loom_alloc((size_t)n * sizeof *r, NULL);
    double *next = loom_alloc((size_t)n * sizeof *next, NULL);
    if (!r || !next)
        return 1;
    LOOM_FOR(v, 0, n, NULL)
        r[v] = 1.0 / (double)n;
    int iters = 0;
    double change = 1;
    while (change >= 1e-7 && iters < 100) {
        change = 0;
        LOOM_FOR_REDUCE(v, 0, n, NULL, SUM, change, schedule(dynamic, 1024)) {
            double s = 0;
            for (long e = g.first[v]; e < g.first[v + 1]; e++)
                s += r[g.src[e]] / g.outdeg[g.src[e]];
            next[v] = (1 - d) / (double)n + d * s;
            change += fabs(next[v] - r[v]);
        }
        double *t = r;
        r = next;
        next = t;
        iters++;
    }
    if (loom_rank() == 0)
        report(r, n, iters);
    loom_free(r), loom_free(next);
    free_graph(&g);
    loom_finalize();
    return 0;
}
