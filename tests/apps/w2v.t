#!/bin/sh
# w2v.t — loom-w2v (skip-gram with negative sampling as a hybrid SyncFor)
# on the first books of the King James Bible from Debian's bible-kjv package, with three
# planted synonym pairs: every second "lord", "king" and "israel" is
# renamed "lordz", "kingz", "israelz", so each twin shares its word's
# contexts and must be its nearest neighbour.  Checked for the serial twin,
# 1 rank x 1 thread (the twin's bits), 1 rank x 2 threads (own copies of
# the vectors: loss within 1% of the twin's), 2 ranks (bsp: the default, capped, which on 2 ranks
# is the sum; ssp; averaging), 4 and 16 ranks (capped: twice the mean,
# with block momentum, a sync point every 8000 words of the job; 16 ranks
# must end below the loss the former default reached); the vectors file is in the word2vec text format; bad input is
# refused, and a run whose loss runs away ends with one message.  The saved
# vectors of 2 and 4 ranks score within 0.02 of one rank's on a WordNet
# similarity measure (the whole Bible; needs python3-nltk, python3-numpy
# and wordnet-base, else skipped).  Under ASan (LOOMTEST_SANITIZE=1) the
# ssp, 4- and 16-rank and WordNet runs are skipped: three times slower
# there, and the paths they take are already exercised.  A 2-rank run
# fetches the vectors in batches before training (LOOM_STATS).
. "$(dirname "$0")/../lib.sh"
command -v bible >/dev/null || skip_all "bible-kjv is not installed (apt-get install bible-kjv)"
plan 17
# Genesis to 2 Chronicles (12 400 of the Bible's 32 000 verses, 338 000
# words): each twin still comes out nearest to its word, ahead of the
# runner-up by 0.05-0.15 on every seed tried, and the file stays short (the
# whole Bible took 2 CPU-minutes here).
bible -l 100000 'gen1:1-2ch36:23' | sed -e 's/^ *[0-9]* //' | grep -v '^$' |
    awk '{ for (i = 1; i <= NF; i++) { w = tolower($i); gsub(/[^a-z]/, "", w);
           if (w == "lord" || w == "king" || w == "israel") { if (n[w]++ % 2) $i = w "z" } }
           print }' >"$T/kjv.txt"
w2v() { # NAME RANKS THREADS ARGS...: train, then check the planted pairs
    name=$1 n=$2 t=$3; shift 3
    OMP_NUM_THREADS=$t timeout -k 5 150 "$LOOMRUN" -n $n "$B/bin/loom-w2v" --train "$T/kjv.txt" \
        --output "$T/$name.vec" --dim 50 "$@" >"$T/$name" 2>&1 || { sed 's/^/#   /' "$T/$name"; return 1; }
    "$B/bin/loom-w2v" nearest lordz kingz israelz --vectors "$T/$name.vec" --top 3 >"$T/$name.nn" || return 1
    diag "$(cat "$T/$name.nn")"
    awk '{ sub(/z:$/, "", $1); if ($2 != $1) bad = 1 } END { exit bad || NR != 3 }' "$T/$name.nn"
}
w2v serial 1 1 --serial --log "$T/serial.csv"
ok $? "serial twin: each planted twin's nearest word is its original"
head -1 "$T/serial.csv" | grep -q '^iter,samples,seconds,loss,pairs$' && [ "$(wc -l <"$T/serial.csv")" -eq 4 ] &&
    head -1 "$T/serial.vec" | grep -qE '^[0-9]+ 50$' &&
    [ "$(awk 'NR == 2 { print NF }' "$T/serial.vec")" -eq 51 ]
ok $? "the CSV log has 3 epochs; the vectors are in the word2vec text format"
# one rank, one thread: the serial twin's bits (α follows the sentences
# begun, which there are the sentences before)
w2v h11 1 1 && cmp -s "$T/serial.vec" "$T/h11.vec"
ok $? "1 rank x 1 thread: the serial twin's vectors, bit for bit"
# two threads: each on its own copies of the vectors (this vocabulary's
# tables are under 1 MiB each), rounds of 4000 words, the copies' changes
# summed (capped: twice the mean of 2 is their sum); the loss within 1%
loss() { sed -n 's/.*final loss=\([0-9.]*\).*/\1/p' "$T/$1"; }
LOOM_STATS=1 w2v h12 1 2 && has "$T/h12" "2 threads' own rounds of 4000 weight" &&
    awk -v a="$(loss h12)" -v s="$(loss serial)" 'BEGIN { exit !(a > 0 && s > 0 && a <= 1.01 * s) }'
