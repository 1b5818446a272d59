/* test_lasso.c — unit tests for the Lasso data layer and kernel: the
 * MatrixMarket reader (coordinate, array, vector, pattern, comments, the
 * row share) and every kind of malformed line named FILE:LINE; the LIBSVM
 * reader likewise; loom_scan_f64 against strtod; the column-major build
 * (duplicates summed, MatrixMarket and LIBSVM giving the same matrix);
 * the serial twin converging to a point that satisfies the Lasso
 * optimality conditions with a zero duality gap; the correlation filter
 * (exact pairs, a table that grows instead of forgetting, the row sample);
 * standardizing; and the planted-problem generator's files. */
#include "../../data/gen_lasso.h"
#include "../../kernels/lasso.h"
#include "../../data/libsvm.h"
#include "../../data/matrixmarket.h"
#include "../data.h"
#include "../tap.h"

#include <loom.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[512];

/* ---- MatrixMarket ----------------------------------------------------------- */

static void test_mm_good(void)
{
    loom_mm m;
    const char *p = write_file("c.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                        "% a comment\n\n"
                                        "4 3 4\n"
                                        "1 1 1.5\n"
                                        "4 3 -2\n"
                                        "  2 2 1e-3  \n"
                                        "3 1 7\n");
    int rc = loom_mm_load(p, NULL, &m, err, sizeof err);
    ok(rc == 0 && m.rows == 4 && m.cols == 3 && m.nfile == 4 && m.n == 4 && !m.array,
       "coordinate: 4 x 3 with 4 entries (%s)", err);
    ok(rc == 0 && m.e[1].row == 3 && m.e[1].col == 2 && m.e[1].v == -2 && m.e[2].v == 1e-3,
       "coordinate: entries 0-based, in file order");
    loom_mm_free(&m);

    loom_rows share = {1, 2};
    rc = loom_mm_load(p, &share, &m, err, sizeof err);
    ok(rc == 0 && m.n == 2 && m.e[0].row == 3 && m.e[1].row == 1 && m.nfile == 4,
       "share 1 of 2 keeps rows 1 and 3 (0-based), still counts the whole file");
    loom_mm_free(&m);

    p = write_file("a.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
    rc = loom_mm_load(p, NULL, &m, err, sizeof err);
    ok(rc == 0 && m.array && m.n == 6 && m.e[2].row == 0 && m.e[2].col == 1 && m.e[2].v == 3 &&
           m.e[5].row == 1 && m.e[5].col == 2,
       "array: values column by column (%s)", err);
    loom_mm_free(&m);

    p = write_file("v.mtx", "%%MatrixMarket vector array real\n3\n1\n2\n3\n");
    rc = loom_mm_load(p, NULL, &m, err, sizeof err);
    ok(rc == 0 && m.vector && m.rows == 3 && m.cols == 1 && m.e[2].v == 3,
       "vector array: 3 rows, one column (%s)", err);
    loom_mm_free(&m);

    p = write_file("vc.mtx", "%%MatrixMarket vector coordinate integer general\n5 2\n2 7\n5 1\n");
    rc = loom_mm_load(p, NULL, &m, err, sizeof err);
    ok(rc == 0 && m.rows == 5 && m.n == 2 && m.e[0].row == 1 && m.e[0].v == 7,
       "vector coordinate: 'row value' lines (%s)", err);
    loom_mm_free(&m);

    p = write_file("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n");
    rc = loom_mm_load(p, NULL, &m, err, sizeof err);
    ok(rc == 0 && m.n == 1 && m.e[0].v == 1, "pattern entries read as 1 (%s)", err);
    loom_mm_free(&m);
}

/* Each malformed file: the message names FILE:LINE and says what is wrong. */
static void test_mm_bad(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "e.mtx:1: empty file"},
        {"1 2 3\n", "e.mtx:1: not a MatrixMarket file"},
        {"%%MatrixMarket matrix coordinate complex general\n", "e.mtx:1: unsupported"},
        {"%%MatrixMarket matrix coordinate real symmetric\n", "e.mtx:1: unsupported"},
        {"%%MatrixMarket matrix coordinate real general\n3 x 1\n", "e.mtx:2: bad number of columns 'x'"},
        {"%%MatrixMarket matrix coordinate real general\n3 3\n", "e.mtx:2: missing the number of entries"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1 9\n", "e.mtx:2: unexpected '9' after the size line"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", "e.mtx:3: bad row '0'"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 4 1\n", "e.mtx:3: column 4 is beyond the 3 columns declared on line 2"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", "e.mtx:3: missing the value"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", "e.mtx:3: bad value 'abc'"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", "e.mtx:3: bad value 'nan'"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 2 3\n", "e.mtx:3: unexpected '3' after the value"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 2\n2 2 2\n", "e.mtx:4: more entries than the 1 declared on line 2"},
        {"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 2\n", "e.mtx:3: the file ends after 1 of the 2 entries declared on line 2"},
        {"%%MatrixMarket matrix array real general\n2 1\n1\n1x\n", "e.mtx:4: bad value '1x'"},
        {"%%MatrixMarket matrix array real general\n% only a comment\n", "e.mtx:2: no size line"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        loom_mm m;
        const char *p = write_file("e.mtx", cases[k].text);
        int rc = loom_mm_load(p, NULL, &m, err, sizeof err);
        ok(rc == LOOM_ERR_FORMAT && strstr(err, cases[k].want) && m.n == 0 && !m.e,
           "MatrixMarket: %s", cases[k].want);
        if (!strstr(err, cases[k].want))
            diag("got: %s", err);
    }
    loom_mm m;
    int rc = loom_mm_load(scratch("absent.mtx"), NULL, &m, err, sizeof err);
    ok(rc == LOOM_ERR_IO && strstr(err, "absent.mtx: No such file"), "a missing file: %s", err);
}

