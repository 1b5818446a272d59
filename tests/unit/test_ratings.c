/* test_ratings.c — unit tests for ratings.c and lines.c: MovieLens 100K's
 * u1.base and u1.test loaded exactly (counts, ids, checksum; skipped when
 * ../shared/data is absent), the user-range filter, the separators
 * (blanks, "::", CSV with a header), MatrixMarket files, every kind of
 * malformed line named FILE:LINE, unreadable files, lines longer than the
 * read buffer, the number scanners against strtof/strtoll, the parallel
 * parse of a large file (the same ratings and the same first error as one
 * thread), and the split of users by rating count. */
#include "../../data/lines.h"
#include "../../data/ratings.h"
#include "../data.h"
#include "../tap.h"
#include "../rng.h"

#include <loom.h>

#include <errno.h>
#include <omp.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[512];

static int load(const char *path, const loom_user_range *keep, loom_ratings *rs)
{
    return loom_ratings_load(path, keep, rs, err, sizeof err);
}

static int same(const loom_rating *r, int u, int i, float x)
{
    return r->u == u && r->i == i && r->r == x;
}

/* ---- MovieLens 100K ------------------------------------------------------ */

static void test_movielens(void)
{
    const char *base = shared_data("movielens-100k/u1.base");
    if (!base) {
        skip(14, "../shared/data/movielens-100k not found");
        return;
    }
    char base_path[4096];
    snprintf(base_path, sizeof base_path, "%s", base);
    loom_ratings rs;
    int rc = load(base_path, NULL, &rs);
    is_int(rc, LOOM_OK, "u1.base loads (%s)", err);
    is_int(rs.n, 80000, "u1.base: 80000 ratings");
    is_int(rs.nfile, 80000, "u1.base: 80000 in the file");
    ok(rs.nusers == 943 && rs.nitems == 1682, "u1.base: 943 users, 1682 items (got %d, %d)",
       rs.nusers, rs.nitems);
    ok(rs.sum == 282268.0, "u1.base: ratings sum to 282268 (got %.1f)", rs.sum);
    ok(rs.format == LOOM_RATINGS_TRIPLES, "u1.base is read as triples");
    ok(rs.n == 80000 && same(&rs.v[0], 0, 0, 5) && same(&rs.v[79999], 942, 1329, 3),
       "first rating (1,1,5) and last (943,1330,3) become 0-based");
    loom_ratings_free(&rs);

    /* One rank's block: users 101..200 (0-based [100, 200)). */
    loom_user_range keep = {100, 200};
    rc = load(base_path, &keep, &rs);
    int inside = 1;
    for (int64_t k = 0; k < rs.n; k++)
        inside &= rs.v[k].u >= 100 && rs.v[k].u < 200;
    ok(rc == 0 && rs.n == 4759 && rs.sum == 16682.0 && inside,
       "users [100, 200): exactly their 4759 ratings, sum 16682 (got %lld, %.1f)",
       (long long)rs.n, rs.sum);
    ok(rs.nusers == 943 && rs.nitems == 1682 && rs.nfile == 80000,
       "the filtered load still learns the global sizes");
    loom_ratings_free(&rs);

    /* Four ranks' blocks partition the file. */
    int64_t n = 0;
    double sum = 0;
    int contiguous = 1, prev_hi = 0;
    for (int r = 0; r < 4; r++) {
        loom_ratings_block(943, r, 4, &keep);
        contiguous &= keep.lo == prev_hi;
        prev_hi = keep.hi;
        if (load(base_path, &keep, &rs) == 0) {
            n += rs.n;
            sum += rs.sum;
        }
        loom_ratings_free(&rs);
    }
    ok(contiguous && prev_hi == 943, "loom_ratings_block: 4 contiguous blocks cover 943 users");
    ok(n == 80000 && sum == 282268.0, "4 blocks hold every rating once (%lld, %.1f)",
       (long long)n, sum);

    char test_path[4096];
    snprintf(test_path, sizeof test_path, "%s", shared_data("movielens-100k/u1.test"));
    rc = load(test_path, NULL, &rs);
    ok(rc == 0 && rs.n == 20000 && rs.sum == 70718.0, "u1.test: 20000 ratings, sum 70718");
    ok(rs.nusers == 462 && rs.nitems == 1591, "u1.test: largest ids 462 and 1591");
    loom_ratings_free(&rs);
    /* Same ratings through the MatrixMarket reader. */
    FILE *f = fopen(scratch("u1.mtx"), "w");
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% u1.base\n943 1682 80000\n");
    rc = load(base_path, NULL, &rs);
    for (int64_t k = 0; k < rs.n; k++)
        fprintf(f, "%d %d %g\n", rs.v[k].u + 1, rs.v[k].i + 1, (double)rs.v[k].r);
    fclose(f);
    loom_ratings mm;
    rc = load(scratch("u1.mtx"), NULL, &mm);
    ok(rc == 0 && mm.n == rs.n && !memcmp(mm.v, rs.v, sizeof *mm.v * (size_t)rs.n) &&
           mm.format == LOOM_RATINGS_MATRIXMARKET,
       "u1.base rewritten as MatrixMarket loads to the same array");
    loom_ratings_free(&mm);
    loom_ratings_free(&rs);
}

