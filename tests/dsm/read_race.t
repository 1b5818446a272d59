#!/bin/sh
# read_race.t — LOOM_CHECK=dsm names a read racing a write (dsm/diff.c,
# REC_READ; tests/bin/read_reset.c): ranks read rows of sums while rank 0
# resets them with loom_row_put, no barrier between.  The checker stops
# the job naming the reading rank, the row and the writing rank; with a
# barrier between the reads and the reset, or both under one lock, it
# stays silent and every read is exact; without the checker the racy job
# runs (the check costs nothing unless asked for).  Mutation caught: the
# home not checking a put against the epoch's readers (the racy job ends 0).
. "$(dirname "$0")/../lib.sh"
plan 5
P="$B/tests/bin/read_reset"
for n in 2 3; do
    OMP_NUM_THREADS=1 LOOM_CHECK=dsm run_job "$T/r$n" "$LOOMRUN" -n $n "$P" race
    [ $rc -ne 0 ] && has "$T/r$n" "check: rank [1-9] read row [0-9]+ of 'sums' while rank 0 wrote it" &&
        ! grep -q "read_reset: race ok" "$T/r$n"
    ok $? "LOOM_CHECK=dsm on $n ranks: the read racing rank 0's reset is named, the job stops"
done
for m in ordered locked; do
    OMP_NUM_THREADS=1 LOOM_CHECK=dsm run_job "$T/$m" "$LOOMRUN" -n 3 "$P" $m
    [ $rc -eq 0 ] && has "$T/$m" "read_reset: $m ok" && ! grep -q "check:" "$T/$m"
    ok $? "LOOM_CHECK=dsm on 3 ranks, reads and reset $m: no report, every read exact"
done
OMP_NUM_THREADS=1 run_job "$T/plain" "$LOOMRUN" -n 2 "$P" race
[ $rc -eq 0 ] && has "$T/plain" "read_reset: race ok"
ok $? "without LOOM_CHECK the racy program runs"
finish