/* ---- LIBSVM --------------------------------------------------------------------- */

static void test_libsvm(void)
{
    loom_libsvm s;
    const char *p = write_file("g.svm", "# header comment\n"
                                        "+1 1:0.5 3:-2\n"
                                        "\n"
                                        "-1 qid:7 2:1e-2   \n"
                                        "0.25\n"
                                        "3 1:1 5:2 # trailing comment\n");
    int rc = loom_libsvm_load(p, NULL, &s, err, sizeof err);
    ok(rc == 0 && s.n == 4 && s.nfile == 4 && s.cols == 5 && s.nnz == 5,
       "4 rows, 5 columns, 5 values; comments, blank lines, qid skipped (%s)", err);
    ok(rc == 0 && s.y[0] == 1 && s.y[1] == -1 && s.y[2] == 0.25 && s.ptr[2] == 3 &&
           s.ptr[3] == 3 && s.idx[1] == 2 && s.val[1] == -2 && s.idx[2] == 1,
       "labels, row pointers, 0-based indices and values");
    loom_libsvm_free(&s);
    loom_rows share = {1, 3};
    rc = loom_libsvm_load(p, &share, &s, err, sizeof err);
    ok(rc == 0 && s.n == 1 && s.y[0] == -1 && s.cols == 5 && s.nfile == 4,
       "share 1 of 3 keeps row 1; columns still from the whole file");
    loom_libsvm_free(&s);

    static const struct {
        const char *text, *want;
    } cases[] = {
        {"1 1:2\nx 1:2\n", "e.svm:2: bad label 'x'"},
        {"1 0:2\n", "e.svm:1: feature index 0 (indices start at 1; --zero-based reads a file "
                   "whose indices start at 0)"},
        {"1 3:2 2:1\n", "e.svm:1: feature index 2 after 3 (indices must increase)"},
        {"1 3:2 3:1\n", "e.svm:1: feature index 3 after 3"},
        {"1 3\n", "e.svm:1: bad feature '3'"},
        {"1 a:1\n", "e.svm:1: bad feature 'a:1'"},
        {"1 3:\n", "e.svm:1: bad value of feature '3:'"},
        {"1 3:1.5.2\n", "e.svm:1: bad value of feature '3:1.5.2'"},
        {"1 3:inf\n", "e.svm:1: bad value of feature '3:inf'"},
        {"1 9223372036854775808:1\n", "e.svm:1: bad feature '9223372036854775808:1' (expected "
                                      "index:value with an index from 1 to 9223372036854775807)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        p = write_file("e.svm", cases[k].text);
        rc = loom_libsvm_load(p, NULL, &s, err, sizeof err);
        ok(rc == LOOM_ERR_FORMAT && strstr(err, cases[k].want) && s.n == 0 && !s.y,
           "LIBSVM: %s", cases[k].want);
        if (!strstr(err, cases[k].want))
            diag("got: %s", err);
    }

    /* 64-bit feature ids (hashed features): the whole range, either base */
    p = write_file("h.svm", "1 3:1 2147483648:2 9223372036854775807:3\n");
    rc = loom_libsvm_load(p, NULL, &s, err, sizeof err);
    ok(rc == 0 && s.cols == INT64_MAX && s.idx[1] == 2147483647 && s.idx[2] == INT64_MAX - 1,
       "indices up to 2^63 - 1 (%s)", err);
    loom_libsvm_free(&s);
    p = write_file("h0.svm", "1 0:1 9223372036854775806:3\n");
    rc = loom_libsvm_read(p, NULL, 0, &s, err, sizeof err);
    ok(rc == 0 && s.cols == INT64_MAX && s.idx[0] == 0 && s.idx[1] == INT64_MAX - 1,
       "--zero-based: indices up to 2^63 - 2 (%s)", err);
    loom_libsvm_free(&s);
    p = write_file("h0.svm", "1 9223372036854775807:3\n");
    rc = loom_libsvm_read(p, NULL, 0, &s, err, sizeof err);
    ok(rc == LOOM_ERR_FORMAT && strstr(err, "h0.svm:1: bad feature '9223372036854775807:3' "
                                       "(expected index:value with an index from 0 to "
                                       "9223372036854775806 (--zero-based))"),
       "--zero-based: 2^63 - 1 is one too many: %s", err);
}

static void test_scan_f64(void)
{
    static const char *const good[] = {"0", "-1.5", "1e-300", "0.1", "2.2250738585072014e-308",
                                       "1.7976931348623157e308", "-0.30000000000000004", ".5"};
    int same = 1;
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        double v = -7;
        const char *e = good[k] + strlen(good[k]);
        same &= loom_scan_f64(good[k], e, &v) == e && v == strtod(good[k], NULL);
    }
    ok(same, "loom_scan_f64 reads what strtod reads, to the bit");
    double v;
    const char *bad[] = {"", " 1", "inf", "nan", "1e999", "-", "x"};
    int none = 1;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        none &= !loom_scan_f64(bad[k], bad[k] + strlen(bad[k]), &v);
    ok(none, "loom_scan_f64 refuses blanks, infinities, NaN, overflow and non-numbers");
}

