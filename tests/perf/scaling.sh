#!/usr/bin/env bash
# scaling.sh BUILD — fits the scaling model of docs/scaling.md to runs on a
# simulated cluster and writes docs/scaling-fit.md (part of `make bench`
# when run as root).  For each host count in HOSTS (default "1 2 3 4") and
# link rate in RATES (default "none 1gbit 100mbit"), it builds that many
# network namespaces (tests/perf/cluster_lib.sh: veth links to a bridge,
# tc tbf, UCX over TCP), runs one rank per namespace of each app on a
# problem sized to take about a second on one rank, RUNS times (default 2),
# and records the time per epoch (the app's --log) and the bytes rank 0's
# link carried (its veth counters, both directions).  The model, the fitted
# constants, the error of each fitted point and the predictions for 16, 64
# and 256 nodes on 10 and 100 Gbit/s links are computed by
# tests/perf/scaling_fit.py.
set -euo pipefail
B=${1:-build}
RUNS=${BENCH_RUNS:-2}
RATES=${RATES:-none 1gbit 100mbit}
HOSTS=${HOSTS:-1 2 3 4}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/perf/cluster_lib.sh
cluster_require scaling.sh
raw=$B/perf/scaling
rm -rf "$raw" && mkdir -p "$raw"
trap cluster_down EXIT

# The problems (the same files on every host: the namespaces share this file system).
. tests/perf/scaling_apps.sh
scaling_problems "$B" "$raw"

# link_bytes: bytes rank 0's link has sent and received so far ("TX RX").
link_bytes() {
    ip netns exec "${CLUSTER_NS[0]}" sh -c \
        'echo $(cat /sys/class/net/v1/statistics/tx_bytes) $(cat /sys/class/net/v1/statistics/rx_bytes)'
}
for n in $HOSTS; do
    for rate in $RATES; do
        [ "$n" = 1 ] && [ "$rate" != none ] && continue # one host has no link
        cluster_up "$n" "$rate"
        for r in $(seq "$RUNS"); do
            for app in $APPS; do
                tag=$app-$n-$rate.$r
                read -r tx0 rx0 <<<"$(link_bytes)"
                OMP_NUM_THREADS=1 cluster_run "$n" ${CMD[$app]} --log "$PWD/$raw/$tag.csv" >"$raw/$tag.out" 2>&1 ||
                    { echo "scaling.sh: $app on $n hosts at $rate failed:" >&2; tail -5 "$raw/$tag.out" >&2; exit 1; }
                read -r tx1 rx1 <<<"$(link_bytes)"
                echo "$app $n $rate $r ${EPOCHS[$app]} $((tx1 - tx0)) $((rx1 - rx0))" >>"$raw/links.txt"
            done
        done
        cluster_down
    done
done
python3 tests/perf/scaling_fit.py "$raw" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" >docs/scaling-fit.md
echo "scaling.sh: wrote docs/scaling-fit.md"
