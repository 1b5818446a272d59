#!/bin/sh
# w2v_save.t — the vectors a multi-rank loom-w2v run writes are the merged
# model, with every rank's training in it.  The text is Genesis to 2
# Chronicles twice; in the first half of the second copy every second
# "lord", "moses" and "israel" is renamed "lordz", "mosesz", "israelz"
# (twins, as in w2v.t).  The twins thus appear only between 50% and about
# 75% of the text: in the front part of rank 1's block, whose sentences
# rank 0 never trains on.  (The loop shares its rounds by speed,
# sched/shares.c: rank 0 takes from rank 1's block only after finishing
# its own, and from its back end; to reach the twins it would have to run
# about three times as fast as rank 1.)  Rank 0 writes the file from its
# copy of the rows, which holds rank 1's changes only because the write
# notices refresh it at the sync points and the last barrier (docs/dsm.md):
# with that refresh left out, the twins keep their random initial vectors
# and their nearest words are noise (checked: dropping the refetch in
# dsm/notice.c fails test 3, whether the save reads through loom_at or
# loom_row_get).  The saved model finds each twin's original (the twins'
# sentences are the originals', so the margins are wide: 0.04-0.18 over
# seeds 1-5).  Also checks that a 2-rank run's vectors file has every word
# once, in the word2vec text format.
. "$(dirname "$0")/../lib.sh"
command -v bible >/dev/null || skip_all "bible-kjv is not installed (apt-get install bible-kjv)"
plan 3
bible -l 100000 'gen1:1-2ch36:23' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$T/all.txt"
n=$(wc -l <"$T/all.txt")
{ cat "$T/all.txt"
  awk -v to="$((n / 2))" '{ if (NR <= to) for (i = 1; i <= NF; i++) { w = tolower($i); gsub(/[^a-z]/, "", w);
           if (w == "lord" || w == "moses" || w == "israel") { if (c[w]++ % 2) $i = w "z" } }
           print }' "$T/all.txt"; } >"$T/kjv.txt"
[ "$(head -n "$n" "$T/kjv.txt" | grep -cE 'lordz|mosesz|israelz')" -eq 0 ] &&
    [ "$(tail -n $((n / 2)) "$T/kjv.txt" | grep -cE 'lordz|mosesz|israelz')" -eq 0 ] &&
    [ "$(grep -cE 'israelz' "$T/kjv.txt")" -gt 100 ]
ok $? "the planted twins occur only in the front of the text's second half"
OMP_NUM_THREADS=1 timeout -k 5 150 "$LOOMRUN" -n 2 "$B/bin/loom-w2v" --train "$T/kjv.txt" \
    --output "$T/v.vec" --dim 50 >"$T/out" 2>&1 || sed 's/^/#   /' "$T/out"
V=$(head -1 "$T/v.vec" | cut -d' ' -f1)
[ "$(tail -n +2 "$T/v.vec" | cut -d' ' -f1 | sort -u | wc -l)" -eq "$V" ] &&
    [ "$(awk 'NR > 1 && NF != 51' "$T/v.vec" | wc -l)" -eq 0 ]
ok $? "2 ranks: the vectors file has every word once, each with 50 numbers"
"$B/bin/loom-w2v" nearest lordz mosesz israelz --vectors "$T/v.vec" --top 3 >"$T/nn" 2>&1
diag "$(cat "$T/nn")"
awk '{ sub(/z:$/, "", $1); if ($2 != $1) bad = 1 } END { exit bad || NR != 3 }' "$T/nn"
ok $? "2 ranks: twins seen only by rank 1 have trained vectors (nearest word is the original)"
finish
