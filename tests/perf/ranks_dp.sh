#!/usr/bin/env bash
# ranks_dp.sh BUILD [BASE_BUILD] — loom-lr and loom-w2v on 2 ranks x 1
# thread against 1 rank x 2 threads, side by side (docs/bench-apps.md, "2
# ranks against 2 threads: loom-lr and loom-w2v").  Every round runs each
# contender once, in rotating order; the figures are medians over the
# rounds of each run's throughput over the same round's 1 x 2 run.
#   loom-lr: Fashion-MNIST (60 000 images), 3 epochs, samples/s of training
#     (the log's seconds) and the final test accuracy;
#   loom-w2v: the King James Bible with 24 planted twin words (every second
#     occurrence of each renamed WORDz), dim 50, 2 epochs, words/s and the
#     final loss, plus the twins' quality: mean cosine of WORD and WORDz,
#     and the share of twins whose nearest word is the original (hit@1).
# With BASE_BUILD (a build of the tree before write notices) its 2 x 1 runs
# with the default flags join as "before".  1 x 2 runs on this VM come in a
# fast and a slow state (2.0-2.2 M against 0.8-1.0 M words/s, from one run
# to the next: the two threads share the model, and where the hypervisor
# puts the two vCPUs decides what that costs), so each run's median is
# also divided by the best 1 x 2 round: the ratio against 1 x 2 at its
# fastest, the conservative one.  Before each w2v 1 x 2 run the vCPU
# pair's cache-line latency is measured (tests/perf/pingpong: about 50 ns
# on one L3, about 250 ns on two, which is what decides the state; it can
# change during the run), and the w2v ratios are also given apart for
# rounds under and over 150 ns.
# ROUNDS (default 5).  Needs
# Debian's dataset-fashion-mnist (or its four files in FASHION_MNIST=DIR)
# and bible-kjv (without it, a BUILD/perf/ranks_dp/kjv.txt this script
# made earlier is used, e.g. one copied to a lent machine); prints a
# Markdown table (raw logs in BUILD/perf/ranks_dp).
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
BASE=${2:-}
ROUNDS=${ROUNDS:-5}
F=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
W=$B/perf/ranks_dp # raw logs and results stay here
mkdir -p "$W"
PAIRS="lord king israel god people son house land up down word three head delivered live places
build counsel sought garments saints rod hebron upright"
if ! command -v bible >/dev/null; then
    [ -s "$W/kjv.txt" ] || { echo "ranks_dp.sh: needs bible-kjv (apt-get install bible-kjv)" >&2; exit 1; }
else bible -l 100000 'gen1:1-rev22:21' | sed -e 's/^ *[0-9]* //' | grep -v '^$' |
    awk -v P="$PAIRS" 'BEGIN { n = split(P, a, /[ \n]+/); for (i = 1; i <= n; i++) want[a[i]] = 1 }
        { for (i = 1; i <= NF; i++) { w = tolower($i); gsub(/[^a-z]/, "", w);
              if (w in want) { if (c[w]++ % 2) $i = w "z" } } print }' >"$W/kjv.txt"
fi
FD="--train-images $F/train-images-idx3-ubyte.gz --train-labels $F/train-labels-idx1-ubyte.gz
    --test-images $F/t10k-images-idx3-ubyte.gz --test-labels $F/t10k-labels-idx1-ubyte.gz"
# twins VEC: "cosine hit1" of the planted pairs
twins() {
    python3 - "$1" "$PAIRS" <<'EOF'
import sys, math
vec = {}
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        p = line.split()
        v = [float(x) for x in p[1:]]
        n = math.sqrt(sum(x * x for x in v)) or 1
        vec[p[0]] = [x / n for x in v]
words, cs, hit = list(vec), [], 0
for w in sys.argv[2].split():
    if w not in vec or w + 'z' not in vec:
        continue
    q = vec[w + 'z']
    s = sum(a * b for a, b in zip(q, vec[w]))
    best = max(sum(a * b for a, b in zip(q, vec[u])) for u in words if u not in (w, w + 'z'))
    cs.append(s)
    hit += s > best
print("%.4f %.3f" % (sum(cs) / len(cs), hit / len(cs)))
EOF
}
# contenders: NAME BUILD RANKS THREADS APP ARGS...
lr_runs=("lr-1x2|$B|1|2|" "lr-2x1-sum|$B|2|1|" "lr-2x1-avg|$B|2|1|--merge avg"
         "lr-2x1-avg5000|$B|2|1|--merge avg --sync-every 5000")
