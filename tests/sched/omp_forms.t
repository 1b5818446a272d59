#!/bin/sh
# omp_forms.t — OpenMP's forms on Loom (tests/bin/omp_forms.c,
# docs/openmp.md): LOOM_FOR's clauses passed through to the pragma
# (private, firstprivate, schedule), LOOM_FOR_REDUCE's SUM (a starting
# value counted once), MIN and MAX across threads and ranks, loom_block's
# blocks covering the range once, and LOOM_SINGLE running its block once
# per job with its writes (rows through loom_at, pages by plain stores)
# read by plain loads on every rank; each against the serial loop's exact
# answer, on 1-3 ranks x 1-2 threads.  Mutations caught: SUM counting the
# starting value on every rank (50065031, not 50065026), LOOM_SINGLE's
# loom_at not marking rows put (64 wrong reads), its end not refreshing
# the rows rank 0 changed (64).
. "$(dirname "$0")/../lib.sh"
plan 5
for nt in "1 1" "1 2" "2 1" "2 2" "3 1"; do
    set -- $nt
    OMP_NUM_THREADS=$(threads $2) run_job "$T/o" "$LOOMRUN" -n $1 "$B/tests/bin/omp_forms"
    [ $rc -eq 0 ] && has "$T/o" "omp_forms: ok on $1 rank"
    ok $? "clauses, reductions, loom_block, LOOM_SINGLE: exact on $1 rank(s) x $2 thread(s)"
done
finish
