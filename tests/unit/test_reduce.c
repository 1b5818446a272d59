/* test_reduce.c — unit tests for the local reduction behind allreduce
 * (coll.c): loom_rt_reduce_local for every type (INT32, INT64, FLOAT, DOUBLE)
 * and op (SUM, MIN, MAX), with negative values and INT64 values past 2^53
 * that a double could not hold, integer sums wrapping around without
 * undefined behaviour, and loom_rt_type_size; and, since the loops are
 * vectorized, every length 0-70 at two alignments, NaNs and signed zeros
 * included, bit for bit against the scalar loop, and a reduced with itself. */
#include "internal.h"
#include "../tap.h"

#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#define N 6

static const char *op_name(loom_op op)
{
    return op == LOOM_SUM ? "SUM" : op == LOOM_MIN ? "MIN" : "MAX";
}

static void test_type_size(void)
{
    is_int(loom_rt_type_size(LOOM_INT32), 4, "type_size(INT32) = 4");
    is_int(loom_rt_type_size(LOOM_INT64), 8, "type_size(INT64) = 8");
    is_int(loom_rt_type_size(LOOM_FLOAT), 4, "type_size(FLOAT) = 4");
    is_int(loom_rt_type_size(LOOM_DOUBLE), 8, "type_size(DOUBLE) = 8");
}

/* For one type T: a op b for each op, checked against `want`, with a
 * sentinel element after the n reduced ones that must stay untouched and
 * b unchanged. */
