#!/bin/sh
# squat.t — the rendezvous must prove the job key to the ranks, not only
# the ranks to it.  tests/bin/rv_squat plays a process bound to the job's
# rendezvous port: signing the ranks' table with the job key (the control:
# ranks accept it and compute), with a key of its own (it does not know
# the job's), and replaying a recorded exchange of the same job to new
# ranks.  The ranks must refuse the last two before trusting any address,
# with one clear message and a non-zero exit.
. "$(dirname "$0")/../lib.sh"
plan 4
key=0123456789abcdef0123456789abcdef
export LOOM_TIMEOUT=60 # rv_squat sends no heartbeats: a slow (ASan, loaded) rank must not time out
squat() { # MODE: start rv_squat, wait for its port
    rm -f "$T/port"
    LOOM_JOB_KEY=$key timeout 60 "$B/tests/bin/rv_squat" "$1" "$T/port" 2 >"$T/sq.$1" 2>&1 &
    sq=$!
    i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
ranks() { # TAG [stagger]: two ranks at the squatter's port, rank 0 first
    LOOM_RANK=0 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/port") LOOM_JOB_KEY=$key \
        timeout 30 "$B/tests/bin/coll_check" >"$T/$1.0" 2>&1 &
    p0=$!
    [ -n "${2:-}" ] && sleep 1 # the replay greets by arrival: keep rank order
    LOOM_RANK=1 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/port") LOOM_JOB_KEY=$key \
        timeout 30 "$B/tests/bin/coll_check" >"$T/$1.1" 2>&1
    rc1=$?
    wait $p0; rc0=$?
}
refused() { # TAG: both ranks failed with the message
    [ $rc0 -ne 0 ] && [ $rc1 -ne 0 ] &&
        has "$T/$1.0" "did not prove it holds the job key; its table is refused" &&
        has "$T/$1.1" "did not prove it holds the job key; its table is refused"
}

squat honest
ranks honest
wait $sq
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && has "$T/honest.0" "coll_check: ok P=2"
ok $? "a rendezvous holding the key: the ranks accept its table and compute"

squat nokey
ranks nokey
wait $sq
refused nokey
ok $? "a squatter without the job key: both ranks refuse its table"

squat replay
ranks rec stagger
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ]
ok $? "replay: the recorded exchange was a good one"
ranks replay stagger
wait $sq
refused replay
ok $? "a recorded exchange replayed to new ranks: both refuse it"
finish
