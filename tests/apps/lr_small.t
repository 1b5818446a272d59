#!/bin/sh
# lr_small.t — loom-lr's defaults on small dense sets against the tools a
# user would pick (issue 46): scikit-learn's digits, breast_cancer
# (standardized) and iris, split 80/20 (tests/apps/lr_small_data.py, which
# needs python3-sklearn: skipped without), in LIBSVM format and digits
# also as IDX; the serial twin and 2 ranks at default flags each reach
# scikit-learn's LogisticRegression or its liblinear solver (whichever is
# lower) less 1 point, or less one test sample where a sample is more
# (iris: 30).  And Fashion-MNIST (all 60 000 images) at the defaults,
# which now stop on --tol as LIBSVM input does: >= 0.84; given --step and
# --decay, nothing is chosen for them (four LIBSVM samples).
. "$(dirname "$0")/../lib.sh"
plan 9
F=/usr/share/datasets/fashion-mnist
LR="$B/bin/loom-lr"
acc() { sed -n 's/.*final test_accuracy=\([0-9.]*\).*/\1/p' "$1"; }
near() { # ACC REF NTEST: ACC >= REF - max(0.01, 1/NTEST)
    awk -v a="$1" -v r="$2" -v n="$3" 'BEGIN { t = 1.0001 / n; if (t < 0.0101) t = 0.0101; exit !(a != "" && a >= r - t) }'
}
if /usr/bin/python3 "$(dirname "$0")/lr_small_data.py" "$T" >"$T/ref" 2>"$T/ref.err"; then
    for n in digits bc iris; do
        ref=$(awk -v n=$n '$1 == n { print ($3 < $5) ? $3 : $5 }' "$T/ref")
        nt=$(wc -l <"$T/$n.test.svm")
        OMP_NUM_THREADS=1 "$LR" --serial --train "$T/$n.train.svm" --test "$T/$n.test.svm" >"$T/$n.1" 2>&1
        OMP_NUM_THREADS=1 run_job "$T/$n.2" "$LOOMRUN" -n 2 "$LR" --train "$T/$n.train.svm" \
            --test "$T/$n.test.svm"
        a1=$(acc "$T/$n.1") a2=$(acc "$T/$n.2")
        near "$a1" "$ref" "$nt" && near "$a2" "$ref" "$nt"
        ok $? "$n (LIBSVM, defaults): serial $a1, 2 ranks $a2 against $ref ($(grep "^$n" "$T/ref"))"
    done
    ref=$(awk '$1 == "digits" { print ($3 < $5) ? $3 : $5 }' "$T/ref")
    D="--train-images $T/digits.tr-img --train-labels $T/digits.tr-lab --test-images $T/digits.te-img --test-labels $T/digits.te-lab"
    OMP_NUM_THREADS=1 "$LR" --serial $D >"$T/di.1" 2>&1
    OMP_NUM_THREADS=1 run_job "$T/di.2" "$LOOMRUN" -n 2 "$LR" $D
    a1=$(acc "$T/di.1") a2=$(acc "$T/di.2")
    near "$a1" "$ref" 360 && near "$a2" "$ref" 360
    ok $? "digits (IDX, its 0-16 values as bytes, defaults): serial $a1, 2 ranks $a2 against $ref"
    # the defaults say what they chose: 3.3 over the mean squared length, halving every 60 000 samples
    has "$T/bc.1" "loom-lr: step 1.39[0-9]* \(3.3 / 2.36[0-9]*, the samples' mean squared length\), decay 0.994[0-9]* an epoch"
    ok $? "breast_cancer: the step and decay the defaults chose are printed ($(grep 'loom-lr: step' "$T/bc.1"))"
    # the IDX pixels are scaled by their training maximum: digits' bytes 0-16 reach 1, as in LIBSVM
    has "$T/di.1" "step 0.204[0-9]* \(3.3 / 16.1[0-9]*" && has "$T/digits.1" "step 0.204[0-9]* \(3.3 / 16.1[0-9]*"
    ok $? "digits: IDX and LIBSVM input give the same scaled samples (mean squared length 16.1)"
else
    skip 6 "python3-sklearn is missing ($(head -1 "$T/ref.err"))"
fi
if [ -n "${LOOMTEST_SANITIZE:-}" ]; then # 13 epochs of 60 000 images: minutes under a sanitizer
    skip 2 "Fashion-MNIST at the defaults under a sanitizer: the plain build checks it"
elif [ -f $F/train-images-idx3-ubyte.gz ]; then
    OMP_NUM_THREADS=1 timeout -k 5 600 "$LR" --serial >"$T/fm" 2>&1
    a=$(acc "$T/fm")
    awk -v a="$a" 'BEGIN { exit !(a != "" && a >= 0.84) }' && has "$T/fm" "converged \(--tol\)"
    ok $? "Fashion-MNIST at the defaults: $a >= 0.84, stopped by --tol ($(grep -o 'over [0-9]* epochs' "$T/fm"))"
    has "$T/fm" "decay 0.5 an epoch"
    ok $? "Fashion-MNIST: 60 000 samples an epoch, the step halves each"
else
    skip 2 "$F is missing (apt-get install dataset-fashion-mnist)"
fi
# schedule() is the same for IDX and LIBSVM input: four samples show it
# (this ran 2 epochs of Fashion-MNIST, ~3 s, before)
printf '1 1:1 2:0.5\n0 1:-1 3:2\n1 2:1\n0 1:-0.5 3:1\n' >"$T/four.svm"
OMP_NUM_THREADS=1 "$LR" --serial --train "$T/four.svm" --test "$T/four.svm" --step 0.02 --decay 0.5 \
    --epochs 2 --tol 0 >"$T/given" 2>&1
OMP_NUM_THREADS=1 "$LR" --serial --train "$T/four.svm" --test "$T/four.svm" --epochs 2 --tol 0 >"$T/chosen" 2>&1
! grep -q "loom-lr: step" "$T/given" && [ "$(grep -c 'loom-lr: iter .* train_logloss' "$T/given")" -eq 2 ] &&
    has "$T/chosen" "loom-lr: step .*, decay .* an epoch"
ok $? "given --step and --decay, nothing is chosen for them (and without them, both are)"
finish
