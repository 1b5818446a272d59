#!/bin/sh
# srun_env.t — the step-derived bootstrap of lib/slurm.c (srun without
# PMI and without LOOM_RENDEZVOUS or LOOM_JOB_KEY), on plain processes
# given srun's variables by hand, so that it runs without Slurm and
# without root (tests/launcher/slurm.t runs it under a real srun): 3
# ranks meet and compute exactly, the secret is created 0600 in a 0700
# $HOME/.loom and reused; a group-readable directory or secret, rank 0
# off the step's first node and a second rank 0 of the same job and step
# (its port taken) each stop with one message naming the cause.
. "$(dirname "$0")/../lib.sh"
plan 7
H=$(hostname)
job=$((100000 + $$))
mkdir -p "$T/home"
# srun's variables for rank $1 of $2 of step $3; the rest of the command after
srun_env() {
    r=$1 n=$2 s=$3
    shift 3
    env HOME="$T/home" SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_LOCALID=$r SLURM_JOB_ID=$job \
        SLURM_STEP_ID=$s SLURM_STEP_NODELIST="$H" SLURM_STEP_NUM_NODES=1 SLURMD_NODENAME="$H" \
        LOOM_JOIN_TIMEOUT=20 "$@"
}
pids=
for r in 0 1 2; do
    srun_env $r 3 0 timeout 60 "$B/tests/bin/coll_check" >"$T/ok.$r" 2>&1 &
    pids="$pids $!"
done
st=0
for p in $pids; do wait $p || st=1; done
[ $st -eq 0 ] && has "$T/ok.0" "coll_check: ok P=3" ||
    { { diag "a rank failed:"; cat "$T"/ok.* | sed 's/^/#   /'; } >&2; false; }
ok $? "3 ranks with srun's variables and no LOOM_* variable meet and compute exactly"
sec=$(cat "$T/home/.loom/srun-secret" 2>/dev/null)
[ "$(stat -c %a "$T/home/.loom")" = 700 ] && [ "$(stat -c %a "$T/home/.loom/srun-secret")" = 600 ] &&
    echo "$sec" | grep -qE '^[0-9a-f]{32}$'
ok $? "the secret is 32 hex digits, 0600 in a 0700 \$HOME/.loom"

pids=
for r in 0 1; do
    srun_env $r 2 1 timeout 60 "$B/tests/bin/coll_check" >"$T/again.$r" 2>&1 &
    pids="$pids $!"
done
st=0
for p in $pids; do wait $p || st=1; done
[ $st -eq 0 ] && [ "$(cat "$T/home/.loom/srun-secret")" = "$sec" ]
ok $? "the next step reuses the secret"

chmod 750 "$T/home/.loom"
srun_env 1 2 2 timeout 20 "$B/tests/bin/coll_check" >"$T/dir" 2>&1
[ $? -ne 0 ] && has "$T/dir" "/.loom must be a directory of this user's that no one else may read \(chmod 700 " &&
    [ "$(wc -l <"$T/dir")" = 1 ]
ok $? "a group-readable \$HOME/.loom is refused with one message"
chmod 700 "$T/home/.loom"
chmod 640 "$T/home/.loom/srun-secret"
srun_env 1 2 2 timeout 20 "$B/tests/bin/coll_check" >"$T/file" 2>&1
[ $? -ne 0 ] && has "$T/file" "srun-secret must be a file of this user's that no one else may read \(chmod 600\)" &&
    [ "$(wc -l <"$T/file")" = 1 ]
ok $? "a group-readable secret is refused with one message"
chmod 600 "$T/home/.loom/srun-secret"

srun_env 0 2 3 env SLURM_STEP_NODELIST="elsewhere,$H" SLURM_STEP_NUM_NODES=2 \
    timeout 20 "$B/tests/bin/coll_check" >"$T/first" 2>&1
[ $? -ne 0 ] && has "$T/first" "rank 0 runs on $H, not on the first node of the step \(elsewhere\)" &&
    [ "$(wc -l <"$T/first")" = 1 ]
ok $? "rank 0 off the step's first node stops with one message naming both"

# Two rank 0s of one job and step: the first holds the derived port while
# it waits; the second cannot listen and says how to reserve ports.
srun_env 0 2 4 env LOOM_JOIN_TIMEOUT=30 timeout 60 "$B/tests/bin/coll_check" >"$T/holder" 2>&1 &
holder=$!
i=0
until [ $i -ge 100 ] || ss -Hltn "sport = :$((10000 + (job * 8 + 4) % 22768))" | grep -q .; do
    sleep 0.1
    i=$((i + 1))
done
srun_env 0 2 4 timeout 20 "$B/tests/bin/coll_check" >"$T/taken" 2>&1
st=$?
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
[ $st -ne 0 ] && has "$T/taken" "rank 0 cannot open the rendezvous: cannot listen on 127.0.0.1:$((10000 + (job * 8 + 4) % 22768)): Address already in use \(the port is derived from the job and step ids; Slurm reserves ports per step with MpiParams=ports" &&
    [ "$(wc -l <"$T/taken")" = 1 ]
ok $? "a rank 0 whose derived port is taken stops with one message naming it"
finish
