#!/bin/sh
# notice.t — write notices (dsm/notice.c): after every barrier and clock a
# rank reads exactly the totals of all additions so far, though it kept
# the copies no other rank changed (rows and pages; bsp, ssp with
# staleness 0 and 2; "wide": 16384 rows of which a sync point's notices
# name a few, the receiver's sorted path, the others its bitmap;
# "prefetch": rows of which every round prefetches half, so that a sync
# point drops the changed copies instead of refetching them), and a sync
# point at which nobody wrote refetches
# nothing; the averaging merge makes each row exactly the mean of the
# versions of the ranks that wrote it, across a barrier and a clock, and
# with .average = 2 exactly twice the mean of its writers' changes once
# more than two wrote (their sum when two did); with .average = 3 on 3
# ranks no row can have more writers than that, so the merge is the sum
# and runs as one (LOOM_STATS names no averaging, where .average = 2's
# line says "capped at 2 ranks"); with block momentum (.momentum) a row
# moves by its writers' mean change plus (1 - 1/writers) times its move of
# the round before, over three rounds (barrier, clock, barrier), and with
# .average = 2 by min(2, writers) times their mean plus (1 - min(2,
# writers)/writers) of it.
. "$(dirname "$0")/../lib.sh"
plan 14
for c in "2 rows" "3 rows" "2 pages" "3 wide" "2 prefetch" "3 prefetch"; do
    set -- $c
    run_job "$T/s$1$2" "$LOOMRUN" -n $1 "$B/tests/bin/dsm_notice" sparse $2
    [ $rc -eq 0 ] && has "$T/s$1$2" "dsm_notice: ok P=$1 sparse"
    ok $? "$1 ranks, $2: every sync point shows the exact totals; a quiet one fetches nothing"
done
for n in 3 4; do
    run_job "$T/a$n" "$LOOMRUN" -n $n "$B/tests/bin/dsm_notice" avg
    [ $rc -eq 0 ] && has "$T/a$n" "dsm_notice: ok P=$n avg"
    ok $? "$n ranks: averaged rows are exactly the mean of their writers' versions"
    run_job "$T/c$n" env LOOM_STATS=1 "$LOOMRUN" -n $n "$B/tests/bin/dsm_notice" avg 2
    [ $rc -eq 0 ] && has "$T/c$n" "dsm_notice: ok P=$n avg" &&
        [ "$(grep -c "stats 'mean' (bsp, capped at 2 ranks)" "$T/c$n")" -eq $n ]
    ok $? "$n ranks, .average = 2: two writers' changes add, more average to twice their mean"
done
for n in 3 4; do
    run_job "$T/m$n" env LOOM_STATS=1 "$LOOMRUN" -n $n "$B/tests/bin/dsm_notice" avg 1 momentum
    [ $rc -eq 0 ] && has "$T/m$n" "dsm_notice: ok P=$n avg" &&
        [ "$(grep -c "stats 'mean' (bsp, averaged, block momentum)" "$T/m$n")" -eq $n ]
    ok $? "$n ranks, .momentum: a row moves by its writers' mean change plus (1 - 1/writers) of its last move"
done
run_job "$T/m2k" env LOOM_STATS=1 "$LOOMRUN" -n 4 "$B/tests/bin/dsm_notice" avg 2 momentum
[ $rc -eq 0 ] && has "$T/m2k" "dsm_notice: ok P=4 avg" &&
    [ "$(grep -c "stats 'mean' (bsp, capped at 2 ranks, block momentum)" "$T/m2k")" -eq 4 ]
ok $? "4 ranks, .average = 2 with .momentum: twice the mean of 4 writers plus half the last move; two writers' sum, no momentum"
run_job "$T/k3" env LOOM_STATS=1 "$LOOMRUN" -n 3 "$B/tests/bin/dsm_notice" avg 3
[ $rc -eq 0 ] && has "$T/k3" "dsm_notice: ok P=3 avg" && [ "$(grep -c "stats 'mean' (bsp)" "$T/k3")" -eq 3 ]
ok $? "3 ranks, .average = 3: every writer's change adds, on the summing path"

finish