ok $? "1 rank x 2 threads (hybrid, own copies by 4000 words): the planted pairs are nearest neighbours; loss $(loss h12) within 1% of the twin's $(loss serial)"
LOOM_STATS=1
export LOOM_STATS
w2v h21 2 1 && has "$T/h21" "ranks add their changes up to twice their mean, with block momentum, every 4000 words"
ok $? "2 ranks (hybrid, bsp rows, capped by default: the sum): the planted pairs are nearest neighbours"
unset LOOM_STATS
# each rank reads nearly every row: it fetches both tables in batches
# before training, not row by row at first use (a round trip each); on 2
# ranks capped is the sum, and the rows merge on the summing path (the
# stats name no averaging)
awk '/vocabulary/ { for (i = 1; i <= NF; i++) if ($i == "vocabulary") v = $(i + 1) }
     /stats .(in|out). \(bsp\)/ { n++; m = $0; sub(/.*misses /, "", m); split(m, x, /[ ()]+/)
                                  if (x[2] != "prefetched" || x[1] - x[3] >= v / 10) bad = 1 }
     END { exit bad || n != 4 || !v }' "$T/h21"
ok $? "2 ranks: the vectors come in batches before training (misses on demand under 10% of the vocabulary)"
LOOM_STATS=1
export LOOM_STATS
w2v a21 2 1 --merge avg && has "$T/a21" "rank0_sent_MB [0-9]" &&
    [ "$(grep -Ec "stats '(in|out)' \(bsp, averaged, block momentum\)" "$T/a21")" -eq 4 ]
ok $? "2 ranks averaging with block momentum every 4000 words (the stats say so): the planted pairs are nearest neighbours; bytes logged"
if [ "${LOOMTEST_SANITIZE:-}" = 1 ]; then # the memory checks need each path once, not every layout
    ok 0 "# SKIP ssp at 2 ranks: covered by the plain build's run"
    ok 0 "# SKIP 4 ranks: covered by the plain build's run"
else
    w2v s21 2 1 --staleness 2
    ok $? "2 ranks (ssp, staleness 2): the planted pairs are nearest neighbours"
    w2v h41 4 1 --epochs 2 && has "$T/h41" "ranks add their changes up to twice their mean, with block momentum, every 2000 words" &&
        [ "$(grep -Ec "stats '(in|out)' \(bsp, capped at 2 ranks, block momentum\)" "$T/h41")" -eq 8 ]
    ok $? "4 ranks (hybrid, capped by default, the stats say so), 2 epochs: the planted pairs are nearest neighbours"
fi
unset LOOM_STATS
# Summed changes overshoot on many ranks: 16 ranks summing every 334 words
# ran this corpus to a loss of 99.8 and saved the vectors.  At the defaults
# 16 ranks add up to twice the mean of their changes, with block momentum,
# every 500 words (8000 words of the job); their loss stays under an
# untrained model's (1 + 5) ln 2 = 4.159 and ends epoch 2 below 2.75: the
# former default (capped every 10 000 words, no momentum) ended at
# 2.859-2.865 over seeds 1, 2, 3 and 7, the plain mean every 50 000 at
# 3.26-3.27; this one 2.589.  A run that does run away (16 ranks told to
# sum, one rank with a huge step) ends with one message and saves nothing.
untrained=4.159
if [ "${LOOMTEST_SANITIZE:-}" = 1 ]; then
    ok 0 "# SKIP 16 ranks: covered by the plain build's run"
    ok 0 "# SKIP 16 ranks averaging: covered by the plain build's run"
    ok 0 "# SKIP 16 ranks summing: covered by the plain build's run"
else
    OMP_NUM_THREADS=1 run_job "$T/r16" "$LOOMRUN" -n 16 "$B/bin/loom-w2v" --train "$T/kjv.txt" \
        --output "$T/r16.vec" --dim 50 --epochs 2 --log "$T/r16.csv"
    [ $rc -eq 0 ] && has "$T/r16" "ranks add their changes up to twice their mean" &&
        awk -F, -v u=$untrained 'NR == 3 { loss = $4 } END { exit !(NR == 3 && loss < u) }' "$T/r16.csv"
    ok $? "16 ranks at the defaults (capped), 2 epochs: the loss stays under an untrained model's"
    OMP_NUM_THREADS=1 run_job "$T/a16" "$LOOMRUN" -n 16 "$B/bin/loom-w2v" --train "$T/kjv.txt" \
        --output "$T/a16.vec" --dim 50 --epochs 2 --merge avg --log "$T/a16.csv"
    capped=$(awk -F, 'NR == 3 { print $4 }' "$T/r16.csv") mean=$(awk -F, 'NR == 3 { print $4 }' "$T/a16.csv")
    diag "16 ranks, epoch 2: loss $capped capped (the default), $mean averaged"
    [ $rc -eq 0 ] && [ -n "$capped" ] && [ -n "$mean" ] &&
        awk -v c="$capped" -v m="$mean" 'BEGIN { exit !(c < 2.75 && c <= m) }'
    ok $? "16 ranks: the default (twice the mean, block momentum) ends epoch 2 below 2.75 (the former default: 2.86) and no higher than the mean's"
    OMP_NUM_THREADS=1 run_job "$T/s16" "$LOOMRUN" -n 16 "$B/bin/loom-w2v" --train "$T/kjv.txt" \
        --output "$T/s16.vec" --dim 50 --epochs 1 --merge sum
    [ $rc -eq 3 ] && has "$T/s16" "training diverged in epoch 1: loss [0-9]" &&
        has "$T/s16" "Use --merge avg, or a shorter --sync-every" &&
        [ "$(grep -c 'training diverged' "$T/s16")" -eq 1 ] && [ ! -e "$T/s16.vec" ]
    ok $? "16 ranks summing run away: one message naming --merge avg, nothing saved"