/* ---- the kernel ------------------------------------------------------------------ */

/* A small random dense problem as triplets (with one duplicate entry split
 * in two). */
static int small_problem(loom_lasso *l, int n, int p, unsigned seed)
{
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)(n * p + 1));
    int64_t *ci = malloc(sizeof(int64_t) * (size_t)(n * p + 1));
    double *v = malloc(sizeof(double) * (size_t)(n * p + 1)), *y = malloc(sizeof(double) * (size_t)n);
    srand(seed);
    int k = 0;
    for (int j = 0; j < p; j++)
        for (int i = 0; i < n; i++) {
            ri[k] = i;
            ci[k] = j;
            v[k++] = (double)rand() / RAND_MAX - 0.5;
        }
    ri[k] = 0; /* a duplicate of (0, 0): summed */
    ci[k] = 0;
    v[k] = 0.25;
    v[0] -= 0.25;
    k++;
    for (int i = 0; i < n; i++)
        y[i] = (double)rand() / RAND_MAX * 4 - 2;
    int rc = loom_lasso_build(l, n, n, p, k, ri, ci, v, y);
    free(ri);
    free(ci);
    free(v);
    free(y);
    return rc;
}

static void test_kernel(void)
{
    loom_lasso l;
    int n = 40, p = 25;
    int rc = small_problem(&l, n, p, 7);
    ok(rc == 0 && l.colptr[p] == n * p && l.colptr[1] == n,
       "build: one value per cell, the duplicate summed into one");
    double *g = malloc(sizeof(double) * (size_t)p), lmax = 0;
    loom_lasso_xtv_local(&l, l.y, g);
    for (int j = 0; j < p; j++)
        lmax = fmax(lmax, fabs(g[j]));
    double lambda = 0.2 * lmax;
    uint64_t rng = 3;
    for (int pass = 0; pass < 300; pass++)
        loom_lasso_pass(&l, lambda, pass % 2 ? LOOM_LASSO_RANDOM : LOOM_LASSO_CYCLIC, &rng);
    loom_lasso_residual(&l);
    loom_lasso_xtv_local(&l, l.r, g);
    int kkt = 1;
    double m = 0;
    for (int j = 0; j < p; j++) {
        m = fmax(m, fabs(g[j]));
        if (l.beta[j] != 0)
            kkt &= fabs(g[j] - (l.beta[j] > 0 ? lambda : -lambda)) < 1e-9 * lambda;
        else
            kkt &= fabs(g[j]) <= lambda * (1 + 1e-9);
    }
    int64_t nz = loom_lasso_nnz(&l);
    ok(kkt && nz > 0 && nz < p,
       "serial twin: optimality holds (x_j'r = lambda sign(beta_j) or |x_j'r| <= lambda), "
       "%lld of %d non-zero",
       (long long)nz, p);
    double s[3];
    loom_lasso_sums_local(&l, s);
    double obj = loom_lasso_objective(&l, s[0], lambda), gap = loom_lasso_gap(&l, s[0], s[1], m, lambda);
    ok(gap >= -1e-9 * obj && gap < 1e-9 * obj, "duality gap ~ 0 at the optimum (%.3g, objective %.6g)",
       gap, obj);
    /* β = 0 at λ_max: one pass changes nothing */
    for (int j = 0; j < p; j++)
        l.beta[j] = 0;
    loom_lasso_residual(&l);
    ok(loom_lasso_pass(&l, lmax, LOOM_LASSO_CYCLIC, &rng) == 0 && loom_lasso_nnz(&l) == 0,
       "at lambda_max beta stays 0");
    loom_lasso_free(&l);
    free(g);

    /* correlations: identical, opposite and orthogonal columns */
    int64_t ri[] = {0, 1, 0, 1, 0, 1, 2}, ci[] = {0, 0, 1, 1, 2, 2, 3};
    double v[] = {1, 2, -2, -4, 2, -1, 5}, y[] = {1, 1, 1};
    rc = loom_lasso_build(&l, 3, 3, 4, 7, ri, ci, v, y);
    loom_lasso_corr *c = loom_lasso_corr_new(&l, 0, 0.5, &rc);
    ok(c && loom_lasso_corr_rows(c) == 3 && fabs(loom_lasso_corr_get(c, 0, 1) - 1) < 1e-6 &&
           fabs(loom_lasso_corr_get(c, 1, 0) - 1) < 1e-6 && loom_lasso_corr_get(c, 0, 2) == 0 &&
           loom_lasso_corr_get(c, 2, 3) == 0 && loom_lasso_corr_computed(c) == 4,
       "correlations: |corr| 1 for opposite columns, 0 for orthogonal ones; 4 computed");
    loom_lasso_corr_free(c);
    loom_lasso_free(&l);
}

