/* for_modes.c — the data-parallel schedules and sync modes, and the
 * priority schedule.
 *
 *   for_modes once      static/dynamic/guided, global and local ranges:
 *                       every iteration runs exactly once on the job
 *   for_modes sync MODE [STALENESS]   MODE = bsp | ssp | hybrid: every
 *                       iteration adds 1 to one counter row; the final
 *                       count is exact, and a read in round r sees every
 *                       increment of rounds < r - s (s = 0 for bsp and
 *                       hybrid) and nothing of other threads' increments
 *                       in its own round (bsp, ssp).  Hybrid with several
 *                       threads shares one copy per rank, so the test adds
 *                       atomically there: the count stays exact, and an
 *                       own-row read lies between what this thread added
 *                       (plus, on several ranks, every earlier round) and
 *                       the end of the round
 *   for_modes weighted  a bsp loop with .sync_weight: every rank's rounds
 *                       end where its running total of weights reaches
 *                       each multiple of .sync_every (each rank's weights
 *                       differ); a read of another rank's counter in round
 *                       r sees all of that rank's iterations of its rounds
 *                       < r and none of its rounds > r
 *   for_modes dense     a hybrid loop on one thread per rank whose every
 *                       iteration adds rank + 1 to every element of every
 *                       row (19 doubles: the merge's vector loops and
 *                       their remainders): from its
 *                       second round the rows merge densely (one
 *                       allreduce, dsm/dense.c); every read sees exactly
 *                       every rank's earlier rounds and its own round so
 *                       far, and afterwards the home stores hold the sums
 *                       (each rank adds once more outside the loop, and
 *                       the rows refetched from the homes must be exact)
 *   for_modes dense-avg the same under the averaging merge, which must not
 *                       merge densely: every round leaves the ranks' mean
 *   for_modes shares    dynamic and guided on the job's range with sync
 *                       points (the rounds shared among the ranks by
 *                       speed, sched/shares.c), by count and by weight:
 *                       every iteration runs exactly once; with rank 0
 *                       sleeping 500 us in each of its iterations it runs
 *                       under two thirds of an equal share (an equal
 *                       split gives it exactly its share)
 *   for_modes own       one rank, hybrid, a sync interval, several threads:
 *                       every iteration adds 1 (a plain +=) to each float
 *                       of a row of model replicas (.average) and atomically
 *                       to a counter of a plain add-merge array.  Each
 *                       thread works on its own copy of the replicas in
 *                       rounds of sync_every / T of its iterations: inside
 *                       a round it reads exactly its own increments (no
 *                       other thread's), and the final row is exactly the
 *                       iterations / T (every thread's changes averaged
 *                       in, as the ranks' replicas are: none lost; T = 2
 *                       or 4, whose 1 / T is exact); the counter, reached
 *                       in place, holds every iteration's 1.  EVERY
 *                       (default 64) is the loop's sync interval
 *   for_modes own-weighted [EVERY]  the same with a dynamic schedule and
 *                       rounds by weight (iteration i weighs 1 + i % 5)
 *   for_modes own-nested  own called inside a team of 2 with nesting off:
 *                       the loop's region gets 1 thread, whose changes
 *                       then count whole (the row ends at the iterations)
 *   for_modes plan      a repeated serializable loop is planned once
 *   for_modes priority  the priority schedule: no two conflicting
 *                       coordinates in one round, partial results summed
 *                       over ranks, every rank draws the same ones, and
 *                       large deltas are drawn far more often
 * Several commands in one job run in turn (for_modes once sync bsp plan).
 * Prints "ok ..." lines; exits non-zero on the first failure. */
#include <loom.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int R, me, fails;
static void check(int cond, const char *fmt, long a, long b)
{
    if (!cond) {
        printf("not ok - ");
        printf(fmt, a, b);
        printf("\n");
        fails++;
    }
}

/* ---- once --------------------------------------------------------------- */
/* A counter per iteration: n rows of one int64, summed. */
static int64_t *counters(const char *name, long n)
{
    return loom_alloc((size_t)n * 8, &(loom_alloc_opts){.name = name, .unit = LOOM_UNIT_ROW,
                                                        .row_size = 8, .merge = LOOM_MERGE_ADD,
                                                        .type = LOOM_INT64});
}

/* After a loop, on every rank: every counter of rows[0..n) holds want (a
 * barrier, then the rows in one batch, not n round trips); a failure
 * names the first that does not. */
static void check_counts(int64_t *rows, long n, int64_t want)
{
    size_t *all = malloc((size_t)n * sizeof *all);
    if (!all)
        exit(2);
    for (long i = 0; i < n; i++)
        all[i] = (size_t)i;
    loom_barrier();
    loom_row_prefetch(rows, all, (size_t)n);
    free(all);
    long bad = -1;
    for (long i = 0; i < n && bad < 0; i++)
        if (*(const int64_t *)loom_row_get(rows, (size_t)i) != want)
            bad = i;
    check(bad < 0, "iteration %ld ran a wrong number of times (%ld in all)", bad,
          bad < 0 ? 0 : *(const int64_t *)loom_row_get(rows, (size_t)bad));
}