w2v_runs=("w2v-1x2|$B|1|2|" "w2v-2x1|$B|2|1|" "w2v-2x1-sum5000|$B|2|1|--merge sum"
          "w2v-2x1-avg|$B|2|1|--merge avg")
if [ -n "$BASE" ]; then
    BASE=$(cd "$BASE" && pwd)
    lr_runs+=("lr-2x1-before|$BASE|2|1|")
    w2v_runs+=("w2v-2x1-before|$BASE|2|1|")
fi
out=$W/results
: >"$out"
for r in $(seq "$ROUNDS"); do
    all=("${lr_runs[@]}" "${w2v_runs[@]}")
    n=${#all[@]}
    for k in $(seq 0 $((n - 1))); do
        IFS='|' read -r name bin ranks threads extra <<<"${all[$(((k + r) % n))]}"
        log=$W/$name.$r.csv
        if [ "${name%%-*}" = lr ]; then
            OMP_NUM_THREADS=$threads "$bin/bin/loomrun" -n "$ranks" "$bin/bin/loom-lr" $FD --epochs 3 \
                --tol 0 --log "$log" $extra >"$W/$name.$r.out" 2>&1
            # samples/s, accuracy
            awk -F, 'END { printf "%s %.6g %s\n", "'"$name $r"'", $2 / $3, $5 }' "$log" >>"$out"
        else
            [ "$name" = w2v-1x2 ] && echo "pingpong $r $("$B/tests/perf/pingpong")" >>"$out"
            OMP_NUM_THREADS=$threads "$bin/bin/loomrun" -n "$ranks" "$bin/bin/loom-w2v" --train "$W/kjv.txt" \
                --output "$W/$name.vec" --dim 50 --epochs 2 --log "$log" $extra >"$W/$name.$r.out" 2>&1
            echo "$(awk -F, 'END { printf "%s %.6g %s", "'"$name $r"'", $2 / $3, $4 }' "$log") $(twins "$W/$name.vec")" >>"$out"
        fi
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | median rate | median ratio to 1 x 2 | median rate / best 1 x 2 | quality (median) |"
echo "|---|---|---|---|---|"
python3 - "$out" <<'EOF'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
by, pp = {}, {}
for r in rows:
    if r[0] == 'pingpong':
        pp[int(r[1])] = float(r[2])
        continue
    by.setdefault(r[0], {})[int(r[1])] = [float(x) for x in r[2:]]
for name in by:
    ref = by[name.split('-')[0] + '-1x2']
    rates = [v[0] for v in by[name].values()]
    ratios = [v[0] / ref[k][0] for k, v in by[name].items() if k in ref]
    q = [st.median(v[i] for v in by[name].values()) for i in range(1, len(next(iter(by[name].values()))))]
    qs = ("accuracy %.4f" % q[0]) if name.startswith('lr') else \
         ("loss %.4f, twins cosine %.4f, hit@1 %.3f" % tuple(q))
    best = max(v[0] for v in ref.values())
    print("| %s | %.0f | %.2f (%.2f-%.2f) | %.2f | %s |" % (name, st.median(rates), st.median(ratios),
                                                          min(ratios), max(ratios),
                                                          st.median(rates) / best, qs))
print()
print("vCPU ping-pong before each round's w2v-1x2 (ns): %s" % ", ".join("%.0f" % pp[k] for k in sorted(pp)))
ref = by.get('w2v-1x2', {})
for name in (n for n in by if n.startswith('w2v-2x1')):
    for what, near in (("one L3 (< 150 ns)", True), ("two (>= 150 ns)", False)):
        rs = [v[0] / ref[k][0] for k, v in by[name].items() if k in ref and k in pp and (pp[k] < 150) == near]
        if rs:
            print("- %s over the same round's w2v-1x2, vCPUs on %s: median %.2f (%.2f-%.2f, %d rounds)"
                  % (name, what, st.median(rs), min(rs), max(rs), len(rs)))
EOF