/* A coordinate shared by rows (loom-lasso's threads): over a partition of
 * the rows into 1-5 pieces, the pieces' dot products add up to the whole
 * one (to rounding; bitwise with one piece), and decide followed by the
 * residual's pieces leaves β and r bitwise as loom_lasso_apply does.
 * Columns: dense, every third row, none, and rows 5-9 only (pieces that
 * miss a sparse column entirely). */
static void test_rows_split(void)
{
    enum { N = 31, P = 4 };
    int64_t ri[N * P], ci[N * P];
    double v[N * P], y[N];
    int k = 0;
    for (int i = 0; i < N; i++) {
        y[i] = sin(i + 1.0);
        ri[k] = i, ci[k] = 0, v[k++] = cos(3.0 * i);
        if (i % 3 == 0)
            ri[k] = i, ci[k] = 1, v[k++] = 1.0 / (i + 1);
        if (i >= 5 && i < 10)
            ri[k] = i, ci[k] = 3, v[k++] = i - 7.5;
    }
    loom_lasso a, b;
    int rc = loom_lasso_build(&a, N, N, P, k, ri, ci, v, y) |
             loom_lasso_build(&b, N, N, P, k, ri, ci, v, y);
    loom_lasso_norms_local(&a);
    loom_lasso_norms_local(&b);
    int dots = 1, same = 1;
    for (int pieces = 1; pieces <= 5; pieces++)
        for (int j = 0; j < P; j++) {
            double whole = loom_lasso_dot_local(&a, j), sum = 0;
            for (int t = 0; t < pieces; t++)
                sum += loom_lasso_dot_rows(&a, j, (int64_t)N * t / pieces,
                                           (int64_t)N * (t + 1) / pieces);
            dots &= pieces == 1 ? sum == whole : fabs(sum - whole) <= 1e-12 * (1 + fabs(whole));
            double z = whole + 0.3 * j - 0.5;
            double da = loom_lasso_apply(&a, j, z, 0.01), db = loom_lasso_decide(&b, j, z, 0.01);
            for (int t = 0; t < pieces; t++)
                loom_lasso_residual_rows(&b, j, db, (int64_t)N * t / pieces,
                                         (int64_t)N * (t + 1) / pieces);
            same &= da == db && !memcmp(a.beta, b.beta, sizeof(double) * P) &&
                    !memcmp(a.r, b.r, sizeof(double) * N);
        }
    ok(rc == 0 && dots, "rows split 1-5 ways: the pieces' dot products add up to the whole");
    ok(rc == 0 && same, "decide, then the residual piece by piece: beta and r bitwise as apply");
    loom_lasso_free(&a);
    loom_lasso_free(&b);
}