static int64_t *hits; /* one row per iteration (rows of one int64) */
static void hit(long i, void *ctx)
{
    (void)ctx;
    *(int64_t *)loom_at(hits, (size_t)i) += 1;
}

static int once(void)
{
    enum { N = 5000 };
    hits = counters("hits", N);
    const char *names[] = {"static", "dynamic", "guided"};
    for (int s = 0; s < 3; s++)
        for (int local = 0; local < 2; local++)
            for (long chunk = 0; chunk < 8; chunk += 7) {
                /* local: rank r runs [r * N / R, (r + 1) * N / R) itself */
                long lo = local ? N * me / R : 0, hi = local ? N * (me + 1) / R : N;
                loom_for_opts o = {.schedule = (loom_schedule)s, .chunk = chunk, .local = local};
                if (loom_for(lo, hi, hit, NULL, &o))
                    return 1;
                check_counts(hits, N, 1 + s * 4 + local * 2 + (chunk > 0));
                if (!fails && me == 0)
                    printf("ok - %s%s, chunk %ld: every iteration once on %d rank(s) x %d thread(s)\n",
                           names[s], local ? " (local ranges)" : "", chunk, R, omp_get_max_threads());
            }
    return fails;
}

/* ---- own ------------------------------------------------------------------ */
enum { OWN_N = 200000, OWN_F = 16 };
static long own_every = 64;  /* the loop's sync interval (for_modes own [EVERY]) */
static int own_weighted;     /* own-weighted: dynamic, rounds by weight */
static int own_team;         /* own-nested: the threads the loop's region gets (else T) */
static float *own_model;     /* one row of OWN_F floats: model replicas */
static int64_t *own_count;   /* one int64 row, add merge, not averaged */
static float *own_seen;      /* iteration i: element 0 of the model before its += */
static _Atomic int own_started; /* threads past their first iteration */
static _Atomic long own_by_address; /* iterations that reached the copy by loom_at_base */
static __thread int own_going;

static void own_body(long i, void *ctx)
{
    (void)ctx;
    if (!own_going) { /* every thread waits for the others: they run at once */
        own_going = 1;
        atomic_fetch_add(&own_started, 1);
        while (atomic_load(&own_started) < omp_get_num_threads())
            ;
    }
    /* from a thread's second round its copy is staged whole (the round
     * reached every row): odd iterations then reach it by address */
    float *b = i & 1 ? loom_at_base(own_model) : NULL, *m = b ? b : loom_at(own_model, 0);
    if (b)
        atomic_fetch_add(&own_by_address, 1);
    own_seen[i] = m[0];
    for (int j = 0; j < OWN_F; j++)
        m[j] += 1;
    __atomic_fetch_add((int64_t *)loom_at(own_count, 0), 1, __ATOMIC_RELAXED);
}

/* A copy kept from a thread's round is never older than the start of
 * its round before (2 threads): thread 0 reads the beacon row in its
 * round 0 (and keeps it), leaves it alone in round 1 while thread 1 adds 1
 * to it and flushes (0.5: the two threads' copies averaged), and reads it
 * again in round 2, where it must see that 0.5.  Thread 1 then waits for that read, so that neither thread takes a
 * round of the other's block before it matters (sched/for.c, own_next).
 * The threads meet through plain atomics (a few seconds at most: a
 * failure, not a hang). */
enum { FRESH_EVERY = 4 };
static float *fresh_beacon;
static _Atomic int fresh_kept, fresh_added, fresh_done;
static float fresh_read = -1;

static int fresh_wait(_Atomic int *flag)
{
    for (long n = 0; !atomic_load(flag); n++)
        if (n > 1000000000L)
            return 0;
    return 1;
}

static void fresh_body(long i, void *ctx)
{
    (void)ctx;
    long block = i / (3 * FRESH_EVERY), round = i % (3 * FRESH_EVERY) / FRESH_EVERY;
    int first = i % FRESH_EVERY == 0;
    float *b;
    if (block == 0 && round == 0) {
        b = loom_at(fresh_beacon, 0);
        (void)b[0];
    } else if (block == 0 && round == 1 && first) {
        atomic_store(&fresh_kept, 1); /* round 0 flushed: the beacon kept at 0 */
        if (!fresh_wait(&fresh_added))
            fresh_read = -2;
    } else if (block == 0 && round == 2 && first) {
        b = loom_at(fresh_beacon, 0);
        if (fresh_read != -2)
            fresh_read = b[0];
        atomic_store(&fresh_done, 1);
    } else if (block == 1 && round == 0 && first) {
        if (fresh_wait(&fresh_kept)) {
            b = loom_at(fresh_beacon, 0);
            b[0] += 1;
        }
    } else if (block == 1 && round == 1 && first) {
        atomic_store(&fresh_added, 1); /* round 0 flushed: its 1 is in the array, halved */
        fresh_wait(&fresh_done);
    }
}

