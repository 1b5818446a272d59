#!/bin/sh
# mf_ordered.t — loom-mf --ordered (Orion's ordered schedule across ranks,
# sched/ordered.c) on MovieLens 100K u1: on 2 ranks x 2 threads and on 3
# ranks the saved model (W, H and both biases) is byte for byte the
# serial twin's (--serial) after 6 epochs; so is a 3-rank run killed
# after epoch 4 and restarted from its checkpoint (the mirrored ring comes
# back mirrored), also on 2 ranks from the 3 ranks' checkpoint; a
# training file in which a user's ratings go back to an earlier block of
# items is refused with a message naming the two
# records, without a hang.  Without ../shared/data/movielens-100k the file
# fails, naming the missing file.
. "$(dirname "$0")/../lib.sh"
need_movielens
plan 6
train=$D/u1.base test=$D/u1.test
mf() { # NAME RANKS THREADS [LOOMRUN OPTIONS]: --ordered; model in $T/NAME.m, output $T/NAME.out
    name=$1 n=$2 t=$3; shift 3
    OMP_NUM_THREADS=$t run_job "$T/$name.out" "$LOOMRUN" "$@" -n "$n" "$B/bin/loom-mf" --ordered \
        --train "$train" --test "$test" --epochs 6 --model "$T/$name.m"
}
same_model() {
    for f in W.txt H.txt user_bias.txt item_bias.txt; do
        cmp "$T/$1.m/$f" "$T/$2.m/$f" || { diag "$2's run:"; sed 's/^/# /' "$T/$2.out"; return 1; }
    done
}
OMP_NUM_THREADS=1 run_job "$T/twin.out" "$B/bin/loom-mf" --train "$train" --test "$test" --epochs 6 \
    --model "$T/twin.m" --serial
ok $rc "the serial twin, 6 epochs"
mf o22 2 2
[ $rc -eq 0 ] && same_model twin o22 &&
    [ "$(grep -o 'final test_rmse=.*' "$T/o22.out")" = "$(grep -o 'final test_rmse=.*' "$T/twin.out")" ]
ok $? "--ordered on 2 ranks x 2 threads: the twin's model byte for byte, the same test RMSE"
mf o31 3 1
[ $rc -eq 0 ] && same_model twin o31
ok $? "--ordered on 3 ranks: the twin's model byte for byte"
LOOM_CHECKPOINT_DIR=$T/ck LOOM_CHECKPOINT_EVERY=2 LOOM_TEST_KILL=2:4 mf k 3 1
first=$rc
cp -r "$T/ck" "$T/ck2"
LOOM_CHECKPOINT_DIR=$T/ck mf k 3 1 --restart
[ $first -ne 0 ] && [ $rc -eq 0 ] && has "$T/k.out" "resuming from .*ckpt-000002" && same_model twin k
ok $? "--ordered on 3 ranks (where a mirrored ring differs from a plain one) killed after epoch 4, restarted from its checkpoint: the twin's model"
LOOM_CHECKPOINT_DIR=$T/ck2 mf k2 2 1 --restart
[ $first -ne 0 ] && [ $rc -eq 0 ] && has "$T/k2.out" "resuming from .*ckpt-000002" && same_model twin k2
ok $? "the same checkpoint restarted on 2 ranks: the twin's model"
# user u's ratings: its item above 1000 moved before its first (a later block first)
awk 'BEGIN { u = -1 } { line[NR] = $0; us[NR] = $1; it[NR] = $2 }
     END { for (k = 1; k <= NR; k++) if (it[k] > 1000) { u = us[k]; hi = k; break }
           for (k = 1; k <= NR; k++) if (us[k] == u) { lo = k; break }
           for (k = 1; k <= NR; k++) { if (k == lo) print line[hi]; if (k != hi) print line[k] } }' \
    "$train" >"$T/unsorted.base"
train=$T/unsorted.base mf bad 2 1
[ $rc -ne 0 ] && has "$T/bad.out" "ordered: records [0-9]+ and [0-9]+ share row [0-9]+ of .fields\[0\] but the later one's .fields\[1\] row is in an earlier block" &&
    has "$T/bad.out" "the SGD loop failed"
ok $? "a user's ratings going back a block of items: refused, naming the records"
finish