/* ---- good triples files ------------------------------------------------------ */

static void test_triples(void)
{
    loom_ratings rs;
    int rc = load(write_file("mixed.txt", "1\t1\t5\t874965758\n2 3 4.5\n# a comment\n\n"
                                          "  3   2   1  \n"),
                  NULL, &rs);
    ok(rc == 0 && rs.n == 3 && same(&rs.v[0], 0, 0, 5) && same(&rs.v[1], 1, 2, 4.5f) &&
           same(&rs.v[2], 2, 1, 1) && rs.nusers == 3 && rs.nitems == 3 && rs.sum == 10.5,
       "tabs, spaces, optional timestamp, comments, blank lines (%s)", err);
    loom_ratings_free(&rs);

    rc = load(write_file("ml10m.dat", "1::122::5::838985046\n2::185::4.5::838983525\n"), NULL, &rs);
    ok(rc == 0 && rs.n == 2 && same(&rs.v[0], 0, 121, 5) && same(&rs.v[1], 1, 184, 4.5f),
       "MovieLens 10M '::' separators (%s)", err);
    loom_ratings_free(&rs);

    rc = load(write_file("ml20m.csv", "userId,movieId,rating,timestamp\n1,2,3.5,1112486027\n"
                                      "1,29,3.5,1112484676\n"),
              NULL, &rs);
    ok(rc == 0 && rs.n == 2 && same(&rs.v[1], 0, 28, 3.5f), "CSV with a header line (%s)", err);
    loom_ratings_free(&rs);

    rc = load(write_file("crlf.txt", "1 2 3\r\n4 5 -0.25"), NULL, &rs);
    ok(rc == 0 && rs.n == 2 && same(&rs.v[1], 3, 4, -0.25f),
       "CRLF line ends, no final newline, negative real rating (%s)", err);
    loom_ratings_free(&rs);

    rc = load(write_file("empty.txt", ""), NULL, &rs);
    ok(rc == 0 && rs.n == 0 && rs.v == NULL && rs.nusers == 0, "an empty file is 0 ratings");

    loom_user_range none = {5, 5};
    rc = load(write_file("some.txt", "1 1 1\n9 9 2\n"), &none, &rs);
    ok(rc == 0 && rs.n == 0 && rs.nfile == 2 && rs.nusers == 9 && rs.nitems == 9,
       "an empty user range keeps nothing but still reads the sizes");
    loom_ratings_free(&rs);

    loom_user_range backwards = {5, 2};
    rc = load(scratch("some.txt"), &backwards, &rs);
    ok(rc == LOOM_ERR_ARG && strstr(err, "bad user range [5, 2)"), "a backwards range: %s", err);

    /* A 5 MiB line (longer than the 4 MiB read buffer) before a rating. */
    FILE *f = fopen(scratch("long.txt"), "w");
    fputc('#', f);
    for (int k = 0; k < 5 << 20; k++)
        fputc('x', f);
    fputs("\n7 8 2.5\n", f);
    fclose(f);
    rc = load(scratch("long.txt"), NULL, &rs);
    ok(rc == 0 && rs.n == 1 && same(&rs.v[0], 6, 7, 2.5f), "a line longer than the buffer (%s)",
       err);
    loom_ratings_free(&rs);
}

