#!/bin/sh
# checkpoint.t — checkpoint/restart of every kind of allocation
# (tests/bin/ckpt_prog: bsp pages and rows, ssp and priority rows, ring rows and pages
# checkpointed mid-rotation, a local array): a job killed after some
# clocks and restarted with loomrun --restart ends with the same contents
# as an uninterrupted run, on 1, 2 and 3 ranks; a crash in the middle of a
# checkpoint (rank file half written, or every file written but LATEST not
# yet moved) leaves the previous checkpoint in use; old checkpoints are
# pruned; a restart with different allocations, a damaged file or no
# checkpoint is refused with one message; the explicit loom_checkpoint
# call; LOOM_RESTART=auto.  Another number of ranks (ckpt_prog --layout:
# bsp pages distributed block, cyclic, hash and explicitly, hash rows,
# ring rows and pages checkpointed mid-rotation, a local array with
# declared rows): 4 -> 2, 2 -> 3, 3 -> 1, 1 -> 3 and 4 -> 2 -> 3 end with
# exactly the uninterrupted contents; kept private state, a local array with no rows declared and a
# missing old rank's file are refused with one message.
. "$(dirname "$0")/../lib.sh"
plan 28
P=$B/tests/bin/ckpt_prog
export OMP_NUM_THREADS=1
# Every run syncs (the default): a stall of the whole machine in fsync is
# not taken for a dead rank (stall.t), so no test needs to turn it off.

sum() { sed -n 's/.*checksum \([0-9a-f]*\).*/\1/p' "$1"; }
resumed() { sed -n 's/.*resumed at clock \([0-9]*\).*/\1/p' "$1"; }
aborts() { grep -c 'abort:' "$1"; }

for n in 1 2 3; do
    run_job "$T/ref$n" "$LOOMRUN" -n $n "$P" 10
    eval "ref$n=\$(sum \"\$T/ref$n\")"
done
[ -n "$ref1" ] && [ -n "$ref2" ] && [ -n "$ref3" ]
ok $? "uninterrupted runs on 1, 2, 3 ranks: $ref1 $ref2 $ref3"

# Checkpoints every 2 clocks (fsync on): same result.  Incremental: the
# 'sparse' allocation changes one unit per clock, so checkpoints after the
# first write less than all of the data; with the default chain (8) no
# checkpoint is old enough to prune.
written() { # FILE CKPT RANK: "W T" data bytes written and saved
    sed -n "s/.*rank $3: stats checkpoint .*ckpt-$2: \([0-9]*\) of \([0-9]*\) data bytes.*/\1 \2/p" "$1"
}
less() { set -- $1; [ -n "$1" ] && [ "$1" -lt "$2" ]; }
LOOM_CHECKPOINT_DIR=$T/c LOOM_CHECKPOINT_EVERY=2 LOOM_STATS=1 \
    run_job "$T/c.out" "$LOOMRUN" -n 2 "$P" 10
[ $rc -eq 0 ] && [ "$(sum "$T/c.out")" = "$ref2" ] && [ "$(cat "$T/c/LATEST")" = ckpt-000005 ] &&
    [ "$(ls "$T/c" | tr '\n' ' ')" = "LATEST LOCK ckpt-000001 ckpt-000002 ckpt-000003 ckpt-000004 ckpt-000005 " ] &&
    [ -f "$T/c/ckpt-000005/rank-0.ckpt" ] && [ -f "$T/c/ckpt-000005/rank-1.ckpt" ] &&
    has "$T/c/ckpt-000005/INFO" "allocation 6 'ringp': 20480 bytes, 5 page units of 4096 B, ring" &&
    less "$(written "$T/c.out" 000005 0)" && less "$(written "$T/c.out" 000005 1)"
ok $? "checkpointing every 2 clocks leaves the result alone; incremental: ckpt-000005 wrote $(written "$T/c.out" 000005 0 | sed "s/ / of /") bytes (rank 0)"