static int own_fresh(void)
{
    loom_alloc_opts bo = {.unit = LOOM_UNIT_ROW, .row_size = 16 * sizeof(float),
                          .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT, .average = 1,
                          .name = "beacon"};
    if (omp_get_max_threads() != 2)
        return 0;
    /* 64 rows of 16 floats, of which the rounds reach one: never staged whole */
    if (!(fresh_beacon = loom_alloc(64 * 16 * sizeof(float), &bo)))
        return 1;
    loom_for_opts o = {.schedule = LOOM_STATIC, .sync = LOOM_HYBRID, .sync_every = 2 * FRESH_EVERY};
    if (loom_for(0, 2 * 3 * FRESH_EVERY, fresh_body, NULL, &o))
        return 1;
    check(fresh_read == 0.5f, "own: thread 0's third round read the beacon as %ld/2, not 1/2 (%ld: "
                              "the threads never met)", (long)(2 * fresh_read), -4);
    if (!fails)
        printf("ok - own: a row a round left alone is read afresh in the next\n");
    return fails;
}

/* A thread done with its block takes the rounds of another's that it has
 * not begun (2 threads): thread 1 holds its block's first round until
 * thread 0 has run one of that block's iterations, which only stealing
 * does (a few seconds at most: then a failure, not a hang). */
enum { STEAL_N = 64 };
static _Atomic long stolen; /* block 1's iterations that thread 0 ran */

static void steal_body(long i, void *ctx)
{
    (void)ctx;
    if (i >= STEAL_N / 2 && omp_get_thread_num() == 0)
        atomic_fetch_add(&stolen, 1);
    if (i == STEAL_N / 2)
        for (long n = 0; !atomic_load(&stolen) && n < 1000000000L; n++)
            ;
}

static int own_steal(void)
{
    if (omp_get_max_threads() != 2)
        return 0;
    loom_for_opts o = {.schedule = LOOM_STATIC, .sync = LOOM_HYBRID, .sync_every = 8};
    if (loom_for(0, STEAL_N, steal_body, NULL, &o))
        return 1;
    check(stolen > 0, "own: thread 0 ran %ld of thread 1's iterations while thread 1 held its first "
                      "round (%ld expected at least)", (long)stolen, 1);
    if (!fails)
        printf("ok - own: a thread done with its block runs rounds of another's\n");
    return fails;
}

/* own-weighted: iteration i weighs 1 + i % 5. */
static long own_weight(long i, void *ctx)
{
    (void)ctx;
    return 1 + i % 5;
}

static int own(void)
{
    loom_alloc_opts mo = {.unit = LOOM_UNIT_ROW, .row_size = OWN_F * sizeof(float),
                          .merge = LOOM_MERGE_ADD, .type = LOOM_FLOAT, .average = 1,
                          .name = "replicas"};
    own_model = loom_alloc(OWN_F * sizeof(float), &mo);
    own_count = counters("count", 1);
    own_seen = malloc(OWN_N * sizeof *own_seen);
    if (!own_model || !own_count || !own_seen || R != 1)
        return 1;
    loom_for_opts o = {.schedule = own_weighted ? LOOM_DYNAMIC : LOOM_STATIC,
                       .chunk = own_weighted ? 16 : 0, .sync = LOOM_HYBRID,
                       .sync_every = own_every, .sync_weight = own_weighted ? own_weight : NULL};
    if (loom_for(0, OWN_N, own_body, NULL, &o))
        return 1;
    /* rounds of every = sync_every / T iterations, or weight (a round ends
     * at the iteration whose running total first reaches the next multiple
     * of every), whichever thread runs them (sched/for.c, own_next):
     * inside a round each read is the one before plus the round's own 1 */
    int T = omp_get_max_threads();
    long every = (own_every + T - 1) / T, jumps = 0, first = -1, total = 0, next = every;
    for (long i = 0; i < OWN_N; i++) {
        int starts = i == 0;
        if (own_weighted && total >= next) { /* the round before ended at i */
            starts = 1;
            next = (total / every + 1) * every;
        } else if (!own_weighted)
            starts = i % every == 0;
        if (!starts && own_seen[i] != own_seen[i - 1] + 1 && !jumps++)
            first = i;
        total += own_weighted ? own_weight(i, NULL) : 1;
    }
    check(jumps == 0, "own: %ld reads inside a thread's round saw another thread's changes "
                      "(the first at iteration %ld)", jumps, first);
    const float *m = loom_row_get(own_model, 0);
    int team = own_team ? own_team : T;
    for (int j = 0; j < OWN_F; j++)
        check(m[j] == (float)OWN_N / team, "own: replica element %ld holds %ld, not the iterations / T",
              j, (long)m[j]);
    check(*own_count == OWN_N, "own: the in-place counter holds %ld of %ld", (long)*own_count,
          OWN_N);
    check(own_by_address > OWN_N / 4, "own: %ld iterations reached the copy by address, not over %ld",
          (long)own_by_address, OWN_N / 4);
    if (!fails)
        printf("ok - own: %d thread(s)' own rounds of %ld%s: no other thread's change inside a "
               "round, all %d iterations' changes averaged in\n", T, every,
               own_weighted ? " weight" : "", OWN_N);
    free(own_seen);
    return fails || (!own_weighted && !own_team && (own_fresh() || own_steal()));
}

