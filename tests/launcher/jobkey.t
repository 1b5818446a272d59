#!/bin/sh
# jobkey.t — the per-job key guards the rendezvous: a process with the
# wrong key, or none, cannot join a running job; the refusal is logged and
# the job goes on unharmed.
. "$(dirname "$0")/../lib.sh"
plan 3
timeout -k 5 60 "$LOOMRUN" -n 2 sh -c \
    'echo "$LOOM_RENDEZVOUS" > '"$T"'/rv.$LOOM_RANK; exec '"$B/tests/bin/spin"' 4' >"$T/job" 2>&1 &
lr=$!
i=0; while [ ! -s "$T/rv.0" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
LOOM_RANK=1 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/rv.0") LOOM_JOB_KEY=00000000000000000000000000000000 \
    timeout 20 "$B/tests/bin/coll_check" >"$T/rogue" 2>&1
rrc=$?
LOOM_RANK=1 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$(cat "$T/rv.0") \
    timeout 20 "$B/tests/bin/coll_check" >"$T/nokey" 2>&1
nrc=$?
wait $lr; rc=$?
[ $rrc -ne 0 ] && has "$T/rogue" "refused this rank: wrong job key"
ok $? "a process with the wrong key is refused"
[ $nrc -ne 0 ] && has "$T/nokey" "LOOM_JOB_KEY is not set"
ok $? "a process without a key cannot join"
[ $rc -eq 0 ] && has "$T/job" "rendezvous: refused a connection from 127.0.0.1:[0-9]+: wrong job key" &&
    has "$T/job" "spin: [0-9]+ rounds"
ok $? "the refusal is logged by loomrun and the job completes"
finish
