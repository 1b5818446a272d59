/* test_frame.c — unit tests for frame.c, the bootstrap socket's framing:
 * the wire format of loom_rt_frame_send, decoding with loom_rt_fbuf_fill/
 * loom_rt_fbuf_next/loom_rt_fbuf_pop (several frames in one read, a frame split
 * across reads, empty payloads, malformed lengths, EOF) and
 * loom_rt_frame_recv (whole frames, EOF, malformed input, a deadline that
 * expires).  Everything runs over a socketpair(2). */
#include "internal.h"
#include "../tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void pair(int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        perror("socketpair");
        exit(2);
    }
}

static void write_raw(int fd, const void *p, size_t n)
{
    if (write(fd, p, n) != (ssize_t)n) {
        perror("write");
        exit(2);
    }
}

static void test_put_get32(void)
{
    uint8_t b[4];
    loom_rt_put32(b, 0x12345678u);
    ok(b[0] == 0x78 && b[1] == 0x56 && b[2] == 0x34 && b[3] == 0x12,
       "put32 is little-endian");
    is_int(loom_rt_get32(b), 0x12345678u, "get32(put32(x)) == x");
    loom_rt_put32(b, 0xffffffffu);
    is_int(loom_rt_get32(b), 0xffffffffu, "get32 of all ones");
}

static void test_wire_format(void)
{
    int sv[2];
    pair(sv);
    is_int(loom_rt_frame_send(sv[0], LOOM_F_REFUSE, "abc", 3), 0, "frame_send returns 0");
    uint8_t buf[64];
    ssize_t r = read(sv[1], buf, sizeof buf);
    static const uint8_t want[] = {4, 0, 0, 0, LOOM_F_REFUSE, 'a', 'b', 'c'};
    ok(r == (ssize_t)sizeof want && !memcmp(buf, want, sizeof want),
       "wire format: u32 LE length of type+payload, u8 type, payload");
    close(sv[0]);
    close(sv[1]);
}

static void test_one_frame(void)
{
    int sv[2];
    loom_fbuf fb = {0};
    const uint8_t *p;
    size_t n = 99;
    pair(sv);
    is_int(loom_rt_fbuf_fill(sv[1], &fb), 1, "fill on an empty socket: 1 (EAGAIN)");
    is_int(fb.len, 0, "fill on an empty socket reads nothing");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "next on an empty buffer: 0");

    loom_rt_frame_send(sv[0], LOOM_F_HELLO, "hello", 5);
    is_int(loom_rt_fbuf_fill(sv[1], &fb), 1, "fill after a send: 1");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_HELLO, "next returns the frame's type");
    ok(n == 5 && !memcmp(p, "hello", 5), "next points at the payload");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_HELLO, "next does not consume the frame");
    loom_rt_fbuf_pop(&fb);
    is_int(fb.len, 0, "pop consumes the whole frame");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "next after pop: 0");
    loom_rt_fbuf_free(&fb);
    ok(fb.data == NULL && fb.len == 0 && fb.cap == 0, "fbuf_free resets the buffer");
    close(sv[0]);
    close(sv[1]);
}

static void test_several_in_one_read(void)
{
    int sv[2];
    loom_fbuf fb = {0};
    const uint8_t *p;
    size_t n;
    uint8_t join[10], table[300];
    for (size_t i = 0; i < sizeof join; i++)
        join[i] = (uint8_t)(i + 1);
    for (size_t i = 0; i < sizeof table; i++)
        table[i] = (uint8_t)(i * 7);
    pair(sv);
    loom_rt_frame_send(sv[0], LOOM_F_PING, NULL, 0);
    loom_rt_frame_send(sv[0], LOOM_F_JOIN, join, sizeof join);
    loom_rt_frame_send(sv[0], LOOM_F_TABLE, table, sizeof table); /* >= 256: two writes */
    is_int(loom_rt_fbuf_fill(sv[1], &fb), 1, "one fill");
    is_int(fb.len, 5 + 5 + sizeof join + 5 + sizeof table, "one fill read all three frames");

    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_PING, "first frame: PING");
    is_int(n, 0, "PING has an empty payload");
    loom_rt_fbuf_pop(&fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_JOIN, "second frame: JOIN");
    ok(n == sizeof join && !memcmp(p, join, n), "JOIN payload intact");
    loom_rt_fbuf_pop(&fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_TABLE, "third frame: TABLE");
    ok(n == sizeof table && !memcmp(p, table, n), "TABLE payload (300 bytes) intact");
    loom_rt_fbuf_pop(&fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "no fourth frame");
    is_int(fb.len, 0, "buffer empty after three pops");
    loom_rt_fbuf_free(&fb);
    close(sv[0]);
    close(sv[1]);
}

