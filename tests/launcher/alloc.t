#!/bin/sh
# alloc.t — loomrun inside a batch allocation, with the allocation's
# variables set by hand (so it runs without a batch system; slurm.t runs a
# real sbatch): without -n it fills a Slurm allocation's tasks and a PBS
# or LSF one's slots and says what it took; -n within the slots is obeyed;
# more ranks than slots, task counts that disagree and a malformed node
# list each stop it with one message before any rank starts; -H wins.
. "$(dirname "$0")/../lib.sh"
plan 7
H=$(hostname)
prog() { echo 'echo "rank $LOOM_RANK of $LOOM_NRANKS"'; }
slurm() { env SLURM_JOB_ID=7 SLURM_JOB_NODELIST="$H" SLURM_TASKS_PER_NODE=3 SLURM_NTASKS=3 "$@"; }

slurm timeout 60 "$LOOMRUN" sh -c "$(prog)" >"$T/s" 2>&1
[ $? -eq 0 ] && has "$T/s" "^loomrun: 3 ranks on $H from the Slurm allocation$" &&
    has "$T/s" "^\[2\] rank 2 of 3$" && [ "$(grep -c 'of 3$' "$T/s")" = 3 ]
ok $? "in a Slurm allocation of 3 tasks loomrun without -n runs 3 ranks and says so"

slurm timeout 60 "$LOOMRUN" -n 2 sh -c "$(prog)" >"$T/s2" 2>&1
[ $? -eq 0 ] && has "$T/s2" "^loomrun: 2 ranks on $H from the Slurm allocation$" &&
    [ "$(grep -c 'of 2$' "$T/s2")" = 2 ]
ok $? "-n 2 in it runs 2"

slurm timeout 60 "$LOOMRUN" -n 4 sh -c "$(prog)" >"$T/s4" 2>&1
[ $? -ne 0 ] && has "$T/s4" "^loomrun: the Slurm allocation has 3 task slots for 4 ranks: lower -n" &&
    [ "$(wc -l <"$T/s4")" = 1 ]
ok $? "-n 4 in a 3-task allocation: one message, no rank started"

env SLURM_JOB_ID=7 SLURM_JOB_NODELIST="$H" SLURM_TASKS_PER_NODE="2(x2)" SLURM_NTASKS=4 \
    timeout 60 "$LOOMRUN" true >"$T/mis" 2>&1
[ $? -ne 0 ] && has "$T/mis" "SLURM_TASKS_PER_NODE: '2\(x2\)' gives 2 counts for 1 host" &&
    [ "$(wc -l <"$T/mis")" = 1 ]
ok $? "a task list that does not match the node list: one message naming it"

env SLURM_JOB_ID=7 SLURM_JOB_NODELIST="$H[" timeout 60 "$LOOMRUN" true >"$T/bad" 2>&1
[ $? -ne 0 ] && has "$T/bad" "^loomrun: SLURM_JOB_NODELIST='$H\[': " && [ "$(wc -l <"$T/bad")" = 1 ]
ok $? "a malformed SLURM_JOB_NODELIST: one message naming it"

printf '%s\n%s\n' "$H" "$H" >"$T/nodes"
env PBS_NODEFILE="$T/nodes" timeout 60 "$LOOMRUN" sh -c "$(prog)" >"$T/pbs" 2>&1
[ $? -eq 0 ] && has "$T/pbs" "^loomrun: 2 ranks on $H from the PBS allocation$" &&
    [ "$(grep -c 'of 2$' "$T/pbs")" = 2 ]
ok $? "a PBS allocation (PBS_NODEFILE, a line a slot): 2 ranks"

printf 'localhost slots=1\n' >"$T/hosts"
env LSB_MCPU_HOSTS="$H 4" timeout 60 "$LOOMRUN" -H "$T/hosts" sh -c "$(prog)" >"$T/lsf" 2>&1
[ $? -eq 0 ] && ! grep -q "allocation" "$T/lsf" && has "$T/lsf" "^rank 0 of 1$"
ok $? "-H wins over an LSF allocation"
finish
