#!/bin/sh
# faults.t — a failing rank ends the job quickly, names the rank, and
# leaves no process behind: kill -9, SIGSTOP (heartbeat timeout),
# loom_abort, Ctrl-C on loomrun, and loomrun itself killed.
. "$(dirname "$0")/../lib.sh"
plan 5
SPIN=$B/tests/bin/spin

# no_orphans TAG: no process of this test's spin runs any more
no_orphans() {
    sleep 0.5
    if pgrep -f "$T/pid" >/dev/null; then diag "orphans:"; pgrep -af "$T/pid" | sed 's/^/# /'; return 1; fi
    return 0
}
# wait_pids N: until N pid files exist (ranks started), at most 20 s
wait_pids() {
    i=0
    while [ "$(ls "$T"/pid.* 2>/dev/null | wc -l)" -lt "$1" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
}

rm -f "$T"/pid.*
timeout -k 5 60 "$LOOMRUN" -n 3 "$SPIN" 60 "$T/pid" >"$T/o1" 2>&1 &
lr=$!
wait_pids 3
kill -9 "$(cat "$T/pid.1")"
t0=$(date +%s)
wait $lr; rc=$?
dt=$(( $(date +%s) - t0 ))
[ $rc -ne 0 ] && [ $dt -le 10 ] && has "$T/o1" "rank 1 .*killed by signal 9" && no_orphans
ok $? "kill -9 of rank 1: job ends in ${dt}s (<=10) with rank 1 named, exit $rc"

rm -f "$T"/pid.*
LOOM_TIMEOUT=2 timeout -k 5 60 "$LOOMRUN" -n 3 "$SPIN" 60 "$T/pid" >"$T/o2" 2>&1 &
lr=$!
wait_pids 3
kill -STOP "$(cat "$T/pid.2")"
t0=$(date +%s)
wait $lr; rc=$?
dt=$(( $(date +%s) - t0 ))
[ $rc -ne 0 ] && [ $dt -le 10 ] && has "$T/o2" "rank 2 .*no heartbeat" && no_orphans
ok $? "SIGSTOP of rank 2: heartbeat timeout ends the job in ${dt}s with rank 2 named"

run_job "$T/o3" "$LOOMRUN" -n 3 "$B/tests/bin/abort_at" 1 5
[ $rc -eq 5 ] && has "$T/o3" "rank 1: abort: rank 1 gives up on purpose" && no_orphans
ok $? "loom_abort(5) in rank 1 ends the job with exit 5 and its message"

rm -f "$T"/pid.*
timeout -k 5 60 "$LOOMRUN" -n 2 "$SPIN" 60 "$T/pid" >"$T/o4" 2>&1 &
lr=$!
wait_pids 2
kill -INT $lr
wait $lr; rc=$?
[ $rc -eq 130 ] && has "$T/o4" "interrupted" && no_orphans
ok $? "Ctrl-C on loomrun stops every rank (exit $rc)"

rm -f "$T"/pid.*
timeout -k 5 60 "$LOOMRUN" -n 2 "$SPIN" 60 "$T/pid" >"$T/o5" 2>&1 &
lr=$!
wait_pids 2
# (no loomrun found under timeout, or one that was not killed, fails: the
# ranks would end by themselves after 60 s and leave no orphan either)
lrun=$(pgrep -P $lr -f loomrun)
if [ -n "$lrun" ]; then kill -9 "$lrun"; else kill $lr; fi
t0=$(date +%s)
wait $lr 2>/dev/null; rc=$?
dt=$(( $(date +%s) - t0 ))
[ -n "$lrun" ] || diag "no loomrun process found under timeout (pid $lr)"
[ -n "$lrun" ] && [ $rc -eq 137 ] && [ $dt -le 10 ] && no_orphans
ok $? "ranks do not outlive a killed loomrun (pid ${lrun:-none}, timeout's exit $rc, ${dt}s)"
finish
