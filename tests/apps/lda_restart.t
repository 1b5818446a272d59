#!/bin/sh
# lda_restart.t — loom-lda checkpointed every 2 iterations
# (LOOM_CHECKPOINT_EVERY; one loom_clock per iteration) and killed after
# iteration 3 of 6, restarted with loomrun --restart, ends with the model
# of an uninterrupted run, bit for bit: on 1 rank x 1 thread (the --model
# files, the final log-likelihood and the last checkpoints compare equal)
# and on 2 ranks x 2 threads, where the sampler is deterministic too (each
# word row has one writer at a time, each worker its own random stream,
# and the topic sums meet in an integer allreduce).  What must come back
# besides the word-topic table (a ring allocation): every worker's topic
# assignments z, doc-topic counts and random stream, and the topic sums,
# which loom-lda keeps in plain memory (loom_checkpoint_keep).  Corpus:
# 500 documents drawn by loom-gen from 10 topics.
. "$(dirname "$0")/../lib.sh"
plan 3
"$B/bin/loom-gen" lda --docs 500 --vocab 500 --topics 10 --doc-length 100 --seed 1 \
    --out "$T/g" >/dev/null
export LOOM_CHECKPOINT_EVERY=2
lda() { # NAME RANKS [LOOMRUN OPTIONS]: checkpoints in $T/NAME, model $T/NAME.m, log $T/NAME.csv
    name=$1 n=$2; shift 2
    LOOM_CHECKPOINT_DIR=$T/$name run_job "$T/$name.out" "$LOOMRUN" "$@" -n $n "$B/bin/loom-lda" \
        --train "$T/g.docword.txt" --topics 10 --iters 6 --test-frac 0.1 --model "$T/$name.m" \
        --log "$T/$name.csv"
}
ll() { sed -n 's/.*final loglik=\([0-9.e+-]*\).*/\1/p' "$T/$1.out"; }

export OMP_NUM_THREADS=1
lda ref1 1
LOOM_TEST_KILL=0:3 lda k1 1
rc1=$rc
lda k1 1 --restart
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/k1.out" "resuming from .*ckpt-000001 \(loom_clock 2" &&
    [ -n "$(ll k1)" ] && [ "$(ll k1)" = "$(ll ref1)" ] && diff -r "$T/ref1.m" "$T/k1.m" >/dev/null &&
    ckpt_cmp "$T/ref1/ckpt-000003/rank-0.ckpt" "$T/k1/ckpt-000003/rank-0.ckpt"
ok $? "1 rank killed after iteration 3, restarted: the same model and checkpoint bits (loglik $(ll k1) = $(ll ref1))"
[ "$(grep -c '^iter,' "$T/k1.csv")" -eq 1 ] && [ "$(tail -1 "$T/k1.csv" | cut -d, -f1)" = 6 ] &&
    [ "$(tail -1 "$T/k1.csv" | cut -d, -f2)" = "$(tail -1 "$T/ref1.csv" | cut -d, -f2)" ]
ok $? "the CSV log: one header, ends at iteration 6 with the uninterrupted run's sample count"

export OMP_NUM_THREADS=2
lda ref2 2
LOOM_TEST_KILL=1:3 lda k2 2
rc1=$rc
lda k2 2 --restart
[ $rc1 -ne 0 ] && [ $rc -eq 0 ] && has "$T/k2.out" "loom_clock 2" && [ -n "$(ll k2)" ] &&
    [ "$(ll k2)" = "$(ll ref2)" ] && diff -r "$T/ref2.m" "$T/k2.m" >/dev/null
ok $? "2 ranks x 2 threads, rank 1 killed after iteration 3, restarted: the same model (loglik $(ll k2) = $(ll ref2))"
finish
