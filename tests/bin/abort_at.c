/* abort_at.c — rank R calls loom_abort(CODE) after one barrier while the
 * others wait in the next one.  Usage: abort_at R CODE. */
#include <loom.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv) || argc < 3)
        return 1;
    loom_barrier();
    if (loom_rank() == atoi(argv[1]))
        loom_abort(atoi(argv[2]), "rank %d gives up on purpose", loom_rank());
    loom_barrier();
    return loom_finalize();
}
