/* rv_squat.c — a process squatting on a job's rendezvous port, for
 * tests/launcher/squat.t.  It speaks the rendezvous protocol (lib/
 * rendezvous.c) to NRANKS ranks per session and hands them a table of the
 * addresses they sent, signed one of three ways:
 *   honest  with LOOM_JOB_KEY, over each rank's nonce and its own: what
 *           the real server does (the control: the ranks must accept it)
 *   nokey   with a key of its own (a squatter that does not know the job's)
 *   replay  session 1 as honest (a recorded exchange), then session 2
 *           replays session 1's HELLO nonces and signed TABLE frames to
 *           new ranks, rank by rank
 *   busy    refuses each rank's first connection "busy" (as the real
 *           server does when full), then serves as honest
 *   close   greets each rank, reads its JOIN and closes the connection
 *           (a stranger on the port that knows the HELLO; the ranks must
 *           fail with a message, not crash)
 * It never checks the ranks' MACs: a squatter would not.  Writes its port
 * to PORTFILE, serves the sessions, and after each table keeps reading
 * until every rank has closed.
 *   rv_squat honest|nokey|replay|busy|close PORTFILE NRANKS */
#include "internal.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXR 8

static void fail(const char *what)
{
    fprintf(stderr, "rv_squat: %s\n", what);
    exit(2);
}

/* One session: greet NRANKS connections, read their JOINs, send each the
 * table.  rec_nonce/rec_table: session 1's, recorded or replayed. */
static void session(int lfd, int nranks, const uint8_t key[16], int replay,
                    uint8_t rec_nonce[][16], uint8_t *rec_table[], size_t rec_len[])
{
    int fd[MAXR], rank_of[MAXR];
    uint8_t rnonce[MAXR][16], *addr[MAXR];
    size_t alen[MAXR];
    loom_fbuf fb[MAXR];
    memset(fb, 0, sizeof fb);
    for (int c = 0; c < nranks; c++) {
        if ((fd[c] = accept(lfd, NULL, NULL)) < 0)
            fail("accept failed");
        uint8_t hello[24];
        loom_rt_put32(hello, LOOM_PROTO_MAGIC);
        loom_rt_put32(hello + 4, LOOM_PROTO_VERSION);
        if (!replay && loom_rt_key_generate(rec_nonce[c]))
            fail("no random nonce");
        memcpy(hello + 8, rec_nonce[c], 16);
        uint8_t *p;
        size_t n;
        if (loom_rt_frame_send(fd[c], LOOM_F_HELLO, hello, sizeof hello) ||
            loom_rt_frame_recv(fd[c], &fb[c], loom_wtime() + 30, &p, &n) != LOOM_F_JOIN || n < 49)
            fail("no JOIN");
        memcpy(rnonce[c], p + 16, 16);
        rank_of[c] = (int)loom_rt_get32(p + 32);
        size_t hl = p[44];
        alen[c] = loom_rt_get32(p + 45 + hl);
        if (rank_of[c] < 0 || rank_of[c] >= nranks || 49 + hl + alen[c] > n ||
            !(addr[c] = malloc(alen[c])))
            fail("a bad JOIN");
        memcpy(addr[c], p + 49 + hl, alen[c]);
        free(p);
    }
    size_t len = 16 + 4;
    for (int r = 0; r < nranks; r++)
        len += 1 + 4 + alen[r];
    for (int c = 0; c < nranks; c++) {
        int r = rank_of[c];
        if (replay) { /* the recorded frame of the same rank, as it was */
            loom_rt_frame_send(fd[c], LOOM_F_TABLE, rec_table[r], rec_len[r]);
            continue;
        }
        uint8_t *t = malloc(len), *q = t + 16;
        loom_rt_put32(q, (uint32_t)nranks);
        q += 4;
        for (int k = 0; k < nranks; k++) { /* table by rank: find who joined as k */
            int w = 0;
            while (rank_of[w] != k)
                w++;
            *q++ = 0; /* no host name */
            loom_rt_put32(q, (uint32_t)alen[w]);
            memcpy(q + 4, addr[w], alen[w]);
            q += 4 + alen[w];
        }
        loom_rt_handshake_mac(key, "TABL", rnonce[c], rec_nonce[c], t + 16, len - 16, t);
        loom_rt_frame_send(fd[c], LOOM_F_TABLE, t, len);
        rec_table[r] = t; /* recorded for a replay */
        rec_len[r] = len;
        memcpy(rec_nonce[r + MAXR], rec_nonce[c], 16); /* rank r's HELLO nonce */
    }
    for (int c = 0; c < nranks; c++) { /* until the rank closes */
        while (loom_rt_fbuf_fill(fd[c], &fb[c]) > 0)
            ;
        close(fd[c]);
        loom_rt_fbuf_free(&fb[c]);
        free(addr[c]);
    }
}