/* ---- malformed triples and unreadable files ------------------------------------ */

static void bad(const char *third_line, const char *want, int want_rc)
{
    char text[256];
    snprintf(text, sizeof text, "1\t1\t5\t874965758\n# comment\n%s\n4 4 4\n", third_line);
    const char *path = write_file("bad.txt", text);
    char expect[512];
    snprintf(expect, sizeof expect, "%s:3: %s", path, want);
    loom_ratings rs;
    int rc = load(path, NULL, &rs);
    ok(rc == want_rc && !strncmp(err, expect, strlen(expect)) && rs.n == 0 && !rs.v,
       "line 3 '%s' -> %s", third_line, err);
    if (strncmp(err, expect, strlen(expect)))
        diag("expected: %s...", expect);
}

static void test_malformed(void)
{
    const int F = LOOM_ERR_FORMAT;
    bad("3 x 2 0", "bad item id 'x' (expected an integer from 1 to 2147483647; --zero-based reads ids from 0)", F);
    bad("3 4", "missing the rating (expected 'user item rating [timestamp]')", F);
    bad("3", "missing the item id", F);
    bad("0 1 3", "bad user id '0'", F);
    bad("-2 1 3", "bad user id '-2'", F);
    bad("3 99999999999 4", "bad item id '99999999999'", F);
    bad("3 1 4x", "bad rating '4x' (expected a finite number)", F);
    bad("3 1 nan", "bad rating 'nan'", F);
    bad("3 1 1e99", "bad rating '1e99'", F);
    bad("3 1 4 12.5", "bad timestamp '12.5' (expected an integer)", F);
    bad("3 1 4 0 junk", "unexpected 'junk' after the timestamp", F);
    bad("3.5 1 4", "bad user id '3.5'", F);

    loom_ratings rs;
    int rc = load("/nonexistent/dir/x.txt", NULL, &rs);
    ok(rc == LOOM_ERR_IO && !strcmp(err, "/nonexistent/dir/x.txt: No such file or directory"),
       "a missing file: %s", err);
    rc = load("/tmp", NULL, &rs);
    ok(rc == LOOM_ERR_IO && !strcmp(err, "/tmp: Is a directory"), "a directory: %s", err);
}

/* ---- MatrixMarket ---------------------------------------------------------------- */

#define MM_HEAD "%%MatrixMarket matrix coordinate real general\n% comment\n%\n"

static void bad_mm(const char *text, const char *want)
{
    const char *path = write_file("bad.mtx", text);
    char expect[512];
    snprintf(expect, sizeof expect, "%s:%s", path, want);
    loom_ratings rs;
    int rc = load(path, NULL, &rs);
    ok(rc == LOOM_ERR_FORMAT && !strncmp(err, expect, strlen(expect)) && rs.n == 0,
       "MatrixMarket: %s", err);
    if (strncmp(err, expect, strlen(expect)))
        diag("expected: %s...", expect);
}

