#!/bin/sh
# ckpt_mf.sh — incremental against whole checkpoints on loom-mf
# (docs/checkpoint.md, "Measured").  Run by hand, never by make check:
#
#   sh tests/perf/ckpt_mf.sh [REPS] [RANKS]      (defaults 5, 2)
#
# Trains loom-mf on MovieLens u1 for 12 epochs with a checkpoint after
# every epoch (fsync on), alternately with LOOM_CHECKPOINT_CHAIN=8 (the
# default: incremental) and =1 (every checkpoint whole), REPS times each,
# and prints per run the data bytes written by all ranks over the 12
# checkpoints and the summed checkpoint time (the slowest rank's, per
# checkpoint; from LOOM_STATS=1), then the medians.
set -e
REPS=${1:-5} N=${2:-2}
R=$(cd "$(dirname "$0")/../.." && pwd)
B=${LOOMTEST_BUILD:-$R/build} D=$R/../shared/data/movielens-100k
W=$(mktemp -d /tmp/ckpt_mf.XXXXXX)
trap 'rm -rf "$W"' EXIT
export OMP_NUM_THREADS=1
one() { # CHAIN: prints "bytes seconds"
    rm -rf "$W/c"
    LOOM_CHECKPOINT_DIR=$W/c LOOM_CHECKPOINT_EVERY=1 LOOM_CHECKPOINT_CHAIN=$1 LOOM_STATS=1 \
        "$B/bin/loomrun" -n "$N" "$B/bin/loom-mf" --train "$D/u1.base" --test "$D/u1.test" \
        --epochs 12 2>&1 |
        sed -n 's/.*stats checkpoint .*ckpt-\([0-9]*\): \([0-9]*\) of [0-9]* data bytes.*, \([0-9.]*\) s$/\1 \2 \3/p' |
        awk '{ b += $2; if ($3 > t[$1]) t[$1] = $3 } END { for (k in t) s += t[k]; printf "%d %.3f\n", b, s }'
}
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "# chain bytes seconds   ($N ranks, 12 checkpoints; load: $(cut -d' ' -f1-3 /proc/loadavg))"
for i in $(seq "$REPS"); do
    for ch in 8 1; do echo "$ch $(one $ch)"; done
done | tee "$W/all"
for ch in 8 1; do
    echo "median chain=$ch: $(awk -v c=$ch '$1 == c { print $2 }' "$W/all" | med) bytes," \
        "$(awk -v c=$ch '$1 == c { print $3 }' "$W/all" | med) s"
done
