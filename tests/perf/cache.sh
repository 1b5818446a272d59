#!/usr/bin/env bash
# cache.sh BUILD — what the bounded cache (LOOM_CACHE_BYTES, docs/dsm.md
# "Bounded cache") costs: tests/bin/dsm_cache on 3 ranks (rows of 1 KiB,
# 4096 of them: a 4 MiB model, 6 epochs of reading every row and adding
# to two thirds) and loom-lr's hashed-id model on 2 ranks (the data of
# tests/perf/lr_map.sh, 3 epochs), each with no cap, a cap of half the
# model and a cap of a tenth, in rotating order over ROUNDS (default 5)
# rounds.  Prints a Markdown table of median wall seconds (dsm_cache) or
# training samples/s (loom-lr), the ratio to the uncapped run of the same
# round, and the largest resident bytes of the working copies (mincore).
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
ROUNDS=${ROUNDS:-5}
W=$B/perf/cache
mkdir -p "$W"
LR=$B/perf/lr_map
[ -f "$LR/m.train" ] || { echo "cache.sh: run tests/perf/lr_map.sh $1 first (its data)" >&2; exit 1; }
MODEL=$((4096 * 1024))
WMAP=$((20001 * 4)) # the map's weights: 20 000 features and the bias, one float each
for r in $(seq "$ROUNDS"); do
    for cap in 0 $((MODEL / 2)) $((MODEL / 10)); do
        s=$(date +%s.%N)
        OMP_NUM_THREADS=1 LOOM_CACHE_BYTES=$cap "$B/bin/loomrun" -n 3 "$B/tests/bin/dsm_cache" \
            rows 4096 1024 6 >"$W/d.$cap.$r" 2>&1
        awk -v a="$(date +%s.%N)" -v b="$s" 'BEGIN { print a - b }' >>"$W/d.$cap.$r"
    done
    for cap in 0 $((WMAP / 2)) $((WMAP / 10)); do
        OMP_NUM_THREADS=1 LOOM_CACHE_BYTES=$cap "$B/bin/loomrun" -n 2 "$B/bin/loom-lr" \
            --train "$LR/m.train" --test "$LR/m.test" --epochs 3 --tol 0 >"$W/l.$cap.$r" 2>&1
    done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| run | cap | median | / no cap | resident copies, largest |"
echo "|---|---|---|---|---|"
for cap in 0 $((MODEL / 2)) $((MODEL / 10)); do
    for r in $(seq "$ROUNDS"); do
        t=$(tail -1 "$W/d.$cap.$r"); t0=$(tail -1 "$W/d.0.$r")
        awk -v a="$t" -v b="$t0" 'BEGIN { print a, a / b }'
    done >"$W/d.$cap"
    res=$(sed -n 's/.*resident_max=\([0-9]*\).*/\1/p' "$W/d.$cap.1")
    printf "| dsm_cache, 3 ranks, 4 MiB of rows | %s | %.2f s | %.2f | %s B |\n" \
        "$([ $cap = 0 ] && echo none || echo $cap B)" "$(cut -d' ' -f1 "$W/d.$cap" | median)" \
        "$(cut -d' ' -f2 "$W/d.$cap" | median)" "$res"
done
rate() { sed -n 's/.*loom-lr: \([0-9]*\) samples\/s.*/\1/p' "$1"; }
for cap in 0 $((WMAP / 2)) $((WMAP / 10)); do
    for r in $(seq "$ROUNDS"); do
        awk -v a="$(rate "$W/l.$cap.$r")" -v b="$(rate "$W/l.0.$r")" 'BEGIN { print a, a / b }'
    done >"$W/l.$cap"
    acc=$(sed -n 's/.*final test_accuracy=\([0-9.]*\).*/\1/p' "$W/l.$cap.1")
    printf "| loom-lr hashed ids, 2 ranks (accuracy %s) | %s | %.0f samples/s | %.2f | — |\n" "$acc" \
        "$([ $cap = 0 ] && echo none || echo $cap B)" "$(cut -d' ' -f1 "$W/l.$cap" | median)" \
        "$(cut -d' ' -f2 "$W/l.$cap" | median)"
done
echo
echo "Medians of $ROUNDS rounds ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end)."
