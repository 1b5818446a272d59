#!/bin/sh
# slurm.t — Loom under a real Slurm: munged, slurmctld and slurmd for one
# node, named localhost (this host, loopback only, whatever its name
# resolves to), started from a generated slurm.conf in
# the test's scratch folder and stopped by pid at the end.  With no LOOM_*
# variable: `srun -n 2` (no PMI: the rendezvous and key derived from the
# step; with --resv-ports on the step's reserved port), `srun --mpi=pmi2
# -n 2` and `srun --mpi=pmix -n 2` (through the step's PMI-2 or PMIx
# key-value store)
# and an `sbatch -n 2` script (`loomrun` filling the allocation, and srun
# inside it) train loom-mf on MovieLens u1 to the test RMSE of `loomrun -n
# 2`; a rank killed under srun ends the step with one message and leaves
# no process; a missing step variable, disagreeing task counts, the batch
# script itself and a rank that cannot reach rank 0 each stop with one
# message.  Needs root (the daemons run as root); installs slurm-wlm,
# munge, libpmi2 and libpmix if missing (tools/deps.sh slurm).
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root to start munged, slurmctld and slurmd (CI runs it as root)"
top=$(cd "$(dirname "$0")/../.." && pwd)
"$top/tools/deps.sh" --optional slurm >"$T/deps.log" 2>&1
for c in munged munge slurmctld slurmd srun sbatch sinfo scancel; do
    command -v $c >/dev/null 2>&1 || skip_all "$c is not installed (tools/deps.sh slurm)"
done
need_movielens
plan 14

S=$T/slurm
H=localhost # the node's name: loopback, whatever this host is called
mkdir -p "$S/munge" "$S/state" "$S/spool" "$S/log" "$T/home"
chmod 700 "$S/munge" "$T/home"
pids=""
stop_cluster() {
    [ -n "$pids" ] || return 0
    SLURM_CONF=$S/slurm.conf timeout 10 scancel --quiet --user=root >/dev/null 2>&1
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null
    # SIGKILL whatever has not ended in 10 s; wait reaps each (a daemon
    # that ended but is not reaped would still answer kill -0).  The timer
    # holds no output open and ends within 0.1 s of the last daemon.
    # shellcheck disable=SC2086
    (i=0; while [ $i -lt 100 ] && [ ! -e "$S/stopped" ]; do sleep 0.1; i=$((i + 1)); done
     [ -e "$S/stopped" ] || kill -9 $pids) >/dev/null 2>&1 &
    timer=$!
    for p in $pids; do wait "$p" 2>/dev/null; done
    touch "$S/stopped"
    wait "$timer" 2>/dev/null
    stopped_pids=$pids
    pids=""
}
trap 'stop_cluster; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP

# Ports for the daemons below 10000 (the rendezvous' derived ports lie in
# 10000-32767), different for concurrent runs.
cport=$((7000 + ($$ % 1400) * 2))
dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$S/munge/munge.key"
munged -F -f --key-file="$S/munge/munge.key" --socket="$S/munge/sock" \
    --pid-file="$S/munge/pid" --log-file="$S/munge/log" --seed-file="$S/munge/seed" \
    >"$S/log/munged.out" 2>&1 &
