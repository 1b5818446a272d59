#!/bin/sh
# serial.t — serializable loops (tests/bin/for_serial.c): over random
# access patterns, on 1-4 ranks x 1-2 threads, with both plans (block
# rotation, conflict-free groups), both range modes (global, local) and
# both ways to learn access sets (deps callback, reconnaissance), every
# iteration runs exactly once and the result equals a serial order the
# test finds and replays.  Half the runs have LOOM_CHECK=serial on, which
# must pass on every plan the planner makes; a deliberately broken plan,
# and a deps callback that names the wrong row, must be caught with both
# iterations and the row named.
. "$(dirname "$0")/../lib.sh"
plan 38
i=0
for n in 1 2 3 4; do
    for t in 1 2; do
        for m in "rotation local deps" "rotation global recon" "groups local recon" "groups global deps"; do
            i=$((i + 1))
            chk=none; [ $((i % 2)) -eq 0 ] && chk=serial
            LOOM_CHECK=$chk OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/for_serial" $m
            [ $rc -eq 0 ] && has "$T/o" "ok - every iteration ran exactly once" &&
                has "$T/o" "ok - the result equals the serial order found"
            ok $? "$m, $n rank(s) x $t thread(s), LOOM_CHECK=$chk"
        done
    done
done
broken() { # NAME RANKS THREADS ARGS... : the checker must stop the job
    name=$1 n=$2 t=$3; shift 3
    LOOM_CHECK=serial OMP_NUM_THREADS=$t run_job "$T/b" "$LOOMRUN" -n $n "$B/tests/bin/for_serial" "$@"
    [ $rc -eq 72 ] && has "$T/b" "check: serializability violated: iterations [0-9]+ .*and [0-9]+ .*both touch row [0-9]+ of '[ABC]'"
    ok $? "checker catches $name ($n rank(s) x $t thread(s), exit $rc)"
    [ $rc -eq 72 ] || sed 's/^/# /' "$T/b"
}
broken "a misplaced iteration in a rotation plan" 1 2 rotation global deps break
broken "a misplaced iteration in a groups plan" 1 2 groups global recon break
broken "a rotation plan broken across ranks" 2 1 rotation local deps break
broken "a groups plan broken on 2 ranks" 2 2 groups local deps break
broken "a deps callback naming the wrong row" 1 2 rotation global deps lie
broken "a wrong row across ranks" 2 1 rotation global deps lie
finish
