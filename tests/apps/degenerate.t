#!/bin/sh
# degenerate.t — every app refuses input it cannot learn from (no rows, no
# features, one class, one word, a target with nothing to fit) with one
# message naming the file and a non-zero exit, on 2 ranks: never a model
# trained on nothing, never nan reported with exit 0, never the same
# message once per rank or followed by loomrun's generic one.  loom-gen
# refuses to write such data sets.
. "$(dirname "$0")/../lib.sh"
plan 26
refused() { # OUT PATTERN: failed, the pattern exactly once, no second message
    [ $rc -ne 0 ] && has "$1" "$2" && [ "$(grep -cE -- "$2" "$1")" -eq 1 ] &&
        ! grep -q "exited with status" "$1" && ! grep -qi "nan" "$1"
}
app() { # OUT APP ARGS...: run APP on 2 ranks
    out=$1 a=$2; shift 2
    run_job "$T/$out" "$LOOMRUN" -n 2 "$B/bin/$a" "$@"
}
: >"$T/empty"
printf '1 1:0.5\n1 2:1\n1 1:2 3:1\n' >"$T/oneclass.svm"
printf '1\n0\n1\n' >"$T/nofeat.svm"
printf '1 1:1\n0 2:1\n1 1:1 2:1\n0 3:1\n' >"$T/ok.svm"
printf '2 1:1\n5 2:1\n0 2:1\n1 3:1\n' >"$T/three.svm"
perl -e 'print pack("NNNN", 0x803, 4, 2, 2), "\1\2\3\4" x 4' >"$T/i.img"
perl -e 'print pack("NN", 0x801, 4), "\4\4\4\4"' >"$T/one.lab"

app lr1 loom-lr --train "$T/empty" --test "$T/ok.svm"
refused "$T/lr1" "empty has no samples"
ok $? "loom-lr: an empty training file is refused once"
app lr2 loom-lr --train "$T/ok.svm" --test "$T/empty"
refused "$T/lr2" "empty has no samples"
ok $? "loom-lr: an empty test file is refused once"
app lr3 loom-lr --train "$T/nofeat.svm" --test "$T/ok.svm"
refused "$T/lr3" "nofeat.svm has no features"
ok $? "loom-lr: labels without features are refused"
app lr4 loom-lr --train "$T/oneclass.svm" --test "$T/ok.svm"
refused "$T/lr4" "oneclass.svm has one class only"
ok $? "loom-lr: one class (LIBSVM) is refused"
app lr5 loom-lr --train-images "$T/i.img" --train-labels "$T/one.lab" \
    --test-images "$T/i.img" --test-labels "$T/one.lab"
refused "$T/lr5" "one.lab holds one class only"
ok $? "loom-lr: one class (IDX) is refused"
app lr6 loom-lr --train "$T/three.svm" --test "$T/three.svm" --epochs 1
[ $rc -eq 0 ] && has "$T/lr6" "4 classes, labels 0 1 2 5" && has "$T/lr6" "3 features \(sparse\), 4 classes"
ok $? "loom-lr: more than two labels in a LIBSVM file: the multinomial model, never label > 0"
printf '0.5 1:1\n1 2:1\n' >"$T/real.svm"
app lr7 loom-lr --train "$T/real.svm" --test "$T/ok.svm"
refused "$T/lr7" "real.svm has labels that are not integers"
ok $? "loom-lr: labels that are not class ids are refused once"
app lr8 loom-lr --train "$T/ok.svm" --test "$T/three.svm"
refused "$T/lr8" "three.svm has label [25], which is not a class of the training data"
ok $? "loom-lr: a test label unseen in training is refused once"

printf 'ox ox ox ox ox ox ox\n' >"$T/oneword.txt"
app w1 loom-w2v --train "$T/empty" --output "$T/x.vec"
refused "$T/w1" "has 0 distinct words"
ok $? "loom-w2v: an empty corpus is refused once (not once per rank)"
app w2 loom-w2v --train "$T/oneword.txt" --output "$T/x.vec"
refused "$T/w2" "has 1 distinct words"
ok $? "loom-w2v: a corpus of one word is refused once"

