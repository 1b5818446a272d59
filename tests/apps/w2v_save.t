#!/bin/sh
# w2v_save.t — the vectors a multi-rank loom-w2v run writes are the merged
# model, not rank 0's own copy.  The planted twins ("lordz", "kingz",
# "israelz": every second occurrence renamed, as in w2v.t) appear only in
# the second half of the text, which rank 1 of 2 trains on: rank 0 never
# touches their rows.  A save that reads rank 0's copy writes their random
# initial vectors, and their nearest words are then noise; a save of the
# merged model finds each twin's original.  ("israel" is left out: the
# second half of the text has too few for even the serial twin to place
# "israelz" next to it.)  Also checks that a 2-rank run's
# vectors file has every word once, in the word2vec text format.
. "$(dirname "$0")/../lib.sh"
command -v bible >/dev/null || skip_all "bible-kjv is not installed (apt-get install bible-kjv)"
plan 3
bible -l 100000 'gen1:1-2ch36:23' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$T/all.txt"
n=$(wc -l <"$T/all.txt")
# lines after 55% of the text: rank 1's share starts at 50%
awk -v from="$((n * 55 / 100))" '{ if (NR > from) for (i = 1; i <= NF; i++) { w = tolower($i); gsub(/[^a-z]/, "", w);
           if (w == "lord" || w == "king") { if (n[w]++ % 2) $i = w "z" } }
           print }' "$T/all.txt" >"$T/kjv.txt"
[ "$(head -n $((n / 2)) "$T/kjv.txt" | grep -cE 'lordz|kingz')" -eq 0 ] &&
    [ "$(tail -n $((n / 3)) "$T/kjv.txt" | grep -cE 'lordz')" -gt 100 ]
ok $? "the planted twins occur only in rank 1's half of the text"
OMP_NUM_THREADS=1 timeout -k 5 150 "$LOOMRUN" -n 2 "$B/bin/loom-w2v" --train "$T/kjv.txt" \
    --output "$T/v.vec" --dim 50 >"$T/out" 2>&1 || sed 's/^/#   /' "$T/out"
V=$(head -1 "$T/v.vec" | cut -d' ' -f1)
[ "$(tail -n +2 "$T/v.vec" | cut -d' ' -f1 | sort -u | wc -l)" -eq "$V" ] &&
    [ "$(awk 'NR > 1 && NF != 51' "$T/v.vec" | wc -l)" -eq 0 ]
ok $? "2 ranks: the vectors file has every word once, each with 50 numbers"
"$B/bin/loom-w2v" nearest lordz kingz --vectors "$T/v.vec" --top 3 >"$T/nn" 2>&1
diag "$(cat "$T/nn")"
awk '{ sub(/z:$/, "", $1); if ($2 != $1) bad = 1 } END { exit bad || NR != 2 }' "$T/nn"
ok $? "2 ranks: twins seen only by rank 1 have trained vectors (nearest word is the original)"
finish