/* The filter remembers every answer: asked about every pair twice, in
 * both orders, it computes each pair once, and answers as the exact
 * correlation does against rho (pairs within 1e-6 of rho aside); the
 * sample is exact with every row and is the first rows otherwise. */
static void test_corr_table(void)
{
    loom_lasso l;
    int n = 40, p = 80, rc = small_problem(&l, n, p, 11);
    double rho = 0.15, worst = 0;
    loom_lasso_corr *c = loom_lasso_corr_new(&l, 0, rho, &rc);
    int agree = 0, asked = 0, yes = 0;
    for (int round = 0; c && round < 2; round++)
        for (long j = 0; j < p; j++)
            for (long k = j + 1; k < p; k++) {
                double exact = fabs(loom_lasso_cross_local(&l, j, k)) / sqrt(l.norm2[j] * l.norm2[k]);
                int says = round ? loom_lasso_corr_conflict(c, j, k)
                                 : loom_lasso_corr_conflict(c, k, j);
                if (fabs(exact - rho) > 1e-6)
                    asked++, agree += says == (exact > rho), yes += says;
            }
    ok(c && loom_lasso_corr_computed(c) == p * (p - 1) / 2 && agree == asked && yes > 0 &&
           yes < asked,
       "all %d pairs asked twice: each computed once (%lld); %d of %d answers as the exact "
       "correlation against rho (%d conflicts)",
       p * (p - 1) / 2, c ? (long long)loom_lasso_corr_computed(c) : -1LL, agree, asked, yes);
    for (long j = 0; c && j < p; j++)
        for (long k = j + 1; k < p; k++) {
            double exact = fabs(loom_lasso_cross_local(&l, j, k)) / sqrt(l.norm2[j] * l.norm2[k]);
            worst = fmax(worst, fabs(loom_lasso_corr_get(c, k, j) - exact));
        }
    ok(worst < 1e-6, "every pair within %.2g of the exact correlation", worst);
    loom_lasso_corr_free(c);
    c = loom_lasso_corr_new(&l, 10, rho, &rc);
    double s = 0, a2 = 0, b2 = 0;
    for (int i = 0; i < 10; i++) { /* the dense columns 2 and 5 over rows 0..9 */
        double x = l.val[l.colptr[2] + i], z = l.val[l.colptr[5] + i];
        s += x * z;
        a2 += x * x;
        b2 += z * z;
    }
    ok(c && loom_lasso_corr_rows(c) == 10 &&
           fabs(loom_lasso_corr_get(c, 2, 5) - fabs(s) / sqrt(a2 * b2)) < 1e-6,
       "a sample of 10 rows: the correlation over the first 10 rows");
    loom_lasso_corr_free(c);
    loom_lasso_free(&l);
}

/* A pair with a sparse sample column sums over that column's non-zero
 * rows only: the same value, bit for bit, as the sum over every row; two
 * dense columns sum in lanes, within rounding of it.  Column j holds a
 * value in about (j + 1) / 12 of the rows, so both kinds of pair occur. */