/* ---- sync ----------------------------------------------------------------- */
enum { EVERY = 40, ROUNDS = 12 };
static int64_t *counter;          /* row r: rank r's count, and the sum of its i */
static int stale, exact_own;      /* exact_own: one copy per thread (bsp, ssp, 1 thread) */
static int private_copies;        /* bsp, ssp on several threads: each stages its own rows */
static _Atomic long violations;
static long first_bad[3];
static int generation; /* one per sync_mode run: a thread's counts below start afresh */
static __thread long mine_in_round, my_round = -1, mine_total;
static __thread int my_generation;

static void note(long i, long row, long v)
{
    if (atomic_fetch_add(&violations, 1) == 0)
        first_bad[0] = i, first_bad[1] = row, first_bad[2] = v;
}

/* Each rank counts its iterations (and sums their indices, a second
 * element in the row) in its own row and reads the others'. */
static void count(long i, void *ctx)
{
    (void)ctx;
    long round = i / EVERY;
    if (my_generation != generation)
        my_generation = generation, my_round = -1, mine_total = 0;
    if (my_round != round)
        my_round = round, mine_in_round = 0;
    for (int r = 0; r < R; r++) {
        if (r == me)
            continue;
        int64_t v = *(const int64_t *)loom_at_r(counter, (size_t)r);
        if (exact_own && v < (round - stale > 0 ? round - stale : 0) * EVERY) /* too stale */
            note(i, r, v);
    }
    int64_t *own = loom_at(counter, (size_t)me);
    if (private_copies && loom_at_base(counter)) /* a thread's copies are not the array */
        note(i, me, -1);
    __atomic_fetch_add(&own[1], i, __ATOMIC_RELAXED); /* the second element: the sum of i */
    if (exact_own) {
        if (*own != round * EVERY + mine_in_round) /* own rank: exact */
            note(i, me, *own);
        *own += 1;
    } else { /* hybrid, threads share the rank's copy: see that copy's bounds */
        int64_t v = __atomic_fetch_add(own, 1, __ATOMIC_RELAXED);
        /* one rank runs one OpenMP loop (no rounds); several ranks sync
         * every round, so the copy starts each round at round * EVERY */
        long lo = R > 1 ? round * EVERY + mine_in_round : mine_total;
        long hi = R > 1 ? (round + 1) * EVERY : EVERY * ROUNDS;
        if (v < lo || v >= hi)
            note(i, me, v);
    }
    mine_in_round++;
    mine_total++;
}

static int sync_mode(const char *mode)
{
    loom_sync s = !strcmp(mode, "bsp") ? LOOM_BSP : !strcmp(mode, "ssp") ? LOOM_SSP : LOOM_HYBRID;
    counter = loom_alloc((size_t)R * 16, &(loom_alloc_opts){.name = "counter", .unit = LOOM_UNIT_ROW,
                                                          .row_size = 16, .merge = LOOM_MERGE_ADD,
                                                          .type = LOOM_INT64});
    /* bsp/ssp: a thread sees its rank's earlier rounds and its own
     * increments only; hybrid shares them inside the rank (Hogwild: a plain
     * += could lose increments, so count() adds atomically there) */
    int T = omp_get_max_threads();
    exact_own = s != LOOM_HYBRID || T == 1;
    private_copies = s != LOOM_HYBRID && T > 1;
    generation++;
    atomic_store(&violations, 0);
    loom_for_opts o = {.schedule = LOOM_STATIC, .local = 1, .sync = s, .sync_every = EVERY};
    if (loom_for(0, EVERY * ROUNDS, count, NULL, &o))
        return 1;
    loom_barrier();
    for (int r = 0; r < R; r++) { /* every rank sees every rank's exact total */
        const int64_t *total = loom_row_get(counter, (size_t)r), n = (int64_t)EVERY * ROUNDS;
        check(total[0] == n, "rank %ld's final count is %ld", r, (long)total[0]);
        check(total[1] == n * (n - 1) / 2, "rank %ld's final sum of i is %ld, not n(n - 1)/2",
              r, (long)total[1]);
    }
    check(atomic_load(&violations) == 0, "iteration %ld read row %ld outside its round's bounds",
          first_bad[0], first_bad[1]);
    if (!fails && me == 0)
        printf("ok - %s (staleness %d): exact counts, every read within its round's bounds "
               "on %d rank(s) x %d thread(s)\n", mode, stale, R, T);
    loom_free(counter);
    return fails;
}

/* ---- repeat ----------------------------------------------------------------- */
/* A .repeated bsp loop (IterStore's prefetch batches, sched/prefetch.c):
 * iteration i adds i % 5 + 1 to row (i * 7919) % NREP, PASSES calls of the
 * same loop; afterwards every row holds exactly PASSES times its share.
 * Prints the allocation's prefetched and single misses so the test can
 * see that the calls after the first fetched their rows in batches. */
enum { NREP = 2048, REP_ITERS = 6000, PASSES = 3 };
static int64_t *reps;

