#!/bin/sh
# abort_once.t — a rank that calls loom_abort is the only one to explain
# the job's end: its message appears once, loomrun adds no generic "exited
# with status N" after it, and the job exits with the rank's code.  The
# rank's ABORT frame and its exit reach loomrun in either order (a race),
# so the job runs 20 times; before the fix (loomrun reading the exit status
# before the frame) about 1 run in 8 printed the second message here.
. "$(dirname "$0")/../lib.sh"
plan 2
bad=0 code=0
for i in $(seq 1 20); do
    run_job "$T/o" "$LOOMRUN" -n 2 "$B/tests/bin/abort_at" 1 3
    [ $rc -eq 3 ] || code=$((code + 1))
    if [ "$(grep -c 'abort: rank 1 gives up on purpose' "$T/o")" -ne 1 ] ||
        grep -q 'exited with status' "$T/o"; then
        bad=$((bad + 1)); sed 's/^/#   /' "$T/o"
    fi
done
[ $bad -eq 0 ]
ok $? "20 aborted jobs: each printed the rank's reason once and nothing else ($bad did not)"
[ $code -eq 0 ]
ok $? "20 aborted jobs: each exited with the rank's code 3 ($code did not)"
finish
