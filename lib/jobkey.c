/* jobkey.c — the per-job key and the MACs by which each side of the
 * rendezvous proves it knows it.
 *
 * loomrun draws a random 128-bit key per job and hands it to its ranks in
 * LOOM_JOB_KEY.  At the rendezvous both sides draw a fresh nonce: the
 * server's HELLO carries one, the rank's JOIN another.  The rank signs its
 * JOIN with SipHash-2-4-128(key, "JOIN" || server nonce || the JOIN), the
 * server signs each rank's TABLE with SipHash-2-4-128(key, "TABL" || rank
 * nonce || server nonce || the table).  The key never crosses the wire, a
 * recorded answer is useless against another nonce, and the tags keep one
 * side's proof from being reflected as the other's.
 * SipHash is the keyed PRF of Aumasson and Bernstein (2012); this is a
 * plain implementation of the published algorithm, checked against its
 * reference test vectors in tests/unit/test_jobkey.c. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void store64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

#define SIPROUND                                                          \
    do {                                                                  \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);         \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                            \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                            \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);         \
    } while (0)

void loom_rt_siphash128(const uint8_t key[16], const void *msg, size_t len,
                     uint8_t out[16])
{
    const uint8_t *in = msg;
    uint64_t k0 = load64(key), k1 = load64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    v1 ^= 0xee;
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load64(in + i);
        v3 ^= m;
        SIPROUND; SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < len % 8; i++)
        b |= (uint64_t)in[whole + i] << (8 * i);
    v3 ^= b;
    SIPROUND; SIPROUND;
    v0 ^= b;
    v2 ^= 0xee;
    SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    store64(out, v0 ^ v1 ^ v2 ^ v3);
    v1 ^= 0xdd;
    SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    store64(out + 8, v0 ^ v1 ^ v2 ^ v3);
}

int loom_rt_key_generate(uint8_t key[16])
{
    return getrandom(key, 16, 0) == 16 ? 0 : -1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Leaves key untouched unless all 32 digits are valid. */
int loom_rt_key_parse(const char *hex, uint8_t key[16])
{
    uint8_t k[16];
    if (strlen(hex) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        k[i] = (uint8_t)(hi << 4 | lo);
    }
    memcpy(key, k, 16);
    return 0;
}

void loom_rt_key_format(const uint8_t key[16], char hex[33])
{
    static const char d[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        hex[2 * i] = d[key[i] >> 4];
        hex[2 * i + 1] = d[key[i] & 15];
    }
    hex[32] = 0;
}

int loom_rt_handshake_mac(const uint8_t key[16], const char tag[4], const uint8_t n1[16],
                       const uint8_t n2[16], const void *body, size_t len, uint8_t out[16])
{
    size_t head = 4 + 16 + (n2 ? 16 : 0);
    uint8_t *m = malloc(head + len);
    if (!m)
        return -1;
    memcpy(m, tag, 4);
    memcpy(m + 4, n1, 16);
    if (n2)
        memcpy(m + 20, n2, 16);
    memcpy(m + head, body, len);
    loom_rt_siphash128(key, m, head + len, out);
    free(m);
    return 0;
}

int loom_rt_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}
