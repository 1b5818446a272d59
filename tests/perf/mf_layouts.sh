#!/usr/bin/env bash
# mf_layouts.sh [BUILD] — loom-mf's layouts against each other on the
# generated 10^7-rating problem of tests/perf/apps.sh (200000 users x
# 20000 items, planted rank 16, random order): per round, in rotating
# order, 1 rank x 2 threads, 2 ranks x 1 thread, 1 rank x 1 thread and
# the serial twin (--serial, file order), 6 epochs at K = 32 and 128.
# Prints per layout the medians of steady-state updates/s (epochs 2-6,
# from the CSV's training seconds) and whole-run updates/s (6 epochs over
# the command's wall clock: reading, planning and the per-epoch test RMSE
# included), then the medians of the per-round ratios 2x1 / 1x2 and
# 1x1 / serial twin, with the load average before and after.
#   ROUNDS (default 5), KS (default "32 128"), LAYOUTS (default
#   "1x2 2x1 1x1 serial"), MF_DATA=DIR: use DIR/big.train and
#   DIR/big.test instead of drawing them (into BUILD/perf/mf).  Layout
#   "base2x1" runs 2 ranks x 1 thread from the build BASE=DIR (e.g. one of
#   the commit before a change), and the ratios 2x1 / base2x1 follow.
set -euo pipefail
B=${1:-build}
ROUNDS=${ROUNDS:-5}
KS=${KS:-32 128}
LAYOUTS=${LAYOUTS:-1x2 2x1 1x1 serial}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
raw=$B/perf/mf
mkdir -p "$raw"
data=${MF_DATA:-$raw}
if [ ! -f "$data/big.train" ]; then
    "$B/bin/loom-gen" ratings --users 200000 --items 20000 --rank 16 --samples 11111111 \
        --out "$data/big" >/dev/null
    shuf --random-source=<(yes) "$data/big.train" >"$data/big.shuf" && mv "$data/big.shuf" "$data/big.train"
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
set -- $LAYOUTS
nl=$#
layouts=("$@")
for K in $KS; do
    for r in $(seq "$ROUNDS"); do
        for x in $(seq 0 $((nl - 1))); do
            l=${layouts[$(((x + r) % nl))]}
            n=1 t=1 s= b=$B
            case $l in
            1x2) t=2 ;;
            2x1) n=2 ;;
            base2x1) n=2 b=${BASE:?base2x1 needs BASE=DIR, a build directory} ;;
            serial) s=--serial ;;
            esac
            t0=$EPOCHREALTIME
            OMP_NUM_THREADS=$t "$b/bin/loomrun" -n $n "$b/bin/loom-mf" --train "$data/big.train" \
                --test "$data/big.test" --rank "$K" --epochs 6 $s --log "$raw/$K-$l.$r.csv" \
                >"$raw/$K-$l.$r.out" 2>&1
            awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }' >"$raw/$K-$l.$r.wall"
        done
    done
done
python3 - "$raw" "$ROUNDS" "$KS" "$LAYOUTS" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import csv, statistics as st, sys
raw, rounds, ks, lays, l0, l1 = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5], sys.argv[6]
def rates(K, l, r):
    x = list(csv.DictReader(open(f"{raw}/{K}-{l}.{r}.csv")))
    steady = (float(x[-1]["samples"]) - float(x[0]["samples"])) / (float(x[-1]["seconds"]) - float(x[0]["seconds"]))
    return steady, float(x[-1]["samples"]) / float(open(f"{raw}/{K}-{l}.{r}.wall").read())
print(f"loom-mf layouts, {rounds} rounds, load average before {l0}, after {l1}")
for K in ks:
    v = {l: [rates(K, l, r) for r in range(1, rounds + 1)] for l in lays}
    for l in lays:
        print(f"K={K} {l:6s} steady {st.median(a for a, _ in v[l]) / 1e6:7.1f} M/s   "
              f"whole run {st.median(b for _, b in v[l]) / 1e6:6.1f} M/s")
    for a, b in (("2x1", "1x2"), ("1x1", "serial"), ("2x1", "base2x1")):
        if a in v and b in v:
            rs = [v[a][r][0] / v[b][r][0] for r in range(rounds)]
            rw = [v[a][r][1] / v[b][r][1] for r in range(rounds)]
            print(f"K={K} {a}/{b}: steady {st.median(rs):.2f} (rounds " + " ".join(f"{x:.2f}" for x in rs)
                  + f"), whole run {st.median(rw):.2f} (rounds " + " ".join(f"{x:.2f}" for x in rw) + ")")
PY