# LOOM_CHECKPOINT_CHAIN=1: every checkpoint whole, the two newest kept.
# =2: a chunk is at most one checkpoint old; a kill after clock 9 leaves
# ckpt-000002..4; the restart from 4 reads chunks of 3 and ends equal.
LOOM_CHECKPOINT_DIR=$T/c1 LOOM_CHECKPOINT_EVERY=2 LOOM_CHECKPOINT_CHAIN=1 LOOM_STATS=1 \
    run_job "$T/c1.out" "$LOOMRUN" -n 2 "$P" 10
w=$(written "$T/c1.out" 000005 0)
[ $rc -eq 0 ] && [ "$(sum "$T/c1.out")" = "$ref2" ] && [ "${w% *}" = "${w#* }" ] &&
    [ "$(ls "$T/c1" | tr '\n' ' ')" = "LATEST LOCK ckpt-000004 ckpt-000005 " ]
ok $? "LOOM_CHECKPOINT_CHAIN=1: whole checkpoints ($w), older than the previous pruned"
LOOM_CHECKPOINT_DIR=$T/c2 LOOM_CHECKPOINT_EVERY=2 LOOM_CHECKPOINT_CHAIN=2 LOOM_STATS=1 \
    LOOM_TEST_KILL=1:9 run_job "$T/c2.1" "$LOOMRUN" -n 2 "$P" 10
rc1=$rc
ls1=$(ls "$T/c2" | tr '\n' ' ')
cp -r "$T/c2" "$T/c2x"
LOOM_CHECKPOINT_DIR=$T/c2 LOOM_CHECKPOINT_EVERY=2 LOOM_CHECKPOINT_CHAIN=2 \
    run_job "$T/c2.2" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc1 -ne 0 ] && [ "$ls1" = "LATEST LOCK ckpt-000002 ckpt-000003 ckpt-000004 " ] &&
    less "$(written "$T/c2.1" 000004 0)" && [ $rc -eq 0 ] && [ "$(resumed "$T/c2.2")" = 8 ] &&
    [ "$(sum "$T/c2.2")" = "$ref2" ]
ok $? "LOOM_CHECKPOINT_CHAIN=2: killed after clock 9, restarted from the incremental ckpt-000004: equal"
rm "$T/c2x/ckpt-000003/rank-1.ckpt"
LOOM_CHECKPOINT_DIR=$T/c2x run_job "$T/c2x.out" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc -ne 0 ] && [ "$(aborts "$T/c2x.out")" -eq 1 ] &&
    has "$T/c2x.out" "ckpt-000003/rank-1.ckpt: No such file .*ckpt-000004 needs it"
ok $? "a chain file missing: the restart is refused with one message naming it"

# Killed after clock 5 (checkpoint 2 holds clock 4); restarted.
for n in 1 2 3; do
    k=$((n - 1))
    LOOM_CHECKPOINT_DIR=$T/k$n LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=$k:5 \
        run_job "$T/k$n.1" "$LOOMRUN" -n $n "$P" 10
    rc1=$rc
    LOOM_CHECKPOINT_DIR=$T/k$n LOOM_CHECKPOINT_EVERY=2 run_job "$T/k$n.2" "$LOOMRUN" --restart -n $n "$P" 10
    eval "want=\$ref$n"
    [ $rc1 -ne 0 ] && has "$T/k$n.1" "rank $k .*killed by signal 9" && [ $rc -eq 0 ] &&
        [ "$(resumed "$T/k$n.2")" = 4 ] && [ "$(sum "$T/k$n.2")" = "$want" ]
    ok $? "$n rank(s)$([ $n -eq 1 ] && echo ' (the local policy)'): rank $k killed after clock 5, restarted from clock 4: checksum $(sum "$T/k$n.2") = $want"
