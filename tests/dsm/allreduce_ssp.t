#!/bin/sh
# allreduce_ssp.t — the Sharded-SSP allreduce under random delays and a
# straggler: own contributions always in the result, no result older than
# the slack (slack 0: exactly an ordinary allreduce), and after the final
# flush the exact sum of every contribution; 1-4 ranks, shared memory and
# TCP, small and large vectors; pushes that reach a rank before its first
# call (its progress agent already running) wait for it instead of being
# dropped (which hung the job).  With one slow rank (20 ms per call) the
# slack is observed, not just bounded: a fast rank's results lag exactly
# `slack` calls behind at their worst, it never waits in its first `slack`
# calls, and it does wait beyond them (LOOM_STATS counts the calls that
# waited): a plain allreduce (lag 0, every call waits) fails this.
# The same bounds and exact totals for Hypercube-SSP
# (loom_allreduce_ssp_hypercube, 1, 2 and 4 ranks), and for both with the
# integers passed as floats (sums below 2^24, so exact too).  Ranks that
# pass slack 0 and slack > 0 to the same call stop with one message (a
# slack-0 call is a synchronous allreduce: it would wait forever).
. "$(dirname "$0")/../lib.sh"
plan 21
for cfg in 4:0:1000 4:2:1000 4:8:1000 3:1:100000 2:3:7 1:2:10; do
    n=${cfg%%:*} rest=${cfg#*:} s=${rest%%:*} cnt=${rest#*:}
    run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/ssp_allreduce" 60 $s $cnt
    [ $rc -eq 0 ] && has "$T/o" "ssp_allreduce: P=$n calls=60 slack=$s count=[0-9]+ violations=0"
    ok $? "$n rank(s), slack $s, $cnt elements: bounds hold and the final flush is exact"
done
UCX_TLS=tcp,self run_job "$T/t" "$LOOMRUN" -n 3 "$B/tests/bin/ssp_allreduce" 40 2 1000
[ $rc -eq 0 ] && has "$T/t" "violations=0"
ok $? "the same over TCP"
run_job "$T/l" "$LOOMRUN" -n 3 "$B/tests/bin/ssp_allreduce" 20 1 1000 late
[ $rc -eq 0 ] && has "$T/l" "violations=0"
ok $? "a rank whose first call comes late gets the pushes that arrived before it"
K=20
for s in 0 1 3 25; do
    LOOM_STATS=1 run_job "$T/g" "$LOOMRUN" -n 3 "$B/tests/bin/ssp_allreduce" $K $s 100 lag
    lag=$((s < K ? s : K))
    # calls K + 1 (the final flush, slack 0, waits for the slow rank);
    # waited: never in the first `slack` calls, at least once after them
    waited=$(sed -n "s/^\[0\] loom: rank 0: stats allreduce_ssp #0 (100 elements): $((K + 1)) calls, \([0-9]*\) waited.*/\1/p" "$T/g")
    [ $rc -eq 0 ] && has "$T/g" "violations=0" && has "$T/g" "largest lag behind rank 2: $lag calls" &&
        [ -n "$waited" ] && [ "$waited" -ge $((s < K ? 2 : 1)) ] && [ "$waited" -le $((K + 1 - s > 1 ? K + 1 - s : 1)) ]
    ok $? "slack $s, one rank 20 ms behind: a fast rank lags by $lag at worst, waited $waited of $((K + 1)) calls (1..$((K + 1 - s > 1 ? K + 1 - s : 1)))"
done
for cfg in 4:0:1000 4:2:1000 2:5:7 1:2:10; do
    n=${cfg%%:*} rest=${cfg#*:} s=${rest%%:*} cnt=${rest#*:}
    SSP_VARIANT=hypercube run_job "$T/h" "$LOOMRUN" -n $n "$B/tests/bin/ssp_allreduce" 60 $s $cnt
    [ $rc -eq 0 ] && has "$T/h" "ssp_allreduce: P=$n calls=60 slack=$s count=[0-9]+ violations=0"
    ok $? "hypercube: $n rank(s), slack $s, $cnt elements: bounds hold and the final flush is exact"
done
SSP_VARIANT=hypercube run_job "$T/hl" "$LOOMRUN" -n 4 "$B/tests/bin/ssp_allreduce" 20 3 100 lag
[ $rc -eq 0 ] && has "$T/hl" "violations=0" && has "$T/hl" "largest lag behind rank 3: 3 calls"
ok $? "hypercube, slack 3, one rank 20 ms behind: a fast rank lags by exactly 3 at worst"
for v in sharded hypercube; do
    SSP_FLOAT=1 SSP_VARIANT=$v run_job "$T/f" "$LOOMRUN" -n 4 "$B/tests/bin/ssp_allreduce" 60 2 1000
    [ $rc -eq 0 ] && has "$T/f" "ssp_allreduce: P=4 calls=60 slack=2 count=1000 violations=0"
    ok $? "$v, floats holding integers: bounds hold and the final flush is exact"
done
for n in 2 4; do
    run_job "$T/m" "$LOOMRUN" -n $n "$B/tests/bin/ssp_allreduce" 20 2 100 mixed
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && has "$T/m" "every rank must pass slack 0 at the same calls"
    ok $? "$n ranks, rank 0 alone passes slack 0 at call 5: stopped with a message (rc $rc)"
done
finish
