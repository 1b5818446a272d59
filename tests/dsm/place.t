#!/bin/sh
# place.t — IterStore's placement by accessor (dsm/rehome.c, decided by
# sched/prefetch.c after a repeated loop's first call) on
# tests/bin/dsm_place: every rank updates the next rank's block of rows,
# so block homes are wrong for the loop.  After the first call each
# row's home moves to the rank that touched it (a row two ranks touch
# equally stays), the rows' values stay exact, and the bytes a rank
# receives per call fall more than tenfold; the same with 3 ranks x 2
# threads and under ssp; under LOOM_CHECK=dsm (which keeps per-home
# state) nothing moves and the values are exact; a job checkpointed after
# the move, killed and restarted gets the moved homes back and ends exact.
. "$(dirname "$0")/../lib.sh"
plan 5
M="$B/tests/bin/dsm_place"
received() { sed -n "s/.*call $2 received \([0-9]*\) in.*/\1/p" "$1"; }
fell() { # FILE: call 3 received less than a tenth of call 1
    a=$(received "$1" 1) b=$(received "$1" 3)
    [ -n "$a" ] && [ -n "$b" ] && [ $((b * 10)) -lt "$a" ] || { diag "call 1: $a B, call 3: $b B"; return 1; }
}
OMP_NUM_THREADS=1 run_job "$T/p2" "$LOOMRUN" -n 2 "$M" 4 2000
[ $rc -eq 0 ] && has "$T/p2" "dsm_place: exact=1" && has "$T/p2" "dsm_place: rehomed 3998" && fell "$T/p2"
ok $? "2 ranks: 3998 rows moved to the rank that writes them, values exact, bytes per call fell tenfold"
OMP_NUM_THREADS=2 run_job "$T/p3" "$LOOMRUN" -n 3 "$M" 4 2000
[ $rc -eq 0 ] && has "$T/p3" "dsm_place: exact=1" && has "$T/p3" "dsm_place: rehomed 5997" && fell "$T/p3"
ok $? "3 ranks x 2 threads: 5997 rows moved, exact, bytes fell"
OMP_NUM_THREADS=1 LOOM_COHERENCE=ssp LOOM_STALENESS=1 run_job "$T/s" "$LOOMRUN" -n 2 "$M" 4 2000
[ $rc -eq 0 ] && has "$T/s" "dsm_place: exact=1" && has "$T/s" "dsm_place: rehomed 3998"
ok $? "ssp, staleness 1: rows moved, exact at the end"
OMP_NUM_THREADS=1 LOOM_CHECK=dsm run_job "$T/c" "$LOOMRUN" -n 2 "$M" 3 500
[ $rc -eq 0 ] && has "$T/c" "dsm_place: exact=1" && has "$T/c" "dsm_place: rehomed 0"
ok $? "LOOM_CHECK=dsm: homes stay (the writer log is per home), exact"
OMP_NUM_THREADS=1 LOOM_CHECKPOINT_DIR=$T/ck LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=1:3 \
    run_job "$T/k" "$LOOMRUN" -n 3 "$M" 5 2000
first=$rc
OMP_NUM_THREADS=1 LOOM_CHECKPOINT_DIR=$T/ck run_job "$T/r" "$LOOMRUN" --restart -n 3 "$M" 5 2000
[ $first -ne 0 ] && [ $rc -eq 0 ] && has "$T/r" "resuming from .*ckpt-000001" && has "$T/r" "dsm_place: exact=1" &&
    has "$T/r" "dsm_place: rehomed 0"
ok $? "checkpointed after the move, killed, restarted: the saved homes come back (nothing left to move), exact"
finish
