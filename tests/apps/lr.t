#!/bin/sh
# lr.t — loom-lr (multinomial logistic regression, data-parallel SGD) on
# Debian's Fashion-MNIST: the serial twin reaches test accuracy >= 0.83 in
# 7 epochs, and 1 rank x 2 threads and 2-4 ranks under hybrid, bsp and
# ssp (staleness 0-3) end within 0.5% of it; a truncated or foreign IDX
# file is named with the byte offset and a non-zero exit.
. "$(dirname "$0")/../lib.sh"
F=/usr/share/datasets/fashion-mnist
[ -f $F/train-images-idx3-ubyte.gz ] || skip_all "$F is missing (apt-get install dataset-fashion-mnist)"
plan 6
lr() { # NAME RANKS THREADS ARGS...: run loom-lr, leave its final accuracy in $T/NAME.a
    name=$1 n=$2 t=$3; shift 3
    OMP_NUM_THREADS=$t timeout -k 5 120 "$LOOMRUN" -n $n "$B/bin/loom-lr" "$@" >"$T/$name" 2>&1
    rc=$?
    sed -n 's/.*final test_accuracy=\([0-9.]*\).*/\1/p' "$T/$name" >"$T/$name.a"
    [ $rc -eq 0 ] && [ -s "$T/$name.a" ] || { sed 's/^/#   /' "$T/$name"; return 1; }
}
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
finish
