#!/usr/bin/env bash
# lr_map.sh BUILD [BASE_BUILD] — loom-lr's sparse binary model with its weights in a
# distributed map (hashed feature ids) against the dense weight vector on
# the same data, side by side (docs/bench-lr-map.md).  The data: loom-gen
# lasso, labels by sign; the map's copy has every index f renumbered to
# f * 400000000000003 + 12345 (order kept), so both train the same model
# (tests/apps/lr_map.t checks that 1 rank gives the same bits).  Every
# round runs each contender once, dense and map alternating; the figures
# are medians over ROUNDS (default 5) of training samples/s (the log's
# seconds), the map's ratio to the dense run of the same round, the final
# test accuracy and rank 0's bytes sent per epoch.  With BASE_BUILD (an
# earlier build) its dense and map runs join each round, and each of
# this build's runs is also divided by the same round's base run ("dense
# / base", "map / base"; "map, base / dense": the base's map over this
# build's dense).  Prints Markdown (raw logs in BUILD/perf/lr_map).
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
BASE=${2:+$(cd "$2" && pwd)}
ROUNDS=${ROUNDS:-5}
W=$B/perf/lr_map
mkdir -p "$W"
"$(dirname "$0")/../hashed_svm.sh" "$B" "$W" 100000 20000 20000 400000000000003 --nonzeros 400 \
    --density 0.002 --seed 3
E="--epochs 3 --tol 0"
CONFIGS="1x1 1x2 2x1"
for r in $(seq "$ROUNDS"); do
    for c in $CONFIGS; do
        for m in d m ${BASE:+bd b}; do # b: the base on the map's data, bd: on the dense
            bin=$B; [ ${m:0:1} = b ] && bin=$BASE
            data=m; [ ${m: -1} = d ] && data=d
            OMP_NUM_THREADS=${c#*x} "$bin/bin/loomrun" -n "${c%x*}" "$bin/bin/loom-lr" \
                --train "$W/$data.train" --test "$W/$data.test" $E >"$W/$c.$m.$r" 2>&1
        done
    done
done
# field RUN: "samples/s accuracy sentMB" of one run
field() {
    awk '/samples\/s over/ { for (i = 1; i <= NF; i++) if ($i == "samples/s") s = $(i - 1) }
         /final test_accuracy=/ { sub(/.*=/, ""); a = $0 }
         /rank0_sent_MB/ { for (i = 1; i <= NF; i++) if ($i == "rank0_sent_MB") b = $(i + 1) }
         END { printf "%s %s %s\n", s, a, b == "" ? "-" : b }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| ranks x threads | dense samples/s | map samples/s | map / dense |${BASE:+ map, base / dense | dense / base | map / base |} accuracy dense / map | rank 0 MB sent per epoch, dense / map |"
echo "|---|---|---|---|${BASE:+---|---|---|}---|---|"
for c in $CONFIGS; do
    for r in $(seq "$ROUNDS"); do
        read -r ds da db <<<"$(field "$W/$c.d.$r")"
        read -r ms ma mb <<<"$(field "$W/$c.m.$r")"
        bs=0 bds=0; [ -n "$BASE" ] && read -r bs _ _ <<<"$(field "$W/$c.b.$r")" &&
            read -r bds _ _ <<<"$(field "$W/$c.bd.$r")"
        echo "$ds $ms $(awk -v a="$ms" -v b="$ds" 'BEGIN { print a / b }') $da $ma $db $mb" \
            "$(awk -v a="$bs" -v b="$ds" 'BEGIN { print a / b }')" \
            "$(awk -v a="$ds" -v b="$bds" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
            "$(awk -v a="$ms" -v b="$bs" 'BEGIN { print (b > 0 ? a / b : 0) }')"
    done >"$W/$c.rows"
    col() { cut -d' ' -f"$1" "$W/$c.rows" | median; }
    base=; [ -n "$BASE" ] && base=" $(printf %.2f "$(col 8)") | $(printf %.2f "$(col 9)") | $(printf %.2f "$(col 10)") |"
    printf "| %s | %.0f | %.0f | **%.2f** |%s %s / %s | %s / %s |\n" "${c/x/ × }" "$(col 1)" \
        "$(col 2)" "$(col 3)" "$base" "$(col 4)" "$(col 5)" "$(cut -d' ' -f6 "$W/$c.rows" | head -1)" \
        "$(cut -d' ' -f7 "$W/$c.rows" | head -1)"
done
echo
echo "Medians of $ROUNDS rounds ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end);" \
     "100 000 training and 20 000 test samples, 20 000 features, ~40 non-zeros a sample, 3 epochs."