pids="$pids $!"
cat >"$S/slurm.conf" <<EOF
ClusterName=loomtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$((cport + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
MailProg=/bin/true
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MpiParams=ports=$((cport + 2))-$((cport + 11))
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$H NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=loom Nodes=$H Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$S/slurm.conf"
i=0
until munge -S "$S/munge/sock" -n >/dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
slurmctld -D -i >"$S/log/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -N "$H" >"$S/log/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until [ "$(timeout 5 sinfo -h -N -o %T 2>/dev/null)" = idle ] || [ $i -ge 60 ]; do
    sleep 0.5
    i=$((i + 1))
done
[ "$(timeout 5 sinfo -h -N -o %T 2>/dev/null)" = idle ]
up=$?
[ $up -eq 0 ] || { diag "the cluster did not come up:"; tail -n 20 "$S"/log/*; } >&2
ok $up "munged, slurmctld and slurmd run; node $H is idle"

# Every job is bounded: a Slurm that hangs fails its test, never the suite.
sjob() { _o=$1; shift; HOME=$T/home timeout -k 5 90 "$@" >"$_o" 2>&1; rc=$?; }
mf="$B/bin/loom-mf --train $D/u1.base --test $D/u1.test"
rmse() { sed -n 's/.*final test_rmse=\([0-9.]*\).*/\1/p' "$1" | head -1; }
env -u SLURM_CONF -u SLURM_JOB_ID timeout -k 5 60 "$LOOMRUN" -n 2 $mf >"$T/ref" 2>&1
want=$(rmse "$T/ref")
[ -n "$want" ] || { diag "loomrun -n 2 gave no RMSE:"; cat "$T/ref"; } >&2

# srun with MpiDefault=none: no PMI, so the fallback (HOME's secret).
sjob "$T/srun" srun -n 2 $mf
got=$(rmse "$T/srun")
[ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] ||
    { { diag "srun: rc $rc, RMSE '$got' (loomrun: '$want'):"; tail -n 5 "$T/srun"; } >&2; false; }
ok $? "srun -n 2 loom-mf (no PMI, no LOOM_* variable): test RMSE $got, as loomrun -n 2's"
[ "$(stat -c %a "$T/home/.loom/srun-secret" 2>/dev/null)" = 600 ] &&
    [ "$(stat -c %a "$T/home/.loom")" = 700 ]
ok $? "the key's secret was created 0600 in a 0700 \$HOME/.loom"

# PMI-2, with a HOME the fallback could not use: it must go through PMI.
HOME=/nonexistent/home timeout -k 5 90 srun -n 2 --mpi=pmi2 $mf >"$T/pmi" 2>&1
rc=$?
got=$(rmse "$T/pmi")
[ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] ||
    { { diag "srun --mpi=pmi2: rc $rc, RMSE '$got':"; tail -n 5 "$T/pmi"; } >&2; false; }
ok $? "srun --mpi=pmi2 -n 2 loom-mf (through PMI-2's key-value store): the same RMSE"

# PMIx, likewise (Slurm's mpi/pmix plugin loads libpmix when slurmd starts).
if srun --mpi=list 2>&1 | grep -q pmix && [ -e /usr/lib/x86_64-linux-gnu/libpmix.so.2 ] ||
    ldconfig -p | grep -q 'libpmix\.so\.2'; then
    # libpmix keeps two strings after PMIx_Finalize: not Loom's to free
    HOME=/nonexistent/home LSAN_OPTIONS=suppressions=$top/tests/sanitize/lsan.supp \
        timeout -k 5 90 srun -n 2 --mpi=pmix $mf >"$T/pmix" 2>&1
    rc=$?
    got=$(rmse "$T/pmix")
    [ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] ||
        { { diag "srun --mpi=pmix: rc $rc, RMSE '$got':"; tail -n 5 "$T/pmix"; } >&2; false; }
    ok $? "srun --mpi=pmix -n 2 loom-mf (through PMIx's key-value store): the same RMSE"
else
    skip 1 "Slurm's PMIx plugin or libpmix2 is missing"
fi

# srun --resv-ports: Slurm reserves ports for the step (MpiParams above)
# and rank 0 listens on the first (rank 1 looks for it with ss before it
# starts).
cat >"$T/resv.sh" <<EOF
#!/bin/sh
if [ "\$SLURM_PROCID" = 1 ]; then
    p=\${SLURM_STEP_RESV_PORTS%%-*}
    i=0
    until ss -Hltn "sport = :\$p" | grep -q . || [ \$i -ge 200 ]; do sleep 0.1; i=\$((i + 1)); done
    [ -n "\$p" ] && ss -Hltn "sport = :\$p" | grep -q . && echo "rank 0 listens on reserved port \$p" >&2
fi
exec $mf
EOF
chmod +x "$T/resv.sh"
sjob "$T/resv" srun -n 2 --resv-ports=1 "$T/resv.sh"
got=$(rmse "$T/resv")
[ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] &&
    has "$T/resv" "^rank 0 listens on reserved port [0-9]+$"
ok $? "srun --resv-ports -n 2 (no PMI): rank 0 serves on the step's first reserved port; the same RMSE"

cat >"$T/job.sh" <<EOF
#!/bin/sh
echo "== loomrun"
$LOOMRUN $mf
echo "== srun"
srun $mf
echo "== bare"
$B/tests/bin/coll_check
echo "== end \$?"
EOF
sjob "$T/sbatch" sbatch -W -n 2 -o "$T/job.out" "$T/job.sh"
[ $rc -eq 0 ] || { diag "sbatch: rc $rc:"; cat "$T/sbatch"; } >&2
sed -n '/== loomrun/,/== srun/p' "$T/job.out" >"$T/job.loomrun"
sed -n '/== srun/,/== bare/p' "$T/job.out" >"$T/job.srun"
got=$(rmse "$T/job.loomrun")
[ -n "$want" ] && [ "$got" = "$want" ] &&
    has "$T/job.loomrun" "^loomrun: 2 ranks on $H from the Slurm allocation$"
ok $? "sbatch -n 2: loomrun without -n fills the allocation (2 ranks, said once) and gets the same RMSE"
got=$(rmse "$T/job.srun")
[ -n "$want" ] && [ "$got" = "$want" ] || { { diag "srun in sbatch:"; cat "$T/job.srun"; } >&2; false; }
ok $? "sbatch -n 2: srun inside the script gets the same RMSE"
sed -n '/== bare/,$p' "$T/job.out" >"$T/job.bare"
{ has "$T/job.bare" "^loom: started by Slurm's batch script, not by srun" &&
    [ "$(grep -c "^loom:" "$T/job.bare")" = 1 ] && ! grep -q "== end 0" "$T/job.bare"; }
ok $? "a Loom program run by the batch script itself (not srun) stops with one message"

# Rank 1 SIGKILLs itself at its 5th clock: one message from rank 0's
# rendezvous, a non-zero step, no process left.
sjob "$T/kill" env LOOM_TEST_KILL=1:5 srun -n 2 $mf --epochs 100000 --log "$T/kill.csv"
n=$(grep -c '^loom:' "$T/kill")
left=$(pgrep -f "$T/kill.csv" | wc -l)
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$n" = 1 ] && [ "$left" = 0 ] &&
    has "$T/kill" "loom: rank 0: job failed: rank 1 \(host [^)]+\) closed its connection"
ok $? "a rank killed under srun: exit $rc, $n Loom message, $left processes left"

sjob "$T/nonodes" srun -n 2 env -u SLURM_STEP_NODELIST "$B/tests/bin/coll_check"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c '^loom:' "$T/nonodes")" = 1 ] &&
    has "$T/nonodes" "without SLURM_STEP_NODELIST to derive them from"
ok $? "srun without PMI and without SLURM_STEP_NODELIST: one message naming it"

sjob "$T/counts" srun -n 2 --mpi=pmi2 env SLURM_NTASKS=3 "$B/tests/bin/coll_check"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c '^loom:' "$T/counts")" = 1 ] &&
    has "$T/counts" "the task counts disagree: PMI-2 says task 0 of 2, SLURM_PROCID and SLURM_NTASKS say 0 of 3"
ok $? "PMI-2 and SLURM_NTASKS disagreeing: one message naming both"

# Rank 0 listens on 127.0.0.3 only; rank 1 looks for it at the first node
# (this host, 127.0.0.1) and cannot reach it: both give up within
# LOOM_JOIN_TIMEOUT, rank 1 naming the address.
cat >"$T/split.sh" <<EOF
#!/bin/sh
[ "\$SLURM_PROCID" = 0 ] && export LOOM_RENDEZVOUS_HOST=127.0.0.3
SLURM_STEP_NUM_NODES=2 LOOM_JOIN_TIMEOUT=3 exec "$B/tests/bin/coll_check"
EOF
chmod +x "$T/split.sh"
sjob "$T/unreach" srun -n 2 "$T/split.sh"
[ $rc -ne 0 ] && [ $rc -ne 124 ] &&
    has "$T/unreach" "^loom: (rank 1: )?cannot reach the rendezvous at $H:[0-9]+: Connection refused" &&
    [ "$(grep -c "^loom:" "$T/unreach")" -le 2 ]
ok $? "a rank that cannot reach rank 0 stops within LOOM_JOIN_TIMEOUT, naming the address"

stop_cluster
alive=""
for p in $stopped_pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
[ -z "$alive" ]
ok $? "every daemon the test started is stopped${alive:+ (alive:$alive)}"
finish
