#!/bin/sh
# mf_rss.t — loom-mf's peak resident memory follows its ratings: reading
# (a window of the file at a time, ids kept in the ratings' own int32
# fields while they fit, numbered by a bitmap) and planning cost at most 48
# bytes per rating of the two files, plus 16 MiB, on 4 000 000 generated
# ratings (1 rank x 2 threads, 1 epoch; the job's own report, getrusage).
# Before (the whole file slurped, every rating's ids kept as two int64
# beside it, the threads' parts copied once more, the ids sorted in a
# copy) the same job peaked at 251 MiB against 148 now.  Not under a
# sanitizer, whose shadow memory and quarantine are resident too.
. "$(dirname "$0")/../lib.sh"
[ -n "${LOOMTEST_SANITIZE:-}" ] && skip_all "resident memory means nothing under a sanitizer"
plan 2
"$B/bin/loom-gen" ratings --users 200000 --items 10000 --rank 8 --samples 4000000 \
    --out "$T/g" >"$T/gen" 2>&1
n=$(cat "$T/g.train" "$T/g.test" | wc -l)
OMP_NUM_THREADS=2 run_job "$T/o" "$LOOMRUN" -n 1 "$B/bin/loom-mf" --train "$T/g.train" \
    --test "$T/g.test" --epochs 1 --rank 16
[ $rc -eq 0 ] && has "$T/o" "final test_rmse=0\.[0-9]"
ok $? "4 000 000 ratings: one epoch runs ($n ratings)"
mib=$(sed -n 's/.*peak resident memory \([0-9]*\) MiB.*/\1/p' "$T/o")
lim=$(awk -v n="$n" 'BEGIN { printf "%d", 16 + 48 * n / 1048576 }')
[ -n "$mib" ] && [ "$mib" -le "$lim" ]
ok $? "peak resident memory ${mib:-?} MiB <= $lim MiB (48 bytes a rating + 16 MiB)"
finish