static void rep_body(long i, void *ctx)
{
    (void)ctx;
    int64_t *row = loom_at(reps, (size_t)((i * 7919) % NREP));
    __atomic_fetch_add(row, i % 5 + 1, __ATOMIC_RELAXED); /* hybrid: threads share the copy */
}

static int repeat(int repeated)
{
    reps = loom_alloc((size_t)NREP * 64, &(loom_alloc_opts){.name = "reps", .unit = LOOM_UNIT_ROW,
                                                           .row_size = 64, .merge = LOOM_MERGE_ADD,
                                                           .type = LOOM_INT64});
    loom_for_opts o = {.schedule = LOOM_STATIC, .sync = LOOM_BSP, .sync_every = 100,
                       .repeated = repeated};
    for (int p = 0; p < PASSES; p++)
        if (loom_for(0, REP_ITERS, rep_body, NULL, &o))
            return 1;
    loom_barrier();
    int64_t want[NREP] = {0};
    for (long i = 0; i < REP_ITERS; i++)
        want[(i * 7919) % NREP] += PASSES * (i % 5 + 1);
    for (size_t r = 0; r < NREP; r++) {
        int64_t v = *(const int64_t *)loom_row_get(reps, r);
        check(v == want[r], "row %ld holds %ld (see the sums above)", (long)r, (long)v);
    }
    loom_stats s;
    loom_stats_get(reps, &s);
    long v[2] = {(long)s.prefetched, (long)(s.misses - s.prefetched)};
    loom_allreduce(LOOM_IN_PLACE, v, 2, LOOM_INT64, LOOM_SUM);
    if (!fails && me == 0)
        printf("ok - repeat %d: exact sums after %d calls; prefetched %ld, single misses %ld\n",
               repeated, PASSES, v[0], v[1]);
    loom_free(reps);
    return fails;
}

/* ---- priority --------------------------------------------------------------- */
enum { NCOORD = 96, PROUNDS = 120 };
static _Atomic int in_flight[NCOORD];
static long picks[NCOORD];
static long round_list[64], round_n;
static int new_round = 1;
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t sequence_hash = 1469598103934665603ull;

static int conflict(long a, long b, void *ctx)
{
    (void)ctx;
    return labs(a - b) < 4 || (a % 16) == (b % 16);
}

static void end_round(void)
{
    for (long x = 0; x < round_n; x++)
        for (long y = 0; y < x; y++)
            check(!conflict(round_list[x], round_list[y], NULL),
                  "conflicting coordinates %ld and %ld ran in one round", round_list[x],
                  round_list[y]);
    round_n = 0;
}

static void push(long j, double *partial, void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&round_lock);
    if (new_round) { /* the first push after pulls: the last round is complete */
        end_round();
        new_round = 0;
    }
    pthread_mutex_unlock(&round_lock);
    for (long k = 0; k < NCOORD; k++)
        if (k != j && conflict(j, k, NULL) && atomic_load(&in_flight[k]))
            check(0, "coordinates %ld and %ld ran at once, yet they conflict", j, k);
    atomic_store(&in_flight[j], 1);
    double t0 = loom_wtime();
    while (loom_wtime() - t0 < 20e-6)
        ; /* overlap with the other pushes of the round */
    partial[0] = me + 1;
    partial[1] = (double)j;
    atomic_store(&in_flight[j], 0);
}

static double pull(long j, const double *sum, void *ctx)
{
    (void)ctx;
    check(sum[0] == R * (R + 1) / 2 && sum[1] == (double)j * R,
          "coordinate %ld got a wrong sum of partials (%ld)", j, (long)sum[0]);
    round_list[round_n++] = j;
    new_round = 1;
    picks[j]++;
    sequence_hash = (sequence_hash ^ (uint64_t)j) * 1099511628211ull;
    return j % 2 ? 1.0 : 0.0; /* odd coordinates keep changing, even ones converge */
}

static int priority(void)
{
    loom_priority p = {.rounds = PROUNDS, .select = 6, .candidates = 12, .eta = 1e-3,
                       .width = 2, .seed = 42, .conflict = conflict, .push = push, .pull = pull};
    loom_for_opts o = {.schedule = LOOM_PRIORITY, .priority = &p};
    if (loom_for(0, NCOORD, NULL, NULL, &o))
        return 1;
    end_round();
    int64_t h[2] = {(int64_t)sequence_hash, -(int64_t)sequence_hash};
    loom_allreduce(LOOM_IN_PLACE, h, 2, LOOM_INT64, LOOM_MAX);
    check(h[0] == (int64_t)sequence_hash && -h[1] == (int64_t)sequence_hash,
          "ranks drew different coordinates%ld%ld", 0, 0);
    long odd = 0, even = 0;
    for (int j = 0; j < NCOORD; j++)
        *(j % 2 ? &odd : &even) += picks[j];
    check(odd > 10 * even, "odd (large delta) coordinates drawn %ld times, even ones %ld", odd, even);
    if (!fails && me == 0)
        printf("ok - priority: %d rounds, no conflicting pair in a round, partials summed over "
               "%d rank(s), same draws everywhere, large deltas drawn %ld:%ld\n",
               PROUNDS, R, odd, even);
    return fails;
}

