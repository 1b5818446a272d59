#!/usr/bin/env bash
# lasso_hosts.sh BUILD — loom-lasso's small problem (loom-gen lasso 5 000
# x 2 000, 50 planted, density 0.05, lambda 0.1: 250 values a column) on
# 2 simulated hosts (tests/perf/cluster_lib.sh: network namespaces, UCX
# over TCP, links shaped to RATE, default 1gbit): the default, where every
# rank holds the whole problem and solves it alone, against the rows split
# over the ranks (--batch 8), and one host alone.  Seconds to F*(1 + 1e-6),
# F* from the serial twin; ROUNDS (default 3) interleaved rounds; prints
# one line per run and the medians (docs/loom-lasso.md, "Too small to
# split").  Needs root.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
R=${ROUNDS:-3}
. "$(dirname "$0")/cluster_lib.sh"
cluster_require lasso_hosts.sh
tmp=$(mktemp -d)
trap 'cluster_down; rm -rf "$tmp"' EXIT
"$B/bin/loom-gen" lasso --samples 5000 --features 2000 --nonzeros 50 --density 0.05 \
    --out "$tmp/d" >/dev/null
X="--X $tmp/d.X.mtx --y $tmp/d.y.mtx --lambda 0.1"
fstar=$(OMP_NUM_THREADS=1 "$B/bin/loom-lasso" $X --serial cyclic --iters 20000 --tol 1e-12 |
    sed -n 's/^final objective=//p')
target=$(python3 -c "print(repr($fstar * (1 + 1e-6)))")
cluster_up 2 "${RATE:-1gbit}"
for r in $(seq "$R"); do
    for mode in whole split one; do
        n=2 extra=
        [ $mode = split ] && extra="--batch 8"
        [ $mode = one ] && n=1
        OMP_NUM_THREADS=1 cluster_run $n "$B/bin/loom-lasso" $X --iters 5000 --tol 0 \
            --target "$target" --log "$tmp/log.csv" $extra >/dev/null
        echo "$r $mode $(tail -1 "$tmp/log.csv" | awk -F, -v t="$target" '{ print ($4 <= t ? $3 : "inf"), $2 }')"
    done
done | tee "$tmp/runs"
python3 - "$tmp/runs" <<'PY'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    r, mode, sec, upd = line.split()
    t.setdefault(mode, []).append(float(sec))
for mode in ("whole", "split", "one"):
    print(f"{mode}: median {statistics.median(t[mode]):.4f} s over {len(t[mode])} runs")
print(f"split / whole: {statistics.median(t['split']) / statistics.median(t['whole']):.2f}")
PY
