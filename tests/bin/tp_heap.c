/* tp_heap.c — where a message-sized block comes from (lib/transport.c,
 * keep_buffers_in_heap): after loom_init, malloc a 1 MiB block, write it
 * and report how many blocks glibc serves with their own mapping
 * (mallinfo2's hblks): 0 when Loom kept such blocks in the heap (several
 * ranks, malloc not tuned by the user), 1 when glibc's defaults stand.
 * Prints "tp_heap: rank R mmapped N". */
#include <loom.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv))
        return 1;
    size_t before = mallinfo2().hblks;
    char *p = malloc(1 << 20);
    if (!p)
        return 1;
    memset(p, 1, 1 << 20);
    size_t n = mallinfo2().hblks - before;
    printf("tp_heap: rank %d mmapped %zu\n", loom_rank(), n);
    free(p);
    loom_finalize();
    return 0;
}
