#!/bin/sh
# join_errors.t — a rank's error branches in lib/join.c after the HELLO:
# the table does not come in time (a rank that never joins), or the
# process on the port closes after reading the JOIN.  Each must end the
# rank with one message and a plain exit status, never a crash (the HELLO
# buffer was freed twice: "free(): double free detected", exit 134).
# Under `make check SANITIZE=1` ASan watches these same branches.
. "$(dirname "$0")/../lib.sh"
plan 2
key=0123456789abcdef0123456789abcdef

LOOM_JOIN_TIMEOUT=2 run_job "$T/o1" "$LOOMRUN" -n 2 sh -c \
    '[ $LOOM_RANK = 1 ] && exec sleep 20; exec '"$B/tests/bin/coll_check"
[ $rc -ne 0 ] && [ $rc -lt 128 ] && has "$T/o1" "not every rank joined within 2 s" &&
    ! grep -qiE "double free|signal|AddressSanitizer" "$T/o1"
ok $? "a rank whose table does not come within LOOM_JOIN_TIMEOUT exits with one message (rc $rc)"

rm -f "$T/port"
LOOM_JOB_KEY=$key timeout 60 "$B/tests/bin/rv_squat" close "$T/port" 2 >"$T/sq" 2>&1 &
sq=$!
i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
LOOM_RANK=0 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/port") LOOM_JOB_KEY=$key \
    run_job "$T/o2" "$B/tests/bin/coll_check"
kill $sq 2>/dev/null; wait $sq 2>/dev/null
[ $rc -ne 0 ] && [ $rc -lt 128 ] && has "$T/o2" "rendezvous closed" &&
    ! grep -qiE "double free|AddressSanitizer" "$T/o2"
ok $? "a process that greets, reads the JOIN and closes: the rank exits with a message (rc $rc)"
finish
