#!/bin/sh
# degenerate.t — every app refuses input it cannot learn from (no rows, no
# features, one class, one word) with one message naming the file and a
# non-zero exit, on 2 ranks: never a model trained on nothing, never nan
# reported with exit 0, never the same message once per rank or followed by
# loomrun's generic one.
. "$(dirname "$0")/../lib.sh"
plan 12
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
[ $rc -eq 0 ] && [ "$(grep -c 'has more than two labels' "$T/lr6")" -eq 1 ]
ok $? "loom-lr: more than two labels in the sparse binary model: one warning, not silence"

printf 'a a a a a a a\n' >"$T/oneword.txt"
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
finish
