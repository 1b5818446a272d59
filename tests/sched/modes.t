#!/bin/sh
# modes.t — data-parallel loops and the priority schedule
# (tests/bin/for_modes.c) on 1-4 ranks x 1-2 threads: static, dynamic and
# guided run every iteration exactly once (global and local ranges); bsp,
# ssp and hybrid sync points keep exact counts and never let a read be
# staler than the mode allows; the priority schedule never runs two
# conflicting coordinates in one round, sums partial results over ranks,
# draws the same coordinates on every rank and favours large deltas;
# rounds by weight (.sync_weight) end where each rank's running total
# reaches each multiple of .sync_every; dynamic and guided loops on the
# job's range share their rounds among the ranks by speed (sched/shares.c)
# and still run every iteration once, a slow rank running less; a
# repeated serializable loop is planned once; a row a rank only read in a
# hybrid loop does not count as its write under the averaging merge; a
# hybrid round that stages its rows whole (sched/stage.c) fetches the
# copies writethrough dropped; rows every rank changes merge densely
# (dsm/dense.c) with exact reads and exact home stores, and under the
# averaging merge to exact means; LOOM_STATS prints each rank's line for
# a loop, with its rounds; on one rank a hybrid loop with a sync interval
# gives its threads their own copies of model replicas.
. "$(dirname "$0")/../lib.sh"
plan 86
# One rank, hybrid, a sync interval: the threads work on their own copies
# of model replicas (.average), averaging their changes in at the end of
# each of their rounds (sched/for.c, own_rounds), as ranks' replicas merge:
# no other thread's change seen inside a round, none lost; a row kept from a round is dropped when the
# next leaves it alone, so a later read takes it afresh; a thread done with
# its block takes the rounds of another's not yet begun
for t in 2 4; do
    OMP_NUM_THREADS=$t run_job "$T/w" "$LOOMRUN" -n 1 "$B/tests/bin/for_modes" own
    [ $rc -eq 0 ] && has "$T/w" "^ok - own: $t thread\(s\)' own rounds" &&
        { [ $t != 2 ] || { has "$T/w" "^ok - own: a row a round left alone is read afresh" &&
            has "$T/w" "^ok - own: a thread done with its block runs rounds of another's"; }; }
    ok $? "1 rank x $t threads, hybrid with a sync interval: each thread's own copy of the replicas, every change averaged in, none older than the round before"
    [ $rc -eq 0 ] || sed 's/^/# /' "$T/w"
done
# a dynamic schedule with rounds by weight (word2vec's sentences): the
# same rounds, cut where the running weight reaches each multiple
OMP_NUM_THREADS=2 LOOM_STATS=1 run_job "$T/w" "$LOOMRUN" -n 1 "$B/tests/bin/for_modes" own-weighted
[ $rc -eq 0 ] && has "$T/w" "^ok - own: 2 thread\\(s\\)' own rounds of 32 weight" &&
    has "$T/w" "loom_for: 2 threads' own rounds of 32 weight: 18750 rounds"
ok $? "1 rank x 2 threads, dynamic, rounds by weight: each thread's own copy, every change averaged in"
# called inside a team of 2 with nesting off, the loop's region gets one
# thread: it averages over the team it got, so its changes count whole
OMP_NUM_THREADS=2 run_job "$T/w" "$LOOMRUN" -n 1 "$B/tests/bin/for_modes" own-nested
[ $rc -eq 0 ] && has "$T/w" "^ok - own: 2 thread\\(s\\)' own rounds of 32"
ok $? "1 rank, a loop called inside a team of 2 (nesting off): one thread's own rounds, every change counted whole"
# a long interval: the rank's 1000 iterations shared by its threads, 500
# each (averaged, the copies may drift apart that long), and LOOM_STATS
# gives the merges' share
OMP_NUM_THREADS=2 LOOM_STATS=1 run_job "$T/w" "$LOOMRUN" -n 1 "$B/tests/bin/for_modes" own 1000
[ $rc -eq 0 ] && has "$T/w" "^ok - own: 2 thread\\(s\\)' own rounds of 500" &&
    has "$T/w" "loom_for: 2 threads' own rounds of 500 iterations: [0-9]+ rounds in [0-9.]+ s, [0-9.]+% of the threads' time merging"
