#!/bin/sh
# mf_model.t — loom-mf's model (global mean + user and item biases +
# factors) with no flags: on MovieLens 100K u1 the test RMSE is <= 0.925
# on every layout (the serial twin, 1 rank x 2 threads, 2 ranks x 1
# thread, 3 and 4 ranks), all within 0.005 of each other; the test items
# unseen in training (u1.test has 32 such ratings) are counted in the log
# and predicted from what is known, so the RMSE stays finite and low:
# the saved rows of unseen items (users) are exactly zero and the reported
# RMSE is the one of the mean plus the user's (item's) bias, recomputed
# from the saved model (random factors for unseen rows fail both).
. "$(dirname "$0")/../lib.sh"
D=$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/movielens-100k
[ -f "$D/u1.base" ] || skip_all "needs the shared MovieLens 100K data ($D)"
plan 10
rmse() { sed -n 's/.*final test_rmse=\([0-9.]*\).*/\1/p' "$1"; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && a <= b) }'; }
min=9 max=0
for layout in "serial 1 1" "1x2 1 2" "2x1 2 1" "3x1 3 1" "4x1 4 1"; do
    set -- $layout
    s=; [ $1 = serial ] && s=--serial
    OMP_NUM_THREADS=$3 run_job "$T/$1" "$LOOMRUN" -n $2 "$B/bin/loom-mf" --train "$D/u1.base" \
        --test "$D/u1.test" $s
    r=$(rmse "$T/$1")
    [ $rc -eq 0 ] && le "$r" 0.925
    ok $? "$1: default test RMSE $r <= 0.925"
    [ -n "$r" ] && min=$(awk -v a="$r" -v b="$min" 'BEGIN { print (a < b ? a : b) }') &&
        max=$(awk -v a="$r" -v b="$max" 'BEGIN { print (a > b ? a : b) }')
done
awk -v a="$min" -v b="$max" 'BEGIN { exit !(b - a <= 0.005) }'
ok $? "every layout within 0.005 of the others ($min .. $max)"
has "$T/serial" "0 test ratings of users and 32 of items unseen in training"
ok $? "the 32 test ratings of items unseen in training are counted"
# Only unseen items (u1's ids moved past the 1682 it has): predicted by
# the mean plus the user's bias, which must beat the mean alone.
awk '{ print $1 "\t" $2 + 2000 "\t" $3 "\t0" }' "$D/u1.test" | head -2000 >"$T/unseen.test"
base=$(awk 'NR == FNR { s += $3; n++; next } { d = $3 - s / n; e += d * d; m++ }
            END { printf "%.6f", sqrt(e / m) }' "$D/u1.base" "$T/unseen.test")
OMP_NUM_THREADS=2 run_job "$T/u" "$LOOMRUN" -n 1 "$B/bin/loom-mf" --train "$D/u1.base" \
    --test "$T/unseen.test" --model "$T/m"
r=$(rmse "$T/u")
[ $rc -eq 0 ] && awk -v a="$r" -v b="$base" 'BEGIN { exit !(a > 0 && a < b - 0.03) }' &&
    has "$T/u" "0 test ratings of users and 2000 of items unseen"
ok $? "unseen items only: RMSE $r beats the mean's $base by 0.03 (user bias), all 2000 counted"
# items 1683.. never rated in training: factors and bias exactly 0, and the
# prediction mean + user bias, nothing else
zero=$(awk 'FNR > 1682 { for (f = 1; f <= NF; f++) if ($f != 0) bad++ } END { print bad + 0 }' \
    "$T/m/H.txt" "$T/m/item_bias.txt")
again=$(awk 'FILENAME ~ /mean/ { mu = $1; next } FILENAME ~ /user_bias/ { b[FNR] = $1; next }
             { d = $3 - (mu + b[$1]); e += d * d; n++ } END { printf "%.6f", sqrt(e / n) }' \
    "$T/m/mean.txt" "$T/m/user_bias.txt" "$T/unseen.test")
[ "$zero" = 0 ] && awk -v a="$r" -v b="$again" 'BEGIN { d = a - b; exit !(d < 5e-5 && d > -5e-5) }'
ok $? "unseen items: $zero nonzero saved values, RMSE $r = mean + user bias's $again"
# the same for users 944.. (ids moved past u1's 943): mean + item bias
awk '{ print $1 + 1000 "\t" $2 "\t" $3 "\t0" }' "$D/u1.test" | head -2000 >"$T/unseen_u.test"
OMP_NUM_THREADS=2 run_job "$T/uu" "$LOOMRUN" -n 1 "$B/bin/loom-mf" --train "$D/u1.base" \
    --test "$T/unseen_u.test" --model "$T/mu"
r=$(rmse "$T/uu")
zero=$(awk 'FNR > 943 { for (f = 1; f <= NF; f++) if ($f != 0) bad++ } END { print bad + 0 }' \
    "$T/mu/W.txt" "$T/mu/user_bias.txt")
again=$(awk 'FILENAME ~ /mean/ { mu = $1; next } FILENAME ~ /item_bias/ { b[FNR] = $1; next }
             { d = $3 - (mu + b[$2]); e += d * d; n++ } END { printf "%.6f", sqrt(e / n) }' \
    "$T/mu/mean.txt" "$T/mu/item_bias.txt" "$T/unseen_u.test")
[ $rc -eq 0 ] && [ "$zero" = 0 ] && has "$T/uu" "2000 test ratings of users and [0-9]+ of items unseen" &&
    awk -v a="$r" -v b="$again" 'BEGIN { d = a - b; exit !(d < 5e-5 && d > -5e-5) }'
ok $? "unseen users: $zero nonzero saved values, RMSE $r = mean + item bias's $again"
finish
