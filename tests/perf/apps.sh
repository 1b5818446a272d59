#!/usr/bin/env bash
# apps.sh BUILD — the apps against their serial twins, side by side in one
# run, written to docs/bench-apps.md (part of `make bench`):
#   loom-mf: updates/s of the serial twin, 1 rank x 2 threads and 2 ranks
#     x 1 thread on generated Netflix-shaped ratings (MF_SAMPLES training
#     ratings in random order, 200000 users x 20000 items, planted rank 16)
#     at K = 32 and 128, 6 epochs: steady state (epochs 2-6) and the whole
#     run (wall clock, reading and planning included); with LIBMF=DIR (a
#     hand-built cjlin1/libmf, docs/bench-apps.md) its mf-train, 2
#     threads, on the same files, interleaved; and the training objective
#     after every pass on MovieLens u1 (or generated ratings when the
#     shared data is absent);
#   loom-mf at 10^8 ratings against LIBMF: tests/perf/mf_big.sh (MF_BIG=0
#     skips it);
#   loom-lda (when built): tokens/s at K = 100 and K = 1000 for the same
#     three layouts, and the log-likelihood per pass.
# Every figure is the median of RUNS runs (default 3).
set -euo pipefail
B=${1:-build}
RUNS=${BENCH_RUNS:-3}
MF_SAMPLES=${MF_SAMPLES:-1e7}
LIBMF=${LIBMF:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
raw=$B/perf/apps
mkdir -p "$raw"
ml=../shared/data/movielens-100k
if [ -f $ml/u1.base ]; then train=$ml/u1.base test=$ml/u1.test data="MovieLens 100K u1"
else
    "$B/bin/loom-gen" ratings --users 900 --items 1600 --rank 5 --samples 100000 --out "$raw/small" >/dev/null
    train=$raw/small.train test=$raw/small.test data="generated ratings (no shared MovieLens)"
fi
"$B/bin/loom-gen" ratings --users 200000 --items 20000 --rank 16 \
    --samples "$(awk -v n="$MF_SAMPLES" 'BEGIN { printf "%.0f", n / 0.9 }')" --out "$raw/big" >"$raw/big.gen"
shuf --random-source=<(yes) "$raw/big.train" >"$raw/big.shuf" && mv "$raw/big.shuf" "$raw/big.train"
layouts="serial:1:1 1x2:1:2 2x1:2:1"
# run NAME RANKS THREADS ARGS...: RUNS logged runs of one layout
run() {
    local name=$1 n=$2 t=$3; shift 3
    for r in $(seq "$RUNS"); do
        OMP_NUM_THREADS=$t "$B/bin/loomrun" -n "$n" "$@" --log "$raw/$name.$r.csv" >"$raw/$name.$r.out" 2>&1
    done
}
# wall CMD...: runs CMD, prints its wall-clock seconds
wall() {
    local t0; t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }'
}
# The 10^7-rating problem: every contender once per round, interleaved.
for K in 32 128; do
    for r in $(seq "$RUNS"); do
        for l in $layouts; do
            IFS=: read -r name n t <<<"$l"
            s=; [ "$name" = serial ] && s=--serial
            wall env OMP_NUM_THREADS=$t "$B/bin/loomrun" -n "$n" "$B/bin/loom-mf" --train "$raw/big.train" \
                --test "$raw/big.test" --rank $K --epochs 6 $s --log "$raw/mf-big$K-$name.$r.csv" \
                >"$raw/mf-big$K-$name.$r.wall"
        done
        if [ -n "$LIBMF" ]; then # each output line (one per iteration) timestamped as it comes
            t0=$EPOCHREALTIME
            "$LIBMF/mf-train" -k $K -t 6 -s 2 -p "$raw/big.test" "$raw/big.train" "$raw/libmf.model" |
                while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done >"$raw/libmf-$K.$r.out"
            awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }' >"$raw/libmf-$K.$r.wall"
        fi
    done
