#!/bin/sh
# lr_map.t — loom-lr's sparse binary model over hashed feature ids: a
# LIBSVM file whose indices reach past 2^24 keeps its weights in a
# distributed map (loom_dmap) keyed by the index.  The same data with its
# indices spread to ~4e18 (f -> f * 4000000000000037 + 12345, which keeps
# every row's order) must train exactly as the dense model does on the
# original indices: the serial twin and 1 rank x 1 thread give the same
# loss and accuracy in every epoch and the same saved weights, to the
# last digit.  On 2-3 ranks (hybrid, ssp, bsp with 2 threads) the map
# ends within 1% of the serial accuracy; the saved model lists each
# index of the file once, in order, then the bias, and applied with awk
# to the raw test file gives the reported accuracy; on 2 ranks every round
# after the first stages the map whole and merges it by one allreduce.
# --zero-based keeps index 2^63 - 2; the multinomial model and
# loom-lasso refuse such indices with one message.  With LOOM_CACHE_BYTES a tenth of the
# weights (docs/dsm.md, "Bounded cache"), 2 ranks drop copies at every
# sync point and still end within 1% of serial.
. "$(dirname "$0")/../lib.sh"
plan 12
lr() { # NAME RANKS THREADS ARGS...: run loom-lr, leave its final accuracy in $T/NAME.a
    name=$1 n=$2 t=$3; shift 3
    lim=120; [ -n "${LOOMTEST_SANITIZE:-}" ] && lim=300
    OMP_NUM_THREADS=$t timeout -k 5 $lim "$LOOMRUN" -n $n "$B/bin/loom-lr" "$@" >"$T/$name" 2>&1
    rc=$?
    sed -n 's/.*final test_accuracy=\([0-9.]*\).*/\1/p' "$T/$name" >"$T/$name.a"
    [ $rc -eq 0 ] && [ -s "$T/$name.a" ] || { sed 's/^/#   /' "$T/$name"; return 1; }
}
same_log() { # A.csv B.csv: the same epochs, samples, loss and accuracy
    cut -d, -f1,2,4,5 "$1" >"$1.4"; cut -d, -f1,2,4,5 "$2" >"$2.4"
    [ "$(wc -l <"$1.4")" -eq 6 ] && cmp -s "$1.4" "$2.4" || { diff "$1.4" "$2.4" | sed 's/^/#   /'; return 1; }
}
"$(dirname "$0")/../hashed_svm.sh" "$B" "$T" 6000 3000 1000 4000000000000037 --nonzeros 60 --density 0.03
for f in train test; do mv "$T/d.$f" "$T/b.$f"; mv "$T/m.$f" "$T/h.$f"; done
E="--epochs 5 --step 0.1 --decay 0.8 --tol 0"

lr ds 1 1 --serial --train "$T/b.train" --test "$T/b.test" $E --log "$T/ds.csv" --model "$T/ds.model"
lr hs 1 1 --serial --train "$T/h.train" --test "$T/h.test" $E --log "$T/hs.csv" --model "$T/hs.model"
s=$(cat "$T/ds.a")
same_log "$T/ds.csv" "$T/hs.csv" && has "$T/hs" "features \(sparse, binary; indices up to 2\^63, a distributed map\)" &&
    ! grep -q "distributed map" "$T/ds"
ok $? "serial twin: the map on hashed ids trains exactly as the dense vector (accuracy $s), epoch by epoch"

# the same weights: dense line f (1-based) is feature f, map line "K(f) w"
awk 'NR == FNR { d[FNR] = $1; n = FNR; next }
     $1 == "bias" { bad += $2 != d[n]; b++; next }
     { k++; bad += $2 != d[k] }
     END { exit !(b == 1 && k == n - 1 && !bad) }' "$T/ds.model" "$T/hs.model" &&
    perl -ne 'exit 1 if !/^bias / && !(/^(\d+) / && ($1 - 12345) % 4000000000000037 == 0)' "$T/hs.model"
ok $? "serial twin: the saved map model has the dense model's weights, under the hashed indices"

lr d11 1 1 --train "$T/b.train" --test "$T/b.test" $E --log "$T/d11.csv"
lr h11 1 1 --train "$T/h.train" --test "$T/h.test" $E --log "$T/h11.csv"
same_log "$T/d11.csv" "$T/h11.csv" && same_log "$T/ds.csv" "$T/h11.csv"
ok $? "1 rank x 1 thread (loom_for): map and dense runs equal each other and the serial twin"

for c in "2 1 hybrid 0" "3 1 ssp 2" "2 2 bsp 0"; do
    set -- $c
    LOOM_STATS=1 lr "h$1$2$3" $1 $2 --sync $3 --staleness $4 --train "$T/h.train" --test "$T/h.test" $E \
        --model "$T/h$1$2$3.model"
    a=$(cat "$T/h$1$2$3.a")
    awk -v a="$a" -v s="$s" 'BEGIN { d = (a - s) / s; if (d < 0) d = -d; exit !(a > 0 && d <= 0.01) }'
    ok $? "map, $1 rank(s) x $2 thread(s), $3, staleness $4: accuracy $a within 1% of serial $s"
done

