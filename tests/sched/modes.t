#!/bin/sh
# modes.t — data-parallel loops and the priority schedule
# (tests/bin/for_modes.c) on 1-4 ranks x 1-2 threads: static, dynamic and
# guided run every iteration exactly once (global and local ranges); bsp,
# ssp and hybrid sync points keep exact counts and never let a read be
# staler than the mode allows; the priority schedule never runs two
# conflicting coordinates in one round, sums partial results over ranks,
# draws the same coordinates on every rank and favours large deltas; a
# repeated serializable loop is planned once.
. "$(dirname "$0")/../lib.sh"
plan 48
for n in 1 2 3 4; do
    for t in 1 2; do
        job() { # NAME ARGS...: one ok per line the job must print
            name=$1; shift
            OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/for_modes" "$@"
            [ $rc -eq 0 ] && has "$T/o" "ok - $name" && ! grep -q "not ok" "$T/o"
            ok $? "$* on $n rank(s) x $t thread(s)"
        }
        job "guided \(local ranges\), chunk 7: every iteration once" once
        job "bsp \(staleness 0\): exact counts" sync bsp
        job "hybrid \(staleness 0\): exact counts" sync hybrid
        LOOM_COHERENCE=ssp LOOM_STALENESS=2 job "ssp \(staleness 2\): exact counts" sync ssp 2
        job "plan cache: a repeated loop is planned once" plan
        job "priority: 300 rounds, no conflicting pair" priority
    done
done
finish