done
# The SSP allreduce's running sums: a restart must bring them back.
run_job "$T/ar" "$LOOMRUN" -n 2 "$P" 6 --allreduce
ar=$(sum "$T/ar")
LOOM_CHECKPOINT_DIR=$T/ak LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=0:3 \
    run_job "$T/ak.1" "$LOOMRUN" -n 2 "$P" 6 --allreduce
rc1=$rc
LOOM_CHECKPOINT_DIR=$T/ak run_job "$T/ak.2" "$LOOMRUN" --restart -n 2 "$P" 6 --allreduce
[ -n "$ar" ] && [ "$ar" != "$ref2" ] && [ $rc1 -ne 0 ] && [ $rc -eq 0 ] &&
    [ "$(resumed "$T/ak.2")" = 2 ] && [ "$(sum "$T/ak.2")" = "$ar" ]
ok $? "loom_allreduce_ssp's running sums survive a kill and restart (checksum $(sum "$T/ak.2") = $ar)"

# Two jobs: the same bytes but the job's identity (ckpt_cmp, lib.sh).
same_but_job() { ckpt_cmp "$1" "$2" && ! cmp -s -i 48 -n 16 "$1" "$2"; }
same_but_job "$T/c/ckpt-000005/rank-0.ckpt" "$T/k2/ckpt-000005/rank-0.ckpt" &&
    same_but_job "$T/c/ckpt-000005/rank-1.ckpt" "$T/k2/ckpt-000005/rank-1.ckpt"
ok $? "the restarted job's last checkpoint is byte-identical to the uninterrupted job's but for the job's identity"

# A crash while rank 1 writes checkpoint 3: its file is half written.
LOOM_CHECKPOINT_DIR=$T/w LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=1:6:write \
    run_job "$T/w.1" "$LOOMRUN" -n 2 "$P" 10
rc1=$rc
[ "$(cat "$T/w/LATEST")" = ckpt-000002 ] && [ -f "$T/w/ckpt-000003/rank-1.tmp" ] &&
    [ ! -f "$T/w/ckpt-000003/rank-1.ckpt" ]
st=$?
LOOM_CHECKPOINT_DIR=$T/w LOOM_CHECKPOINT_EVERY=2 run_job "$T/w.2" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc1 -ne 0 ] && [ $st -eq 0 ] && [ $rc -eq 0 ] && [ "$(resumed "$T/w.2")" = 4 ] &&
    [ "$(sum "$T/w.2")" = "$ref2" ]
ok $? "a crash mid-checkpoint (rank 1's file half written) leaves LATEST on the previous one; the restart resumes at clock 4 and ends equal"

# A crash after every file is in place, before LATEST moves.
LOOM_CHECKPOINT_DIR=$T/m LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=0:6:commit \
    run_job "$T/m.1" "$LOOMRUN" -n 2 "$P" 10
rc1=$rc
[ "$(cat "$T/m/LATEST")" = ckpt-000002 ] && [ -f "$T/m/ckpt-000003/rank-0.ckpt" ] &&
    [ -f "$T/m/ckpt-000003/rank-1.ckpt" ]
st=$?
LOOM_CHECKPOINT_DIR=$T/m LOOM_CHECKPOINT_EVERY=2 run_job "$T/m.2" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc1 -ne 0 ] && [ $st -eq 0 ] && [ $rc -eq 0 ] && [ "$(resumed "$T/m.2")" = 4 ] &&
    [ "$(sum "$T/m.2")" = "$ref2" ] && [ "$(cat "$T/m/LATEST")" = ckpt-000005 ]
ok $? "a crash between the last file and LATEST: the previous checkpoint is used; the restarted job checkpoints on to ckpt-000005"

# Refusals: one message each.
LOOM_CHECKPOINT_DIR=$T/c run_job "$T/r3" "$LOOMRUN" --restart -n 3 "$P" 10
[ $rc -ne 0 ] && [ "$(aborts "$T/r3")" -eq 1 ] &&
    has "$T/r3" "checkpoint .*ckpt-000005 was written by 2 ranks and this job has 3, but it holds 'ckpt_prog generator', private state of each rank .*: restart it with -n 2"
