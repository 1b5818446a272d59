#!/bin/sh
# visible.t — what a rank writes before a barrier (pages, row put, row add)
# or before an unlock (lock-protected counter) every rank sees after it,
# and its own adds before (after a miss or a prefetch of the row) and its
# own puts and adds across a lock's acquire;
# in check mode two ranks overwriting the same byte in one epoch are
# reported, naming both.
. "$(dirname "$0")/../lib.sh"
plan 6
for n in 1 2 3 4; do
    OMP_NUM_THREADS=2 run_job "$T/o$n" "$LOOMRUN" -n $n "$B/tests/bin/dsm_visible"
    [ $rc -eq 0 ] && has "$T/o$n" "dsm_visible: ok P=$n"
    ok $? "writes visible after barrier and unlock on $n rank(s)"
done
LOOM_CHECK=dsm run_job "$T/c" "$LOOMRUN" -n 3 "$B/tests/bin/dsm_visible" conflict
[ $rc -ne 0 ] && has "$T/c" "check: ranks [01] and [01] both wrote byte 100 of unit 0 of 'conflicted'"
ok $? "LOOM_CHECK=dsm reports the same-byte conflict (exit $rc)"
UCX_TLS=tcp,self run_job "$T/t" "$LOOMRUN" -n 3 "$B/tests/bin/dsm_visible"
[ $rc -eq 0 ] && has "$T/t" "dsm_visible: ok P=3"
ok $? "the same over TCP"
finish
