/* first.c — a first Loom program (README, "Writing a program").
 * Every rank sums its share of 1..N; loom_allreduce adds the shares up.
 *   cc $(pkg-config --cflags --libs loom) -fopenmp first.c -o first
 *   loomrun -n 4 ./first */
#include <loom.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    long n = 1000000, mine = 0, total;
    #pragma omp parallel for reduction(+ : mine)
    for (long i = 1 + loom_rank(); i <= n; i += loom_size())
        mine += i;
    loom_allreduce(&mine, &total, 1, LOOM_INT64, LOOM_SUM);
    if (loom_rank() == 0)
        printf("sum of 1..%ld = %ld on %d ranks\n", n, total, loom_size());
    return loom_finalize();
}
