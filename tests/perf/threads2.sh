#!/usr/bin/env bash
# threads2.sh BUILD [BASE_BUILD] — issue 42's goal 3 on this host: loom-lr
# and loom-w2v at 1 rank x 2 threads against 1 x 1, beside the machine's
# own ceiling, two 1 x 1 jobs side by side (2 x their mean time's share).
# Each round runs, in turn: 1 x 1, 1 x 2, 1 x 2 with OMP_WAIT_POLICY=passive
# (waiting threads sleep instead of spinning), BASE_BUILD's 1 x 2 (when
# given), and the pair; the figure of a run is its training seconds (the apps'
# "over N epochs (S s training)").  Prints per layout the median seconds,
# the median over rounds of 1 x 1 / that layout (the speed-up: a
# round's runs follow each other within seconds, so the host's slow
# spells, which move single runs by tens of percent here, mostly cancel),
# and the quality each run ended at (loom-lr test accuracy, loom-w2v
# loss).  Problems:
#   loom-lr   Fashion-MNIST's first 20 000 training images, defaults, 12
#             epochs (--tol 0)
#   loom-w2v  Genesis-Deuteronomy from bible-kjv, dim 50, 3 epochs
# ROUNDS (default 10).  Needs the dataset-fashion-mnist and bible-kjv
# packages (an app is skipped without its data).
set -euo pipefail
B=$(cd "${1:?usage: threads2.sh BUILD [BASE_BUILD]}" && pwd)
BASE=${2:+$(cd "$2" && pwd)}
R=${ROUNDS:-10}
W=$B/perf/threads2
mkdir -p "$W"
F=/usr/share/datasets/fashion-mnist
apps=()
if [ -f $F/train-images-idx3-ubyte.gz ]; then
    "$(dirname "$0")/../idx_head.sh" $F/train-images-idx3-ubyte.gz 20000 "$W/tr-img"
    "$(dirname "$0")/../idx_head.sh" $F/train-labels-idx1-ubyte.gz 20000 "$W/tr-lab"
    apps+=("lr|loom-lr --train-images $W/tr-img --train-labels $W/tr-lab --test-images $F/t10k-images-idx3-ubyte.gz --test-labels $F/t10k-labels-idx1-ubyte.gz --epochs 12 --tol 0|final test_accuracy=")
fi
if command -v bible >/dev/null; then
    bible -l 100000 'gen1:1-deu34:12' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$W/gd.txt"
    apps+=("w2v|loom-w2v --train $W/gd.txt --output $W/OUT.vec --dim 50 --epochs 3|final loss=")
fi
# run BUILD THREADS TAG CMD QUALITY: one job; prints "seconds quality"
run() {
    local cmd=${4//OUT/$3}
    env OMP_NUM_THREADS=$2 ${WAIT:+OMP_WAIT_POLICY=$WAIT} "$1/bin/loomrun" -n 1 "$1/bin/"$cmd >"$W/$3.out" 2>&1 || { echo "NaN NaN"; return; }
    echo "$(sed -n 's/.*over [0-9]* [a-z]* (\([0-9.]*\) s training).*/\1/p' "$W/$3.out" | tail -1)" \
         "$(sed -n "s/.*$5\([0-9.]*\).*/\1/p" "$W/$3.out" | tail -1)"
}
for a in "${apps[@]}"; do
    IFS='|' read -r name cmd qual <<<"$a"
    : >"$W/$name.txt"
    for r in $(seq "$R"); do
        echo "$r 1x1 $(run "$B" 1 "$name-a" "$cmd" "$qual")" >>"$W/$name.txt"
        echo "$r 1x2 $(run "$B" 2 "$name-b" "$cmd" "$qual")" >>"$W/$name.txt"
        echo "$r 1x2-passive $(WAIT=passive run "$B" 2 "$name-w" "$cmd" "$qual")" >>"$W/$name.txt"
        [ -z "$BASE" ] || echo "$r base-1x2 $(run "$BASE" 2 "$name-c" "$cmd" "$qual")" >>"$W/$name.txt"
        { run "$B" 1 "$name-p" "$cmd" "$qual" >"$W/p1" & run "$B" 1 "$name-q" "$cmd" "$qual" >"$W/p2"; wait; }
        # the pair does two jobs' work: its share of one job is half its mean time
        echo "$r pair $(cat "$W/p1" "$W/p2" | awk '{ s += $1; q = $2 } END { printf "%.4f %s", s / 4, q }')" \
            >>"$W/$name.txt"
    done
done
python3 - "$W" "${apps[@]%%|*}" <<'EOF'
import statistics as st, sys
w = sys.argv[1]
print("| app | layout | median s | speed-up over 1 x 1 (median, range) | quality (range) |")
print("|---|---|---|---|---|")
for name in sys.argv[2:]:
    runs = {}
    for line in open(f"{w}/{name}.txt"):
        r, lay, t, q = line.split()
        runs.setdefault(lay, {})[r] = (float(t), float(q))
    one = runs["1x1"]
    for lay, rs in runs.items():
        ts = [t for t, q in rs.values() if t == t]
        sp = [one[r][0] / t for r, (t, q) in rs.items() if t == t and one[r][0] == one[r][0]]
        qs = [q for t, q in rs.values() if q == q]
        print(f"| {name} | {lay} | {st.median(ts):.3f} | {st.median(sp):.2f} ({min(sp):.2f}-{max(sp):.2f}) "
              f"| {min(qs):g}-{max(qs):g} ({len(qs)} of {len(rs)} ended) |")
EOF