ok $? "1 rank x 2 threads, hybrid every 1000: each thread's rounds are 500 iterations; the stats give the merges' share"
# Seven of each layout's eight checks share one job (each launch costs
# start-up); ssp runs in its own, for LOOM_COHERENCE.
for n in 1 2 3 4; do
    for t in 1 2; do
        OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/for_modes" \
            once sync bsp sync hybrid plan priority weighted shares
        rco=$rc
        OMP_NUM_THREADS=$t LOOM_COHERENCE=ssp LOOM_STALENESS=2 LOOM_STATS=1 run_job "$T/s" \
            "$LOOMRUN" -n $n "$B/tests/bin/for_modes" sync ssp 2
        rcs=$rc
        # LOOM_STATS: each rank's line for the loop, with its rounds (480
        # iterations, each rank's own, 40 a round) and its seconds
        k=12
        [ $rcs -eq 0 ] && [ "$(grep -cE "loom: (rank [0-9]+: )?loom_for: $k rounds: bodies [0-9.]+ s; sync points [0-9.]+ s: merge [0-9.]+ s, clock [0-9.]+ s, sharing [0-9.]+ s$" "$T/s")" -eq $n ]
        ok $? "LOOM_STATS: every rank's line for the ssp loop, $k rounds, on $n rank(s) x $t thread(s)"
        # job|its ok line|what it checks|what it checks on one rank, where
        # there are no other ranks' writes to see, rounds or speeds to share
        # (a loop there is plain OpenMP, and ssp gets the local policy)
        for c in "o|guided \(local ranges\), chunk 7: every iteration once|once|once" \
                 "o|bsp \(staleness 0\): exact counts|sync bsp|sync bsp" \
                 "o|hybrid \(staleness 0\): exact counts|sync hybrid|sync hybrid" \
                 "s|ssp \(staleness 2\): exact counts|sync ssp 2|ssp asked for (the local policy): exact counts" \
                 "o|plan cache: a repeated loop is planned once|plan|plan" \
                 "o|priority: 120 rounds, no conflicting pair|priority|priority" \
                 "o|weighted: rounds end at multiples|weighted rounds (.sync_weight)|weighted rounds asked for: every iteration once" \
                 "o|shares, dynamic, rank 0 slow: every iteration once|rounds shared by speed, every iteration once, a slow rank less|dynamic and guided on the job's range: every iteration once"; do
            f=${c%%|*} rest=${c#*|}; name=${rest%%|*} rest=${rest#*|}; what=${rest%|*}
            [ $n -eq 1 ] && what=${rest#*|}
            eval "jrc=\$rc$f"
            [ "$jrc" -eq 0 ] && has "$T/$f" "ok - $name" && ! grep -q "not ok" "$T/$f"
            ok $? "$what on $n rank(s) x $t thread(s)"
        done
    done
done
# An averaging home counts the ranks that wrote a row: a rank that only
# read it in a hybrid loop must not pull the mean toward its copy.
for n in 2 3; do
    OMP_NUM_THREADS=1 run_job "$T/r$n" "$LOOMRUN" -n $n "$B/tests/bin/for_modes" readers
    [ $rc -eq 0 ] && has "$T/r$n" "ok - readers" && ! grep -q "not ok" "$T/r$n"
    ok $? "readers: a row only read in a hybrid loop is not averaged in on $n ranks"
done
# Every rank adds to every row in every round: from the second round the
# rows merge by one allreduce; reads and the homes must stay exact.
# Under the averaging merge the same loop must not merge densely (a sum):
# every round leaves the mean of the ranks' versions.
# The exact values hold on the row-by-row path too, so each rank also
# reports which path ran (loom_stats): of the 8 rounds the last 7 staged
# whole, and summed they merged densely, averaged not.
# paths FILE AVG WHOLE DENSE: every one of the job's ranks reported those
paths() {
    [ "$(grep -Ec "dense$2 paths: rank [0-9]+ staged whole $3, dense merges $4\$" "$1")" -eq "$5" ]
}
for n in 2 3 4; do
    OMP_NUM_THREADS=1 run_job "$T/d$n" "$LOOMRUN" -n $n "$B/tests/bin/for_modes" dense dense-avg
    [ $rc -eq 0 ] && has "$T/d$n" "ok - dense: exact reads and home sums" && ! grep -q "not ok" "$T/d$n" &&
        paths "$T/d$n" "" 7 7 $n
    ok $? "dense merge: exact reads and home sums on $n ranks (7 rounds merged by allreduce)"
    [ $rc -eq 0 ] && has "$T/d$n" "ok - dense avg: exact reads and home means" &&
        paths "$T/d$n" " avg" 7 0 $n
    ok $? "averaging merge, every row changed: exact means on $n ranks (staged whole, not merged densely)"
done
# Writethrough keeps no copy past a release, so every row is invalid when
# a round begins: staged whole (every rank changes every row), they must be
# fetched, or a read sees the round before's value.  (Writethrough has no
# write notices, so these rows merge row by row, not densely.)
# One thread: the body's exact reads need a rank's copy to itself.
OMP_NUM_THREADS=1 LOOM_COHERENCE=writethrough run_job "$T/w" "$LOOMRUN" -n 2 \
    "$B/tests/bin/for_modes" dense
[ $rc -eq 0 ] && has "$T/w" "ok - dense: exact reads and home sums" && ! grep -q "not ok" "$T/w" &&
    paths "$T/w" "" 7 0 2
ok $? "every row changed under writethrough (rows staged whole, 7 rounds; none merged densely) on 2 ranks"
finish
