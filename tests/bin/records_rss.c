/* records_rss.c — what a serializable loom_for_records' plan costs in
 * memory, copied or laid out in place.
 *
 *   records_rss copy|inplace
 *
 * MF's shape at 4 000 000 records of 12 bytes (a row of A, 200 000 rows;
 * a row of B, 10 000 rows; a float), skewed as ratings are.  Resets the
 * process's peak resident size (/proc/self/clear_refs, 5) once the records
 * and arrays are resident, runs one .repeated loop, and prints how much
 * the peak grew, per record, with a checksum of the records before and
 * after (the same records: a layout only moves them).  Exits non-zero on
 * an error. */
#include <loom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"

typedef struct { int32_t a, b; float r; } rec;
enum { NA = 200000, NB = 10000, N = 4000000 };

static void nothing(const void *recs, long n, void *ctx) { (void)recs, (void)n, (void)ctx; }

/* The process's peak resident size, in bytes (VmHWM). */
static long peak(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb * 1024;
}

static unsigned long long checksum(const rec *v, long n)
{
    unsigned long long s = 0;
    for (long k = 0; k < n; k++)
        s += (unsigned long long)v[k].a * 1000003u + (unsigned long long)v[k].b * 7u +
             (unsigned long long)(v[k].r * 16);
    return s;
}

int main(int argc, char **argv)
{
    if (loom_init(&argc, &argv) || argc != 2)
        return 2;
    int inplace = !strcmp(argv[1], "inplace");
    loom_alloc_opts ro = {.unit = LOOM_UNIT_ROW, .row_size = 64, .name = "A"};
    void *A = loom_alloc((size_t)NA * 64, &ro);
    ro.name = "B";
    void *B = loom_alloc((size_t)NB * 64, &ro);
    rec *v = malloc((size_t)N * sizeof *v);
    if (!A || !B || !v)
        return 2;
    uint64_t s = 7;
    for (long k = 0; k < N; k++) { /* half the records on a tenth of the rows */
        uint64_t u = next(&s) % NA, i = next(&s) % NB;
        v[k] = (rec){(int32_t)(k % 2 ? u % (NA / 10) : u), (int32_t)i, (float)(k % 5)};
    }
    unsigned long long before = checksum(v, N);
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f || fputs("5", f) < 0 || fclose(f))
        return 3;
    long p0 = peak();
    loom_for_opts o = {.schedule = LOOM_SERIALIZABLE, .local = 1, .repeated = 1,
                       .in_place = inplace,
                       .fields = {LOOM_FIELD(A, rec, a), LOOM_FIELD(B, rec, b)}};
    if (loom_for_records(v, sizeof *v, N, nothing, NULL, &o))
        return 4;
    long grew = peak() - p0;
    printf("%s: planning %d records raised the peak by %ld MiB, %.1f bytes a record; "
           "checksum %s\n", argv[1], N, grew >> 20, (double)grew / N,
           checksum(v, N) == before ? "unchanged" : "CHANGED");
    free(v);
    loom_finalize();
    return 0;
}
