#!/bin/sh
# valgrind.t — 2-rank jobs with every rank under valgrind's memcheck:
# the collectives, the row path of the DSM (additions from two threads per
# rank, diffs, acknowledgements, the progress agent) and the SSP allreduce
# (pushes parked for a late rank).  Each must give its exact result with
# no memcheck error and no definitely lost block in either rank
# (--error-exitcode makes a rank with one fail the job, and its log is
# shown).  Page units are not run: memcheck does not see the mprotect a
# SIGSEGV handler makes and faults on the same access forever (ASan covers
# the page path).  UCX needs no suppression here (tests/sanitize/
# valgrind.supp says what to add if one appears).  Skipped without
# valgrind (tools/deps.sh valgrind) and in the sanitizer builds.
. "$(dirname "$0")/../lib.sh"
[ -z "${LOOMTEST_SANITIZE:-}" ] || skip_all "valgrind cannot run sanitizer builds"
command -v valgrind >/dev/null 2>&1 || skip_all "valgrind is not installed (tools/deps.sh valgrind)"
plan 3
supp=$(cd "$(dirname "$0")" && pwd)/valgrind.supp
# memcheck runs a rank 20-50x slower and serializes its threads, so under load
# a heartbeat can be a minute late: a dead-rank verdict waits 150 s here
export LOOM_TIMEOUT=150 LOOM_JOIN_TIMEOUT=150 OMP_NUM_THREADS=2
# memcheck NAME PROGRAM ARGS...: run PROGRAM on 2 ranks under memcheck (fair
# scheduling: the ranks' polling loops otherwise hog valgrind's one lock)
memcheck() {
    name=$1
    shift
    rm -f "$T"/vg.*
    timeout -k 5 300 "$LOOMRUN" -n 2 valgrind -q --fair-sched=yes --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite --errors-for-leak-kinds=definite \
        --suppressions="$supp" --log-file="$T/vg.%p" "$@" >"$T/$name" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { diag "exit status $rc:"; tail -20 "$T/$name" | sed 's/^/#   /'; }
    errors=$(cat "$T"/vg.* 2>/dev/null | grep -v "WARNING: valgrind ignores shmget" | grep -c "^==")
    [ "$errors" -eq 0 ] || { diag "memcheck found:"; cat "$T"/vg.* | sed 's/^/#   /' | head -60; }
}
memcheck coll "$B/tests/bin/coll_check"
[ $rc -eq 0 ] && [ "$errors" -eq 0 ] && has "$T/coll" "coll_check: ok P=2"
ok $? "collectives: exact and memcheck-clean on 2 ranks"
memcheck add "$B/tests/bin/dsm_add" rows 1000 100 2
[ $rc -eq 0 ] && [ "$errors" -eq 0 ] && has "$T/add" "dsm_add: ok rows P=2 T=2 total=1000"
ok $? "row additions from 2 threads per rank: none lost, memcheck-clean"
memcheck ssp "$B/tests/bin/ssp_allreduce" 10 1 100 late
[ $rc -eq 0 ] && [ "$errors" -eq 0 ] && has "$T/ssp" "violations=0"
ok $? "SSP allreduce with a late rank: bounds hold, memcheck-clean"
finish