static void test_split(void)
{
    int sv[2];
    loom_fbuf fb = {0};
    const uint8_t *p;
    size_t n;
    pair(sv);
    /* PEERLOST with a 4-byte payload, then the first byte of the next frame. */
    uint8_t raw[9 + 1];
    loom_rt_put32(raw, 5);
    raw[4] = LOOM_F_PEERLOST;
    loom_rt_put32(raw + 5, 7);
    raw[9] = 2; /* start of the next frame's length */

    write_raw(sv[0], raw, 2);
    loom_rt_fbuf_fill(sv[1], &fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "2 bytes of the header: no frame yet");
    write_raw(sv[0], raw + 2, 3);
    loom_rt_fbuf_fill(sv[1], &fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "header without payload: no frame yet");
    write_raw(sv[0], raw + 5, 3);
    loom_rt_fbuf_fill(sv[1], &fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "3 of 4 payload bytes: no frame yet");
    write_raw(sv[0], raw + 8, 2);
    loom_rt_fbuf_fill(sv[1], &fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_PEERLOST, "last byte in: the frame");
    ok(n == 4 && loom_rt_get32(p) == 7, "split frame's payload intact");
    loom_rt_fbuf_pop(&fb);
    is_int(fb.len, 1, "pop keeps the next frame's first byte");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "a 1-byte partial frame: no frame yet");
    uint8_t rest[] = {0, 0, 0, LOOM_F_ABORT, 'x'};
    write_raw(sv[0], rest, sizeof rest);
    loom_rt_fbuf_fill(sv[1], &fb);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_ABORT, "the next frame completes");
    ok(n == 1 && p[0] == 'x', "its payload is intact");
    loom_rt_fbuf_pop(&fb);
    loom_rt_fbuf_free(&fb);

    /* A frame larger than the buffer's first allocation. */
    size_t big = 20000;
    uint8_t *payload = malloc(big);
    for (size_t i = 0; i < big; i++)
        payload[i] = (uint8_t)(i * 31 + 5);
    is_int(loom_rt_frame_send(sv[0], LOOM_F_TABLE, payload, big), 0, "send a 20000-byte frame");
    int t = 0, fills = 0;
    while (t == 0 && fills < 64) {
        if (loom_rt_fbuf_fill(sv[1], &fb) != 1)
            break;
        fills++;
        t = loom_rt_fbuf_next(&fb, &p, &n);
    }
    is_int(t, LOOM_F_TABLE, "20000-byte frame decoded after %d fills", fills);
    ok(t == LOOM_F_TABLE && n == big && !memcmp(p, payload, big), "its payload is intact");
    free(payload);
    loom_rt_fbuf_free(&fb);
    close(sv[0]);
    close(sv[1]);
}

static void test_empty_payload(void)
{
    int sv[2];
    loom_fbuf fb = {0};
    const uint8_t *p;
    size_t n = 99;
    pair(sv);
    is_int(loom_rt_frame_send(sv[0], LOOM_F_BYE, NULL, 0), 0, "send a frame with no payload");
    loom_rt_fbuf_fill(sv[1], &fb);
    is_int(fb.len, 5, "an empty frame is 5 bytes on the wire");
    is_int(loom_rt_get32(fb.data), 1, "its length field is 1 (the type byte)");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_BYE, "next: BYE");
    is_int(n, 0, "payload length 0");
    loom_rt_fbuf_pop(&fb);
    is_int(fb.len, 0, "pop consumes it");

    uint8_t *pl = NULL;
    size_t len = 99;
    loom_rt_frame_send(sv[0], LOOM_F_PING, NULL, 0);
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() + 10, &pl, &len), LOOM_F_PING,
           "frame_recv of an empty frame: PING");
    ok(len == 0 && pl != NULL, "frame_recv: length 0 and a non-NULL payload");
    free(pl);
    loom_rt_fbuf_free(&fb);
    close(sv[0]);
    close(sv[1]);
}

static void test_malformed(void)
{
    const uint8_t *p;
    size_t n;
    uint8_t raw[5] = {0, 0, 0, 0, LOOM_F_PING};
    loom_fbuf fb = {raw, sizeof raw, sizeof raw};

    loom_rt_put32(raw, 0);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), -1, "length field 0: malformed");
    loom_rt_put32(raw, LOOM_FRAME_MAX + 1);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), -1, "length field LOOM_FRAME_MAX+1: malformed");
    loom_rt_put32(raw, 0xffffffffu);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), -1, "length field 2^32-1: malformed");
    loom_rt_put32(raw, LOOM_FRAME_MAX);
    is_int(loom_rt_fbuf_next(&fb, &p, &n), 0, "length field LOOM_FRAME_MAX: valid, incomplete");

    /* Through the socket and frame_recv. */
    int sv[2];
    pair(sv);
    loom_fbuf sfb = {0};
    uint8_t *pl = NULL;
    size_t len;
    loom_rt_put32(raw, LOOM_FRAME_MAX + 1);
    write_raw(sv[0], raw, sizeof raw);
    /* -1 also comes when the deadline passes: the oversized length must be
     * refused as soon as it is read, not after waiting out 10 s */
    double t0 = loom_wtime();
    is_int(loom_rt_frame_recv(sv[1], &sfb, t0 + 10, &pl, &len), -1,
           "frame_recv of an oversized length: -1");
    ok(loom_wtime() - t0 < 5, "... at once, not at the deadline (%.3f s of 10)", loom_wtime() - t0);
    loom_rt_fbuf_free(&sfb);
    close(sv[0]);
    close(sv[1]);

    /* The sender refuses what the receiver would call malformed. */
    static uint8_t dummy[1];
    errno = 0;
    is_int(loom_rt_frame_send(-1, LOOM_F_TABLE, dummy, LOOM_FRAME_MAX), -1,
           "frame_send of a payload of LOOM_FRAME_MAX bytes: -1");
    is_int(errno, EMSGSIZE, "... with errno EMSGSIZE");
}

