#!/bin/sh
# after_loop.t — code between loops reads current rows (tests/bin/after_loop.c,
# docs/openmp.md "Code between loops"): after data-parallel loops under
# every sync mode (hybrid, bsp, ssp), schedule and round length, and
# after a serializable loop on rows no rank had read, a plain
# load, loom_at, loom_at_r and loom_at_base outside the loop read every
# rank's adds on every rank and thread; after rank 0's puts and a
# barrier, so do loom_at, loom_at_r and loom_at_base alone.  On 1, 2 and 3
# ranks x 1 and 2 threads, and under ssp arrays with staleness 2.
# Mutations caught: the loop's end not refreshing the arrays it reached
# (sched/stage.c loom_sched_stage_settle; 32 stale reads a rank), loom_at
# giving a dropped row's address as it is (access.c stale()), a
# serializable loop not refreshing what it wrote (for.c; 32 a rank), and
# loom_at_base not refreshing first (dsm/row.c loom_dsm_row_refresh).
. "$(dirname "$0")/../lib.sh"
plan 6
for nt in "1 1" "2 1" "2 2" "3 1"; do
    set -- $nt
    OMP_NUM_THREADS=$(threads $2) run_job "$T/o" "$LOOMRUN" -n $1 "$B/tests/bin/after_loop"
    [ $rc -eq 0 ] && has "$T/o" "after_loop: ok"
    ok $? "current reads after every loop and between loops on $1 rank(s) x $2 thread(s)"
done
OMP_NUM_THREADS=1 LOOM_COHERENCE=ssp LOOM_STALENESS=2 run_job "$T/s" "$LOOMRUN" -n 3 "$B/tests/bin/after_loop"
[ $rc -eq 0 ] && has "$T/s" "after_loop: ok"
ok $? "current reads with ssp arrays (staleness 2) on 3 ranks"
OMP_NUM_THREADS=1 LOOM_COHERENCE=writethrough run_job "$T/w" "$LOOMRUN" -n 2 "$B/tests/bin/after_loop"
[ $rc -eq 0 ] && has "$T/w" "after_loop: ok"
ok $? "current reads with writethrough arrays on 2 ranks"
finish
