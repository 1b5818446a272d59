#!/bin/sh
# lr_restart.t — loom-lr checkpointed every 2 epochs (LOOM_CHECKPOINT_EVERY)
# and killed mid-run, restarted with loomrun --restart, ends with the model
# of an uninterrupted run: bit for bit on 1 rank x 1 thread (the --model
# files and the last checkpoints compare equal), and within 1% of test
# accuracy on 2 ranks, where the order in which the ranks' deltas meet at
# the homes varies from run to run (two uninterrupted runs differed by up
# to 0.4% here).  Both models: the sparse binary one (LIBSVM, a planted
# linear rule from loom-gen) and the multinomial one (6000 training and
# 2000 test images of Fashion-MNIST, when installed).
. "$(dirname "$0")/../lib.sh"
plan 4
export OMP_NUM_THREADS=1 LOOM_CHECKPOINT_EVERY=2
"$B/bin/loom-gen" lasso --samples 12000 --features 1000 --nonzeros 60 --density 0.03 \
    --out "$T/ls" >/dev/null
awk '{ $1 = ($1 > 0) ? 1 : 0; print }' "$T/ls.svm" >"$T/b.svm"
head -10000 "$T/b.svm" >"$T/b.train"; tail -2000 "$T/b.svm" >"$T/b.test"
lr() { # NAME RANKS [LOOMRUN OPTIONS] -- LR ARGS: checkpoints in $T/NAME, model $T/NAME.m
    name=$1 n=$2; shift 2
    opts=
    while [ "$1" != -- ]; do opts="$opts $1"; shift; done
    shift
    LOOM_CHECKPOINT_DIR=$T/$name run_job "$T/$name.out" "$LOOMRUN" $opts -n $n "$B/bin/loom-lr" \
        --epochs 5 --model "$T/$name.m" "$@"
}
acc() { sed -n 's/.*final test_accuracy=\([0-9.]*\).*/\1/p' "$T/$1.out"; }

lr ref1 1 -- --train "$T/b.train" --test "$T/b.test"
LOOM_TEST_KILL=0:3 lr k1 1 -- --train "$T/b.train" --test "$T/b.test"
rc1=$rc
lr k1 1 --restart -- --train "$T/b.train" --test "$T/b.test"
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/k1.out" "resuming from .*ckpt-000001 \(loom_clock 2" &&
    cmp "$T/ref1.m" "$T/k1.m" && ckpt_cmp "$T/ref1/ckpt-000002/rank-0.ckpt" "$T/k1/ckpt-000002/rank-0.ckpt"
ok $? "sparse binary, 1 rank killed after epoch 3, restarted: the same model and checkpoint bits"

lr ref2 2 -- --train "$T/b.train" --test "$T/b.test"
LOOM_TEST_KILL=1:3 lr k2 2 -- --train "$T/b.train" --test "$T/b.test"
rc1=$rc
lr k2 2 --restart -- --train "$T/b.train" --test "$T/b.test"
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/k2.out" "loom_clock 2" &&
    awk -v a="$(acc k2)" -v b="$(acc ref2)" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit !(a > 0 && d <= 0.01) }'
ok $? "sparse binary, 2 ranks, rank 1 killed after epoch 3, restarted: accuracy $(acc k2) within 1% of $(acc ref2)"

F=/usr/share/datasets/fashion-mnist
if [ -f $F/train-images-idx3-ubyte.gz ]; then
    # a slice keeps it fast: IDX header + the first 6000 images / labels
    gzip -dc $F/train-images-idx3-ubyte.gz | head -c $((16 + 6000 * 784)) |
        perl -e 'binmode STDIN; read STDIN, $h, 16; print substr($h, 0, 4), pack("N", 6000), substr($h, 8); print while read STDIN, $_, 65536' >"$T/img"
    gzip -dc $F/train-labels-idx1-ubyte.gz | head -c $((8 + 6000)) |
        perl -e 'binmode STDIN; read STDIN, $h, 8; print substr($h, 0, 4), pack("N", 6000); print while read STDIN, $_, 65536' >"$T/lab"
    gzip -dc $F/t10k-images-idx3-ubyte.gz | head -c $((16 + 2000 * 784)) |
        perl -e 'binmode STDIN; read STDIN, $h, 16; print substr($h, 0, 4), pack("N", 2000), substr($h, 8); print while read STDIN, $_, 65536' >"$T/timg"
    gzip -dc $F/t10k-labels-idx1-ubyte.gz | head -c $((8 + 2000)) |
        perl -e 'binmode STDIN; read STDIN, $h, 8; print substr($h, 0, 4), pack("N", 2000); print while read STDIN, $_, 65536' >"$T/tlab"
    m="--train-images $T/img --train-labels $T/lab --test-images $T/timg --test-labels $T/tlab"
    lr mref1 1 -- $m
    LOOM_TEST_KILL=0:3 lr mk1 1 -- $m
    rc1=$rc
    lr mk1 1 --restart -- $m
    [ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/mk1.out" "loom_clock 2" && cmp "$T/mref1.m" "$T/mk1.m"
    ok $? "multinomial, 1 rank killed after epoch 3, restarted: the same model bits"
    lr mref2 2 -- $m
    LOOM_TEST_KILL=1:3 lr mk2 2 -- $m
    rc1=$rc
    lr mk2 2 --restart -- $m
    [ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/mk2.out" "loom_clock 2" &&
        awk -v a="$(acc mk2)" -v b="$(acc mref2)" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; exit !(a > 0 && d <= 0.01) }'
    ok $? "multinomial, 2 ranks, rank 1 killed after epoch 3, restarted: accuracy $(acc mk2) within 1% of $(acc mref2)"
else
    ok 0 "# SKIP Fashion-MNIST is missing (apt-get install dataset-fashion-mnist)"
    ok 0 "# SKIP Fashion-MNIST is missing"
fi
finish
