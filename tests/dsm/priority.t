#!/bin/sh
# priority.t — Bösen-style managed communication: over a 10 s run the
# background sender never exceeds its bandwidth budget (bytes/s at most
# 10% above it; the token bucket's promise) and does spend it (at least
# 30%: a loaded 2-core machine starves the sender, so spending all of it
# is a benchmark figure, docs/bench-dsm.md, not an assertion); the
# rows with the largest pending deltas reach their home first (absolute and
# relative priority, which here send in opposite orders; fp32 and fp16
# wire); after the clock every delta has arrived exactly once (with fp16,
# rounded as fp16 rounds it, which fp32 does not); and no update is lost
# under the policy.
. "$(dirname "$0")/../lib.sh"
plan 7
LOOM_BANDWIDTH=8 run_job "$T/rate" "$LOOMRUN" -n 2 "$B/tests/bin/prio_check" rate 10
line=$(grep -o 'prio_check: rate.*' "$T/rate")
lo=$(echo "$line" | sed -n 's/.*ratio \([0-9.]*\)\.\.\([0-9.]*\).*/\1/p')
hi=$(echo "$line" | sed -n 's/.*ratio \([0-9.]*\)\.\.\([0-9.]*\).*/\2/p')
[ $rc -eq 0 ] && [ -n "$lo" ] && awk -v a="$lo" -v b="$hi" 'BEGIN { exit !(a >= 0.3 && b <= 1.1) }'
ok $? "bytes/s at most 10% above LOOM_BANDWIDTH=8 Mbit/s, and spent ($line)"
for cfg in absolute:fp32:2 relative:fp32:2 absolute:fp16:3; do
    p=${cfg%%:*} rest=${cfg#*:} w=${rest%%:*} n=${rest#*:}
    # 0.125 Mbit/s: the 100 rows take 0.8-1.6 s to trickle out, so the
    # 20 ms looks see the order even when a loaded machine (ASan, other
    # jobs) stalls rank 0 for a few hundred ms (at 0.5 Mbit/s one did)
    # (half that in a sanitizer build: under the whole ASan suite the 3-rank
    # case missed the order once in each of the last three sessions, and
    # passed alone every time)
    bw=0.125; [ -n "${LOOMTEST_SANITIZE:-}" ] && bw=0.0625
    LOOM_BANDWIDTH=$bw LOOM_PRIORITY=$p LOOM_PRIORITY_QUEUE=4 LOOM_WIRE=$w \
        run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/prio_check" order
    # the two priorities send in opposite orders here (prio_check.c)
    first=99; [ $p = relative ] && first=0
    [ $rc -eq 0 ] && has "$T/o" "first look with arrivals: [0-9]+ of 100 rows, row $first first" &&
        has "$T/o" "[1-9][0-9]* look\(s\) saw some rows but not all" &&
        has "$T/o" "prio_check: ok order P=$n"
    st=$?
    [ $st -eq 0 ] || sed 's/^/#   /' "$T/o"
    ok $st "$p priority, $w wire, $n ranks: row $first first, the $p order kept, all there after the clock ($w's rounding)"
done
# The sender works on add-merged rows only: pages, and rows written whole
# (ssp_bound's loom_row_put), go at the clock as under ssp.
for path in rows pages; do
    LOOM_COHERENCE=priority LOOM_BANDWIDTH=50 OMP_NUM_THREADS=2 run_job "$T/a" "$LOOMRUN" -n 3 \
        "$B/tests/bin/dsm_add" $path 1000000 5000 4
    [ $rc -eq 0 ] && has "$T/a" "dsm_add: ok $path P=3"
    st=$?
    what="with the sender busy (add-merged rows)"
    [ $path = pages ] && what="(pages: no early sending, they go at the clock)"
    ok $st "no lost update under priority $what"
done
LOOM_COHERENCE=priority LOOM_BANDWIDTH=50 LOOM_STALENESS=2 run_job "$T/s" "$LOOMRUN" -n 4 \
    "$B/tests/bin/ssp_bound" 30
[ $rc -eq 0 ] && has "$T/s" "violations=0"
ok $? "priority keeps the ssp guarantee (rows written whole: they go at the clock)"
finish
