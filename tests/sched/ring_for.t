#!/bin/sh
# ring_for.t — loom_for_ring (sched/ring_for.c), the ring rotation with a
# body per block of rows that loom-lda runs on: on 1-3 ranks x 1-3
# threads, with rows that do not divide evenly and fewer rows than
# workers, every worker meets every floor-cut block exactly once per call,
# no two threads of a rank hold a row at once, `last` marks each worker's
# last block of a sub-epoch, and every row ends with calls x workers
# visits (the ring carried every update); LOOM_CHECK=dsm catches any
# access outside the owned partition.  A body that skips one sub-step
# must be caught (the check can fail).
. "$(dirname "$0")/../lib.sh"
plan 7
for rt in "1 1 10" "1 3 10" "2 1 11" "2 2 23" "3 2 7" "3 1 2"; do
    set -- $rt
    th=$(threads $2)
    OMP_NUM_THREADS=$th LOOM_CHECK=dsm run_job "$T/o" "$LOOMRUN" -n $1 "$B/tests/bin/ring_for_check" $3 2
    [ $rc -eq 0 ] && has "$T/o" "ring_for_check: ok ROWS=$3 P=$(($1 * th)) calls=2"
    ok $? "$1 rank(s) x $th thread(s), $3 rows: every block once per worker, one holder per row, no visit lost"
    [ $rc -ne 0 ] && diag "exit $rc:" && tail -5 "$T/o" | sed 's/^/#   /'
done
OMP_NUM_THREADS=$(threads 2) run_job "$T/s" "$LOOMRUN" -n 2 "$B/tests/bin/ring_for_check" 12 1 skip
[ $rc -ne 0 ] && has "$T/s" "a worker met a block other than once"
ok $? "a body that skips a sub-step is caught (exit $rc)"
finish
