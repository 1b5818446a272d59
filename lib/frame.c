/* frame.c — length-prefixed frames on the bootstrap TCP socket.
 *
 * A frame is  u32 length (of type + payload, little-endian) | u8 type |
 * payload.  Only the rendezvous and the heartbeats use this socket; every
 * byte of job data travels over UCX.  Lengths are checked against
 * LOOM_FRAME_MAX before anything is allocated. */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void loom_rt_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

uint32_t loom_rt_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

int loom_rt_wire_host_ok(const uint8_t *p, size_t n, size_t room)
{
    if (n >= room)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] <= ' ' || p[i] >= 0x7f)
            return 0;
    return 1;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            poll(&pf, 1, 1000);
            continue;
        }
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int loom_rt_frame_send(int fd, int type, const void *payload, size_t len)
{
    uint8_t hdr[5];
    if (len + 1 > LOOM_FRAME_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    loom_rt_put32(hdr, (uint32_t)(len + 1));
    hdr[4] = (uint8_t)type;
    if (len == 0 || len < 256) { /* one send for small frames */
        uint8_t buf[5 + 256];
        memcpy(buf, hdr, 5);
        if (len)
            memcpy(buf + 5, payload, len);
        return write_all(fd, buf, 5 + len);
    }
    return write_all(fd, hdr, 5) || write_all(fd, payload, len) ? -1 : 0;
}

int loom_rt_fbuf_fill(int fd, loom_fbuf *fb)
{
    uint8_t *nd = loom_rt_grow(fb->data, &fb->cap, fb->len + 4096, 1); /* room to read 4 KiB */
    if (!nd)
        return -1;
    fb->data = nd;
    ssize_t r = recv(fd, fb->data + fb->len, fb->cap - fb->len, MSG_DONTWAIT);
    if (r < 0)
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 1 : -1;
    if (r == 0)
        return 0;
    fb->len += (size_t)r;
    return 1;
}

int loom_rt_fbuf_next(loom_fbuf *fb, const uint8_t **payload, size_t *len)
{
    if (fb->len < 5)
        return 0;
    uint32_t flen = loom_rt_get32(fb->data);
    if (flen < 1 || flen > LOOM_FRAME_MAX)
        return -1;
    if (fb->len < 4 + (size_t)flen)
        return 0;
    int type = fb->data[4];
    *payload = fb->data + 5;
    *len = flen - 1;
    return type;
}

void loom_rt_fbuf_pop(loom_fbuf *fb)
{
    size_t used = 4 + (size_t)loom_rt_get32(fb->data);
    memmove(fb->data, fb->data + used, fb->len - used);
    fb->len -= used;
}

void loom_rt_fbuf_free(loom_fbuf *fb)
{
    free(fb->data);
    fb->data = NULL;
    fb->len = fb->cap = 0;
}

int loom_rt_frame_recv(int fd, loom_fbuf *fb, double deadline, uint8_t **payload,
                    size_t *len)
{
    for (;;) {
        const uint8_t *p;
        size_t n;
        int t = loom_rt_fbuf_next(fb, &p, &n);
        if (t < 0)
            return -1;
        if (t > 0) {
            *payload = malloc(n ? n : 1);
            if (!*payload)
                return -1;
            memcpy(*payload, p, n);
            *len = n;
            loom_rt_fbuf_pop(fb);
            return t;
        }
        double left = deadline - loom_wtime();
        if (left <= 0)
            return -1;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -1;
        if (pr == 0)
            continue;
        int r = loom_rt_fbuf_fill(fd, fb);
        if (r <= 0)
            return r;
    }
}