static void test_corr_sparse(void)
{
    enum { N = 64, P = 12 };
    int64_t ri[N * P], ci[N * P];
    double v[N * P], y[N], x[P][N] = {{0}};
    int k = 0;
    srand(5);
    for (int j = 0; j < P; j++)
        for (int i = 0; i < N; i++)
            if (rand() % P <= j) {
                x[j][i] = (double)rand() / RAND_MAX - 0.5;
                ri[k] = i, ci[k] = j, v[k++] = x[j][i];
            }
    for (int i = 0; i < N; i++)
        y[i] = 1;
    loom_lasso l;
    int rc = loom_lasso_build(&l, N, N, P, k, ri, ci, v, y);
    loom_lasso_corr *c = rc ? NULL : loom_lasso_corr_new(&l, 0, 0.1, &rc);
    int same = 0, sparse = 0, close = 0, dense = 0;
    for (int j = 0; c && j < P; j++)
        for (int q = j + 1; q < P; q++) {
            double s = 0, a2 = 0, b2 = 0;
            int na = 0, nb = 0;
            for (int i = 0; i < N; i++) {
                s += x[j][i] * x[q][i];
                a2 += x[j][i] * x[j][i];
                b2 += x[q][i] * x[q][i];
                na += x[j][i] != 0;
                nb += x[q][i] != 0;
            }
            float want = (float)(fabs(s) / (sqrt(a2) * sqrt(b2)));
            float got = (float)loom_lasso_corr_get(c, q, j);
            if (2 * (na < nb ? na : nb) <= N)
                sparse++, same += got == want;
            else
                dense++, close += fabs(got - want) < 1e-6;
        }
    ok(c && sparse > 10 && dense > 3 && same == sparse && close == dense,
       "sparse sample columns: %d of %d pairs the dense sum bit for bit; dense pairs: %d of %d "
       "within 1e-6",
       same, sparse, close, dense);
    loom_lasso_corr_free(c);
    loom_lasso_free(&l);
}

/* Above 64 MiB of answers (about 23 000 columns) nothing is remembered:
 * asking about a pair twice computes it twice, and the answers are still
 * right.  23 200 columns of 2 rows: columns 0 and 1 equal, 2 orthogonal
 * to them, the rest empty. */
static void test_corr_no_memo(void)
{
    enum { P = 23200 };
    int64_t ri[] = {0, 1, 0, 1, 0, 1}, ci[] = {0, 0, 1, 1, 2, 2};
    double v[] = {1, 2, 1, 2, 2, -1}, y[] = {1, 1};
    loom_lasso l;
    int rc = loom_lasso_build(&l, 2, 2, P, 6, ri, ci, v, y);
    loom_lasso_corr *c = rc ? NULL : loom_lasso_corr_new(&l, 0, 0.5, &rc);
    int first = c && loom_lasso_corr_conflict(c, 0, 1), again = c && loom_lasso_corr_conflict(c, 1, 0);
    int apart = c && loom_lasso_corr_conflict(c, 0, 2);
    ok(c && first && again && !apart && loom_lasso_corr_computed(c) == 3,
       "%d columns: nothing remembered, each ask computed (%lld of 3), answers right", P,
       c ? (long long)loom_lasso_corr_computed(c) : -1LL);
    loom_lasso_corr_free(c);
    loom_lasso_free(&l);
}

/* --standardize's kernel: columns of mean 0 and sum of squares n, y of
 * mean 0, whatever the columns were. */
static void test_standardize(void)
{
    loom_lasso l;
    int n = 30, p = 6, rc = small_problem(&l, n, p, 5);
    for (int j = 0; j < p; j++) /* shift and stretch every column differently */
        for (int64_t k = l.colptr[j]; k < l.colptr[j + 1]; k++)
            l.val[k] = l.val[k] * (j + 1) * 10 + j * 100;
    double s[7], mean[6], scale[6];
    loom_lasso_sums_x_local(&l, s);
    for (int j = 0; j < p; j++)
        mean[j] = s[j] / n;
    double ymean = s[p] / n;
    loom_lasso_spread_local(&l, mean, s);
    for (int j = 0; j < p; j++)
        scale[j] = sqrt(s[j] / n);
    rc |= loom_lasso_standardize(&l, mean, scale, ymean);
    double worst = 0, ysum = 0;
    for (int j = 0; j < p; j++) {
        double m = 0;
        for (int64_t k = l.colptr[j]; k < l.colptr[j + 1]; k++)
            m += l.val[k];
        worst = fmax(worst, fabs(m / n) + fabs(l.norm2[j] / n - 1));
    }
    for (int i = 0; i < n; i++)
        ysum += l.y[i] + (l.r[i] - l.y[i]); /* r = y */
    ok(rc == 0 && worst < 1e-12 && fabs(ysum) < 1e-12 && l.colptr[p] == n * p,
       "standardize: every column mean 0 and sum of squares n (off by %.2g), y centred", worst);
    loom_lasso_free(&l);
}