static void test_matrixmarket(void)
{
    const char *good = MM_HEAD "3 4 5\n1 1 5\n1 4 2.5\n\n2 2 3\n3 1 1\n3 4 4\n";
    loom_ratings rs;
    int rc = load(write_file("good.mtx", good), NULL, &rs);
    ok(rc == 0 && rs.format == LOOM_RATINGS_MATRIXMARKET && rs.n == 5 && rs.nusers == 3 &&
           rs.nitems == 4 && rs.sum == 15.5 && same(&rs.v[1], 0, 3, 2.5f),
       "a coordinate real general file (%s)", err);
    loom_ratings_free(&rs);

    loom_user_range keep = {1, 3};
    rc = load(scratch("good.mtx"), &keep, &rs);
    ok(rc == 0 && rs.n == 3 && same(&rs.v[0], 1, 1, 3) && rs.nfile == 5,
       "the user filter on MatrixMarket rows");
    loom_ratings_free(&rs);

    rc = load(write_file("int.mtx", "%%MatrixMarket MATRIX Coordinate integer General\n"
                                    "10 10 1\n10 10 7\n"),
              NULL, &rs);
    ok(rc == 0 && rs.n == 1 && same(&rs.v[0], 9, 9, 7) && rs.nusers == 10,
       "integer values, case-insensitive banner (%s)", err);
    loom_ratings_free(&rs);

    bad_mm(MM_HEAD "3 4 6\n1 1 5\n1 4 2.5\n2 2 3\n3 1 1\n3 4 4\n",
           "9: the file ends after 5 of the 6 entries declared on line 4");
    bad_mm(MM_HEAD "3 4 4\n1 1 5\n1 4 2.5\n2 2 3\n3 1 1\n3 4 4\n",
           "9: more entries than the 4 declared on line 4");
    bad_mm(MM_HEAD "3 4 2\n1 1 5\n4 1 2\n", "6: row 4 is beyond the 3 rows declared on line 4");
    bad_mm(MM_HEAD "3 4 2\n1 1 5\n1 5 2\n",
           "6: column 5 is beyond the 4 columns declared on line 4");
    bad_mm(MM_HEAD "3 4 2\n1 1 5\n0 1 2\n", "6: bad row '0' (expected an integer from 1 to 3)");
    bad_mm(MM_HEAD "3 4 2\n1 1 5\n1 2\n", "6: missing the value");
    bad_mm(MM_HEAD "3 4 2\n1 1 5\n1 2 3 4\n", "6: unexpected '4' after the value");
    bad_mm(MM_HEAD "3 4 2\n1 1 5\n1 2 three\n", "6: bad value 'three'");
    bad_mm(MM_HEAD "3 4\n", "4: missing the number of entries");
    bad_mm(MM_HEAD, "3: no size line");
    bad_mm("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
           "1: unsupported MatrixMarket header");
    bad_mm("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 1\n",
           "1: unsupported MatrixMarket header");
}

/* ---- the number scanners ------------------------------------------------------------ */

static void test_scanners(void)
{
    uint64_t s = 42;
    int f_same = 1, n_cases = 0;
    char text[64], first_bad[64] = "";
    for (int k = 0; k < 200000; k++) {
        /* Up to 9 digits with a decimal point somewhere (or none), a sign,
         * sometimes an exponent: the fast path and the strtof fallback. */
        int nd = 1 + (int)(next(&s) % 9), dot = (int)(next(&s) % (nd + 2)), n = 0;
        if (next(&s) % 4 == 0)
            text[n++] = '-';
        for (int d = 0; d < nd; d++) {
            if (d == dot)
                text[n++] = '.';
            text[n++] = (char)('0' + next(&s) % 10);
        }
        if (next(&s) % 8 == 0)
            n += snprintf(text + n, 8, "e%d", (int)(next(&s) % 21) - 10);
        text[n] = '\0';
        float want = strtof(text, NULL), got = -1;
        const char *end = loom_scan_f32(text, text + n, &got);
        n_cases++;
        if (end != text + n || memcmp(&got, &want, sizeof got)) {
            if (f_same)
                snprintf(first_bad, sizeof first_bad, "%s", text);
            f_same = 0;
        }
    }
    ok(f_same, "loom_scan_f32 equals strtof bit for bit on %d random numbers %s", n_cases,
       first_bad);

    static const struct { const char *s; int ok; long long v; } ints[] = {
        {"0", 1, 0}, {"-0", 1, 0}, {"+17", 1, 17}, {"9223372036854775807", 1, INT64_MAX},
        {"-9223372036854775808", 1, INT64_MIN}, {"9223372036854775808", 0, 0},
        {"-9223372036854775809", 0, 0}, {"-", 0, 0}, {"", 0, 0}, {"x1", 0, 0},
    };
    int i_same = 1;
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        int64_t v = 12345;
        const char *end = loom_scan_i64(ints[k].s, ints[k].s + strlen(ints[k].s), &v);
        if (ints[k].ok ? !end || v != ints[k].v : end != NULL) {
            diag("loom_scan_i64('%s') wrong", ints[k].s);
            i_same = 0;
        }
    }
    ok(i_same, "loom_scan_i64: limits, signs, overflow, empty");
}

/* ---- the parallel parse (files of 4 MiB and more) ------------------------ */

/* Loads path with nt threads: rc, and the ratings in *rs. */
static int load_with(int nt, const char *path, loom_ratings *rs)
{
    omp_set_num_threads(nt);
    int rc = load(path, NULL, rs);
    omp_set_num_threads(1);
    return rc;
}

