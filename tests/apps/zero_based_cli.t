#!/bin/sh
# zero_based_cli.t — --zero-based: a file whose ids count from 0 gives the
# same run as the same data counted from 1 (loom-mf triples, loom-lr and
# loom-lasso LIBSVM); without the option such a file is refused at its
# first 0 with a message that names the option; with it an id of -1 is
# refused; MatrixMarket input takes no --zero-based for loom-lasso.
. "$(dirname "$0")/../lib.sh"
plan 6
"$B/bin/loom-gen" ratings --users 50 --items 40 --samples 1500 --out "$T/r" >/dev/null
# the same ratings with every id one less
for f in train test; do awk -F'\t' -v OFS='\t' '{ $1 -= 1; $2 -= 1; print }' "$T/r.$f" >"$T/z.$f"; done
fin() { grep '^final' "$1"; }
run_job "$T/m1" "$B/bin/loom-mf" --train "$T/r.train" --test "$T/r.test" --epochs 3 --serial
run_job "$T/m0" "$B/bin/loom-mf" --train "$T/z.train" --test "$T/z.test" --epochs 3 --serial --zero-based
[ $rc -eq 0 ] && [ -n "$(fin "$T/m1")" ] && [ "$(fin "$T/m0")" = "$(fin "$T/m1")" ] &&
    has "$T/m0" "50 users x 40 items"
ok $? "loom-mf --zero-based on 0-based triples is the 1-based run ($(fin "$T/m0"))"

run_job "$T/mr" "$B/bin/loom-mf" --train "$T/z.train" --test "$T/z.test" --epochs 1
[ $rc -eq 1 ] && has "$T/mr" "loom-mf: .*z.train:[0-9]+: bad (user|item) id '0' \(expected .*--zero-based reads ids from 0\)"
ok $? "without it a 0-based file is refused at its first 0, naming --zero-based"

printf '%s\t1\t4\n' -1 >"$T/neg"
run_job "$T/mn" "$B/bin/loom-mf" --train "$T/neg" --test "$T/neg" --zero-based
[ $rc -eq 1 ] && has "$T/mn" "neg:1: bad user id '-1' \(expected an integer from 0 to 9223372036854775806"
ok $? "with it an id of -1 is refused"

"$B/bin/loom-gen" lasso --samples 60 --features 30 --nonzeros 4 --seed 2 --out "$T/l" >/dev/null
# scikit-learn's default dump: indices from 0
awk '{ printf "%s", $1; for (k = 2; k <= NF; k++) { split($k, a, ":"); printf " %d:%s", a[1] - 1, a[2] } print "" }' \
    "$T/l.svm" >"$T/l0.svm"
run_job "$T/s1" "$B/bin/loom-lasso" --libsvm "$T/l.svm" --lambda 5 --serial cyclic
run_job "$T/s0" "$B/bin/loom-lasso" --libsvm "$T/l0.svm" --lambda 5 --serial cyclic --zero-based
[ $rc -eq 0 ] && [ -n "$(fin "$T/s1")" ] && [ "$(fin "$T/s0")" = "$(fin "$T/s1")" ] &&
    has "$T/s0" "60 samples x 30 features"
ok $? "loom-lasso --zero-based on a 0-based LIBSVM file is the 1-based run"

awk '{ print ($1 > 0 ? 1 : 0), substr($0, index($0, " ") + 1) }' "$T/l.svm" >"$T/c.svm"
awk '{ print ($1 > 0 ? 1 : 0), substr($0, index($0, " ") + 1) }' "$T/l0.svm" >"$T/c0.svm"
run_job "$T/r1" "$B/bin/loom-lr" --train "$T/c.svm" --test "$T/c.svm" --epochs 2 --serial
run_job "$T/r0" "$B/bin/loom-lr" --train "$T/c0.svm" --test "$T/c0.svm" --epochs 2 --serial --zero-based
run_job "$T/rr" "$LOOMRUN" -n 2 "$B/bin/loom-lr" --train "$T/c0.svm" --test "$T/c0.svm"
[ $rc -eq 1 ] && has "$T/r0" "30 features" && [ -n "$(fin "$T/r1")" ] &&
    [ "$(fin "$T/r0")" = "$(fin "$T/r1")" ] &&
    has "$T/rr" "c0.svm:[0-9]+: feature index 0 \(indices start at 1; --zero-based" &&
    [ "$(grep -c 'feature index 0' "$T/rr")" -eq 1 ]
ok $? "loom-lr --zero-based: the 1-based run's accuracy; without it one refusal (2 ranks)"

run_job "$T/mm" "$B/bin/loom-lasso" --X "$T/l.X.mtx" --y "$T/l.y.mtx" --lambda 5 --zero-based
[ $rc -eq 2 ] && has "$T/mm" "--zero-based goes with --libsvm"
ok $? "loom-lasso refuses --zero-based with MatrixMarket input (1-based by its standard)"
finish
