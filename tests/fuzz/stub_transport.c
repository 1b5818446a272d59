/* stub_transport.c — lib/transport.c's interface without UCX, linked into
 * the fuzz harnesses in its place.  Message handlers registered with
 * loom_rt_tp_am_register are kept so that a harness can hand them any bytes
 * (fuzz_am_deliver); messages the runtime sends are counted and dropped;
 * any call that would wait for a peer or touch remote memory aborts,
 * since a message handler must never block (transport.c's contract). */
#include "fuzz.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AM 16
static loom_am_fn handlers[MAX_AM];
static long sent;
static __thread int delivering;

__attribute__((noreturn)) static void no(const char *what)
{
    fprintf(stderr, "stub transport: %s called%s\n", what,
            delivering ? " inside a message handler (handlers must not block)" : "");
    abort();
}

struct call {
    unsigned id;
    void *hdr, *data;
    size_t hlen, len;
};

static void call_handler(void *arg)
{
    struct call *c = arg;
    handlers[c->id](c->hdr, c->hlen, c->data, c->len);
}

int fuzz_am_deliver(unsigned id, const void *hdr, size_t hlen, const void *data, size_t len)
{
    if (id >= MAX_AM || !handlers[id])
        return -1;
    /* exactly len bytes (ASan's malloc is 8-byte aligned and bounds the
     * buffer at its last byte), as transport.c hands them over */
    void *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    if (len)
        memcpy(copy, data, len);
    void *h = malloc(hlen ? hlen : 1);
    if (!h)
        abort();
    if (hlen)
        memcpy(h, hdr, hlen);
    struct call c = {id, h, copy, hlen, len};
    delivering++;
    int code = fuzz_catch_exit(call_handler, &c);
    delivering--;
    free(h);
    free(copy);
    return code;
}

long fuzz_am_sent(void) { return sent; }

void loom_rt_tp_am_register(unsigned id, loom_am_fn fn)
{
    if (id < 2 || id >= MAX_AM)
        no("loom_rt_tp_am_register with a bad id");
    handlers[id] = fn;
}

void loom_rt_tp_am_send_eager(int dst, unsigned id, const void *hdr, size_t hlen, void *data,
                           size_t len, int eager)
{
    (void)hdr;
    (void)len;
    (void)eager;
    if (dst < 0 || dst >= loom_rt_icv.nranks || id >= MAX_AM || !hlen)
        no("loom_rt_tp_am_send to a bad rank or id");
    sent++;
    free(data);
}

void loom_rt_tp_am_send(int dst, unsigned id, const void *hdr, size_t hlen, void *data, size_t len)
{
    loom_rt_tp_am_send_eager(dst, id, hdr, hlen, data, len, 0);
}

int loom_rt_tp_busy(void) { return delivering > 0; }
int loom_rt_tp_foreground(void) { return 0; }
void loom_rt_tp_bytes(uint64_t *sent, uint64_t *received) { *sent = *received = 0; }
unsigned loom_rt_tp_drain(void) { return 0; }
void loom_rt_tp_wait(int timeout_ms) { (void)timeout_ms; }
long loom_rt_tp_live_registrations(void) { return 0; }
void loom_rt_tp_closing(void) {}
void loom_rt_tp_close(void) {}
void loom_rt_tp_set_peers(loom_peer *p, int n) { (void)p; (void)n; }

int loom_rt_tp_open(void **addr, size_t *addrlen)
{
    (void)addr;
    (void)addrlen;
    no("loom_rt_tp_open");
}

void loom_rt_tp_wait_flag(volatile int *flag)
{
    if (!*flag)
        no("loom_rt_tp_wait_flag");
}

void loom_rt_tp_wait_flag_until(_Atomic uint64_t *v, uint64_t target)
{
    if (*v < target)
        no("loom_rt_tp_wait_flag_until");
}

void loom_rt_tp_wait_until(int (*done)(void *), void *arg)
{
    if (!done(arg))
        no("loom_rt_tp_wait_until");
}

int loom_rt_tp_mem_map(void *addr, size_t len, void **memh, void **rkey, size_t *rkey_len)
{
    (void)addr; (void)len; (void)memh; (void)rkey; (void)rkey_len;
    no("loom_rt_tp_mem_map");
}

int loom_rt_tp_mem_alloc_at(void *addr, size_t len, void **memh, void **rkey, size_t *rkey_len)
{
    (void)addr; (void)len; (void)memh; (void)rkey; (void)rkey_len;
    no("loom_rt_tp_mem_alloc_at");
}

void loom_rt_tp_mem_unmap(void *memh) { (void)memh; no("loom_rt_tp_mem_unmap"); }
void loom_rt_tp_rkey_buffer_free(void *rkey_buf) { (void)rkey_buf; no("loom_rt_tp_rkey_buffer_free"); }
void *loom_rt_tp_rkey_unpack(int peer, const void *buf)
{
    (void)peer;
    (void)buf;
    no("loom_rt_tp_rkey_unpack");
}
void loom_rt_tp_rkey_destroy(void *rkey) { (void)rkey; no("loom_rt_tp_rkey_destroy"); }

void loom_rt_tp_get(int peer, void *buf, size_t len, uint64_t raddr, void *rkey, volatile int *done)
{
    (void)peer; (void)buf; (void)len; (void)raddr; (void)rkey; (void)done;
    no("loom_rt_tp_get");
}

loom_sreq *loom_rt_tp_isend(int dst, uint64_t tag, const void *buf, size_t len)
{
    (void)dst; (void)tag; (void)buf; (void)len;
    no("loom_rt_tp_isend");
}

void loom_rt_tp_wait_send(loom_sreq *r) { (void)r; no("loom_rt_tp_wait_send"); }

void loom_rt_tp_recv(int src, uint64_t tag, void *buf, size_t len)
{
    (void)src; (void)tag; (void)buf; (void)len;
    no("loom_rt_tp_recv");
}