/* ---- plan cache ------------------------------------------------------------- */
static _Atomic long deps_calls;
static float *PW, *PH;
static void pbody(long i, void *ctx)
{
    (void)ctx;
    ((float *)loom_at(PW, (size_t)(i % 50)))[0] += 1;
    ((float *)loom_at(PH, (size_t)(i % 37)))[0] += 1;
}
static void pdeps(long i, loom_deps *d, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&deps_calls, 1);
    loom_writes(d, PW, (size_t)(i % 50));
    loom_writes(d, PH, (size_t)(i % 37));
}

/* A repeated loop is planned once: its deps run for the first call only. */
static int plan_cache(void)
{
    enum { N = 3000 };
    loom_alloc_opts o = {.unit = LOOM_UNIT_ROW, .row_size = 4, .merge = LOOM_MERGE_ADD,
                         .type = LOOM_FLOAT};
    o.name = "PW";
    PW = loom_alloc(50 * 4, &o);
    o.name = "PH";
    o.coherence = R > 1 ? "ring" : NULL;
    PH = loom_alloc(37 * 4, &o);
    for (int rep = 0; rep < 2; rep++) {
        atomic_store(&deps_calls, 0);
        for (int call = 0; call < 3; call++)
            if (loom_for(0, N, pbody, NULL, &(loom_for_opts){.schedule = LOOM_SERIALIZABLE,
                                                             .deps = pdeps, .repeated = !rep}))
                return 1;
        /* one worker plans a repeated loop too (once), and runs a plain
         * one in index order, unplanned */
        int lone = R == 1 && omp_get_max_threads() == 1;
        long want = (rep ? (lone ? 0L : 3L) : 1L) * N, got = atomic_load(&deps_calls);
        check(got == want, "deps ran %ld times, expected %ld", got, want);
    }
    loom_ring_collect(PH);
    double sum = 0;
    for (int r = 0; r < 37; r++)
        sum += PH[r];
    check(sum == 6.0 * N, "the rotated rows sum to %ld, expected %ld", (long)sum, 6L * N);
    if (!fails && me == 0)
        printf("ok - plan cache: a repeated loop is planned once, a plain one every call; "
               "%d rank(s) x %d thread(s)\n", R, omp_get_max_threads());
    return fails;
}

/* ---- readers ------------------------------------------------------------- */
/* A hybrid loop over averaged float rows (.average = 1): rank 0's
 * iterations add 1 to row 0, every other rank's only read it (loom_at_r).
 * A rank that only read a row did not write it: after the loop row 0 must
 * be exactly 1 + rank 0's iterations (the mean over its one writer), and
 * row 1, which nobody touches, 1. */
enum { RD_ITERS = 64, RD_EVERY = 16 };
static float *avg_rows;

static void reader_body(long i, void *ctx)
{
    (void)i, (void)ctx;
    if (me == 0) {
        float *x = loom_at(avg_rows, 0);
        x[0] += 1; /* the test runs one thread per rank */
    } else {
        volatile float v = *(const float *)loom_at_r(avg_rows, 0);
        (void)v;
    }
}

static int readers(void)
{
    avg_rows = loom_alloc(2 * 2 * sizeof(float),
                          &(loom_alloc_opts){.name = "avg", .unit = LOOM_UNIT_ROW,
                                             .row_size = 2 * sizeof(float), .merge = LOOM_MERGE_ADD,
                                             .type = LOOM_FLOAT, .average = 1});
    if (!avg_rows)
        return 1;
    if (me == 0)
        for (size_t r = 0; r < 2; r++)
            loom_row_put(avg_rows, r, (float[2]){1, 0});
    loom_barrier();
    loom_for_opts o = {.schedule = LOOM_STATIC, .local = 1, .sync = LOOM_HYBRID,
                       .sync_every = RD_EVERY};
    if (loom_for(0, RD_ITERS, reader_body, NULL, &o))
        return 1;
    loom_barrier();
    const float *x = loom_row_get(avg_rows, 0), *y = loom_row_get(avg_rows, 1);
    check(x[0] == 1 + RD_ITERS, "row 0 is %ld (x1000) after rank 0's %ld adds: readers counted as writers",
          (long)(x[0] * 1000), (long)RD_ITERS);
    check(y[0] == 1 && y[1] == 0, "row 1, untouched, is %ld (x1000), %ld", (long)(y[0] * 1000),
          (long)y[1]);
    if (!fails && me == 0)
        printf("ok - readers: a row only read in a hybrid loop is not averaged in on %d rank(s)\n", R);
    loom_free(avg_rows);
    return fails;
}

/* Runs the commands in argument order (one job for several: each launch
 * costs start-up), stopping at the first that fails. */
/* ---- dense --------------------------------------------------------------- */
enum { DROWS = 64, DW = 19, DEVERY = 10, DROUNDS = 8 };
static double *drows;
static int davg; /* the averaging merge: a round leaves the mean of the ranks' versions */
static _Atomic long dbased; /* iterations that found the rows by address (loom_at_base) */

/* What every rank's round adds to a row, merged: the sum or the mean of
 * DEVERY * (q + 1) over ranks q. */
