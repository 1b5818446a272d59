#!/usr/bin/env bash
# scaling_local.sh BUILD [RAW] — the scaling model's check on one many-core
# host (docs/scaling.md, "Checked on 16 cores"): the apps and problems of
# scaling.sh (scaling_apps.sh; SCALE times larger if set) at each ranks x threads layout of LAYOUTS
# (default: 1-16 ranks of one thread, one rank of 2-16 threads, and 4 x 4),
# RUNS times (default 3) in interleaved rounds.  Each run leaves its --log
# (RAW/APP-RxT.N.csv), output (.out: the per-epoch bytes of rank 0's Loom
# allocations) and times (.time: wall, user and system seconds) in RAW (default BUILD/perf/scaling-local), and a line
# "app ranks threads run" in RAW/runs.txt; tests/perf/scaling_check.py
# reads them.  No new run starts after DEADLINE seconds (default: none), so
# that a lent machine's time limit still returns the rounds that ran.
# Needs no root and no network namespaces: the ranks are local (loomrun -n).
set -euo pipefail
B=${1:-build}
raw=${2:-$B/perf/scaling-local}
RUNS=${RUNS:-3}
LAYOUTS=${LAYOUTS:-1x1 2x1 4x1 8x1 16x1 1x2 1x4 1x8 1x16 4x4}
DEADLINE=${DEADLINE:-0}
mkdir -p "$raw"
raw=$(cd "$raw" && pwd)
B=$(cd "$B" && pwd)
cd "$(dirname "$0")/../.."
start=$SECONDS
TIMEFORMAT='%R %U %S' # each run's .time: wall, user and system seconds of the whole job
rm -f "$raw"/runs.txt "$raw"/*.csv "$raw"/*.out "$raw"/*.time
. tests/perf/scaling_apps.sh
scaling_problems "$B" "$raw"
{
    echo "cores $(nproc)"
    echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "kernel $(uname -r)"
    echo "ucx_tls ${UCX_TLS-default}"
    echo "scale ${SCALE:-1}"
    echo "date $(date -u '+%Y-%m-%d %H:%M') UTC"
} >"$raw/machine.txt"
for r in $(seq "$RUNS"); do
    for lay in $LAYOUTS; do
        ranks=${lay%x*} threads=${lay#*x}
        for app in $APPS; do
            if [ "$DEADLINE" -gt 0 ] && [ $((SECONDS - start)) -ge "$DEADLINE" ]; then
                echo "scaling_local.sh: deadline of $DEADLINE s reached in round $r" >&2
                echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw/machine.txt"
                exit 0
            fi
            tag=$app-$lay.$r
            ok=0
            { time OMP_NUM_THREADS=$threads "$B/bin/loomrun" -n "$ranks" ${CMD[$app]} --log "$raw/$tag.csv" \
                >"$raw/$tag.out" 2>&1 && ok=1; } 2>"$raw/$tag.time"
            [ $ok = 1 ] ||
                { echo "scaling_local.sh: $app at $lay failed:" >&2; tail -5 "$raw/$tag.out" >&2; continue; }
            echo "$app $ranks $threads $r ${EPOCHS[$app]}" >>"$raw/runs.txt"
        done
    done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw/machine.txt"
echo "scaling_local.sh: $(wc -l <"$raw/runs.txt") runs in $((SECONDS - start)) s"
