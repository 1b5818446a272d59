#!/bin/sh
# serial.t — serializable loops (tests/bin/for_serial.c): over random
# access patterns, on 1-4 ranks x 1-2 threads, with both plans (block
# rotation, conflict-free groups), both range modes (global, local) and
# both ways to learn access sets (deps callback, reconnaissance), every
# iteration runs exactly once and the result equals a serial order the
# test finds and replays.  Half the runs have LOOM_CHECK=serial on, which
# must pass on every plan the planner makes; a deliberately broken plan,
# and a deps callback that names the wrong row, must be caught with both
# iterations and the row named.  The same again as loom_for_records (a
# block body over records the loop lays out in plan order), on 1-3 ranks,
# with the checker catching broken plans through the block body (the
# rotation runs of loom_for_records take the k-partite fast path, so the
# checker verifies its plans against the real access sets); the fast path
# hands the block body exactly the blocks the plan from the access sets
# does (on one worker too, which plans a repeated site and must hand the
# body the plan-order layout, not the records in file order); and LOOM_FOR, the inlined data-parallel loop, runs every iteration
# once.  Record loops whose rows are named by record fields (.fields):
# every iteration once in a serial order, on both plans (two fields of one
# array make a groups plan); the same blocks as from deps and from the
# access sets; a record whose field names the wrong row (the body touches
# the right one) caught by the checker; a row out of range and a field of
# the wrong width refused with a message.
. "$(dirname "$0")/../lib.sh"
plan 89
i=0
for n in 1 2 3 4; do
    for t in 1 2; do
        for m in "rotation local deps" "rotation global recon" "groups local recon" "groups global deps"; do
            i=$((i + 1))
            chk=none; [ $((i % 2)) -eq 0 ] && chk=serial
            LOOM_STATS=1 LOOM_CHECK=$chk OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n \
                "$B/tests/bin/for_serial" $m
            # the plan that ran (LOOM_STATS): the mode's, except that one
            # worker learning by reconnaissance without the checker runs the
            # index order, a serial order itself, and plans nothing
            if [ $n$t = 11 ] && [ $chk = none ] && [ "${m##* }" = recon ]; then
                how="no plan: one worker, the index order"; ! grep -q "planned" "$T/o"
            else
                how="${m%% *} plan"; has "$T/o" "planned .*${m%% *} plan"
            fi && [ $rc -eq 0 ] && has "$T/o" "ok - every iteration ran exactly once" &&
                has "$T/o" "ok - the result equals the serial order found"
            ok $? "$m ($how), $n rank(s) x $t thread(s), LOOM_CHECK=$chk"
        done
    done
done
for nt in "1 2" "2 2" "3 1"; do
    set -- $nt
    for m in "rotation local deps" "rotation global recon" "groups local recon" "groups global deps"; do
        [ $1 = 3 ] && case "$m" in groups*) continue;; esac
        i=$((i + 1))
        chk=none; [ $((i % 2)) -eq 0 ] && chk=serial
        LOOM_CHECK=$chk OMP_NUM_THREADS=$2 run_job "$T/o" "$LOOMRUN" -n $1 "$B/tests/bin/for_serial" $m records
        [ $rc -eq 0 ] && has "$T/o" "ok - every iteration ran exactly once" &&
            has "$T/o" "ok - the result equals the serial order found"
        ok $? "records: $m, $1 rank(s) x $2 thread(s), LOOM_CHECK=$chk"
    done
done
for nt in "1 2" "2 2" "3 1"; do
    set -- $nt
    for m in "rotation local fields" "rotation global fields" "groups local fields" "groups global fields"; do
        i=$((i + 1))
        chk=none; [ $((i % 2)) -eq 0 ] && chk=serial
        LOOM_CHECK=$chk OMP_NUM_THREADS=$2 run_job "$T/o" "$LOOMRUN" -n $1 "$B/tests/bin/for_serial" $m
        [ $rc -eq 0 ] && has "$T/o" "ok - every iteration ran exactly once" &&
            has "$T/o" "ok - the result equals the serial order found"
        ok $? "records by .fields: $m, $1 rank(s) x $2 thread(s), LOOM_CHECK=$chk"
    done