done
for l in $layouts; do
    IFS=: read -r name n t <<<"$l"
    s=; [ "$name" = serial ] && s=--serial
    run "mf-u1-$name" "$n" "$t" "$B/bin/loom-mf" --train "$train" --test "$test" $s
done
lda=0
if [ -x "$B/bin/loom-lda" ]; then
    lda=1
    "$B/bin/loom-gen" lda --docs 5000 --vocab 5000 --topics 100 --doc-length 200 --out "$raw/corpus" >/dev/null
    for K in 100 1000; do
        for l in $layouts; do
            IFS=: read -r name n t <<<"$l"
            s=; [ "$name" = serial ] && s=--serial
            run "lda-$K-$name" "$n" "$t" "$B/bin/loom-lda" --train "$raw/corpus.docword.txt" \
                --vocab "$raw/corpus.vocab.txt" --topics "$K" --iters 5 $s
        done
    done
fi
lr=0
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    lr=1
    for l in $layouts; do
        IFS=: read -r name n t <<<"$l"
        s=; [ "$name" = serial ] && s=--serial
        run "lr-$name" "$n" "$t" "$B/bin/loom-lr" --epochs 3 $s
    done
fi
w2v=0
if command -v bible >/dev/null; then
    w2v=1
    bible -l 100000 'gen1:1-rev22:21' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$raw/kjv.txt"
    for l in $layouts; do
        IFS=: read -r name n t <<<"$l"
        s=; [ "$name" = serial ] && s=--serial
        run "w2v-$name" "$n" "$t" "$B/bin/loom-w2v" --train "$raw/kjv.txt" --output "$raw/kjv.vec" \
            --dim 50 --epochs 2 $s
    done
fi
# loom-lasso: time to the objective of the twin's converged run (within 1e-6)
"$B/bin/loom-gen" lasso --samples 2000 --features 4000 --nonzeros 40 --correlation 0.3 \
    --out "$raw/lasso" >/dev/null
lx="--X $raw/lasso.X.mtx --y $raw/lasso.y.mtx --lambda-path 1 --lambda-min-ratio 0.1"
OMP_NUM_THREADS=1 "$B/bin/loom-lasso" $lx --serial cyclic --tol 1e-10 --iters 1000 --log "$raw/lasso-opt.csv" \
    >"$raw/lasso-opt.out"
fstar=$(tail -1 "$raw/lasso-opt.csv" | cut -d, -f4)
target=$(awk -v f="$fstar" 'BEGIN { printf "%.12g", f * (1 + 1e-6) }')
for l in $layouts; do
    IFS=: read -r name n t <<<"$l"
    s=; [ "$name" = serial ] && s="--serial cyclic"
    run "lasso-$name" "$n" "$t" "$B/bin/loom-lasso" $lx --tol 0 --iters 1000 --target "$target" $s
done
python3 - "$raw" "$RUNS" "$data" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$lda" \
    "$(cat "$raw/big.gen")" "$lr" "$w2v" "$LIBMF" >docs/bench-apps.md <<'PY'
import csv, statistics as st, sys, os
raw, runs, data, cores, load, lda, gen = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6] == "1", sys.argv[7]
lr, w2v, libmf = sys.argv[8] == "1", sys.argv[9] == "1", sys.argv[10]
lay = [("serial", "serial twin"), ("1x2", "Loom 1 rank x 2 threads"), ("2x1", "Loom 2 ranks x 1 thread")]
def rows(name, r):
    with open(f"{raw}/{name}.{r}.csv") as f:
        return list(csv.DictReader(f))
def rate(name):
    """median over runs of samples/seconds after the first pass (planning excluded)"""
    v = []
    for r in range(1, runs + 1):
        x = rows(name, r)
        s0, t0 = float(x[0]["samples"]), float(x[0]["seconds"])
        s1, t1 = float(x[-1]["samples"]), float(x[-1]["seconds"])
        v.append((s1 - s0) / (t1 - t0))
    return st.median(v)
def per_pass(name, col):
    x = [rows(name, r) for r in range(1, runs + 1)]
    return [st.median(float(x[r][i][col]) for r in range(runs)) for i in range(len(x[0]))]
