#!/bin/sh
# ring.t — the ring policy: at every sub-epoch each unit has exactly one
# owner; each rotation visits every (rank, partition) pair exactly once;
# the result equals the serial order the rotation implies (rows and pages,
# 1-4 ranks, uneven partitions, early forwarding); in check mode a
# non-owner's access stops the job, naming rank, unit and owner.
. "$(dirname "$0")/../lib.sh"
plan 10
for m in rows pages; do
    for n in 1 2 3 4; do
        LOOM_CHECK=dsm run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/ring_check" $m 3
        [ $rc -eq 0 ] && has "$T/o" "ring_check: ok $m P=$n rotations=3"
        st=$?
        what="one owner per unit, every pair once, serial order"
        [ $n -eq 1 ] && what="the local policy (one owner of everything): serial order"
        ok $st "$m on $n rank(s): $what"
    done
done
UCX_TLS=tcp,self run_job "$T/t" "$LOOMRUN" -n 3 "$B/tests/bin/ring_check" rows 2
[ $rc -eq 0 ] && has "$T/t" "ring_check: ok rows P=3"
ok $? "the same over TCP"
LOOM_CHECK=dsm run_job "$T/v" "$LOOMRUN" -n 3 "$B/tests/bin/ring_check" pages 2 violate
[ $rc -ne 0 ] && has "$T/v" "check: rank 0 touched unit [0-9]+ of 'model' in sub-epoch 0, but its partition 1 is owned by rank 1"
ok $? "check mode reports a non-owner's access (exit $rc)"
finish
