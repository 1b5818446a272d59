#!/bin/sh
# threads.t — how many OpenMP threads a rank runs (lib/cores.c).  With
# OMP_NUM_THREADS unset, ranks sharing a host split its CPUs (before, each
# took them all: 2 ranks of 2 threads on 2 cores, and loom-lasso ran 2 000
# times slower); a rank alone on its host (by host name) keeps every CPU;
# OMP_NUM_THREADS, when set, is obeyed, and a host whose ranks then run
# more threads than it has CPUs gets one warning.  The share over masks
# that overlap in part is tests/unit/test_cores.c's.
. "$(dirname "$0")/../lib.sh"
plan 5
cpus=$(nproc)
half=$((cpus / 2)); [ $half -ge 1 ] || half=1
# team OUT RANK THREADS: rank RANK's line in OUT says THREADS, and its
# parallel region ran that many
team() { has "$1" "threads_check: rank $2 of [0-9]+ threads $3 team $3\$"; }

run_job "$T/one" "$LOOMRUN" -n 1 "$B/tests/bin/threads_check"
[ $rc -eq 0 ] && team "$T/one" 0 $cpus
ok $? "one rank: all $cpus CPUs"

run_job "$T/two" env -u OMP_NUM_THREADS "$LOOMRUN" -n 2 "$B/tests/bin/threads_check"
[ $rc -eq 0 ] && team "$T/two" 0 $half && team "$T/two" 1 $half && ! grep -q warning "$T/two"
ok $? "two ranks on one host, OMP_NUM_THREADS unset: $half thread(s) each, no warning"

OMP_NUM_THREADS=$cpus run_job "$T/set" "$LOOMRUN" -n 2 "$B/tests/bin/threads_check"
[ $rc -eq 0 ] && team "$T/set" 0 $cpus && team "$T/set" 1 $cpus
ok $? "OMP_NUM_THREADS=$cpus is obeyed on both ranks"
[ "$(grep -c "warning: 2 ranks on host .* run $((2 * cpus)) OpenMP threads on $cpus CPUs" "$T/set")" -eq 1 ]
ok $? "... and the oversubscribed host is warned about once"

# Two host names: rank 2 in a UTS namespace of its own (root; Slurm's
# variables started by hand, as tests/rank/foreign.t does) keeps every
# CPU, while ranks 0 and 1 split theirs.
if unshare -u true 2>/dev/null; then
    key=0123456789abcdef0123456789abcdef port=$((20000 + $$ % 20000))
    pids=
    for r in 0 1 2; do
        pre=
        [ $r -eq 2 ] && pre="unshare -u sh -c 'hostname loom-other-host && exec \"\$0\"'"
        env -u OMP_NUM_THREADS SLURM_PROCID=$r SLURM_NTASKS=3 SLURM_LOCALID=$r \
            LOOM_RENDEZVOUS=127.0.0.1:$port LOOM_JOB_KEY=$key \
            timeout 60 sh -c "$pre \"\$0\"" "$B/tests/bin/threads_check" >"$T/h.$r" 2>&1 &
        pids="$pids $!"
    done
    st=0
    for p in $pids; do wait $p || st=1; done
    [ $st -eq 0 ] && team "$T/h.0" 0 $half && team "$T/h.1" 1 $half && team "$T/h.2" 2 $cpus
    ok $? "ranks 0 and 1 on one host split it ($half each); rank 2 alone on another keeps $cpus"
else
    skip 1 "unshare -u needs root (a second host name)"
fi
finish