ok $? "a restart on 3 ranks of a 2-rank checkpoint that keeps private state is refused with one message"
LOOM_CHECKPOINT_DIR=$T/c run_job "$T/rb" "$LOOMRUN" --restart -n 2 "$P" 10 --bigger
[ $rc -ne 0 ] && [ "$(aborts "$T/rb")" -eq 1 ] &&
    has "$T/rb" "allocation #1 of this run is 'pages' \(9 page units of 4096 B, 36864 bytes, bsp\), but in checkpoint .* it is 'pages' \(8 page units"
ok $? "a restart whose allocation differs (size) is refused with one message naming it"
cp -r "$T/c" "$T/d"
printf 'X' | dd of="$T/d/ckpt-000005/rank-1.ckpt" bs=1 seek=9000 conv=notrunc 2>/dev/null
LOOM_CHECKPOINT_DIR=$T/d run_job "$T/rd" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc -ne 0 ] && [ "$(aborts "$T/rd")" -eq 1 ] &&
    has "$T/rd" "rank-1.ckpt: the data of 'pages' is damaged \(checksum mismatch\)"
ok $? "a damaged checkpoint file is refused, naming the file and the allocation"
LOOM_CHECKPOINT_DIR=$T/none run_job "$T/rn" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc -ne 0 ] && [ "$(aborts "$T/rn")" -eq 1 ] && has "$T/rn" "no checkpoint to resume from"
ok $? "--restart with no checkpoint is refused"
LOOM_RESTART=auto LOOM_CHECKPOINT_DIR=$T/none run_job "$T/ra" "$LOOMRUN" -n 2 "$P" 10
[ $rc -eq 0 ] && [ "$(sum "$T/ra")" = "$ref2" ] && has "$T/ra" "starting from the beginning"
ok $? "LOOM_RESTART=auto with no checkpoint starts from the beginning"

# The explicit call, without LOOM_CHECKPOINT_EVERY.
LOOM_CHECKPOINT_DIR=$T/e run_job "$T/e.1" "$LOOMRUN" -n 2 "$P" 5 --explicit 3
rc1=$rc
LOOM_CHECKPOINT_DIR=$T/e run_job "$T/e.2" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc1 -eq 0 ] && has "$T/e.1" "loom_checkpoint at clock 3: success" &&
    [ "$(cat "$T/e/LATEST")" = ckpt-000001 ] && [ $rc -eq 0 ] && [ "$(resumed "$T/e.2")" = 3 ] &&
    [ "$(sum "$T/e.2")" = "$ref2" ]
ok $? "loom_checkpoint(NULL) at clock 3; a restart goes on from clock 3 to the same end"

# Another number of ranks: the --layout program's contents do not depend
# on the number of ranks, so every restart must end with the same bits.
for n in 1 2 3 4; do
    run_job "$T/L$n" "$LOOMRUN" -n $n "$P" 12 --layout