printf '0\n0\n0\n' >"$T/empty.dw"
app d1 loom-lda --text "$T/empty" --topics 3 --iters 2
refused "$T/d1" "empty: no tokens to train on"
ok $? "loom-lda: an empty text is refused once"
app d2 loom-lda --text "$T/oneword.txt" --topics 3 --iters 2
refused "$T/d2" "one distinct word"
ok $? "loom-lda: a text of one word is refused"
app d3 loom-lda --train "$T/empty.dw" --topics 3 --iters 2
refused "$T/d3" "empty.dw: no tokens to train on"
ok $? "loom-lda: an empty UCI corpus is refused"
app d4 loom-lda --text "$T/oneword.txt" --test "$T/empty" --topics 3 --iters 2
[ $rc -ne 0 ] && [ "$(grep -c 'loom-lda:.*one distinct word' "$T/d4")" -eq 1 ]
ok $? "loom-lda: refused before the test file is read, one message"

"$B/bin/loom-gen" ratings --users 40 --items 30 --samples 600 --out "$T/r" >/dev/null
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 0\n' >"$T/none.mtx"
app m1 loom-mf --train "$T/empty" --test "$T/r.test"
refused "$T/m1" "empty has no ratings"
ok $? "loom-mf: an empty training file is refused once"
app m2 loom-mf --train "$T/r.train" --test "$T/empty"
refused "$T/m2" "empty has no ratings"
ok $? "loom-mf: an empty test file is refused once"
app m3 loom-mf --train "$T/none.mtx" --test "$T/r.test"
refused "$T/m3" "none.mtx has no ratings"
ok $? "loom-mf: a MatrixMarket file of no entries is refused once"
app m4 loom-mf --train "$T/r.train" --test "$T/r.test" --step 1e3 --epochs 2
[ $rc -ne 0 ] && has "$T/m4" "loom-mf: the final test_rmse is -?nan" && ! grep -q "final test_rmse=" "$T/m4"
ok $? "loom-mf: a diverged run (nan) is not reported as a result (exit $rc)"

printf '0 1:1\n0 2:1\n0 1:1 2:1\n' >"$T/zero.svm"
printf '3 1:1\n3 2:2\n3 1:1 2:1\n3 2:5\n' >"$T/const.svm"
app s1 loom-lasso --libsvm "$T/empty" --lambda 1
refused "$T/s1" "empty has no samples"
ok $? "loom-lasso: an empty LIBSVM file is refused once (no 'final objective=0')"
app s2 loom-lasso --libsvm "$T/nofeat.svm" --lambda 1
refused "$T/s2" "nofeat.svm has no features"
ok $? "loom-lasso: labels without features are refused"
app s3 loom-lasso --libsvm "$T/zero.svm" --lambda-path 3
refused "$T/s3" "X'y is 0 \(y is all zero"
ok $? "loom-lasso: an all-zero target is refused"
app s4 loom-lasso --libsvm "$T/const.svm" --lambda 1 --standardize
refused "$T/s4" "X'y is 0 .*constant with --standardize"
ok $? "loom-lasso: a constant target with --standardize is refused"

G=$B/bin/loom-gen
run_job "$T/g1" "$G" ratings --users 5 --items 5 --samples 10 --test-fraction 1 --out "$T/g"
refused "$T/g1" "loom-gen ratings: --test-fraction must be below 1"
ok $? "loom-gen ratings: a test fraction of 1 (no training ratings) is refused"
run_job "$T/g2" "$G" ratings --users 5 --items 5 --samples 1 --test-fraction 0.9 --out "$T/g"
refused "$T/g2" "no rating fell in the training set"
ok $? "loom-gen ratings: an empty training set is reported, exit $rc"
run_job "$T/g3" "$G" lda --docs 5 --vocab 5 --topics 2 --doc-length 0.001 --out "$T/g"
refused "$T/g3" "every document came out empty"
ok $? "loom-gen lda: an empty corpus is reported, exit $rc"
run_job "$T/g4" "$G" lasso --samples 10 --features 5 --nonzeros 0 --noise 0 --out "$T/g"
refused "$T/g4" "makes y all zero"
ok $? "loom-gen lasso: an all-zero target is refused"
finish
