#!/usr/bin/env bash
# place.sh BUILD BASE — IterStore's placement by accessor (dsm/rehome.c)
# measured: tests/bin/dsm_place (a repeated data-parallel loop whose
# block placement is wrong for it: each rank updates the next rank's
# block) built against BUILD and against BASE, the build of a tree from
# before placement (its lib/ and libloom.a), run alternately ROUNDS times
# (default 5) at RANKS (default "2 3") ranks of one thread, on one host
# ("local") and, as root, one rank per network namespace on links of each
# rate in RATES (default "local 1gbit 100mbit"; tests/perf/cluster_lib.sh:
# veth, tc tbf, UCX over TCP), CALLS = 6
# calls of BLOCK (default 20000) iterations a rank, rows of WIDTH doubles
# (default 8).  Prints, per build
# and rank count, the median over rounds of the median time and bytes
# received of calls 2-6 (after the first call's reconnaissance), and the
# ratio.  Part of make bench when BASE is given (tests/perf/run.sh).
set -euo pipefail
B=${1:?usage: place.sh BUILD BASE}
BASE=${2:?usage: place.sh BUILD BASE}
ROUNDS=${ROUNDS:-5}
RANKS=${RANKS:-2 3}
RATES=${RATES:-local 1gbit 100mbit}
BLOCK=${BLOCK:-20000}
WIDTH=${WIDTH:-8}
cd "$(dirname "$0")/../.."
. tests/perf/cluster_lib.sh
if [ "$(id -u)" != 0 ] || ! command -v tc >/dev/null; then
    RATES=local # the shaped links need root and iproute2
fi
trap cluster_down EXIT
raw=$B/perf/place
mkdir -p "$raw"
base_tree=$(cd "$BASE/.." && pwd)
cc -std=gnu11 -O2 -fopenmp -DNO_PLACEMENT -I"$base_tree/lib" tests/bin/dsm_place.c -o "$raw/dsm_place_base" \
    "$BASE/libloom.a" -lucp -lucs -lnuma -lz -lpthread -lm
: >"$raw/runs.txt"
PLACED=$B
for n in $RANKS; do
    for rate in $RATES; do
        [ "$rate" != local ] && cluster_up "$n" "$rate"
        for r in $(seq "$ROUNDS"); do
            for which in base placed; do
                bin=$PLACED/tests/bin/dsm_place B=$PLACED
                [ $which = base ] && bin=$PWD/$raw/dsm_place_base B=$BASE
                if [ "$rate" = local ]; then
                    OMP_NUM_THREADS=1 "$B/bin/loomrun" -n "$n" "$bin" 6 "$BLOCK" "$WIDTH" >"$raw/out" 2>&1
                else
                    OMP_NUM_THREADS=1 cluster_run "$n" "$bin" 6 "$BLOCK" "$WIDTH" >"$raw/out" 2>&1
                fi || { echo "place.sh: $which on $n ranks ($rate) failed" >&2; cat "$raw/out" >&2; exit 1; }
                grep -q 'exact=1' "$raw/out" || { echo "place.sh: $which on $n ranks: not exact" >&2; exit 1; }
                sed -n "s/.*call \([2-6]\) received \([0-9]*\) in \([0-9.]*\) s/$which $n $rate \2 \3/p" "$raw/out" >>"$raw/runs.txt"
            done
        done
        B=$PLACED
        [ "$rate" != local ] && cluster_down
    done
done
B=$PLACED
python3 - "$raw/runs.txt" "$RANKS" "$ROUNDS" "$BLOCK" "$WIDTH" "$RATES" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    which, n, rate, b, t = line.split()
    runs.setdefault((which, n, rate), []).append((int(b), float(t)))
med = statistics.median
print(f"dsm_place, {sys.argv[4]} iterations a rank a call, rows of {sys.argv[5]} doubles, calls 2-6, "
      f"median of {sys.argv[3]} rounds:\n")
print("| ranks | link | before: ms a call | KB received | with placement: ms a call | KB received | time after / before |")
print("|---|---|---|---|---|---|---|")
for n in sys.argv[2].split():
    for rate in sys.argv[6].split():
        if ("base", n, rate) not in runs:
            continue
        tb, bb = med(t for _, t in runs[("base", n, rate)]), med(b for b, _ in runs[("base", n, rate)])
        tp, bp = med(t for _, t in runs[("placed", n, rate)]), med(b for b, _ in runs[("placed", n, rate)])
        link = "one host" if rate == "local" else rate.replace("bit", "bit/s")
        print(f"| {n} | {link} | {tb * 1e3:.2f} | {bb / 1e3:.0f} | {tp * 1e3:.2f} | {bp / 1e3:.0f} | {tp / tb:.2f} |")
PY
