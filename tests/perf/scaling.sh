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
"$B/bin/loom-gen" ratings --users 20000 --items 2000 --rank 16 --samples 1e6 --out "$raw/mf" >/dev/null
"$B/bin/loom-gen" lda --docs 2000 --vocab 5000 --topics 50 --doc-length 150 --out "$raw/lda" >/dev/null
"$B/bin/loom-gen" lasso --samples 20000 --features 2000 --nonzeros 100 --density 0.02 --out "$raw/lr" >/dev/null
awk '{ $1 = ($1 > 0) ? "+1" : "-1"; print }' "$raw/lr.svm" >"$raw/lr-labels.svm"
"$B/bin/loom-gen" lasso --samples 5000 --features 2000 --nonzeros 50 --density 0.05 --out "$raw/lasso" >/dev/null
declare -A CMD EPOCHS
EPOCHS=([mf]=10 [lda]=6 [lr]=5 [lasso]=20)
CMD[mf]="$B/bin/loom-mf --train $raw/mf.train --test $raw/mf.test --epochs ${EPOCHS[mf]}"
CMD[lda]="$B/bin/loom-lda --train $raw/lda.docword.txt --topics 50 --iters ${EPOCHS[lda]} --eval-every ${EPOCHS[lda]}"
CMD[lr]="$B/bin/loom-lr --train $raw/lr-labels.svm --test $raw/lr-labels.svm --epochs ${EPOCHS[lr]}"
CMD[lasso]="$B/bin/loom-lasso --X $raw/lasso.X.mtx --y $raw/lasso.y.mtx --lambda 0.1 --batch 8 --iters ${EPOCHS[lasso]} --tol 0"
APPS="mf lda lr lasso"
if command -v bible >/dev/null; then # loom-w2v on Genesis to Deuteronomy (bible-kjv)
    bible -l 100000 'gen1:1-deu34:12' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$raw/kjv.txt"
    EPOCHS[w2v]=1
    CMD[w2v]="$B/bin/loom-w2v --train $raw/kjv.txt --output $raw/kjv.vec --epochs 1 --dim 50"
    APPS="$APPS w2v"
else
    echo "scaling.sh: bible-kjv not installed; loom-w2v left out" >&2
fi

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
