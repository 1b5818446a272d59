#!/bin/sh
# checkpoint_job.t — a checkpoint belongs to one job (docs/checkpoint.md,
# "Job identity and the lock"): a second job given the directory of a
# running one is refused at start, naming the job that holds it, and the
# lock does not outlive a killed job (the directory's checkpoint then
# resumes); a checkpoint whose rank files come from two jobs, at different
# clocks or at the same clock, is refused with one message naming both.
# And the smaller promises: a LATEST naming a number too big to hold is
# malformed (LOOM_RESTART=auto does not start over), and a checkpoint not
# taken on a full disk leaves no file behind.
. "$(dirname "$0")/../lib.sh"
plan 7
P=$B/tests/bin/ckpt_prog
export OMP_NUM_THREADS=1
sum() { sed -n 's/.*checksum \([0-9a-f]*\).*/\1/p' "$1"; }
job() { sed -n 's/^job //p' "$1"; }

run_job "$T/ref" "$LOOMRUN" -n 2 "$P" 8
ref=$(sum "$T/ref")

# Job A checkpoints every clock; its rank 0 stops itself at clock 3 (it
# and its lock stay), so job B comes while A holds the directory.
D=$T/shared
# (no timeout(1) around it: kill -9 must reach loomrun itself; a stopped
# rank is declared lost after LOOM_TIMEOUT at worst)
LOOM_CHECKPOINT_DIR=$D LOOM_CHECKPOINT_EVERY=1 LOOM_TIMEOUT=60 LOOM_TEST_KILL=0:3:stop \
    "$LOOMRUN" -n 2 "$P" 8 >"$T/a" 2>&1 &
a=$!
i=0; while [ "$(cat "$D/LATEST" 2>/dev/null)" != ckpt-000003 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
ja=$(job "$D/ckpt-000001/INFO")
LOOM_CHECKPOINT_DIR=$D LOOM_CHECKPOINT_EVERY=1 run_job "$T/b" "$LOOMRUN" -n 2 "$P" 8
[ $rc -ne 0 ] && [ -n "$ja" ] && has "$T/b" "LOOM_CHECKPOINT_DIR $D is in use by job $ja \(pid [0-9]+ on host" &&
    [ "$(grep -c 'in use by' "$T/b")" -eq 1 ] && [ "$(cat "$D/LATEST")" = ckpt-000003 ]
ok $? "a second job in a running job's directory is refused at start, naming it (rc $rc)"

kill -9 $a; wait $a 2>/dev/null
sleep 0.5 # the stopped rank dies of loomrun's death (PR_SET_PDEATHSIG)
LOOM_CHECKPOINT_DIR=$D LOOM_CHECKPOINT_EVERY=1 LOOM_RESTART=true run_job "$T/c" "$LOOMRUN" -n 2 "$P" 8
[ $rc -eq 0 ] && has "$T/c" "resuming from $D/ckpt-000003" && [ "$(sum "$T/c")" = "$ref" ] &&
    [ "$(job "$D/ckpt-000008/INFO")" = "$ja" ]
ok $? "after job A is killed its lock is gone: its checkpoint resumes, same result, same job ($rc)"

# Two jobs in two directories: A at clocks 2, 4, 6; B at 3, 6, 9 (mixed
# clocks) and C at 2, 4, 6 (the same clocks, the same data: only the job
# differs).  Rank 1's file of checkpoint 3 swapped in from B, then C.
for j in A:2:6 B:3:9 C:2:6; do
    n=${j%%:*} e=${j#*:}; e=${e%:*} k=${j##*:}
    LOOM_CHECKPOINT_DIR=$T/$n LOOM_CHECKPOINT_EVERY=$e run_job "$T/run$n" "$LOOMRUN" -n 2 "$P" $k
done
jA=$(job "$T/A/ckpt-000003/INFO") jB=$(job "$T/B/ckpt-000003/INFO") jC=$(job "$T/C/ckpt-000003/INFO")
cp "$T/B/ckpt-000003/rank-1.ckpt" "$T/A/ckpt-000003/rank-1.ckpt"
LOOM_CHECKPOINT_DIR=$T/A LOOM_RESTART=true run_job "$T/m1" "$LOOMRUN" -n 2 "$P" 10
[ $rc -ne 0 ] && has "$T/m1" "rank-1.ckpt is of job $jB at loom_clock 9 .*, but $T/A/ckpt-000003/rank-0.ckpt of job $jA at loom_clock 6" &&
    [ "$(grep -c 'abort:' "$T/m1")" -eq 1 ] && ! grep -q 'resumed at' "$T/m1"
ok $? "rank files of two jobs at different clocks: refused, one message naming both (rc $rc)"

cp "$T/C/ckpt-000003/rank-1.ckpt" "$T/A/ckpt-000003/rank-1.ckpt"
LOOM_CHECKPOINT_DIR=$T/A LOOM_RESTART=true run_job "$T/m2" "$LOOMRUN" -n 2 "$P" 10
[ $rc -ne 0 ] && [ "$jA" != "$jC" ] && has "$T/m2" "rank-1.ckpt is of job $jC at loom_clock 6 .*, but .*rank-0.ckpt of job $jA at loom_clock 6" &&
    [ "$(grep -c 'abort:' "$T/m2")" -eq 1 ]
ok $? "rank files of two jobs at the same clock: refused, naming both (rc $rc)"

# The same mix read by a restart on another number of ranks (every old
# rank's file is read there).
LOOM_CHECKPOINT_DIR=$T/A LOOM_RESTART=true run_job "$T/m3" "$LOOMRUN" -n 1 "$P" 10
[ $rc -ne 0 ] && has "$T/m3" "rank-1.ckpt is of job $jC at loom_clock 6 .*, but .*rank-0.ckpt of job $jA"
ok $? "the same on another number of ranks (rc $rc)"

mkdir -p "$T/over"
printf 'ckpt-99999999999999999999\n' >"$T/over/LATEST"
LOOM_CHECKPOINT_DIR=$T/over LOOM_CHECKPOINT_EVERY=2 LOOM_RESTART=auto run_job "$T/o" "$LOOMRUN" -n 2 "$P" 4
[ $rc -ne 0 ] && has "$T/o" "LATEST does not name a checkpoint" && [ ! -e "$T/over/ckpt-000001" ]
ok $? "a LATEST whose number overflows is malformed: auto does not start over (rc $rc)"

# A full disk: a 100 KiB tmpfs holds no rank file (about 100 KiB each).
if mkdir -p "$T/full" && unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount -t tmpfs -o size=100k tmpfs "$1" && shift && "$@"; echo "rc=$?";
        find "$0" -type f | sed "s|^$0/|file |"' "$T/full" "$T/full" \
        env LOOM_CHECKPOINT_DIR="$T/full" LOOM_CHECKPOINT_EVERY=2 \
        timeout -k 5 60 "$LOOMRUN" -n 2 "$P" 6 >"$T/f" 2>&1
    has "$T/f" "ckpt-000001 was not taken" && has "$T/f" "^rc=0" &&
        [ "$(grep '^file ' "$T/f")" = "file LOCK" ]
    ok $? "checkpoints not taken on a full disk leave no file but the lock"
else
    skip 1 "needs unshare -m (root) for a small tmpfs"
fi
finish
