#!/bin/sh
# stall.t — a stall of the whole job (every process stopped at once, as when
# the machine freezes in a checkpoint's fsync) is not a failure: after it,
# heartbeats resume and the job completes, though the stall outlasts
# LOOM_TIMEOUT.  A stall of one rank alone is still one (faults.t: a
# SIGSTOPped rank ends the job).  Checked under loomrun and with rank 0
# serving the rendezvous itself (Slurm's variables).
. "$(dirname "$0")/../lib.sh"
plan 3
export LOOM_TIMEOUT=2
# stall_all PIDS...: stop them together for 5 s (2.5 timeouts), continue them
stall_all() { kill -STOP "$@"; sleep 5; kill -CONT "$@"; }

timeout -k 5 60 "$LOOMRUN" -n 2 "$B/tests/bin/spin" 9 "$T/pid" >"$T/job" 2>&1 &
lr=$!
i=0; while { [ ! -s "$T/pid.0" ] || [ ! -s "$T/pid.1" ]; } && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
launcher=$(ps -o ppid= -p "$(cat "$T/pid.0")" | tr -d ' ')
stall_all "$launcher" "$(cat "$T/pid.0")" "$(cat "$T/pid.1")"
wait $lr; rc=$?
[ $rc -eq 0 ] && has "$T/job" "spin: [0-9]+ rounds" && ! grep -q "heartbeat" "$T/job"
ok $? "loomrun and both ranks stopped for 5 s (LOOM_TIMEOUT=2), then continued: the job completes"

timeout -k 5 60 "$LOOMRUN" -n 2 "$B/tests/bin/spin" 9 "$T/qid" >"$T/one" 2>&1 &
lr=$!
i=0; while [ ! -s "$T/qid.1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -STOP "$(cat "$T/qid.1")"
wait $lr; rc=$?
kill -CONT "$(cat "$T/qid.1")" 2>/dev/null
[ $rc -ne 0 ] && has "$T/one" "rank 1 .*sent no heartbeat"
ok $? "one rank stopped alone is still a failure, named"

port=$((20000 + ($$ + 7) % 20000))
key=0123456789abcdef0123456789abcdef
for r in 0 1; do
    SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r LOOM_RENDEZVOUS=127.0.0.1:$port \
        LOOM_JOB_KEY=$key timeout 60 "$B/tests/bin/spin" 9 "$T/sid" >"$T/s.$r" 2>&1 &
    eval "p$r=\$!"
done
i=0; while { [ ! -s "$T/sid.0" ] || [ ! -s "$T/sid.1" ]; } && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
stall_all "$(cat "$T/sid.0")" "$(cat "$T/sid.1")"
wait $p0; r0=$?
wait $p1; r1=$?
[ $r0 -eq 0 ] && [ $r1 -eq 0 ] && has "$T/s.0" "spin: [0-9]+ rounds"
ok $? "under Slurm's variables (rank 0 serves the rendezvous): the stalled job completes"
finish