done
L=$(sum "$T/L1")
[ -n "$L" ] && [ "$(sum "$T/L2")" = "$L" ] && [ "$(sum "$T/L3")" = "$L" ] && [ "$(sum "$T/L4")" = "$L" ]
ok $? "--layout: uninterrupted runs on 1, 2, 3, 4 ranks end with the same checksum $L"
# FROM TO: killed on FROM ranks after clock 6 (checkpoint 1 holds clock 5,
# mid-rotation: sub-epoch 5 (P + 1), not a multiple of P), resumed on TO
for t in "4 2" "2 3" "3 1" "1 3"; do
    set -- $t
    LOOM_CHECKPOINT_DIR=$T/L$1$2 LOOM_CHECKPOINT_EVERY=5 LOOM_TEST_KILL=$(($1 - 1)):6 \
        run_job "$T/L$1$2.1" "$LOOMRUN" -n $1 "$P" 12 --layout
    rc1=$rc
    [ $1$2 = 42 ] && cp -r "$T/L42" "$T/L423" && cp -r "$T/L42" "$T/L42m"
    LOOM_CHECKPOINT_DIR=$T/L$1$2 LOOM_CHECKPOINT_EVERY=5 \
        run_job "$T/L$1$2.2" "$LOOMRUN" --restart -n $2 "$P" 12 --layout
    [ $rc1 -ne 0 ] && [ $rc -eq 0 ] && [ "$(resumed "$T/L$1$2.2")" = 5 ] &&
        has "$T/L$1$2.2" "written by $1 ranks?, redistributed to $2" && [ "$(sum "$T/L$1$2.2")" = "$L" ]
    ok $? "--layout killed on $1 rank(s) after clock 6, restarted on $2: checksum $(sum "$T/L$1$2.2") = $L"
done
# twice: the 2-rank job resumed from 4 ranks checkpoints (whole) and is killed again
LOOM_CHECKPOINT_DIR=$T/L423 LOOM_CHECKPOINT_EVERY=5 LOOM_TEST_KILL=1:11 \
    run_job "$T/L423.1" "$LOOMRUN" --restart -n 2 "$P" 12 --layout
rc1=$rc
LOOM_CHECKPOINT_DIR=$T/L423 run_job "$T/L423.2" "$LOOMRUN" --restart -n 3 "$P" 12 --layout
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && [ "$(resumed "$T/L423.2")" = 10 ] && [ "$(sum "$T/L423.2")" = "$L" ]
ok $? "--layout 4 -> 2 (killed again after clock 11) -> 3 ranks: checksum $(sum "$T/L423.2") = $L"
LOOM_CHECKPOINT_DIR=$T/Ln LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=1:5 \
    run_job "$T/Ln.1" "$LOOMRUN" -n 2 "$P" 12 --layout --no-rows
LOOM_CHECKPOINT_DIR=$T/Ln run_job "$T/Ln.2" "$LOOMRUN" --restart -n 3 "$P" 12 --layout --no-rows
[ $rc -ne 0 ] && [ "$(aborts "$T/Ln.2")" -eq 1 ] &&
    has "$T/Ln.2" "written by 2 ranks and this job has 3, but it holds 'local', a local allocation whose rows no rank declared current \(loom_checkpoint_rows\).*: restart it with -n 2"
ok $? "a local allocation with no rows declared: a restart on another number of ranks is refused with one message"
rm "$T/L42m/ckpt-000001/rank-3.ckpt"
LOOM_CHECKPOINT_DIR=$T/L42m run_job "$T/Lm" "$LOOMRUN" --restart -n 2 "$P" 12 --layout
[ $rc -ne 0 ] && [ "$(aborts "$T/Lm")" -eq 1 ] &&
    has "$T/Lm" "ckpt-000001/rank-3.ckpt: No such file .*reads every rank's file"
ok $? "an old rank's file missing: the restart on another number of ranks is refused with one message naming it"

run_job "$T/v1" "$LOOMRUN" --restart -n 2 "$P" 10
[ $rc -ne 0 ] && [ "$(wc -l <"$T/v1")" -eq 1 ] && has "$T/v1" "--restart needs LOOM_CHECKPOINT_DIR"
ok $? "loomrun --restart without LOOM_CHECKPOINT_DIR: one message"
LOOM_CHECKPOINT_EVERY=3 run_job "$T/v2" "$LOOMRUN" -n 2 "$P" 10
[ $rc -ne 0 ] && [ "$(wc -l <"$T/v2")" -eq 1 ] &&
    has "$T/v2" "LOOM_CHECKPOINT_EVERY='3' is not usable without LOOM_CHECKPOINT_DIR"
ok $? "LOOM_CHECKPOINT_EVERY without LOOM_CHECKPOINT_DIR: one message"
finish