out = []
w = out.append
w("# Apps against their serial twins")
w("")
w("Produced by `make bench` (tests/perf/apps.sh); every figure is the median "
  f"of {runs} runs, all layouts in one run of the script, on a {cores}-core "
  f"machine (load average before: {load}).  Rates exclude each run's first "
  "pass, which includes the loop's planning.")
w("")
w("## loom-mf (SGD matrix factorization) against LIBMF")
w("")
w(f"Generated ratings in random order: {gen.strip()}.  6 epochs; steady state = "
  "updates/s over epochs 2-6 (loom-mf: its CSV's training seconds; LIBMF: the time "
  "between its lines for iterations 0 and 5, timestamped as they come); whole run = 6 epochs of updates over the "
  "wall-clock time of the command, reading, planning and per-epoch test RMSE included; "
  "planning = loom-mf's first epoch less the mean of the others (LIBMF: the mean epoch).  "
  "Every contender once per round, rounds interleaved.")
w("")
def wall(name):
    return st.median(float(open(f"{raw}/{name}.{r}.wall").read()) for r in range(1, runs + 1))
def steady(name):
    v = []
    for r in range(1, runs + 1):
        x = rows(name, r)
        v.append((float(x[-1]["samples"]) - float(x[0]["samples"])) /
                 (float(x[-1]["seconds"]) - float(x[0]["seconds"])))
    return st.median(v)
for K in (32, 128):
    n = float(rows(f"mf-big{K}-serial", 1)[0]["samples"])
    w(f"### K = {K}")
    w("")
    w("| | steady-state updates/s | whole run updates/s | whole run seconds | planning (LIBMF: one epoch) | final test RMSE |"
      + (" steady vs LIBMF | whole vs LIBMF |" if libmf else ""))
    w("|---|---|---|---|---|---|" + ("---|---|" if libmf else ""))
    lib = None
    if libmf:
        v, ep = [], []
        for r in range(1, runs + 1):
            ts = {int(l.split()[1]): float(l.split()[0]) for l in open(f"{raw}/libmf-{K}.{r}.out")
                  if len(l.split()) == 5 and l.split()[1].isdigit()}
            v.append(5 * n / (ts[5] - ts[0]))
            ep.append((ts[5] - ts[0]) / 5)
        t6 = wall(f"libmf-{K}")
        lib = (st.median(v), 6 * n / t6)
        w(f"| LIBMF, 2 threads | {lib[0]/1e6:.1f} M | {lib[1]/1e6:.1f} M | {t6:.2f} | "
          f"{st.median(ep):.2f} s | — | 1.00 | 1.00 |")
    for k, label in lay:
        s_, t = steady(f"mf-big{K}-{k}"), wall(f"mf-big{K}-{k}")
        rm = st.median(float(rows(f"mf-big{K}-{k}", r)[-1]["test_rmse"]) for r in range(1, runs + 1))
        pl = st.median(float(x[0]["seconds"]) - (float(x[-1]["seconds"]) - float(x[0]["seconds"])) /
                       (len(x) - 1) for x in (rows(f"mf-big{K}-{k}", r) for r in range(1, runs + 1)))
        plan = "—" if k == "serial" else f"{pl:.2f} s"
        line = f"| {label} | {s_/1e6:.1f} M | {6*n/t/1e6:.1f} M | {t:.2f} | {plan} | {rm:.4f} |"
        if lib:
            line += f" {s_/lib[0]:.2f} | {6*n/t/lib[1]:.2f} |"
        w(line)
    w("")
if not libmf:
    w("LIBMF was not given (`LIBMF=DIR make bench`): its rows are left out.")
    w("")