#define CHECK_TYPE(T, TYPE, a0, b0, sum, mn, mx, fmt)                          \
    do {                                                                       \
        static const T a_in[N] = a0, b_in[N] = b0;                             \
        static const T want[3][N] = {sum, mn, mx};                             \
        static const loom_op ops[3] = {LOOM_SUM, LOOM_MIN, LOOM_MAX};           \
        for (int k = 0; k < 3; k++) {                                          \
            T a[N + 1], b[N];                                                  \
            memcpy(a, a_in, sizeof a_in);                                      \
            a[N] = (T)123;                                                     \
            memcpy(b, b_in, sizeof b_in);                                      \
            loom_rt_reduce_local(a, b, N, TYPE, ops[k]);                          \
            int good = !memcmp(a, want[k], sizeof a_in);                       \
            ok(good, "%s %s", #TYPE, op_name(ops[k]));                         \
            for (int i = 0; !good && i < N; i++)                               \
                diag("  [%d] got " fmt ", expected " fmt, i, a[i], want[k][i]); \
            ok(a[N] == (T)123 && !memcmp(b, b_in, sizeof b_in),                \
               "%s %s touches only a[0..n-1]", #TYPE, op_name(ops[k]));        \
        }                                                                      \
    } while (0)

#define L(...) {__VA_ARGS__}

static void test_int32(void)
{
    CHECK_TYPE(int32_t, LOOM_INT32,
               L(1, -5, 0, INT32_MAX - 1, INT32_MIN + 1, -7),
               L(2, 3, -4, 1, -1, -7),
               L(3, -2, -4, INT32_MAX, INT32_MIN, -14),
               L(1, -5, -4, 1, INT32_MIN + 1, -7),
               L(2, 3, 0, INT32_MAX - 1, -1, -7),
               "%d");
}

#define P53 (INT64_C(1) << 53)

static void test_int64(void)
{
    CHECK_TYPE(int64_t, LOOM_INT64,
               L(P53 + 1, P53, -P53 - 1, INT64_MAX - 5, INT64_MIN + 5, -3),
               L(1, P53 + 1, -1, 5, -5, 4000000000),
               L(P53 + 2, 2 * P53 + 1, -P53 - 2, INT64_MAX, INT64_MIN, 3999999997),
               L(1, P53, -P53 - 1, 5, INT64_MIN + 5, -3),
               L(P53 + 1, P53 + 1, -1, INT64_MAX - 5, -5, 4000000000),
               "%" PRId64);
}

static void test_float(void)
{
    CHECK_TYPE(float, LOOM_FLOAT,
               L(1.5f, -2.25f, 0.0f, -1e30f, 3.0f, -0.5f),
               L(-2.25f, 1.0f, 0.125f, -1e30f, 3.0f, -8.0f),
               L(-0.75f, -1.25f, 0.125f, -2e30f, 6.0f, -8.5f),
               L(-2.25f, -2.25f, 0.0f, -1e30f, 3.0f, -8.0f),
               L(1.5f, 1.0f, 0.125f, -1e30f, 3.0f, -0.5f),
               "%g");
}

static void test_double(void)
{
    CHECK_TYPE(double, LOOM_DOUBLE,
               L(1.5, -2.25, 1e300, -1e-300, 0.1, -4.0),
               L(-2.25, -2.5, -1e300, -2e-300, 0.2, 4.0),
               L(-0.75, -4.75, 0.0, -3e-300, 0.1 + 0.2, 0.0),
               L(-2.25, -2.5, -1e300, -2e-300, 0.1, -4.0),
               L(1.5, -2.25, 1e300, -1e-300, 0.2, 4.0),
               "%.17g");
}

/* INT64 sums must be exact integers, not rounded through a double. */
static void test_int64_exact(void)
{
    int64_t a[2] = {P53, INT64_C(9007199254740993)}, b[2] = {1, 2};
    loom_rt_reduce_local(a, b, 2, LOOM_INT64, LOOM_SUM);
    ok(a[0] == INT64_C(9007199254740993) && a[1] == INT64_C(9007199254740995),
       "INT64 SUM is exact past 2^53 (got %ld, %ld)", (long)a[0], (long)a[1]);
    int64_t c[1] = {P53 + 1}, d[1] = {P53};
    loom_rt_reduce_local(c, d, 1, LOOM_INT64, LOOM_MIN);
    ok(c[0] == P53, "INT64 MIN tells 2^53 from 2^53+1");
    c[0] = P53;
    d[0] = P53 + 1;
    loom_rt_reduce_local(c, d, 1, LOOM_INT64, LOOM_MAX);
    ok(c[0] == P53 + 1, "INT64 MAX tells 2^53+1 from 2^53");
}

/* Integer sums past the type's range wrap around (two's complement), as
 * the hardware adds; they must not be undefined behaviour (UBSan stops
 * the sanitizer build on a signed overflow).  Found by tests/fuzz/fuzz_am:
 * a peer's contribution could overflow a home's sum. */
static void test_int_wrap(void)
{
    int32_t a[2] = {INT32_MAX, INT32_MIN}, b[2] = {1, -1};
    loom_rt_reduce_local(a, b, 2, LOOM_INT32, LOOM_SUM);
    ok(a[0] == INT32_MIN && a[1] == INT32_MAX, "INT32 SUM wraps around at the range's ends");
    int64_t c[2] = {INT64_MAX, INT64_MIN + 2}, d[2] = {INT64_MAX, -3};
    loom_rt_reduce_local(c, d, 2, LOOM_INT64, LOOM_SUM);
    ok(c[0] == -2 && c[1] == INT64_MAX, "INT64 SUM wraps around at the range's ends");
}

/* n = 0 reduces nothing; repeated reduction accumulates. */
static void test_count(void)
{
    int32_t a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    loom_rt_reduce_local(a, b, 0, LOOM_INT32, LOOM_SUM);
    ok(a[0] == 1 && a[1] == 2 && a[2] == 3, "n = 0 leaves a unchanged");
    loom_rt_reduce_local(a, b, 2, LOOM_INT32, LOOM_SUM);
    ok(a[0] == 11 && a[1] == 22 && a[2] == 3, "n = 2 reduces two elements only");
    double x[4] = {0}, y[4] = {1, 2, 3, 4};
    for (int r = 0; r < 5; r++)
        loom_rt_reduce_local(x, y, 4, LOOM_DOUBLE, LOOM_SUM);
    ok(x[0] == 5 && x[1] == 10 && x[2] == 15 && x[3] == 20,
       "five DOUBLE SUMs accumulate (as over five ranks)");
}

/* Every length from 0 to 70 (whole vectors, tails, misaligned starts),
 * every type and op, against the scalar definition, bit for bit, with
 * NaNs, signed zeros and wrapping integers among the floats and ints;
 * and a reduced in place with itself (a == b). */
#define SWEEP(T, TT, U, gen)                                                            \
    do {                                                                                \
        T a[72], b[72], r[72];                                                          \
        int good = 1;                                                                   \
        for (int k = 0; k < 3; k++)                                                     \
            for (size_t n = 0; n <= 70; n++)                                            \
                for (size_t off = 0; off < 2; off++) {                                  \
                    for (size_t i = 0; i < 72; i++) {                                   \
                        uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull + n * 131 + off;   \
                        a[i] = gen(h);                                                  \
                        b[i] = gen(h >> 7);                                             \
                        r[i] = a[i];                                                    \
                    }                                                                   \
                    for (size_t i = off; i < off + n; i++)                              \
                        r[i] = k == 0   ? (T)((U)a[i] + (U)b[i])                        \
                               : k == 1 ? (b[i] < a[i] ? b[i] : a[i])                   \
                                        : (b[i] > a[i] ? b[i] : a[i]);                  \
                    loom_rt_reduce_local(a + off, b + off, n, TT, ops[k]);                 \
                    good &= !memcmp(a, r, sizeof a);                                    \
                }                                                                       \
        memcpy(b, a, sizeof a);                                                         \
        for (size_t i = 0; i < 72; i++)                                                 \
            r[i] = (T)((U)a[i] + (U)a[i]);                                              \
        loom_rt_reduce_local(a, a, 72, TT, LOOM_SUM);                                      \
        good &= !memcmp(a, r, sizeof a);                                                \
        ok(good, "%s: lengths 0-70 at two offsets, every op, as the scalar loop; in place", #TT); \
    } while (0)

static int32_t gen_i32(uint64_t h) { return (int32_t)(uint32_t)(h >> 11) ^ (h & 1 ? INT32_MIN : 0); }
static int64_t gen_i64(uint64_t h) { return (int64_t)(h * 0xbf58476d1ce4e5b9ull); }
static float gen_f32(uint64_t h)
{
    switch (h % 11) {
    case 0: return NAN;
    case 1: return -0.0f;
    case 2: return 0.0f;
    default: return (float)((double)(h >> 20) * 0x1p-30 - 1000.0);
    }
}
static double gen_f64(uint64_t h) { return h % 13 == 0 ? NAN : h % 13 == 1 ? -0.0 : (double)(h >> 12) * 0x1p-40 - 7.0; }

static void test_sweep(void)
{
    static const loom_op ops[3] = {LOOM_SUM, LOOM_MIN, LOOM_MAX};
    SWEEP(int32_t, LOOM_INT32, uint32_t, gen_i32);
    SWEEP(int64_t, LOOM_INT64, uint64_t, gen_i64);
    SWEEP(float, LOOM_FLOAT, float, gen_f32);
    SWEEP(double, LOOM_DOUBLE, double, gen_f64);
}

int main(void)
{
    test_sweep();
    test_type_size();
    test_int32();
    test_int64();
    test_float();
    test_double();
    test_int64_exact();
    test_int_wrap();
    test_count();
    return done_testing();
}