fi
"$B/bin/loom-w2v" --train "$T/kjv.txt" --output "$T/big.vec" --dim 50 --epochs 1 --serial \
    --alpha 5 >"$T/big" 2>&1
[ $? -eq 3 ] && has "$T/big" "training diverged in epoch 1" && has "$T/big" "Use a smaller --alpha" &&
    [ ! -e "$T/big.vec" ]
ok $? "one rank with a runaway step size: one message naming --alpha, nothing saved"
# Issue 15 asks that 2 ranks' vectors score within 0.02 of one rank's on
# WordSim-353, which no Debian package ships; tests/apps/w2v_wordnet.py
# stands in: the Spearman correlation between the vectors' cosine and
# WordNet's Wu-Palmer similarity over the pairs of the corpus's 300 most
# frequent nouns.  The whole Bible, dim 100, 3 epochs, seed 1: one rank
# scores 0.075 (random vectors about 0, so it must score above 0.05 for
# the comparison to mean anything); 2 ranks (summing) 0.074 and 4 ranks
# (capped every 10 000 words, the default) 0.077 must be within 0.02.  The
# mean every 50 000 words, the default for one session, scores 0.021 on 4
# ranks here; capped every 50 000, 0.042.
PY=${LOOMTEST_PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
if [ "${LOOMTEST_SANITIZE:-}" = 1 ]; then
    ok 0 "# SKIP the WordNet scores: covered by the plain build's run"
elif ! why=$("$PY" "$(dirname "$0")/w2v_wordnet.py" --check 2>&1); then
    ok 0 "# SKIP the WordNet scores: $why"
else
    bible -l 100000 'gen1:1-rev22:21' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$T/bible.txt"
    for n in 1 2 4; do
        OMP_NUM_THREADS=1 run_job "$T/wn$n" "$LOOMRUN" -n $n "$B/bin/loom-w2v" --train "$T/bible.txt" \
            --output "$T/wn$n.vec" --dim 100
        [ $rc -eq 0 ] || sed 's/^/#   /' "$T/wn$n"
    done
    run_job "$T/wn" "$PY" "$(dirname "$0")/w2v_wordnet.py" "$T/bible.txt" 300 "$T/wn1.vec" \
        "$T/wn2.vec" "$T/wn4.vec"
    diag "WordNet scores: $(awk '/spearman/ { sub(/.*\//, "", $1); printf "%s %s  ", $1, $3 }' "$T/wn")"
    [ $rc -eq 0 ] && awk '/spearman/ { s[++n] = $3 }
        END { exit !(n == 3 && s[1] > 0.05 && s[2] >= s[1] - 0.02 && s[3] >= s[1] - 0.02) }' "$T/wn"
    ok $? "2 and 4 ranks' vectors score within 0.02 of one rank's on WordNet similarity"
fi
"$B/bin/loom-w2v" nearest nosuchword --vectors "$T/serial.vec" >"$T/nw" 2>&1
[ $? -ne 0 ] && has "$T/nw" "'nosuchword' is not in"
ok $? "an unknown query word is refused"
printf '3 2\na 1 2\nb 1\n' >"$T/bad.vec"
"$B/bin/loom-w2v" nearest a --vectors "$T/bad.vec" >"$T/bv" 2>&1
[ $? -ne 0 ] && has "$T/bv" "bad.vec:3: expected a word and 2 numbers"
ok $? "a malformed vectors file is named file:line"
run_job "$T/flag" "$LOOMRUN" -n 2 "$B/bin/loom-w2v" --train "$T/kjv.txt" --output "$T/x.vec" --window 0
[ $rc -ne 0 ] && has "$T/flag" "--window must be >= 1" && [ "$(grep -c 'window must' "$T/flag")" -eq 1 ]
ok $? "a bad flag is refused once"
finish
