/* test_shares.c — unit tests for the rounds a dynamic loop shares among
 * ranks by speed (sched/shares.c), its arithmetic alone: each rank's
 * view is a loom_shares of its own, asked for its part with loom_rt_icv.rank
 * set to that rank, and every view learns the same made-up round figures
 * (the rates a rank of the given speed would show), as the allreduce gives
 * them.  For 1-16 ranks, weights none / uneven with zeros / one huge /
 * all zero, and speeds equal, 1:3 and 1:1000: the parts of every round
 * tile what it takes, every iteration runs exactly once, the loop ends
 * within a bound of rounds, and a slow rank runs less than a fast one. */
#include "../../sched/sched.h"
#include "../tap.h"

#include <stdlib.h>

enum { N = 3000, LO = 100, MAXR = 16 };

/* What the last run() saw: rounds in which a rank ran nothing while at
 * least 2R iterations were left before the round, and the simulated time
 * (each round takes its slowest rank's weight / speed). */
static long idle_rounds;
static double span;

/* Runs a loop of [LO, LO + N) with R ranks of the given speeds (weight per
 * second) and rounds of `every` per rank; counts each iteration's runs in
 * ran[] and each rank's weight in by[].  Returns the rounds, or -1 if the
 * parts of a round overlap or a rank's part lies outside the range. */
static long run(int R, const int64_t *cum, const double *speed, double every, int *ran,
                double *by)
{
    long done = 0;
    idle_rounds = 0;
    span = 0;
    loom_shares *s[MAXR];
    loom_rt_icv.nranks = R;
    for (int k = 0; k < R; k++)
        s[k] = loom_sched_shares_new(LO, LO + N, cum);
    for (int i = 0; i < N; i++)
        ran[i] = 0;
    for (int k = 0; k < R; k++)
        by[k] = 0;
    long rounds = 0;
    for (;;) {
        loom_part p[MAXR];
        int more = 0;
        for (int k = 0; k < R; k++) {
            loom_rt_icv.rank = k;
            more += loom_sched_shares_next(s[k], every, &p[k]);
        }
        if (!more)
            break;
        if (more != R || ++rounds > 10 * N)
            return -1; /* the views disagree, or the loop does not end */
        double x[2 * MAXR] = {0}, slowest = 0;
        long before = N - done;
        int idle = 0;
        for (int k = 0; k < R; k++) {
            double w = 0;
            long n = 0;
            for (int j = 0; j < 2; j++) {
                long a = p[k].a[j], z = p[k].z[j];
                if (a > z || (a < z && (a < LO || z > LO + N)))
                    return -1;
                for (long i = a; i < z; i++)
                    ran[i - LO]++;
                w += cum ? (double)(cum[z - LO] - cum[a - LO]) : (double)(z - a);
                n += z - a;
            }
            done += n;
            idle |= n == 0;
            by[k] += w;
            x[k] = w;
            x[R + k] = w / speed[k];
            slowest = x[R + k] > slowest ? x[R + k] : slowest;
        }
        idle_rounds += idle && before >= 2 * R;
        span += slowest;
        for (int k = 0; k < R; k++)
            loom_sched_shares_rates(s[k], x);
    }
    for (int k = 0; k < R; k++)
        loom_sched_shares_free(s[k]);
    return rounds;
}

static int all_once(const int *ran)
{
    for (int i = 0; i < N; i++)
        if (ran[i] != 1)
            return 0;
    return 1;
}

