/* test_jobkey.c — unit tests for jobkey.c: loom_rt_siphash128 against the
 * SipHash-2-4 128-bit reference test vectors, loom_rt_key_parse/format,
 * loom_rt_key_generate and loom_rt_ct_equal.
 *
 * The vectors are vectors_sip128 from vectors.h of the reference
 * implementation (github.com/veorq/SipHash): key = 00 01 .. 0f, message =
 * 00 01 .. (len-1), for len = 0..63; entry len is the 16 output bytes in
 * order. */
#include "internal.h"
#include "../tap.h"

#include <string.h>

static const char *const sip128[64] = {
    "a3817f04ba25a8e66df67214c7550293", /*  0 */
    "da87c1d86b99af44347659119b22fc45", /*  1 */
    "8177228da4a45dc7fca38bdef60affe4", /*  2 */
    "9c70b60c5267a94e5f33b6b02985ed51", /*  3 */
    "f88164c12d9c8faf7d0f6e7c7bcd5579", /*  4 */
    "1368875980776f8854527a07690e9627", /*  5 */
    "14eeca338b208613485ea0308fd7a15e", /*  6 */
    "a1f1ebbed8dbc153c0b84aa61ff08239", /*  7 */
    "3b62a9ba6258f5610f83e264f31497b4", /*  8 */
    "264499060ad9baabc47f8b02bb6d71ed", /*  9 */
    "00110dc378146956c95447d3f3d0fbba", /* 10 */
    "0151c568386b6677a2b4dc6f81e5dc18", /* 11 */
    "d626b266905ef35882634df68532c125", /* 12 */
    "9869e247e9c08b10d029934fc4b952f7", /* 13 */
    "31fcefac66d7de9c7ec7485fe4494902", /* 14 */
    "5493e99933b0a8117e08ec0f97cfc3d9", /* 15 */
    "6ee2a4ca67b054bbfd3315bf85230577", /* 16 */
    "473d06e8738db89854c066c47ae47740", /* 17 */
    "a426e5e423bf4885294da481feaef723", /* 18 */
    "78017731cf65fab074d5208952512eb1", /* 19 */
    "9e25fc833f2290733e9344a5e83839eb", /* 20 */
    "568e495abe525a218a2214cd3e071d12", /* 21 */
    "4a29b54552d16b9a469c10528eff0aae", /* 22 */
    "c9d184ddd5a9f5e0cf8ce29a9abf691c", /* 23 */
    "2db479ae78bd50d8882a8a178a6132ad", /* 24 */
    "8ece5f042d5e447b5051b9eacb8d8f6f", /* 25 */
    "9c0b53b4b3c307e87eaee08678141f66", /* 26 */
    "abf248af69a6eae4bfd3eb2f129eeb94", /* 27 */
    "0664da1668574b88b935f3027358aef4", /* 28 */
    "aa4b9dc4bf337de90cd4fd3c467c6ab7", /* 29 */
    "ea5c7f471faf6bde2b1ad7d4686d2287", /* 30 */
    "2939b0183223fafc1723de4f52c43d35", /* 31 */
    "7c3956ca5eeafc3e363e9d556546eb68", /* 32 */
    "77c6077146f01c32b6b69d5f4ea9ffcf", /* 33 */
    "37a6986cb8847edf0925f0f1309b54de", /* 34 */
    "a705f0e69da9a8f907241a2e923c8cc8", /* 35 */
    "3dc47d1f29c448461e9e76ed904f6711", /* 36 */
    "0d62bf01e6fc0e1a0d3c4751c5d3692b", /* 37 */
    "8c03468bca7c669ee4fd5e084bbee7b5", /* 38 */
    "528a5bb93baf2c9c4473cce5d0d22bd9", /* 39 */
    "df6a301e95c95dad97ae0cc8c6913bd8", /* 40 */
    "801189902c857f39e73591285e70b6db", /* 41 */
    "e617346ac9c231bb3650ae34ccca0c5b", /* 42 */
    "27d93437efb721aa401821dcec5adf89", /* 43 */
    "89237d9ded9c5e78d8b1c9b166cc7342", /* 44 */
    "4a6d8091bf5e7d651189fa94a250b14c", /* 45 */
    "0e33f96055e7ae893ffc0e3dcf492902", /* 46 */
    "e61c432b720b19d18ec8d84bdc63151b", /* 47 */
    "f7e5aef549f782cf379055a608269b16", /* 48 */
    "438d030fd0b7a54fa837f2ad201a6403", /* 49 */
    "a590d3ee4fbf04e3247e0d27f286423f", /* 50 */
    "5fe2c1a172fe93c4b15cd37caef9f538", /* 51 */
    "2c97325cbd06b36eb2133dd08b3a017c", /* 52 */
    "92c814227a6bca949ff0659f002ad39e", /* 53 */
    "dce850110bd8328cfbd50841d6911d87", /* 54 */
    "67f14984c7da791248e32bb5922583da", /* 55 */
    "1938f2cf72d54ee97e94166fa91d2a36", /* 56 */
    "74481e9646ed49fe0f6224301604698e", /* 57 */
    "57fca5de98a9d6d8006438d0583d8a1d", /* 58 */
    "9fecde1cefdc1cbed4763674d9575359", /* 59 */
    "e3040c00eb28f15366ca73cbd872e740", /* 60 */
    "7697009a6a831dfecca91c5993670f7a", /* 61 */
    "5853542321f567a005d547a4f04759bd", /* 62 */
    "5150d1772f50834a503e069a973fbd7c", /* 63 */
};

