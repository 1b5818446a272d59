/* barrier_order.c — proves loom_barrier orders events across ranks.
 * Usage: barrier_order FILE ROUNDS.  In round k, rank k % P sleeps 100 ms
 * before the barrier; every rank appends "B k r" to FILE before the
 * barrier and "A k r" after it, with O_APPEND (one write each, so the
 * file's order is the real order).  The test then checks that in every
 * round all B lines come before all A lines: without a working barrier the
 * late rank's B line lands after the others' A lines. */
#include <loom.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void note(int fd, char what, int k, int r)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%c %d %d\n", what, k, r);
    if (write(fd, line, (size_t)n) != n) {
        perror("write");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    if (argc < 3) {
        fprintf(stderr, "usage: barrier_order FILE ROUNDS\n");
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    int rounds = atoi(argv[2]), r = loom_rank(), P = loom_size();
    for (int k = 0; k < rounds; k++) {
        if (k % P == r) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        note(fd, 'B', k, r);
        loom_barrier();
        note(fd, 'A', k, r);
        loom_barrier(); /* keep rounds apart */
    }
    close(fd);
    return loom_finalize();
}