w(f"Training objective (and test RMSE) after each pass on {data}, default flags:")
w("")
w("| pass | " + " | ".join(l for _, l in lay) + " | Loom 2x1 / serial |")
w("|---|" + "---|" * (len(lay) + 1))
obj = {k: per_pass(f"mf-u1-{k}", "train_obj") for k, _ in lay}
rm = {k: per_pass(f"mf-u1-{k}", "test_rmse") for k, _ in lay}
for i in range(len(obj["serial"])):
    if i < 5 or (i + 1) % 5 == 0:
        w(f"| {i+1} | " + " | ".join(f"{obj[k][i]:.0f} ({rm[k][i]:.4f})" for k, _ in lay)
          + f" | {obj['2x1'][i]/obj['serial'][i]:.4f} |")
if lda:
    for K in (100, 1000):
        w("")
        w(f"## loom-lda (collapsed Gibbs, K = {K})")
        w("")
        w("Generated corpus: 5000 documents x 200 tokens, vocabulary 5000.")
        w("")
        w("| layout | tokens/s | vs serial twin | loglik after the last pass |")
        w("|---|---|---|---|")
        base = rate(f"lda-{K}-serial")
        for k, label in lay:
            r = rate(f"lda-{K}-{k}")
            ll = per_pass(f"lda-{K}-{k}", "loglik")
            w(f"| {label} | {r/1e6:.2f} M | {r/base:.2f} | {ll[-1]:.6g} |")
        w("")
        w("Log-likelihood per pass:")
        w("")
        w("| pass | " + " | ".join(l for _, l in lay) + " | Loom 2x1 / serial |")
        w("|---|" + "---|" * (len(lay) + 1))
        ll = {k: per_pass(f"lda-{K}-{k}", "loglik") for k, _ in lay}
        for i in range(len(ll["serial"])):
            w(f"| {i+1} | " + " | ".join(f"{ll[k][i]:.6g}" for k, _ in lay)
              + f" | {ll['2x1'][i]/ll['serial'][i]:.4f} |")
def simple(title, what, unit, prefix, col, note):
    w("")
    w(f"## {title}")
    w("")
    w(note)
    w("")
    w(f"| layout | {unit} | vs serial twin | {col} after the last pass |")
    w("|---|---|---|---|")
    base = rate(f"{prefix}-serial")
    for k, label in lay:
        r = rate(f"{prefix}-{k}")
        q = per_pass(f"{prefix}-{k}", col)[-1]
        w(f"| {label} | {r/1e3:.0f} k | {r/base:.2f} | {q:.4f} |")
w("")
w("## loom-lasso (coordinate descent, priority schedule)")
w("")
w("`loom-gen lasso --samples 2000 --features 4000 --nonzeros 40 --correlation 0.3`, "
  "lambda = 0.1 lambda_max; time until the objective is within 1e-6 of the serial "
  "twin's converged value (the twin is cyclic coordinate descent).")
w("")
w("| layout | seconds to objective | coordinate updates | vs serial twin (time) |")
w("|---|---|---|---|")
def last(name, col):
    return st.median(float(rows(name, r)[-1][col]) for r in range(1, runs + 1))
b = last("lasso-serial", "seconds")
for k, label in lay:
    t = last(f"lasso-{k}", "seconds")
    w(f"| {label} | {t:.3f} | {last(f'lasso-{k}', 'updates'):.0f} | {b/t:.2f} |")
if lr:
    simple("loom-lr (multinomial logistic regression, hybrid)", "samples", "samples/s", "lr",
           "test_accuracy", "Fashion-MNIST (60 000 x 784), 3 epochs, sync every 20 samples per rank.")
if w2v:
    simple("loom-w2v (skip-gram, negative sampling, hybrid)", "words", "words/s", "w2v", "loss",
           "King James Bible (781 k words, vocabulary 5 343), dim 50, 2 epochs, sync every 200 sentences.")
w("")
w("On 2 cores, 2 ranks x 1 thread and 1 rank x 2 threads use both cores; "
  "any other work on the machine shows up directly in these rates.")
print("\n".join(out))
PY
# loom-mf at 10^8 ratings against LIBMF (tests/perf/mf_big.sh: skipped, saying
# why, with MF_BIG=0 or short of memory or disk)
{ echo; tests/perf/mf_big.sh "$B"; } >>docs/bench-apps.md
echo "apps.sh: wrote docs/bench-apps.md"