/* Accept one connection, send a good HELLO, read the JOIN, close. */
static void greet_and_close(int lfd)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        fail("accept failed");
    uint8_t hello[24], *p = NULL;
    size_t n;
    loom_fbuf fb = {0};
    loom_rt_put32(hello, LOOM_PROTO_MAGIC);
    loom_rt_put32(hello + 4, LOOM_PROTO_VERSION);
    memset(hello + 8, 7, 16);
    if (loom_rt_frame_send(fd, LOOM_F_HELLO, hello, sizeof hello) ||
        loom_rt_frame_recv(fd, &fb, loom_wtime() + 30, &p, &n) != LOOM_F_JOIN)
        fail("no JOIN");
    free(p);
    loom_rt_fbuf_free(&fb);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 4 || atoi(argv[3]) < 1 || atoi(argv[3]) > MAXR)
        fail("usage: rv_squat honest|nokey|replay|busy|close PORTFILE NRANKS");
    const char *mode = argv[1];
    int nranks = atoi(argv[3]);
    uint8_t key[16];
    const char *hex = getenv("LOOM_JOB_KEY");
    if (!strcmp(mode, "nokey") ? loom_rt_key_generate(key) : !hex || loom_rt_key_parse(hex, key))
        fail("LOOM_JOB_KEY must be set (32 hex digits)");
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 16) ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl))
        fail("cannot listen on loopback");
    FILE *f = fopen(argv[2], "w");
    if (!f || fprintf(f, "127.0.0.1:%d\n", ntohs(sa.sin_port)) < 0 || fclose(f))
        fail("cannot write the port file");
    /* nonces: [0, MAXR) by connection this session, [MAXR, 2 MAXR) by rank */
    if (!strcmp(mode, "close")) {
        for (int c = 0; c < nranks; c++)
            greet_and_close(lfd);
        close(lfd);
        return 0;
    }
    for (int c = 0; !strcmp(mode, "busy") && c < nranks; c++) {
        int fd = accept(lfd, NULL, NULL);
        static const char busy[] = "busy: too many connections that have not joined; retry";
        if (fd < 0 || loom_rt_frame_send(fd, LOOM_F_REFUSE, busy, sizeof busy - 1))
            fail("accept failed");
        close(fd);
    }
    uint8_t nonce[2 * MAXR][16], *table[MAXR] = {0};
    size_t tlen[MAXR];
    session(lfd, nranks, key, 0, nonce, table, tlen);
    if (!strcmp(mode, "replay")) {
        /* connections of session 2 come in any order: greet each with the
         * nonce rank 0 saw, and so on by arrival; its table is rank k's */
        for (int r = 0; r < nranks; r++)
            memcpy(nonce[r], nonce[MAXR + r], 16);
        session(lfd, nranks, key, 1, nonce, table, tlen);
    }
    for (int r = 0; r < nranks; r++)
        free(table[r]);
    close(lfd);
    return 0;
}
