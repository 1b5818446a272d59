#!/bin/sh
# mf_cache.t — a serializable loop cuts each partition of its ring array
# (loom-mf's H) into sub-blocks of at most 1 MiB of rows, so that a cell's
# updates find their rows of H in a core's L2: on 28 000-odd items at
# --rank 32 (rows of 40 floats, about 4.5 MB of H) 1 rank x 2 threads
# plans at least 5 sub-blocks (4 before: 2 a thread), 2 ranks x 1 thread
# at least 3 a partition (2 before).  The plan says how many on its
# LOOM_STATS line.  On 10^8 ratings this ran 1.4-1.8x the updates/s
# (docs/loom-mf.md, "Measured").
. "$(dirname "$0")/../lib.sh"
plan 2
"$B/bin/loom-gen" ratings --users 20000 --items 30000 --rank 8 --samples 200000 \
    --out "$T/g" >"$T/gen" 2>&1
for layout in "1x2 1 2" "2x1 2 1"; do
    set -- $layout
    LOOM_STATS=1 OMP_NUM_THREADS=$(threads $3) run_job "$T/$1" "$LOOMRUN" -n $2 "$B/bin/loom-mf" \
        --train "$T/g.train" --test "$T/g.test" --rank 32 --epochs 1
    items=$(sed -n 's/.* users x \([0-9]*\) items.*/\1/p' "$T/$1" | head -1)
    subs=$(sed -n 's/.*planned .* \([0-9]*\) sub-blocks a partition.*/\1/p' "$T/$1" | head -1)
    # H's rows: 40 floats at --rank 32 (kernels/mf.h), R partitions
    want=$(awk -v n="$items" -v r=$2 'BEGIN { b = n * 160 / r; w = int(b / 1048576); if (w * 1048576 < b) w++; print w }')
    [ $rc -eq 0 ] && [ -n "$subs" ] && [ "$subs" -ge "$want" ] && [ "$want" -gt 2 ]
    ok $? "$1: ${items:-?} items, ${subs:-?} sub-blocks a partition >= $want (1 MiB of H each)"
done
finish