done
# .in_place: the records laid out in their own array (not under the
# checker, whose runs copy them): still every iteration once, serially,
# and the array afterwards holds the same records, moved
for nt in "1 1" "1 2" "2 2" "3 1"; do
    set -- $nt
    for m in "rotation local" "rotation global"; do
        OMP_NUM_THREADS=$2 run_job "$T/o" "$LOOMRUN" -n $1 "$B/tests/bin/for_serial" $m fields inplace
        [ $rc -eq 0 ] && has "$T/o" "ok - every iteration ran exactly once" &&
            has "$T/o" "ok - the result equals the serial order found" &&
            [ "$(grep -cE "(^|\] )ok - rank [0-9]+: the records laid out in place are the same records" "$T/o")" -eq $1 ]
        ok $? "records by .fields, laid out in place: $m, $1 rank(s) x $2 thread(s)"
    done
done
for nt in "1 2" "2 2" "3 2"; do
    set -- $nt
    for loc in "" local; do
        OMP_NUM_THREADS=$2 run_job "$T/s" "$LOOMRUN" -n $1 "$B/tests/bin/for_serial" same $loc
        [ $rc -eq 0 ] && has "$T/s" "ok - the blocks planned from .fields equal those from deps and from the access sets"
        ok $? ".fields = deps fast path = general plan, ${loc:-global}, $1 rank(s) x $2 thread(s)"
    done
done
OMP_NUM_THREADS=1 run_job "$T/s" "$LOOMRUN" -n 1 "$B/tests/bin/for_serial" same
[ $rc -eq 0 ] && has "$T/s" "ok - the blocks planned from .fields equal those from deps and from the access sets" &&
    has "$T/s" "ok - one worker runs the plan-order layout"
ok $? "one worker (1 rank x 1 thread) runs a repeated site in plan order, the same blocks from .fields, deps and access sets"
for nt in "1 2" "2 1" "3 2"; do
    set -- $nt
    for loc in "" local; do
        OMP_NUM_THREADS=$2 run_job "$T/i" "$LOOMRUN" -n $1 "$B/tests/bin/for_serial" inline $loc
        [ $rc -eq 0 ] && has "$T/i" "ok - LOOM_FOR ran each of [0-9]+ iterations exactly once"
        ok $? "LOOM_FOR ${loc:-global}, $1 rank(s) x $2 thread(s)"
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
broken "a misplaced record in a rotation plan" 1 2 rotation local deps records break
broken "a record misplaced across ranks" 2 1 rotation local deps records break
broken "a misplaced record in a groups plan" 1 2 groups global recon records break
broken "a record field naming the wrong row" 1 2 rotation global fields lie
broken "a record field naming the wrong row across ranks" 2 1 rotation global fields lie
broken "a misplaced record planned from .fields" 1 2 rotation local fields break
OMP_NUM_THREADS=2 run_job "$T/r" "$LOOMRUN" -n 2 "$B/tests/bin/for_serial" rotation local fields badrow
[ $rc -ne 0 ] && has "$T/r" "loom_for_records: record 5: .fields\[0\] names row 64 of 'A', which has 64 rows"
ok $? "a record field naming a row out of range stops the job (exit $rc)"
OMP_NUM_THREADS=2 run_job "$T/r" "$LOOMRUN" -n 1 "$B/tests/bin/for_serial" rotation global fields badfield
[ $rc -eq 4 ] && has "$T/r" "loom_for_records: .fields\[1\] \(offset 12, size 3\) is not an integer of 4 or 8 bytes inside the 16-byte record"
ok $? "a field 3 bytes wide is refused (exit $rc)"
finish
