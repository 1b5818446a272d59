/* tp_flood.c — the bound on messages one rank may leave unmatched at
 * another (lib/transport.c).  Rank 1 sends rank 0 N small tagged messages
 * (internal transport calls, tags outside the collectives' range) before
 * rank 0 posts any receive:
 *   tp_flood drain N   rank 0 then receives them all, twice over, and
 *                      checks every payload: queued messages are counted
 *                      out as they match (2N may exceed the bound)
 *   tp_flood flood N   rank 0 never receives: past the bound the job must
 *                      stop with one message naming rank 1
 * Prints "tp_flood: ok N" on rank 0 when drain succeeds. */
#include <loom.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loom_sreq loom_sreq; /* lib/internal.h */
loom_sreq *loom_rt_tp_isend(int dst, uint64_t tag, const void *buf, size_t len);
void loom_rt_tp_wait_send(loom_sreq *r);
void loom_rt_tp_recv(int src, uint64_t tag, void *buf, size_t len);

#define TAG(i) (0xf100000000000000ULL | (uint64_t)(i))

static void send_all(long n, long round)
{
    for (long i = 0; i < n; i++) {
        uint64_t v[2] = {(uint64_t)i, (uint64_t)round};
        loom_rt_tp_wait_send(loom_rt_tp_isend(0, TAG(round * n + i), v, sizeof v));
    }
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv) || argc < 3 || loom_size() < 2)
        return 2;
    long n = atol(argv[2]);
    int drain = !strcmp(argv[1], "drain"), bad = 0;
    for (long round = 0; round < (drain ? 2 : 1); round++) {
        if (loom_rank() == 1)
            send_all(n, round);
        loom_barrier(); /* rank 0 queues everything before it receives */
        for (long i = 0; drain && loom_rank() == 0 && i < n; i++) {
            uint64_t v[2];
            loom_rt_tp_recv(1, TAG(round * n + i), v, sizeof v);
            bad += v[0] != (uint64_t)i || v[1] != (uint64_t)round;
        }
        loom_barrier();
    }
    if (loom_rank() == 0 && !bad)
        printf("tp_flood: ok %ld\n", n);
    loom_finalize();
    return bad ? 1 : 0;
}
