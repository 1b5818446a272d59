#!/bin/sh
# demo.t — the demo trains on MovieLens (or synthetic data when the shared
# folder is absent): the same test RMSE on 1, 2 and 4 ranks, better than
# the mean-only predictor, and a malformed line is named file:line.
. "$(dirname "$0")/../lib.sh"
plan 3
D=$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/movielens-100k
if [ -f "$D/u1.base" ]; then args="--train $D/u1.base --test $D/u1.test"; bound=0.97
else args="--synthetic 3000"; bound=0.35; fi
for n in 1 2 4; do
    run_job "$T/o$n" "$LOOMRUN" -n $n "$B/bin/loom-demo" $args
    sed -n 's/.*final test_rmse=\([0-9.]*\).*/\1/p' "$T/o$n" >"$T/r$n"
done
[ -s "$T/r1" ] && cmp -s "$T/r1" "$T/r2" && cmp -s "$T/r1" "$T/r4"
ok $? "same final test RMSE on 1, 2 and 4 ranks ($(cat "$T/r1"))"
awk -v r="$(cat "$T/r1")" -v b=$bound 'BEGIN { exit !(r > 0 && r < b) }'
ok $? "final test RMSE $(cat "$T/r1") < $bound"
printf '1\t1\t5\t0\n2\t1\t4\t0\n3 x 2 0\n' >"$T/bad.base"
run_job "$T/bad" "$LOOMRUN" -n 2 "$B/bin/loom-demo" --train "$T/bad.base" --test "$T/bad.base"
[ $rc -ne 0 ] && has "$T/bad" "bad.base:3: expected 'user item rating"
ok $? "a malformed rating line is named file:line"
finish
