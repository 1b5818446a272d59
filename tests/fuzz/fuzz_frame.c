/* fuzz_frame.c — the bootstrap socket's framing (lib/frame.c) and the
 * TABLE decoder a rank applies to what the rendezvous sends (lib/join.c).
 * The input is the byte stream arriving on a socket, written in pieces of
 * 1, 7, 64 and 4096 bytes in turn and read with loom_rt_fbuf_fill as the
 * ranks do; every whole frame is taken with loom_rt_fbuf_next/pop, until the
 * stream ends or a frame is malformed (the connection would be dropped).
 * Invariants: a frame's payload lies inside what was read; a TABLE payload
 * the decoder accepts encodes back to the same bytes (the format has one
 * spelling), with every host name shorter than its field. */
#include "fuzz.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The TABLE payload of peers, as rendezvous.c's send_table writes it. */
static size_t encode(const loom_peer *peers, int np, uint8_t *out, size_t cap)
{
    size_t len = 4;
    loom_rt_put32(out, (uint32_t)np);
    for (int r = 0; r < np; r++) {
        size_t hl = strlen(peers[r].host);
        if (len + 1 + hl + 4 + peers[r].addrlen > cap)
            return 0;
        out[len++] = (uint8_t)hl;
        memcpy(out + len, peers[r].host, hl);
        len += hl;
        loom_rt_put32(out + len, (uint32_t)peers[r].addrlen);
        memcpy(out + len + 4, peers[r].addr, peers[r].addrlen);
        len += 4 + peers[r].addrlen;
    }
    return len;
}

static void on_table(const uint8_t *p, size_t n)
{
    int np = n >= 4 && loom_rt_get32(p) >= 1 && loom_rt_get32(p) <= 64 ? (int)loom_rt_get32(p) : 2;
    loom_peer *peers = NULL;
    if (loom_rt_join_parse_table(p, n, np, &peers)) {
        FUZZ_CHECK(peers == NULL, "%s", "a refused table left peers behind");
        return;
    }
    uint8_t *again = malloc(n + 1);
    FUZZ_CHECK(again != NULL, "%s", "memory");
    for (int r = 0; r < np; r++)
        FUZZ_CHECK(strnlen(peers[r].host, sizeof peers[r].host) < sizeof peers[r].host &&
                       peers[r].addr && peers[r].addrlen > 0,
                   "peer %d decoded badly", r);
    size_t m = encode(peers, np, again, n + 1);
    FUZZ_CHECK(m == n && !memcmp(again, p, n), "table of %zu bytes re-encodes to %zu", n, m);
    free(again);
    loom_rt_join_free(peers, np);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static const size_t piece[4] = {1, 7, 64, 4096};
    int sv[2];
    FUZZ_CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "%s", "socketpair");
    loom_fbuf fb = {0};
    size_t sent = 0, taken = 0;
    int bad = 0;
    for (int k = 0; !bad && (sent < n || k == 0); k++) {
        size_t m = n - sent < piece[k % 4] ? n - sent : piece[k % 4];
        FUZZ_CHECK(write(sv[0], d + sent, m) == (ssize_t)m, "%s", "write");
        sent += m;
        if (sent == n)
            shutdown(sv[0], SHUT_WR);
        int r = 1;
        while (r == 1 && fb.len < sent - taken) /* everything written so far */
            r = loom_rt_fbuf_fill(sv[1], &fb);
        FUZZ_CHECK(r >= 0, "%s", "loom_rt_fbuf_fill failed on a socketpair");
        for (;;) {
            const uint8_t *p;
            size_t len;
            int t = loom_rt_fbuf_next(&fb, &p, &len);
            if (t < 0) {
                bad = 1;
                break;
            }
            if (t == 0)
                break;
            FUZZ_CHECK(t <= 255 && p == fb.data + 5 && len + 5 <= fb.len && len < LOOM_FRAME_MAX,
                       "frame of type %d, %zu bytes, in a buffer of %zu", t, len, fb.len);
            FUZZ_CHECK(!memcmp(p, d + taken + 5, len), "%s", "payload differs from the stream");
            if (t == LOOM_F_TABLE)
                on_table(p, len);
            taken += 5 + len;
            loom_rt_fbuf_pop(&fb);
        }
    }
    loom_rt_fbuf_free(&fb);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
