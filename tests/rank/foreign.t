#!/bin/sh
# foreign.t — a Loom program started by another launcher takes its rank
# from that launcher's variables and meets at LOOM_RENDEZVOUS (rank 0
# serves it): Slurm's and MPICH's (Hydra's PMI_RANK, PMI_SIZE,
# MPI_LOCALRANKID) variables set by hand on plain processes, and Open
# MPI's mpirun when it is installed.
. "$(dirname "$0")/../lib.sh"
plan 6
key=0123456789abcdef0123456789abcdef
port=$((20000 + $$ % 20000))
pids=
for r in 0 1 2; do
    SLURM_PROCID=$r SLURM_NTASKS=3 SLURM_LOCALID=$r LOOM_RENDEZVOUS=127.0.0.1:$port \
        LOOM_JOB_KEY=$key timeout 60 "$B/tests/bin/coll_check" >"$T/slurm.$r" 2>&1 &
    pids="$pids $!"
done
st=0
for p in $pids; do wait $p || st=1; done
[ $st -eq 0 ] && has "$T/slurm.0" "coll_check: ok P=3"
ok $? "3 ranks from Slurm variables meet and compute exactly"

pids=
for r in 0 1 2; do
    PMI_RANK=$r PMI_SIZE=3 MPI_LOCALRANKID=$r LOOM_RENDEZVOUS=127.0.0.1:$((port + 2)) \
        LOOM_JOB_KEY=$key LOOM_DISPLAY_ENV=1 timeout 60 "$B/tests/bin/coll_check" >"$T/pmi.$r" 2>&1 &
    pids="$pids $!"
done
st=0
for p in $pids; do wait $p || st=1; done
[ $st -eq 0 ] || { diag "a PMI rank failed:"; cat "$T"/pmi.* | sed "s/^/#   /"; }
[ $st -eq 0 ] && has "$T/pmi.0" "coll_check: ok P=3" && has "$T/pmi.0" "LOOM_NRANKS = '3'"
ok $? "3 ranks from MPICH's PMI variables meet and compute exactly (local rank from MPI_LOCALRANKID)"

SLURM_PROCID=1 SLURM_NTASKS=2 timeout 20 "$B/tests/bin/coll_check" >"$T/norv" 2>&1
[ $? -ne 0 ] && has "$T/norv" "without LOOM_RENDEZVOUS and LOOM_JOB_KEY, without a PMI service \(neither PMIX_NAMESPACE nor PMI_FD is set: srun --mpi=pmix or --mpi=pmi2\) and without SLURM_JOB_ID, SLURM_STEP_ID, SLURM_STEP_NODELIST to derive them from"
ok $? "a Slurm-launched rank without LOOM_RENDEZVOUS, PMI-2 or the step's variables stops with a message naming them"
# Rank 0 of 2 alone: it serves the rendezvous, joins it and gives up after
# LOOM_JOIN_TIMEOUT with one message and exit 1 (it used to free the
# server's greeting twice there and abort).
SLURM_PROCID=0 SLURM_NTASKS=2 LOOM_RENDEZVOUS=127.0.0.1:$((port + 4)) LOOM_JOB_KEY=$key \
    LOOM_JOIN_TIMEOUT=2 timeout 20 "$B/tests/bin/coll_check" >"$T/alone" 2>&1
st=$?
[ $st -eq 1 ] && has "$T/alone" "not every rank joined within 2 s \(LOOM_JOIN_TIMEOUT\)" &&
    [ "$(wc -l <"$T/alone")" = 1 ] ||
    { { diag "rank 0 alone exited $st:"; sed 's/^/#   /' "$T/alone"; } >&2; false; }
ok $? "rank 0 whose peer never comes stops after LOOM_JOIN_TIMEOUT with one message (exit $st)"
PMI_RANK=1 PMI_SIZE=2 timeout 20 "$B/tests/bin/coll_check" >"$T/norv" 2>&1
[ $? -ne 0 ] && has "$T/norv" "LOOM_RENDEZVOUS is not set"
ok $? "an MPICH-launched rank without LOOM_RENDEZVOUS stops with a clear message"

# Under the project's CI (ThreadSanitizer build) this case failed once
# with nothing shown, and never in 240 runs here; a failed launch is shown
# on stderr and tried once more, on another port, so that a second failure
# fails the test and a first one stays in the log.
mpi() {
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 90 \
        mpirun --oversubscribe -n 2 -x LOOM_RENDEZVOUS=127.0.0.1:$1 \
        -x LOOM_JOB_KEY=$key "$B/tests/bin/coll_check" >"$T/mpi" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q "coll_check: ok P=2" "$T/mpi" && return 0
    { diag "mpirun on port $1 exited $rc:"; sed 's/^/#   /' "$T/mpi"; } >&2
    return 1
}
if command -v mpirun >/dev/null 2>&1; then
    mpi $((port + 1)) || mpi $((port + 3))
    ok $? "2 ranks under Open MPI's mpirun compute exactly"
else
    echo "ok 6 # SKIP mpirun not installed"
fi
finish