static void test_eof(void)
{
    int sv[2];
    loom_fbuf fb = {0};
    const uint8_t *p;
    size_t n;
    pair(sv);
    loom_rt_frame_send(sv[0], LOOM_F_PING, "z", 1);
    close(sv[0]);
    is_int(loom_rt_fbuf_fill(sv[1], &fb), 1, "data before EOF: fill returns 1");
    is_int(loom_rt_fbuf_next(&fb, &p, &n), LOOM_F_PING, "the frame before EOF is intact");
    loom_rt_fbuf_pop(&fb);
    is_int(loom_rt_fbuf_fill(sv[1], &fb), 0, "EOF: fill returns 0");
    loom_rt_fbuf_free(&fb);
    close(sv[1]);

    pair(sv);
    uint8_t *pl = NULL;
    size_t len;
    close(sv[0]);
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() + 10, &pl, &len), 0,
           "frame_recv at EOF: 0");
    loom_rt_fbuf_free(&fb);
    close(sv[1]);

    is_int(loom_rt_fbuf_fill(-1, &fb), -1, "fill on a bad fd: -1");
    loom_rt_fbuf_free(&fb);
}

static void test_recv(void)
{
    int sv[2];
    loom_fbuf fb = {0};
    uint8_t *pl = NULL;
    size_t len = 0;
    pair(sv);
    loom_rt_frame_send(sv[0], LOOM_F_JOIN, "first", 5);
    loom_rt_frame_send(sv[0], LOOM_F_TABLE, "second!", 7);
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() + 10, &pl, &len), LOOM_F_JOIN,
           "frame_recv: first frame's type");
    ok(len == 5 && !memcmp(pl, "first", 5), "frame_recv: first payload");
    free(pl);
    pl = NULL;
    /* The second frame is already buffered: no read is needed, so an
     * expired deadline must not matter. */
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() - 1, &pl, &len), LOOM_F_TABLE,
           "frame_recv returns a buffered frame even past the deadline");
    ok(pl && len == 7 && !memcmp(pl, "second!", 7), "frame_recv: second payload");
    free(pl);
    pl = NULL;
    is_int(fb.len, 0, "both frames consumed");

    /* Nothing comes: the deadline expires. */
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() + 0.05, &pl, &len), -1,
           "frame_recv with a 50 ms deadline and no data: -1");
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() - 1, &pl, &len), -1,
           "frame_recv with a deadline already past: -1");
    /* Half a frame, then silence: still the deadline. */
    write_raw(sv[0], "\x09\x00\x00\x00\x05xy", 7);
    is_int(loom_rt_frame_recv(sv[1], &fb, loom_wtime() + 0.05, &pl, &len), -1,
           "frame_recv with half a frame and a 50 ms deadline: -1");
    loom_rt_fbuf_free(&fb);
    close(sv[0]);
    close(sv[1]);
}

/* loom_rt_grow (lib/grow.c), which the frame buffer grows by: doubling from
 * 16 until the array holds what is asked, the same array when it already
 * does, NULL (nothing changed) when the size would overflow. */
static void test_grow(void)
{
    size_t cap = 0;
    int *v = loom_rt_grow(NULL, &cap, 1, sizeof *v);
    ok(v && cap == 16, "loom_rt_grow from nothing: 16 elements");
    int *same = loom_rt_grow(v, &cap, 16, sizeof *v);
    ok(same == v && cap == 16, "loom_rt_grow when it already holds enough: the same array");
    for (int i = 0; i < 16; i++)
        v[i] = i;
    v = loom_rt_grow(v, &cap, 17, sizeof *v);
    ok(v && cap == 32 && v[15] == 15, "loom_rt_grow by one past the end: doubled, contents kept");
    v = loom_rt_grow(v, &cap, 1000, sizeof *v);
    ok(v && cap == 1024, "loom_rt_grow to 1000: doubled until it holds them (1024)");
    size_t before = cap;
    ok(!loom_rt_grow(v, &cap, SIZE_MAX / 2, sizeof *v) && cap == before,
       "loom_rt_grow past SIZE_MAX bytes: NULL, the capacity unchanged");
    free(v);
}

int main(void)
{
    /* A receive that never returns must fail the test, not hang prove:
     * SIGALRM's default action kills the process. */
    alarm(60);
    test_put_get32();
    test_wire_format();
    test_one_frame();
    test_several_in_one_read();
    test_split();
    test_empty_payload();
    test_malformed();
    test_eof();
    test_recv();
    test_grow();
    return done_testing();
}