static void test_parallel(void)
{
    const char *san = getenv("LOOMTEST_SANITIZE");
    if (san && !strcmp(san, "thread")) { /* make check-tsan: libgomp is not instrumented */
        skip(9, "OpenMP threads under ThreadSanitizer (false reports from libgomp's barriers)");
        return;
    }
    char path[] = "/tmp/loom_test_ratings_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        skip(9, "cannot write a temporary file");
        return;
    }
    uint64_t s = 9;
    for (long k = 0; k < 500000; k++) /* about 7 MB; the last line has no newline */
        fprintf(f, "%d\t%d\t%d%s", (int)(next(&s) % 5000) + 1, (int)(next(&s) % 900) + 1,
                (int)(next(&s) % 5) + 1, k + 1 < 500000 ? "\n" : "");
    fclose(f);
    loom_ratings a, b;
    int ra = load_with(1, path, &a), rb = load_with(3, path, &b);
    ok(!ra && !rb && a.n == 500000 && b.n == a.n && a.nfile == b.nfile && a.sum == b.sum &&
           a.nusers == b.nusers && a.nitems == b.nitems &&
           !memcmp(a.v, b.v, (size_t)a.n * sizeof *a.v),
       "3 threads read a 7 MB file exactly as one does (%lld ratings)", (long long)b.n);
    for (int w = 0; w < 2; w++) { /* windows of 100 000 bytes; of 5, under any line */
        loom_ratings c;
        loom_ratings_window = w ? 5 : 100000;
        int rc = load_with(3, path, &c);
        loom_ratings_window = (size_t)64 << 20;
        ok(!rc && c.n == a.n && c.nfile == a.nfile && c.sum == a.sum && c.nusers == a.nusers &&
               c.nitems == a.nitems && !memcmp(a.v, c.v, (size_t)a.n * sizeof *a.v),
           "3 threads through a window of %d bytes read it exactly as one does", w ? 5 : 100000);
        loom_ratings_free(&c);
    }
    loom_user_range r0, r1;
    loom_ratings_split(&a, a.nusers, 0, 2, &r0);
    loom_ratings_split(&a, a.nusers, 1, 2, &r1);
    long n0 = 0;
    for (long k = 0; k < a.n; k++)
        n0 += a.v[k].u < r0.hi;
    ok(r0.lo == 0 && r0.hi == r1.lo && r1.hi == a.nusers && n0 > a.n / 2 - 200 && n0 < a.n / 2 + 200,
       "the split by rating count gives each of 2 ranks half the ratings (%ld of %lld)", n0,
       (long long)a.n);
    loom_ratings_keep(&b, &r1);
    ok(b.n == a.n - n0 && b.v[0].u >= r1.lo, "keep leaves the other block's %lld ratings",
       (long long)b.n);
    loom_ratings_free(&a);
    loom_ratings_free(&b);
    /* a bad line in the second half: the same message, line number included */
    f = fopen(path, "r+");
    fseek(f, 5000000, SEEK_SET);
    int c;
    while ((c = fgetc(f)) != '\n' && c != EOF)
        ;
    long at = ftell(f);
    fseek(f, at, SEEK_SET);
    fputc('x', f);
    fclose(f);
    long line = 1;
    f = fopen(path, "r");
    for (long k = 0; k < at; k++)
        line += fgetc(f) == '\n';
    fclose(f);
    char e1[512], want[600];
    ra = load_with(1, path, &a);
    snprintf(e1, sizeof e1, "%s", err);
    rb = load_with(3, path, &b);
    snprintf(want, sizeof want, "%s:%ld: bad user id 'x", path, line);
    ok(ra == LOOM_ERR_FORMAT && rb == ra && !strcmp(e1, err) && !strncmp(err, want, strlen(want)),
       "3 threads name the same bad line as one: %s", err);
    loom_ratings_window = 100000;
    rb = load_with(3, path, &b);
    loom_ratings_window = (size_t)64 << 20;
    ok(rb == ra && !strcmp(e1, err), "and through windows of 100 000 bytes: %s", err);
    unlink(path);
}

int main(void)
{
    test_movielens();
    test_triples();
    test_malformed();
    test_matrixmarket();
    test_scanners();
    test_parallel();
    return done_testing();
}
