/* spin.c — a rank that loops on collectives until told to stop.
 * Usage: spin [seconds] [pidfile-prefix].  Each rank writes its pid to
 * PREFIX.<rank> (so a test can kill one), then runs barriers and small
 * allreduces for the given time (default 30 s) and exits 0. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    double secs = argc > 1 ? atof(argv[1]) : 30;
    if (argc > 2) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", argv[2], loom_rank());
        FILE *f = fopen(path, "w");
        if (!f) { perror(path); return 1; }
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
    }
    double t0 = loom_wtime(), x = 1;
    long rounds = 0;
    int go = 1;
    while (go) {
        loom_barrier();
        loom_allreduce(LOOM_IN_PLACE, &x, 1, LOOM_DOUBLE, LOOM_MAX);
        go = loom_wtime() - t0 < secs;
        loom_bcast(&go, sizeof go, 0); /* every rank stops in the same round */
        rounds++;
    }
    if (loom_rank() == 0)
        printf("spin: %ld rounds\n", rounds);
    return loom_finalize();
}