int main(void)
{
    plan(24);
    static int64_t uneven[N + 1], huge[N + 1], zero[N + 1];
    for (int i = 0; i < N; i++) {
        uneven[i + 1] = uneven[i] + i % 5;             /* zeros among them */
        huge[i + 1] = huge[i] + (i == N / 3 ? 1000000 : 1);
        zero[i + 1] = 0;
    }
    const int64_t *cums[] = {NULL, uneven, huge, zero};
    const char *wname[] = {"no weights", "weights i % 5", "one huge weight", "all weights 0"};
    int Rs[] = {1, 2, 3, 5, 16}, ran[N];
    double by[MAXR], equal[MAXR], slow[MAXR];
    for (int k = 0; k < MAXR; k++)
        equal[k] = 1000, slow[k] = k == 0 ? 1 : 1000;
    for (int w = 0; w < 4; w++) {
        int ok = 1;
        for (int r = 0; r < 5; r++) {
            double every = cums[w] == uneven ? 17 : 7;
            ok &= run(Rs[r], cums[w], equal, every, ran, by) >= 0 && all_once(ran);
            ok &= run(Rs[r], cums[w], slow, every, ran, by) >= 0 && all_once(ran);
        }
        ok(ok, "%s, 1-16 ranks, speeds equal and 1:1000: every iteration once", wname[w]);
    }
    /* equal speeds, no weights: 2 ranks take turns of 7 + 7, one block each */
    long rounds = run(2, NULL, equal, 7, ran, by);
    is_int(rounds, (N + 13) / 14, "2 equal ranks, no weights: ceil(N / 14) rounds");
    ok(by[0] == N / 2 && by[1] == N / 2, "2 equal ranks: half each (%.0f, %.0f)", by[0], by[1]);
    /* one rank 1000 times slower: its part falls to the floor (a quarter
     * of an equal one), and the others take its block's back */
    for (int r = 1; r < 5; r++) {
        int R = Rs[r];
        run(R, NULL, slow, 7, ran, by);
        ok(all_once(ran) && by[0] < 0.35 * N / R,
            "%d ranks, rank 0 1000x slower: it runs %.0f of an equal %d", R, by[0], N / R);
    }
    /* speeds 1:3 on 2 ranks: the parts follow them (rank 1 about 3/4) */
    double third[2] = {1000, 3000};
    run(2, NULL, third, 50, ran, by);
    ok(all_once(ran) && by[1] > 0.65 * N && by[1] < 0.85 * N,
        "2 ranks at 1:3: rank 1 runs %.0f of %d", by[1], N);
    /* the same by weight: the parts count weight, not iterations */
    run(2, uneven, third, 100, ran, by);
    ok(all_once(ran) && by[1] > 0.65 * uneven[N] && by[1] < 0.85 * uneven[N],
        "2 ranks at 1:3 by weight: rank 1 runs %.0f of %.0f", by[1], (double)uneven[N]);
    /* a rank that ran nothing keeps its rate: the floor lets it run again */
    run(3, huge, slow, 7, ran, by);
    ok(all_once(ran) && by[1] > 0 && by[2] > 0, "one huge weight, 3 ranks: all run");
    /* one round only (sync_every 0 gives every = the whole range): the
     * static blocks */
    rounds = run(4, NULL, equal, N, ran, by);
    ok(rounds == 1 && all_once(ran) && by[0] == N / 4 && by[3] == N - 3 * (N / 4),
        "a round of the whole range: the static blocks, in one round");
    /* ... also where N / R is no integer: for.c's my_range cuts at
     * floor(N k / R), and so must the blocks */
    rounds = run(7, NULL, equal, N, ran, by);
    int cut = 1;
    for (int k = 0; k < 7; k++)
        cut &= by[k] == (double)((long)N * (k + 1) / 7 - (long)N * k / 7);
    ok(rounds == 1 && all_once(ran) && cut, "7 ranks, a round of the whole range: my_range's "
       "blocks (%.0f, %.0f, ...)", by[0], by[1]);
    /* by weight: block k ends at the first iteration whose weight before
     * it reaches floor(W (k + 1) / R), loom_corpus_block's rule (loom-w2v's
     * step sizes follow it) */
    rounds = run(7, uneven, equal, (double)uneven[N], ran, by);
    long at = 0;
    cut = rounds == 1;
    for (int k = 0; k < 6; k++) {
        int64_t target = uneven[N] * (k + 1) / 7;
        long end = 0;
        while (uneven[end] < target)
            end++;
        cut &= by[k] == (double)(uneven[end] - uneven[at]);
        at = end;
    }
    ok(cut && all_once(ran), "7 ranks, one round by weight: blocks cut at floor(W k / 7)");
    /* the floor: never below a quarter of an equal part, so a rank
     * however slow runs about an eighth of 2 ranks' rounds (without it,
     * one iteration a round: ~160) */
    double s2[2] = {1, 1000000};
    run(2, NULL, s2, 10, ran, by);
    ok(all_once(ran) && by[0] >= 0.2 * N / 2, "2 ranks at 1:10^6: rank 0 still runs %.0f",
       by[0]);
    /* 16 ranks at speeds 1..16, by count and by weight */
    double vary[MAXR];
    for (int k = 0; k < MAXR; k++)
        vary[k] = 100 * (k + 1);
    run(16, NULL, vary, 5, ran, by);
    ok(all_once(ran) && by[15] > 2 * by[0], "16 ranks at speeds 1..16: the fastest runs over "
       "twice the slowest (%.0f against %.0f)", by[15], by[0]);
    run(16, uneven, vary, 11, ran, by);
    ok(all_once(ran) && by[15] > 2 * by[0], "16 ranks by weight: the fastest runs over twice "
       "the slowest (%.0f against %.0f)", by[15], by[0]);
    run(5, zero, vary, 3, ran, by);
    ok(all_once(ran), "5 ranks, all weights 0, speeds varying: every iteration once");
    /* no rank sits a round out while others still have work, and at 1:3
     * the 2 ranks' rounds take what the ideal split would, but for the
     * first (equal parts before any rate is known: the slow rank takes
     * every / 1000 s where 2 every / 4000 would do) and a quarter round of
     * slack; a round lost at the end of the range is a whole one */
    const int64_t *two[] = {NULL, uneven};
    double evs[] = {50, 200};
    for (int w = 0; w < 2; w++)
        for (int e = 0; e < 2; e++) {
            double every = evs[e], ideal = (two[w] ? (double)uneven[N] : N) / 4000.0;
            run(2, two[w], third, every, ran, by);
            long idle2 = idle_rounds;
            double span2 = span, bound = ideal + every / 2000 + every / 8000;
            run(16, two[w], vary, every / 10, ran, by);
            ok(all_once(ran) && idle2 == 0 && idle_rounds == 0 && span2 < bound,
               "%s, rounds of %.0f: no rank idle while 2R iterations are left (2 ranks at 1:3: "
               "%ld rounds, 16 at 1..16: %ld); 2 ranks take %.3f s, under %.3f",
               w ? "by weight" : "by count", every, idle2, idle_rounds, span2, bound);
        }
    return done_testing();
}
