#!/usr/bin/env bash
# mf_big.sh BUILD — loom-mf at Netflix scale against LIBMF (part of `make
# bench`, through tests/perf/apps.sh, which appends the table this prints
# to docs/bench-apps.md).  loom-gen draws MF_BIG_SAMPLES training ratings
# (default 10^8; 2 000 000 users x 100 000 items, planted rank 16, shuffled),
# never kept in the repository (under BUILD/perf/mf_big, removed at the end
# unless MF_BIG_KEEP=1).  Per round, interleaved: loom-mf 1 rank x 2
# threads at K = 32 for MF_BIG_EPOCHS epochs (default 4) and, with LIBMF=DIR
# (a hand-built cjlin1/libmf, docs/bench-apps.md), its mf-train with 2
# threads and the same epochs, its lines timestamped as they come.  Each
# run under /usr/bin/time -v: wall clock and peak resident memory.  Steady
# state = updates/s over epochs 2..N (loom-mf: its CSV's training seconds;
# LIBMF: between its lines for iterations 0 and N-1).  Prints a markdown
# table: medians over MF_BIG_ROUNDS rounds (default 3) and the rounds'
# ratios.
# Skipped, saying why, when MF_BIG=0, when MemAvailable is under 12 GiB
# or the build's file system has under 6 GiB free (the files take about
# 1.7 GB per 10^8 ratings, shuffling twice that).
set -euo pipefail
B=${1:-build}
N=${MF_BIG_SAMPLES:-1e8}
EPOCHS=${MF_BIG_EPOCHS:-4}
ROUNDS=${MF_BIG_ROUNDS:-3}
LIBMF=${LIBMF:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
say() { printf '%s\n' "$@"; }
if [ "${MF_BIG:-1}" = 0 ]; then say "(loom-mf at 10^8 ratings: skipped, MF_BIG=0)"; exit 0; fi
avail=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
mkdir -p "$B/perf"
free=$(df -Pk "$B/perf" | awk 'NR == 2 { print int($4 / 1048576) }')
if [ "$avail" -lt 12 ] || [ "$free" -lt 6 ]; then
    say "(loom-mf at 10^8 ratings: skipped, ${avail} GiB of memory available and ${free} GiB of disk free; it needs 12 and 6)"
    exit 0
fi
raw=$B/perf/mf_big
mkdir -p "$raw"
[ "${MF_BIG_KEEP:-0}" = 1 ] || trap 'rm -f "$raw"/big.*' EXIT
users=$(awk -v n="$N" 'BEGIN { printf "%.0f", 2000000 * n / 1e8 }')
items=$(awk -v n="$N" 'BEGIN { printf "%.0f", 100000 * n / 1e8 }')
if [ ! -s "$raw/big.train" ]; then
    "$B/bin/loom-gen" ratings --users "$users" --items "$items" --rank 16 \
        --samples "$(awk -v n="$N" 'BEGIN { printf "%.0f", n / 0.9 }')" --out "$raw/big" >"$raw/gen.out"
    shuf --random-source=<(yes) "$raw/big.train" >"$raw/big.shuf" && mv "$raw/big.shuf" "$raw/big.train"
fi
ntrain=$(wc -l <"$raw/big.train")
for r in $(seq "$ROUNDS"); do
    env LOOM_STATS=1 OMP_NUM_THREADS=2 /usr/bin/time -v -o "$raw/loom.$r.time" "$B/bin/loomrun" -n 1 \
        "$B/bin/loom-mf" --train "$raw/big.train" --test "$raw/big.test" --rank 32 \
        --epochs "$EPOCHS" --log "$raw/loom.$r.csv" >"$raw/loom.$r.out" 2>&1
    if [ -n "$LIBMF" ]; then
        /usr/bin/time -v -o "$raw/libmf.$r.time" "$LIBMF/mf-train" -k 32 -t "$EPOCHS" -s 2 \
            -p "$raw/big.test" "$raw/big.train" "$raw/libmf.model" |
            while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done >"$raw/libmf.$r.out"
    fi
done
python3 - "$raw" "$ROUNDS" "$EPOCHS" "$ntrain" "$users" "$items" "$LIBMF" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import csv, re, statistics as st, sys
raw, rounds, epochs, n, users, items, libmf, load = sys.argv[1:9]
rounds, epochs, n = int(rounds), int(epochs), int(n)
def tv(path):  # /usr/bin/time -v: wall seconds, peak RSS in MiB
    t = open(path).read()
    h, m, s = ([0, 0] + [float(x) for x in re.search(r"Elapsed.*: ([\d:.]+)", t).group(1).split(":")])[-3:]
    return h * 3600 + m * 60 + s, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
def loom(r):
    rows = list(csv.DictReader(open(f"{raw}/loom.{r}.csv")))
    steady = n * (len(rows) - 1) / (float(rows[-1]["seconds"]) - float(rows[0]["seconds"]))
    wall, rss = tv(f"{raw}/loom.{r}.time")
    return steady, n * epochs / wall, rss, float(rows[-1]["test_rmse"])
def lib(r):
    ts = {}
    for l in open(f"{raw}/libmf.{r}.out"):
        f = l.split()
        if len(f) > 2 and f[1].isdigit():
            ts[int(f[1])] = float(f[0])
    wall, rss = tv(f"{raw}/libmf.{r}.time")
    return n * (epochs - 1) / (ts[epochs - 1] - ts[0]), n * epochs / wall, rss
L = [loom(r) for r in range(1, rounds + 1)]
print(f"### loom-mf at {n:,} ratings ({users} users x {items} items, K = 32, {epochs} epochs, 1 rank x 2 threads)")
print()
print(f"`tests/perf/mf_big.sh` ({rounds} interleaved rounds, load average at the end {load}); "
      "medians; steady = updates/s over epochs 2..N; whole = all epochs' updates over the command's wall clock "
      "(reading, planning, evaluation included); RSS = peak resident memory (/usr/bin/time -v).")
print()
print("| | steady updates/s | whole run updates/s | peak RSS | final test RMSE |")
print("|---|---|---|---|---|")
if libmf:
    M = [lib(r) for r in range(1, rounds + 1)]
    print(f"| LIBMF, 2 threads | {st.median(x[0] for x in M)/1e6:.1f} M | {st.median(x[1] for x in M)/1e6:.2f} M | "
          f"{st.median(x[2] for x in M):.0f} MiB | (its va_rmse) |")
print(f"| loom-mf 1 x 2 | {st.median(x[0] for x in L)/1e6:.1f} M | {st.median(x[1] for x in L)/1e6:.2f} M | "
      f"{st.median(x[2] for x in L):.0f} MiB | {st.median(x[3] for x in L):.4f} |")
if libmf:
    rs = [L[i][0] / M[i][0] for i in range(rounds)]
    rw = [L[i][1] / M[i][1] for i in range(rounds)]
    rm = [L[i][2] / M[i][2] for i in range(rounds)]
    print(f"| loom-mf / LIBMF (median of rounds) | **{st.median(rs):.2f}x** ({', '.join(f'{x:.2f}' for x in rs)}) | "
          f"{st.median(rw):.2f}x | {st.median(rm):.2f}x | |")
else:
    print()
    print("LIBMF was not given (`LIBMF=DIR make bench`): its rows are left out.")
PY