/* The test's own hex decoder, so that the vectors do not depend on
 * loom_rt_key_parse. */
static void unhex(const char *h, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void test_vectors(void)
{
    uint8_t key[16], msg[64], out[16], want[16];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    for (size_t len = 0; len < 64; len++) {
        unhex(sip128[len], want, 16);
        memset(out, 0xa5, sizeof out);
        loom_rt_siphash128(key, msg, len, out);
        is_mem(out, want, 16, "SipHash-2-4-128 reference vector, message length %zu", len);
    }

    /* The message need not be aligned. */
    uint8_t buf[64 + 3];
    memcpy(buf + 3, msg, 63);
    unhex(sip128[63], want, 16);
    loom_rt_siphash128(key, buf + 3, 63, out);
    is_mem(out, want, 16, "unaligned message gives the same MAC");

    /* One bit of key or message changes the MAC. */
    uint8_t out2[16];
    loom_rt_siphash128(key, msg, 16, out);
    key[15] ^= 0x80;
    loom_rt_siphash128(key, msg, 16, out2);
    key[15] ^= 0x80;
    ok(memcmp(out, out2, 16) != 0, "flipping a key bit changes the MAC");
    msg[0] ^= 1;
    loom_rt_siphash128(key, msg, 16, out2);
    msg[0] ^= 1;
    ok(memcmp(out, out2, 16) != 0, "flipping a message bit changes the MAC");
    /* The length is part of the MAC: a trailing zero byte matters. */
    uint8_t zeros[9] = {0};
    loom_rt_siphash128(key, zeros, 8, out);
    loom_rt_siphash128(key, zeros, 9, out2);
    ok(memcmp(out, out2, 16) != 0, "8 and 9 zero bytes have different MACs");
}

static void test_key_text(void)
{
    uint8_t key[16], back[16];
    char hex[33];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(i * 0x11);
    memset(hex, 'Z', sizeof hex);
    loom_rt_key_format(key, hex);
    is_str(hex, "00112233445566778899aabbccddeeff", "key_format: 32 lowercase hex digits");
    is_int(loom_rt_key_parse(hex, back), 0, "key_parse accepts key_format's output");
    is_mem(back, key, 16, "parse(format(key)) == key");

    is_int(loom_rt_key_parse("00112233445566778899AABBCCDDEEFF", back), 0,
           "key_parse accepts upper case");
    is_mem(back, key, 16, "upper case parses to the same bytes");
    is_int(loom_rt_key_parse("000102030405060708090a0B0c0D0e0F", back), 0,
           "key_parse accepts mixed case");
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    is_mem(back, key, 16, "mixed case parses to 00 01 .. 0f");

    uint8_t rnd[16], rnd2[16];
    is_int(loom_rt_key_generate(rnd), 0, "key_generate succeeds");
    is_int(loom_rt_key_generate(rnd2), 0, "key_generate succeeds again");
    ok(memcmp(rnd, rnd2, 16) != 0, "two generated keys differ");
    loom_rt_key_format(rnd, hex);
    ok(strlen(hex) == 32 && strspn(hex, "0123456789abcdef") == 32,
       "formatted random key is 32 hex digits ('%s')", hex);
    ok(loom_rt_key_parse(hex, back) == 0 && !memcmp(back, rnd, 16),
       "random key survives format/parse");

    static const struct { const char *s, *why; } bad[] = {
        {"", "empty"},
        {"0", "one digit"},
        {"00112233445566778899aabbccddeef", "31 digits"},
        {"00112233445566778899aabbccddeeff0", "33 digits"},
        {"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "64 digits"},
        {"00112233445566778899aabbccddeefg", "a 'g' last"},
        {"g0112233445566778899aabbccddeeff", "a 'g' first"},
        {"0011223344556677 899aabbccddeeff", "a space"},
        {"0x112233445566778899aabbccddeeff", "a 0x prefix"},
        {"-0112233445566778899aabbccddeeff", "a minus sign"},
        {"00112233445566778899aabbccddeef\n", "31 digits and a newline"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        is_int(loom_rt_key_parse(bad[i].s, back), -1, "key_parse rejects %s", bad[i].why);
}

static void test_ct_equal(void)
{
    uint8_t a[32], b[32];
    for (int i = 0; i < 32; i++)
        a[i] = b[i] = (uint8_t)(7 * i);
    is_int(loom_rt_ct_equal(a, b, 32), 1, "ct_equal: equal buffers");
    is_int(loom_rt_ct_equal(a, b, 0), 1, "ct_equal: zero bytes are equal");
    b[0] ^= 1;
    is_int(loom_rt_ct_equal(a, b, 32), 0, "ct_equal: first byte differs");
    b[0] ^= 1;
    b[31] ^= 0x80;
    is_int(loom_rt_ct_equal(a, b, 32), 0, "ct_equal: last byte differs");
    is_int(loom_rt_ct_equal(a, b, 31), 1, "ct_equal: a difference past n is ignored");
    b[31] ^= 0x80;
    b[16] = (uint8_t)~a[16];
    is_int(loom_rt_ct_equal(a, b, 32), 0, "ct_equal: every bit of a middle byte differs");
}

int main(void)
{
    test_vectors();
    test_key_text();
    test_ct_equal();
    {
        uint8_t k[16], before[16];
        memset(k, 0xab, sizeof k);
        memcpy(before, k, sizeof k);
        ok(loom_rt_key_parse("ffffffffffffffffffffffffffffffgf", k) == -1 && !memcmp(k, before, 16),
           "a rejected key leaves the previous key bytes untouched");
    }
    return done_testing();
}