/* The generator's three formats load into the same matrix. */
static void test_formats_agree(void)
{
    loom_gen_lasso_opts g;
    loom_gen_lasso_defaults(&g);
    g.samples = 30;
    g.features = 12;
    g.nonzeros = 3;
    g.density = 0.4;
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s", scratch("gen"));
    loom_gen_lasso_stats st;
    int rc = loom_gen_lasso(&g, prefix, &st, err, sizeof err);
    ok(rc == 0 && st.nnz > 0 && st.nnz < 30 * 12, "generator: sparse X written (%s)", err);
    char x[300], y[300], svm[300];
    snprintf(x, sizeof x, "%s.X.mtx", prefix);
    snprintf(y, sizeof y, "%s.y.mtx", prefix);
    snprintf(svm, sizeof svm, "%s.svm", prefix);
    int same = 1, shares = 1;
    for (int parts = 1; parts <= 3; parts++)
        for (int part = 0; part < parts; part++) {
            loom_lasso a, b;
            loom_rows share = {part, parts};
            loom_lasso_files fa = {x, y, NULL, 0}, fb = {NULL, NULL, svm, 0};
            rc = loom_lasso_load(&fa, &share, &a, err, sizeof err) |
                 loom_lasso_load(&fb, &share, &b, err, sizeof err);
            same &= rc == 0 && a.n == b.n && a.p == b.p && a.ntotal == 30 &&
                    !memcmp(a.colptr, b.colptr, sizeof *a.colptr * (size_t)(a.p + 1)) &&
                    !memcmp(a.row, b.row, sizeof *a.row * (size_t)a.colptr[a.p]) &&
                    !memcmp(a.val, b.val, sizeof *a.val * (size_t)a.colptr[a.p]) &&
                    !memcmp(a.y, b.y, sizeof *a.y * (size_t)a.n);
            shares &= a.n == (30 - part + parts - 1) / parts;
            loom_lasso_free(&a);
            loom_lasso_free(&b);
        }
    ok(same, "MatrixMarket and LIBSVM load the same local matrix, for 1, 2 and 3 shares");
    ok(shares, "every share holds its cyclic part of the rows");
    loom_lasso a;
    loom_lasso_files fa = {x, y, NULL, 0};
    rc = loom_lasso_load(&fa, NULL, &a, err, sizeof err);
    int standard = rc == 0;
    for (int64_t j = 0; standard && j < a.p; j++)
        standard &= a.colptr[j] == a.colptr[j + 1] || fabs(a.norm2[j] - 30) < 1e-9;
    ok(standard, "generated columns have sum of squares n");
    loom_lasso_free(&a);
}

/* The working set's pieces (lasso_ws.c): the packed Gram rows of a set
 * given in a shuffled order, computed in two calls (rows 0-6, then the
 * rest), against the exact cross products, on dense columns and on
 * sparse ones (every third row, rows 5-9, none); then the subproblem
 * solved through the Gram alone over every column ends where the serial
 * twin does (objective to 1e-12, the Lasso optimality conditions on the
 * residual recomputed from the rows), with its own gap at most eps and
 * its ‖r‖² the recomputed one. */
