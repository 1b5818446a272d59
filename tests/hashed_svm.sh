#!/bin/sh
# hashed_svm.sh BUILD DIR TRAIN TEST FEATURES MULT [LOOM-GEN FLAGS...] —
# the data of loom-lr's hashed-feature checks (tests/apps/lr_map.t) and
# benchmark (tests/perf/lr_map.sh): `loom-gen lasso` with TRAIN + TEST
# samples of FEATURES features, labels by the sign of y, split into
# DIR/d.train and DIR/d.test (indices 1..FEATURES), and the same rows with
# every index f renumbered to f * MULT + 12345 (order kept; MULT *
# FEATURES must stay below 2^63) in DIR/m.train and DIR/m.test.
set -e
B=$1 D=$2 tr=$3 te=$4 f=$5 mult=$6
shift 6
"$B/bin/loom-gen" lasso --samples $((tr + te)) --features "$f" "$@" --out "$D/ls" >/dev/null
awk '{ $1 = ($1 > 0) ? 1 : 0; print }' "$D/ls.svm" >"$D/b.svm"
head -n "$tr" "$D/b.svm" >"$D/d.train"
tail -n "$te" "$D/b.svm" >"$D/d.test"
for s in train test; do
    perl -pe "s/(\d+):/(\$1 * $mult + 12345) . ':'/ge" "$D/d.$s" >"$D/m.$s"
done
