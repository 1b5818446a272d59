#!/bin/sh
# lr.t — loom-lr (multinomial logistic regression, data-parallel SGD) on
# Debian's Fashion-MNIST: the serial twin reaches test accuracy >= 0.83 in
# 7 epochs, and 1 rank x 2 threads and 2-4 ranks under hybrid, bsp and
# ssp (staleness 0-3) end within 0.5% of it; a truncated IDX file is
# named with the byte offset and a non-zero exit.  The sparse binary model
# on LIBSVM data with a planted linear rule (loom-gen lasso, labels by
# sign): the serial twin reaches >= 0.85 and 2 and 4 ranks end within 1%
# of it; a malformed LIBSVM line is named file:line.  Without
# Fashion-MNIST only its six tests skip; the LIBSVM ones need no data.
. "$(dirname "$0")/../lib.sh"
F=/usr/share/datasets/fashion-mnist
plan 10
lr() { # NAME RANKS THREADS ARGS...: run loom-lr, leave its final accuracy in $T/NAME.a
    name=$1 n=$2 t=$3; shift 3
    OMP_NUM_THREADS=$t timeout -k 5 120 "$LOOMRUN" -n $n "$B/bin/loom-lr" "$@" >"$T/$name" 2>&1
    rc=$?
    sed -n 's/.*final test_accuracy=\([0-9.]*\).*/\1/p' "$T/$name" >"$T/$name.a"
    [ $rc -eq 0 ] && [ -s "$T/$name.a" ] || { sed 's/^/#   /' "$T/$name"; return 1; }
}
if [ -f $F/train-images-idx3-ubyte.gz ]; then
    lr serial 1 1 --serial --log "$T/serial.csv"
    s=$(cat "$T/serial.a")
    awk -v a="$s" 'BEGIN { exit !(a >= 0.83) }' && [ "$(wc -l <"$T/serial.csv")" -eq 8 ] &&
        head -1 "$T/serial.csv" | grep -q '^iter,samples,seconds,train_logloss,test_accuracy$'
    ok $? "serial twin: test accuracy $s >= 0.83 in 7 epochs; CSV header and 7 rows"
    for c in "1 2 hybrid 0" "2 1 ssp 1" "3 1 bsp 0" "4 1 ssp 3"; do
        set -- $c
        lr "r$1t$2$3$4" $1 $2 --sync $3 --staleness $4
        a=$(cat "$T/r$1t$2$3$4.a")
        awk -v a="$a" -v s="$s" 'BEGIN { d = (a - s) / s; if (d < 0) d = -d; exit !(a > 0 && d <= 0.005) }'
        ok $? "$1 rank(s) x $2 thread(s), $3, staleness $4: accuracy $a within 0.5% of serial $s"
    done
    head -c 1000 $F/t10k-labels-idx1-ubyte.gz | gzip -dc 2>/dev/null | head -c 100 >"$T/short-labels"
    run_job "$T/bad" "$LOOMRUN" -n 2 "$B/bin/loom-lr" --train-images $F/train-images-idx3-ubyte.gz \
        --train-labels $F/train-labels-idx1-ubyte.gz --test-images $F/t10k-images-idx3-ubyte.gz \
        --test-labels "$T/short-labels"
    [ $rc -ne 0 ] && has "$T/bad" "short-labels: byte 100: the data ends early" &&
        [ "$(grep -c 'short-labels' "$T/bad")" -eq 1 ]
    ok $? "a truncated IDX file is named with its byte offset, once"
else
    skip 6 "$F is missing (apt-get install dataset-fashion-mnist)"
fi
printf '1 3:0.5 7:1\n0 2:x\n' >"$T/bad.svm"
run_job "$T/bads" "$LOOMRUN" -n 2 "$B/bin/loom-lr" --train "$T/bad.svm" --test "$T/bad.svm"
[ $rc -ne 0 ] && has "$T/bads" "bad.svm:2:"
ok $? "a malformed LIBSVM line is named file:line"
"$B/bin/loom-gen" lasso --samples 24000 --features 2000 --nonzeros 100 --density 0.02 \
    --out "$T/ls" >/dev/null
awk '{ $1 = ($1 > 0) ? 1 : 0; print }' "$T/ls.svm" >"$T/b.svm"
head -20000 "$T/b.svm" >"$T/b.train"; tail -4000 "$T/b.svm" >"$T/b.test"
lr bserial 1 1 --serial --train "$T/b.train" --test "$T/b.test"
bs=$(cat "$T/bserial.a")
awk -v a="$bs" 'BEGIN { exit !(a >= 0.85) }'
ok $? "sparse binary, serial twin: test accuracy $bs >= 0.85"
for c in "2 1 hybrid 0" "4 1 ssp 2"; do
    set -- $c
    lr "b$1$3" $1 $2 --sync $3 --staleness $4 --train "$T/b.train" --test "$T/b.test"
    a=$(cat "$T/b$1$3.a")
    awk -v a="$a" -v s="$bs" 'BEGIN { d = (a - s) / s; if (d < 0) d = -d; exit !(a > 0 && d <= 0.01) }'
    ok $? "sparse binary, $1 ranks, $3, staleness $4: accuracy $a within 1% of serial $bs"
done
finish