static double dround(void)
{
    return DEVERY * (davg ? (R + 1) / 2.0 : R * (R + 1) / 2.0);
}

static void dbody(long i, void *ctx)
{
    (void)ctx;
    long round = i / DEVERY, k = i % DEVERY;
    double want = round * dround() + k * (me + 1); /* before this iteration's add */
    const char *base = loom_at_base(drows);
    if (base && base != (char *)loom_at(drows, 0)) /* the address loom_at gives */
        note(i, 0, -1);
    dbased += base != NULL;
    for (size_t r = 0; r < DROWS; r++) {
        double *v = loom_at(drows, r);
        for (int e = 0; e < DW; e++) {
            if (v[e] != want)
                note(i, (long)r, (long)(v[e] * 10));
            v[e] += me + 1;
        }
    }
}

static int dense_rows(int avg)
{
    davg = avg;
    drows = loom_alloc(DROWS * DW * 8, &(loom_alloc_opts){.name = "drows", .unit = LOOM_UNIT_ROW,
                                                    .row_size = DW * 8, .merge = LOOM_MERGE_ADD,
                                                    .type = LOOM_DOUBLE, .average = avg});
    atomic_store(&violations, 0);
    atomic_store(&dbased, 0);
    loom_for_opts o = {.schedule = LOOM_STATIC, .local = 1, .sync = LOOM_HYBRID,
                       .sync_every = DEVERY};
    if (loom_for(0, DEVERY * DROUNDS, dbody, NULL, &o))
        return 1;
    check(atomic_load(&violations) == 0, "iteration %ld read row %ld off its round",
          first_bad[0], first_bad[1]);
    /* loom_at_base: plain OpenMP on one rank; on several, the rounds after
     * the first work on the rows staged whole in place (every row changed) */
    long based = atomic_load(&dbased), plain = R == 1 ? DEVERY * DROUNDS : DEVERY * (DROUNDS - 1);
    check(based == plain, "loom_at_base gave the rows' address in %ld iterations, not %ld", based,
          plain);
    /* the homes: one more add by every rank; each rank refetches every row
     * (the others changed it) from its home */
    loom_barrier();
    double one[DW];
    for (int e = 0; e < DW; e++)
        one[e] = me + 1;
    for (size_t r = 0; r < DROWS; r++)
        loom_row_add(drows, r, one);
    loom_barrier();
    double want = DROUNDS * dround() + dround() / DEVERY;
    for (size_t r = 0; r < DROWS; r++) {
        const double *v = loom_row_get(drows, r);
        for (int e = 0; e < DW; e++)
            check(v[e] == want, "element %ld holds %ld/10 after the loop and one more add",
                  (long)r * DW + e, (long)(v[e] * 10));
    }
    loom_stats st;
    loom_stats_get(drows, &st);
    if (!fails && me == 0)
        printf("ok - dense%s: exact reads and home %s on %d rank(s) x %d thread(s), %llu bytes sent\n",
               avg ? " avg" : "", avg ? "means" : "sums", R, omp_get_max_threads(),
               (unsigned long long)st.bytes_sent);
    /* which path ran: the checks above pass on the row-by-row one too */
    printf("dense%s paths: rank %d staged whole %llu, dense merges %llu\n", avg ? " avg" : "", me,
           (unsigned long long)st.staged_whole, (unsigned long long)st.dense_merges);
    loom_free(drows);
    return fails;
}

/* ---- shares -------------------------------------------------------------- */
enum { SN = 2000, SEVERY = 50 };
static int64_t *shits;          /* one row per iteration */
static _Atomic long sran;       /* iterations this rank ran */
static int sslow;               /* rank 0 sleeps in each iteration */

static void sbody(long i, void *ctx)
{
    (void)ctx;
    __atomic_fetch_add((int64_t *)loom_at(shits, (size_t)i), 1, __ATOMIC_RELAXED);
    atomic_fetch_add(&sran, 1);
    if (sslow && me == 0)
        nanosleep(&(struct timespec){0, 500 * 1000}, NULL);
}
static long sweight(long i, void *ctx) { (void)ctx; return i % 5; }

static int shares(void)
{
    shits = counters("shits", SN);
    int64_t want = 0;
    const char *names[] = {"dynamic", "guided", "dynamic by weight", "dynamic, rank 0 slow"};
    for (int c = 0; c < 4; c++) {
        loom_for_opts o = {.schedule = c == 1 ? LOOM_GUIDED : LOOM_DYNAMIC, .chunk = c == 1 ? 0 : 3,
                           .sync_every = SEVERY, .sync_weight = c == 2 ? sweight : NULL};
        sslow = c == 3;
        atomic_store(&sran, 0);
        if (loom_for(0, SN, sbody, NULL, &o))
            return 1;
        check_counts(shits, SN, ++want);
        int64_t ran = atomic_load(&sran), first = ran;
        loom_allreduce(LOOM_IN_PLACE, &ran, 1, LOOM_INT64, LOOM_SUM);
        loom_bcast(&first, sizeof first, 0);
        check(ran == SN, "the ranks ran %ld iterations of %ld", (long)ran, SN);
        if (c == 3 && R > 1)
            check(3 * first * R < 2 * SN, "rank 0, slow, ran %ld of %ld iterations", (long)first, SN);
        if (!fails && me == 0)
            printf("ok - shares, %s: every iteration once on %d rank(s) x %d thread(s), rank 0 "
                   "ran %ld\n", names[c], R, omp_get_max_threads(), (long)first);
    }
    loom_free(shits);
    return fails;
}

