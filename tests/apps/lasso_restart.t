#!/bin/sh
# lasso_restart.t — loom-lasso checkpointed every 2 iterations
# (LOOM_CHECKPOINT_EVERY; one loom_clock per iteration) and killed mid-run,
# restarted with loomrun --restart, ends with the model of an uninterrupted
# run, bit for bit: on 1 rank x 1 thread along a 3-lambda path with the
# default working-set solver (its set comes back; its Gram matrix is
# computed again, the same bits), killed in the middle of the second
# lambda (the --model files and the last checkpoints compare equal); on 2
# ranks with the priority schedule (--batch 8), the correlation filter and
# the duality-gap stop, where the run is deterministic too (the ranks'
# partial sums meet in one allreduce whose result every rank shares).  What
# must come back: beta, each rank's residual, where the path stands, and
# the priority schedule's weights and generator (a restart from uniform
# weights draws other coordinates and ends elsewhere).
. "$(dirname "$0")/../lib.sh"
plan 3
export OMP_NUM_THREADS=1 LOOM_CHECKPOINT_EVERY=2
"$B/bin/loom-gen" lasso --samples 400 --features 2000 --nonzeros 20 --correlation 0.3 \
    --seed 3 --out "$T/d" >/dev/null
lasso() { # NAME RANKS [LOOMRUN OPTIONS]: loom-lasso $args, checkpoints in $T/NAME, model $T/NAME.m
    name=$1 n=$2; shift 2
    LOOM_CHECKPOINT_DIR=$T/$name run_job "$T/$name.out" "$LOOMRUN" "$@" -n $n "$B/bin/loom-lasso" \
        --libsvm "$T/d.svm" --model "$T/$name.m" $args
}
obj() { sed -n 's/.*final objective=\([0-9.e+-]*\).*/\1/p' "$T/$1.out"; }

args="--lambda-path 3 --iters 3 --tol 0"
lasso ref1 1
LOOM_TEST_KILL=0:5 lasso k1 1
rc1=$rc
lasso k1 1 --restart
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/k1.out" "resuming from .*ckpt-000002 \(loom_clock 4" &&
    cmp "$T/ref1.m" "$T/k1.m" && ckpt_cmp "$T/ref1/ckpt-000004/rank-0.ckpt" "$T/k1/ckpt-000004/rank-0.ckpt"
ok $? "1 rank, killed in the second lambda of the path, restarted: the same model and checkpoint bits (objective $(obj k1) = $(obj ref1))"
u5=$(sed -n 's/^loom-lasso: iter 5 updates \([0-9]*\) .*/\1/p' "$T/ref1.out")
[ "$(grep -c '^loom-lasso: lambda ' "$T/k1.out")" -eq 2 ] && [ -n "$u5" ] && has "$T/k1.out" "iter 5 updates $u5 "
ok $? "the restarted run goes on at iteration 5 (update count restored) and reports the two lambdas it finished"

# The gap reaches 1e-2 of the objective at iteration 36 (71 997 updates),
# well after the kill: both runs must stop there, not at --iters (with
# --tol 1e-5 and 8 iterations, as before, the gap never stopped anything).
# --batch 8: split over the ranks (400 rows would run whole on each).
args="--lambda 20 --iters 60 --tol 1e-2 --batch 8"
lasso ref2 2
LOOM_TEST_KILL=1:3 lasso k2 2
rc1=$rc
lasso k2 2 --restart
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/k2.out" "loom_clock 2" && [ -n "$(obj k2)" ] &&
    [ "$(obj k2)" = "$(obj ref2)" ] && cmp "$T/ref2.m" "$T/k2.m" &&
    [ "$(grep 'lambda 20:' "$T/ref2.out")" = "$(grep 'lambda 20:' "$T/k2.out")" ] &&
    has "$T/k2.out" "lambda 20: .* updates$" && ! grep -q 'stopped at --iters' "$T/ref2.out" "$T/k2.out"
ok $? "2 ranks, rank 1 killed after iteration 3, restarted: the same model, stopped by the gap at the same update (objective $(obj k2) = $(obj ref2))"
finish
