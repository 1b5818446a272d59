#!/usr/bin/env bash
# lda_handoff.sh BUILD [REF_BIN] — loom-lda's ring hand-off on one host:
# 2 ranks x 1 thread against 1 rank x 2 threads (the issue's goal: >=
# 0.9x), and, given REF_BIN (a directory holding an older loomrun and
# loom-lda, e.g. built from the commit before the sparse hand-off), the
# same 2x1 run with the older hand-off.  Corpus as tests/perf/apps.sh:
# loom-gen lda --docs 5000 --vocab 5000 --doc-length 200, K = 100 and
# 1000, ITERS passes (default 5).  RUNS rounds (default 5), each running
# every layout once in a rotated order; prints per K the median tokens/s
# of each layout, the medians of the per-round ratios 2x1 / 1x2 (and new
# 2x1 / older 2x1), and the
# bytes rank 0 sent per pass and per hand-off (LOOM_STATS; 2 hand-offs a
# pass on 2 ranks, the counting pass included).
set -euo pipefail
B=${1:-build}
REF=${2:-}
RUNS=${RUNS:-5}
ITERS=${ITERS:-5}
raw=$B/perf/lda_handoff
mkdir -p "$raw"
"$B/bin/loom-gen" lda --docs 5000 --vocab 5000 --topics 100 --doc-length 200 --out "$raw/corpus" >/dev/null
layouts="new-1x2 new-2x1"
[ -n "$REF" ] && layouts="$layouts ref-2x1"
for K in 100 1000; do
    for r in $(seq "$RUNS"); do
        set -- $layouts
        for s in $(seq $(( (r - 1) % $# ))); do set -- "${@:2}" "$1"; done # rotate the order
        for l in "$@"; do
            bin=$B/bin; [ "${l%%-*}" = ref ] && bin=$REF
            n=${l#*-}; n=${n%x*}; t=${l#*x}
            OMP_NUM_THREADS=$t LOOM_STATS=1 "$bin/loomrun" -n "$n" "$bin/loom-lda" \
                --train "$raw/corpus.docword.txt" --topics "$K" --iters "$ITERS" --eval-every "$ITERS" \
                >"$raw/$K-$l.$r.out" 2>&1
        done
    done
done
python3 - "$raw" "$RUNS" "$ITERS" "$layouts" <<'PY'
import re, statistics, sys
raw, runs, iters, layouts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split()
med = statistics.median
def rate(K, l, r):
    return float(re.search(r"tokens/s of training rounds: ([0-9.e+]+)|in [0-9.]+ s of training rounds: ([0-9.e+]+) tokens/s",
                           open(f"{raw}/{K}-{l}.{r}.out").read()).group(2))
def sent(K, l, r):
    m = re.search(r"\[0\] loom: rank 0: stats 'word_topic' \(ring\): sent (\d+) B", open(f"{raw}/{K}-{l}.{r}.out").read())
    return int(m.group(1)) if m else 0
for K in (100, 1000):
    print(f"K = {K}:")
    for l in layouts:
        rs = [rate(K, l, r) for r in range(1, runs + 1)]
        b = med(sent(K, l, r) for r in range(1, runs + 1))
        extra = ""
        if l.endswith("2x1"):
            ratio = med(rate(K, l, r) / rate(K, "new-1x2", r) for r in range(1, runs + 1))
            if l == "ref-2x1":
                ratio2 = med(rate(K, "new-2x1", r) / rate(K, l, r) for r in range(1, runs + 1))
                extra = f", new-2x1 / ref-2x1 {ratio2:.3f}x"
            extra = (f", vs new-1x2 {ratio:.3f}x{extra}; rank 0 sent {b / (iters + 1) / 1e6:.3f} MB a pass, "
                     f"{b / (2 * (iters + 1)) / 1e3:.1f} KB a hand-off")
        print(f"  {l}: {med(rs) / 1e6:.2f} M tokens/s (runs: {', '.join(f'{x / 1e6:.2f}' for x in rs)}){extra}")
PY
