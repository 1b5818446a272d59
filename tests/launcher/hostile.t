#!/bin/sh
# hostile.t — a job starts while another local user crowds its rendezvous
# (docs/security.md, "Local users"): tests/launcher/rvhog.pl finds the
# port loomrun listens on and keeps 2N + 16 + 4 idle connections open to
# it, reopening each one the server closes; the ranks start only once it
# holds them all.  The server makes room by refusing ("busy") the oldest
# connection that has not joined, and drops any that has not joined
# within 5 s; a rank refused busy retries until LOOM_JOIN_TIMEOUT, which
# a stand-in rendezvous (rv_squat busy: every first connection refused
# busy) checks alone.
. "$(dirname "$0")/../lib.sh"
plan 3
key=0123456789abcdef0123456789abcdef

for n in 2 3; do
    rm -f "$T/ready"
    LOOM_JOIN_TIMEOUT=20 timeout -k 5 60 "$LOOMRUN" -n $n sh -c \
        'while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1"' "$T/ready" \
        "$B/tests/bin/coll_check" >"$T/o$n" 2>&1 &
    job=$!
    timeout 60 perl "$(dirname "$0")/rvhog.pl" $job $((2 * n + 16 + 4)) "$T/ready" 2>"$T/h$n" &
    hog=$!
    wait $job; rc=$?
    kill $hog 2>/dev/null; wait $hog 2>/dev/null
    [ $rc -eq 0 ] && has "$T/o$n" "coll_check: ok P=$n" && [ -e "$T/ready" ] &&
        [ "$(grep -c 'refused a connection' "$T/o$n")" -le 20 ]
    ok $? "$n ranks start past $((2 * n + 20)) idle connections held open (rc $rc)"
done

rm -f "$T/port"
LOOM_JOB_KEY=$key timeout 60 "$B/tests/bin/rv_squat" busy "$T/port" 2 >"$T/sq" 2>&1 &
sq=$!
i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
LOOM_RANK=0 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/port") LOOM_JOB_KEY=$key LOOM_TIMEOUT=60 \
    timeout 30 "$B/tests/bin/coll_check" >"$T/b0" 2>&1 &
p0=$!
LOOM_RANK=1 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/port") LOOM_JOB_KEY=$key LOOM_TIMEOUT=60 \
    run_job "$T/b1" "$B/tests/bin/coll_check"
wait $p0; rc0=$?
wait $sq
[ $rc0 -eq 0 ] && [ $rc -eq 0 ] && has "$T/b0" "coll_check: ok P=2"
ok $? "ranks refused busy retry and join (rc $rc0 $rc)"
finish
