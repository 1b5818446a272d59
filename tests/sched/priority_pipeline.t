#!/bin/sh
# priority_pipeline.t — the priority schedule's pipelining
# (tests/bin/prio_pipeline.c) at depths 1-3 on 1-2 ranks x 1-2 threads:
# an update never misses more results than its window's own, misses none
# on one rank with one thread, does miss a whole round's when rounds are
# in flight together, and no two conflicting coordinates are ever in
# flight together; at depth 1 a round short of its 4 coordinates has
# looked at all 8 candidates; partial results are summed exactly over ranks.
. "$(dirname "$0")/../lib.sh"
plan 12
for n in 1 2; do
    for t in 1 2; do
        for d in 1 2 3; do
            OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/prio_pipeline" $d
            [ $rc -eq 0 ] && has "$T/o" "ok - depth $d on $n rank" && ! grep -q "not ok" "$T/o"
            ok $? "depth $d on $n rank(s) x $t thread(s)"
        done
    done
done
finish