# 2 ranks, hybrid: every round changes most of the map's one-float rows
# (counting each row's record header, though half the map's capacity is
# unused), so each is staged whole and merged by one allreduce, on both
# ranks: every round but the job's first, whose predecessor was in the
# last epoch's loop (a repeated site, sched/prefetch.c)
for k in 0 1; do
    n=$(sed -n "s/^\[$k\] .*loom_for: \([0-9]*\) rounds.*/\1/p" "$T/h21hybrid" | awk '{ n += $1 } END { print n + 0 }')
    sed -n "s/^\[$k\] .*stats 'w' (bsp):.* staged whole \([0-9]*\), dense merges \([0-9]*\).*/\1 \2/p" "$T/h21hybrid" >"$T/sw$k"
    [ "$n" -gt 5 ] && [ "$(cat "$T/sw$k")" = "$((n - 1)) $((n - 1))" ] || { echo "# rank $k: $n rounds, staged whole and dense: $(cat "$T/sw$k")"; false; }
done
ok $? "map, 2 ranks, hybrid: $n rounds, each after the first staged whole and merged by one allreduce on both ranks"
# threads with copies of their own (bsp, 2 threads) add their changes to
# the bias before the ranks average it: the interval stays dense data's
has "$T/h22bsp" "a sync point every 40 samples of each rank \(summed; threads with copies of their own" &&
    has "$T/h21hybrid" "a sync point every [0-9]{3,} samples of each rank \(features summed, the busiest in"
ok $? "map: 2 ranks x 2 threads under bsp sync every 40 samples; 2 x 1 hybrid every $(sed -n 's/.*a sync point every \([0-9]*\).*/\1/p' "$T/h21hybrid")"

LOOM_CACHE_BYTES=400 LOOM_STATS=1 lr hc 2 1 --train "$T/h.train" --test "$T/h.test" $E
a=$(cat "$T/hc.a")
awk -v a="$a" -v s="$s" 'BEGIN { d = (a - s) / s; if (d < 0) d = -d; exit !(a > 0 && d <= 0.01) }' &&
    [ "$(grep -c "stats 'w' (bsp):.* evicted [1-9][0-9]*, cached" "$T/hc")" -eq 2 ]
ok $? "map, 2 ranks, LOOM_CACHE_BYTES=400 (a tenth of the weights): copies evicted on both ranks, accuracy $a within 1% of serial $s"

# the 2-rank bsp model (every rank evaluated the same weights): every
# index of the training and test files once, in increasing order, the
# bias last; p = sigma(w.x + b) > 0.5 on the raw test file gives the
# reported accuracy
M="$T/h22bsp.model"
cat "$T/h.train" "$T/h.test" | tr ' ' '\n' | sed -n 's/:.*//p' | sort -nu >"$T/idx"
sed '$d' "$M" | cut -d' ' -f1 >"$T/midx"
awk 'NR == FNR { w[$1] = $2; next }
     { z = w["bias"]; for (k = 2; k <= NF; k++) { split($k, v, ":"); z += w[v[1]] * v[2] }
       right += (z > 0) == ($1 > 0); n++ }
     END { printf "%.6f\n", right / n }' "$M" "$T/h.test" >"$T/h.acc"
tail -1 "$M" | grep -q '^bias [-0-9.e]*$' && cmp -s "$T/idx" "$T/midx" &&
    awk -v a="$(cat "$T/h.acc")" -v s="$(cat "$T/h22bsp.a")" 'BEGIN { d = a - s; exit !(d < 0.002 && d > -0.002) }'
ok $? "2 ranks, bsp: the model lists the $(wc -l <"$T/idx") indices once, in order, then the bias, and predicts $(cat "$T/h.acc") as reported ($(cat "$T/h22bsp.a"))"

# --zero-based: index 2^63 - 2 is a feature, saved under its own number;
# more than two classes, or loom-lasso, refuse such an index
printf '1 0:1 9223372036854775806:1\n0 5:1\n1 9223372036854775806:2\n0 0:-1 5:1\n' >"$T/z.svm"
lr z 2 1 --zero-based --train "$T/z.svm" --test "$T/z.svm" --model "$T/z.model"
grep -q '^9223372036854775806 ' "$T/z.model" && grep -q '^0 ' "$T/z.model" && [ "$(wc -l <"$T/z.model")" -eq 4 ]
ok $? "--zero-based: indices 0 and 2^63 - 2 are features of the map, saved by their own numbers"
printf '1 3:1\n4 5:1\n9 9000000000:1\n' >"$T/m3.svm"
run_job "$T/m3" "$LOOMRUN" -n 2 "$B/bin/loom-lr" --train "$T/m3.svm" --test "$T/m3.svm"
r1=$rc
run_job "$T/la" "$B/bin/loom-lasso" --libsvm "$T/m3.svm" --lambda 0.1
[ $r1 -ne 0 ] && has "$T/m3" "m3.svm: feature index 9000000000: the multinomial model \(3 classes\) keeps a row of weights for every index up to 16777216" &&
    [ "$(grep -c 'feature index 9000000000' "$T/m3")" -eq 1 ] &&
    [ $rc -ne 0 ] && has "$T/la" "m3.svm: feature index 9000000000: loom-lasso keeps one coefficient per index, up to 2147483647"
ok $? "indices past the dense models' reach: loom-lr's multinomial model and loom-lasso each say so once"
finish