static void test_workset(void)
{
    enum { N = 30, P = 12 };
    int64_t ri[N * P], ci[N * P];
    double v[N * P], y[N];
    int k = 0;
    srand(11);
    for (int i = 0; i < N; i++) {
        y[i] = sin(i + 2.0) + 0.1 * i;
        double x0 = 0;
        for (int j = 0; j < P; j++) {
            int keep = j < 8 || (j == 8 && i % 3 == 0) || (j == 9 && i >= 5 && i < 10) ||
                       (j == 11 && i % 2);
            if (!keep) /* column 10 stays empty */
                continue;
            double x = (double)rand() / RAND_MAX - 0.5;
            if (j == 0)
                x0 = x;
            if (j == 1) /* correlated with column 0 */
                x = 0.3 * x + x0;
            ri[k] = i, ci[k] = j, v[k++] = x;
        }
    }
    loom_lasso l;
    int rc = loom_lasso_build(&l, N, N, P, k, ri, ci, v, y);
    loom_lasso_norms_local(&l);
    int64_t set[P] = {9, 3, 0, 11, 7, 1, 10, 5, 8, 2, 6, 4};
    double packed[P * (P + 1) / 2], G[P * P];
    rc |= loom_lasso_gram_local(&l, set, 0, 7, packed) |
          loom_lasso_gram_local(&l, set, 7, P, packed + 7 * 8 / 2);
    int gram = 1;
    for (int a = 0; a < P; a++)
        for (int b = 0; b <= a; b++) {
            double g = packed[a * (a + 1) / 2 + b], x = loom_lasso_cross_local(&l, set[a], set[b]);
            gram &= fabs(g - x) <= 1e-14 * (1 + fabs(x));
            G[a * P + b] = G[b * P + a] = g;
        }
    ok(rc == 0 && gram, "Gram rows of a shuffled set, dense and sparse columns, in two calls: "
                        "the exact cross products");
    double g0[P], lmax = 0, yy = 0;
    loom_lasso_xtv_local(&l, l.y, g0);
    for (int j = 0; j < P; j++)
        lmax = fmax(lmax, fabs(g0[j]));
    for (int i = 0; i < N; i++)
        yy += y[i] * y[i];
    double lambda = 0.2 * lmax, b[P], q[P];
    for (int a = 0; a < P; a++)
        b[a] = 0, q[a] = g0[set[a]];
    loom_lasso_sub sub = {.w = P, .ld = P, .G = G, .b = b, .q = q, .rr = yy};
    int64_t updates = loom_lasso_sub_solve(&sub, lambda, 1e-13, 100000);
    for (int a = 0; a < P; a++)
        l.beta[set[a]] = b[a];
    loom_lasso_residual(&l);
    double s[3], g[P];
    loom_lasso_sums_local(&l, s);
    loom_lasso_xtv_local(&l, l.r, g);
    int kkt = 1;
    for (int j = 0; j < P; j++)
        kkt &= l.beta[j] != 0 ? fabs(g[j] - (l.beta[j] > 0 ? lambda : -lambda)) < 1e-6 * lambda
                              : fabs(g[j]) <= lambda * (1 + 1e-6);
    double f = loom_lasso_objective(&l, s[0], lambda);
    loom_lasso twin;
    rc |= loom_lasso_build(&twin, N, N, P, k, ri, ci, v, y);
    loom_lasso_norms_local(&twin);
    uint64_t rng = 1;
    for (int pass = 0; pass < 20000; pass++)
        loom_lasso_pass(&twin, lambda, LOOM_LASSO_CYCLIC, &rng);
    loom_lasso_residual(&twin);
    double st[3];
    loom_lasso_sums_local(&twin, st);
    double ft = loom_lasso_objective(&twin, st[0], lambda);
    int64_t nz = loom_lasso_nnz(&l);
    ok(rc == 0 && kkt && updates > 0 && sub.gap <= 1e-13 && fabs(f - ft) <= 1e-12 * ft &&
           fabs(sub.rr - s[0]) <= 1e-10 * s[0] && nz > 1 && nz < P - 1,
       "the subproblem through the Gram: the twin's objective (%.15g, twin %.15g), optimality, "
       "gap %.3g, %lld non-zeros, %lld updates in %lld passes", f, ft, sub.gap, (long long)nz,
       (long long)updates, (long long)sub.passes);
    loom_lasso_free(&l);
    loom_lasso_free(&twin);
}

int main(void)
{
    test_mm_good();
    test_mm_bad();
    test_libsvm();
    test_scan_f64();
    test_kernel();
    test_rows_split();
    test_workset();
    test_corr_table();
    test_corr_sparse();
    test_corr_no_memo();
    test_standardize();
    test_formats_agree();
    return done_testing();
}