/* ---- weighted ------------------------------------------------------------ */
enum { WN = 300, WEVERY = 23, WMAXR = 8 };
static long *wcount;                  /* row q: rank q's iterations so far */
static long wbefore[WMAXR][WN + 2];   /* [q][r]: rank q's iterations in its rounds < r */
static int wround[WN];                /* this rank's round of each iteration */

static long wweight(long i, void *ctx) /* 1-5, a different sequence on each rank */
{
    int q = ctx ? *(const int *)ctx : me;
    return 1 + (i * 7 + q * 3) % 5;
}

/* The rounds the loop must cut for rank q (the rule of loom.h's
 * .sync_weight, written out): wbefore[q][r], and this rank's wround. */
static void wexpect(int q)
{
    long total = 0, next = WEVERY, done = 0;
    int r = 0;
    wbefore[q][0] = 0;
    for (long i = 0; i < WN; i++) {
        if (q == me)
            wround[i] = r;
        total += wweight(i, &q);
        done++;
        if (total >= next) {
            wbefore[q][++r] = done;
            next = (total / WEVERY + 1) * WEVERY;
        }
    }
    for (int k = r + 1; k < WN + 2; k++)
        wbefore[q][k] = WN;
}

static void wbody(long i, void *ctx)
{
    (void)ctx;
    for (int q = 0; q < R; q++) {
        long v = *(const long *)loom_at_r(wcount, (size_t)q);
        if (q != me && (v < wbefore[q][wround[i]] || v > wbefore[q][wround[i] + 1]))
            note(i, q, v);
    }
    *(long *)loom_at(wcount, (size_t)me) += 1;
}

static int weighted(void)
{
    if (R > WMAXR)
        return 2;
    for (int q = 0; q < R; q++)
        wexpect(q);
    wcount = loom_alloc((size_t)R * 8, &(loom_alloc_opts){.name = "wcount", .unit = LOOM_UNIT_ROW,
                                                          .row_size = 8, .merge = LOOM_MERGE_ADD,
                                                          .type = LOOM_INT64});
    atomic_store(&violations, 0);
    loom_for_opts o = {.schedule = LOOM_STATIC, .local = 1, .sync = LOOM_BSP,
                       .sync_every = WEVERY, .sync_weight = wweight};
    if (loom_for(0, WN, wbody, NULL, &o))
        return 1;
    loom_barrier();
    for (int q = 0; q < R; q++) {
        long n = *(const long *)loom_row_get(wcount, (size_t)q);
        check(n == WN, "rank %ld's final count is %ld", q, n);
    }
    check(atomic_load(&violations) == 0, "iteration %ld read rank %ld's count off its rounds",
          first_bad[0], first_bad[1]);
    if (!fails && me == 0)
        printf("ok - weighted: rounds end at multiples of the weights' running total on %d "
               "rank(s) x %d thread(s)\n", R, omp_get_max_threads());
    loom_free(wcount);
    return fails;
}

int main(int argc, char **argv)
{
    if (argc < 2 || loom_init(&argc, &argv))
        return 2;
    R = loom_size(), me = loom_rank();
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        if (!strcmp(argv[i], "once"))
            rc = once();
        else if (!strcmp(argv[i], "sync") && i + 1 < argc) {
            const char *mode = argv[++i];
            stale = i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' ? atoi(argv[++i]) : 0;
            rc = sync_mode(mode);
        } else if (!strcmp(argv[i], "plan"))
            rc = plan_cache();
        else if (!strcmp(argv[i], "own-nested")) {
            /* from inside a team of 2 (nested regions off): the loop's
             * own region gets 1 thread though T = 2 */
            omp_set_max_active_levels(1);
            own_team = 1;
#pragma omp parallel num_threads(2)
#pragma omp master
            rc = own();
        } else if (!strcmp(argv[i], "own") || !strcmp(argv[i], "own-weighted")) {
            own_weighted = !strcmp(argv[i], "own-weighted");
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
                own_every = atol(argv[++i]);
            rc = own();
        }
        else if (!strcmp(argv[i], "repeat") && i + 1 < argc)
            rc = repeat(atoi(argv[++i]));
        else if (!strcmp(argv[i], "priority"))
            rc = priority();
        else if (!strcmp(argv[i], "readers"))
            rc = readers();
        else if (!strcmp(argv[i], "weighted"))
            rc = weighted();
        else if (!strcmp(argv[i], "shares"))
            rc = shares();
        else if (!strcmp(argv[i], "dense"))
            rc = dense_rows(0);
        else if (!strcmp(argv[i], "dense-avg"))
            rc = dense_rows(1);
        else
            rc = 2;
    }
    loom_finalize();
    return rc != 0;
}
