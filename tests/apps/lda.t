#!/bin/sh
# lda.t — the loom-lda command on corpora drawn by loom-gen from 10
# planted topics (1000 documents of ~150 tokens, V = 1000), corpus seeds
# 16, 17 and 18: on each, four serial twins (--seed 1-4) and the word
# rotation on 2 ranks, 4 ranks and 2 ranks x 2 threads.  Claims: every
# parallel chain's log-likelihood (mean of passes 31-60) is no more than
# 4% below the best serial twin's on its corpus; on each corpus the best
# chain recovers the planted topics one to one; the recovery check
# rejects a model with two topics merged; at least one parallel chain
# recovers them; the serial twin's log-likelihood rises and its s-error is
# 0; 1 rank x 2 threads is exactly the 2-rank chain; the s-error of 4
# ranks falls; LOOM_STATS=1 prints the word rows' traffic on every rank.  Also: held-out perplexity, plain text with a text test set
# and the saved model, malformed docword and text files named FILE:LINE,
# bad arguments.
#
# Why these bounds.  A Gibbs chain, the serial twin included, settles
# about two times in five in a mode that merges two planted topics and
# splits another (measured over corpus seeds 16-21 x serial seeds 1-6:
# 16 of 36 serial chains, 8 of 18 parallel ones); such a chain is 2-3%
# lower in log-likelihood.  So one chain against one chain proves little
# (with corpus seeds 17-21 a correct 2-rank run landed 2.0-3.1% from the
# serial twin), and a seed that happens to avoid merging proves nothing.
# The spread of independent serial chains on one corpus, best to worst
# of six seeds, was 3.07, 2.35, 2.93, 2.13, 2.47 and 3.16% (seeds 16-21);
# every parallel chain was within 2.94% of its corpus's best serial one.
# A chain more than 4% below the best serial twin is outside anything a
# correct sampler produced.  Recovery: each planted topic's nearest
# learned topic (Hellinger distance of the topic-word distributions) must
# be a different one, and the worst of those distances <= 0.2: chains in
# the good mode measured 0.05-0.16, merged ones 0.40-0.51 with only 9
# distinct nearest topics (the mean best-match distance loom-lda prints
# is 0.16-0.17 for merged chains, which a bound of 0.2 on it accepted).
# With two chains in five merging, the best of seven chains on a corpus
# fails to recover with probability ~0.4^7 (0.2%), and none of nine
# parallel chains recovers with ~0.4^9.
. "$(dirname "$0")/../lib.sh"
plan 19
L=$B/bin/loom-lda
export LOOM_TIMEOUT=30 # 2 ranks x 2 threads oversubscribe 2 cores; no false "launcher lost"

# col FILE NAME: the column NAME of the CSV FILE, one value per line
col() { awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next } { print $c }' "$1"; }
# late CSV: the mean log-likelihood of passes 31-60
late() { col "$1" loglik | awk 'NR > 31 { s += $1; n++ } END { if (n == 30) printf "%.1f", s / n }'; }
# nearest PLANTED WORD_TOPIC: for each planted topic (a line of
# PLANTED), "K H": the learned topic nearest in Hellinger distance of the
# topic-word distributions, and that distance
nearest() {
    awk 'FNR == NR { for (w = 1; w <= NF; w++) p[FNR, w] = $w; K = FNR; V = NF; next }
         FNR > 3 { n[$2, $1] += $3; tot[$2] += $3 }
         END { for (a = 1; a <= K; a++) {
                   best = 2
                   for (k = 1; k <= K; k++) {
                       if (!tot[k]) continue
                       bc = 0
                       for (w = 1; w <= V; w++) if (n[k, w]) bc += sqrt(p[a, w] * n[k, w] / tot[k])
                       h = bc < 1 ? sqrt(1 - bc) : 0
                       if (h < best) { best = h; bk = k }
                   }
                   print bk, best
               } }' "$1" "$2"
}
# topics PLANTED WORD_TOPIC: "WORST DISTINCT": the largest of those
# distances, and how many different learned topics are nearest
topics() {
    nearest "$1" "$2" | awk '{ if ($2 > worst) worst = $2; if (!($1 in used)) { used[$1] = 1; d++ } }
                             END { printf "%.4f %d\n", worst, d }'
}
recovered() { awk -v r="$1" 'BEGIN { split(r, a, " "); exit !(a[1] != "" && a[1] <= 0.2 && a[2] == 10) }'; }

# chain CORPUS NAME RANKS THREADS ARGS...: one run, its log $T/CORPUS.NAME.csv,
# model $T/CORPUS.NAME.m; appends "NAME LATE WORST DISTINCT" to $T/CORPUS.runs
chain() {
    c=$1 name=$2 n=$3 t=$4; shift 4
    if [ "$n" = serial ]; then
        OMP_NUM_THREADS=1 run_job "$T/$c.$name" "$L" --train "$T/$c.docword.txt" --topics 10 \
            --iters 60 --log "$T/$c.$name.csv" --model "$T/$c.$name.m" --serial "$@"
    else
        OMP_NUM_THREADS=$t run_job "$T/$c.$name" "$LOOMRUN" -n $n "$L" --train "$T/$c.docword.txt" \
            --topics 10 --iters 60 --log "$T/$c.$name.csv" --model "$T/$c.$name.m" "$@"
    fi
    [ $rc -eq 0 ] || { diag "$c $name failed:"; sed 's/^/#   /' "$T/$c.$name"; }
    echo "$name $(late "$T/$c.$name.csv") $(topics "$T/$c.topics.txt" "$T/$c.$name.m/word_topic.txt")" >>"$T/$c.runs"
}
for c in 16 17 18; do
    "$B/bin/loom-gen" lda --docs 1000 --vocab 1000 --topics 10 --doc-length 150 --seed $c \
        --out "$T/$c" >"$T/gen" 2>&1 || { cat "$T/gen"; exit 1; }
    for s in 1 2 3 4; do chain $c s$s serial 1 --seed $s; done
    chain $c r2 2 1
    chain $c r4 4 1
    chain $c r22 2 2
    diag "corpus $c (name, mean log-likelihood of passes 31-60, worst Hellinger, distinct):" \
        "$(cat "$T/$c.runs")"
done

S=$T/16.s1
[ -s "$S.csv" ] && has "$S" "^final loglik=-[0-9.]+$" && has "$S" "^loom-lda: iter 60 samples" &&
    [ "$(head -1 "$S.csv")" = "iter,samples,seconds,loglik,s_error,tokens_per_s" ]
ok $? "serial twin: CSV log and final line"

col "$S.csv" loglik >"$T/s.ll"
awk 'NR == 1 { l0 = $1 } NR == 2 { l1 = $1 } NR == 11 { l10 = $1 } NR == 61 { l60 = $1 }
     END { exit !(l0 < l1 && l1 < l10 && l10 < l60) }' "$T/s.ll"
ok $? "the training log-likelihood rises: $(sed -n '1p;2p;11p;61p' "$T/s.ll" | tr '\n' ' ')(passes 0, 1, 10, 60)"

M=$(grep -o '[0-9]* tokens, V' "$S" | cut -d' ' -f1)
col "$S.csv" samples | awk -v m="$M" '{ if ($1 != (NR - 1) * m) bad = 1 } END { exit bad || NR != 61 }' &&
    [ "$(col "$S.csv" s_error | sort -u)" = 0 ]
ok $? "samples count M = $M tokens per pass; the serial twin's s-error is 0"

# Every parallel chain within 4% of its corpus's best serial twin.
for name in r2 r4 r22; do
    out=$(for c in 16 17 18; do
        awk -v p="$name" '$1 ~ /^s/ && $2 != "" && (best == "" || $2 > best) { best = $2 }
            $1 == p { got = $2 }
            END { d = got == "" || best == "" ? 99 : 100 * (best - got) / -best
                  printf "%s:%.2f%% ", FILENAME ~ /16/ ? 16 : FILENAME ~ /17/ ? 17 : 18, d; exit !(d <= 4) }' \
            "$T/$c.runs" || echo FAIL
    done)
    case "$out" in *FAIL*) false ;; *) true ;; esac
    ok $? "$name: log-likelihood of passes 31-60 at most 4% below the best of 4 serial twins on corpora 16, 17, 18 (below by: $(echo $out | sed 's/ FAIL//g'))"
done

# On each corpus the best chain (highest late log-likelihood) recovers the topics.
for c in 16 17 18; do
    bestline=$(awk '$2 != "" && (b == "" || $2 > b) { b = $2; l = $0 } END { print l }' "$T/$c.runs")
    recovered "${bestline#* * }"
    ok $? "corpus $c: the best of 7 chains recovers the planted topics one to one ($bestline)"
done

# The check rejects a merged pair: the best chain of corpus 16 with the
# counts of the learned topic nearest planted topic 2 moved into the one
# nearest planted topic 1.
best=$(awk '$2 != "" && (b == "" || $2 > b) { b = $2; l = $1 } END { print l }' "$T/16.runs")
W=$T/16.$best.m/word_topic.txt
nearest "$T/16.topics.txt" "$W" >"$T/near"
k1=$(sed -n 1p "$T/near" | cut -d" " -f1) k2=$(sed -n 2p "$T/near" | cut -d" " -f1)
awk -v a="$k2" -v b="$k1" 'FNR > 3 && $2 == a { $2 = b } { print }' "$W" >"$T/merged.txt"
good=$(topics "$T/16.topics.txt" "$W") bad=$(topics "$T/16.topics.txt" "$T/merged.txt")
[ "$k1" != "$k2" ] && recovered "$good" && ! recovered "$bad"
ok $? "the recovery check accepts the best model ($good) and rejects it with topics $k2 and $k1 merged ($bad)"

n=$(cat "$T/16.runs" "$T/17.runs" "$T/18.runs" | while read name l w d; do
    case $name in r*) recovered "$w $d" && echo "$name" ;; esac; done | wc -l)
[ "$n" -ge 1 ]
ok $? "$n of 9 parallel chains recover the planted topics one to one (at least 1)"

OMP_NUM_THREADS=2 run_job "$T/t2" "$L" --train "$T/16.docword.txt" --topics 10 --iters 60 --log "$T/t2.csv"
[ $rc -eq 0 ] && [ "$(col "$T/t2.csv" loglik)" = "$(col "$T/16.r2.csv" loglik)" ] &&
    [ "$(col "$T/t2.csv" s_error)" = "$(col "$T/16.r2.csv" s_error)" ]
ok $? "1 rank x 2 threads is the 2-rank chain exactly (log-likelihood and s-error of every pass)"

col "$T/16.r4.csv" s_error | awk 'NR == 1 { if ($1 != 0) bad = 1; next }
    { if ($1 <= 0 || $1 > 2) bad = 1; if (NR <= 11 && $1 > early) early = $1; if (NR > 51) late += $1 / 10 }
    END { printf "# 4 ranks: s-error up to %.4f in passes 1-10, mean %.4f in passes 51-60\n", early, late
          exit bad || !(late < early && late < 0.01) }'
ok $? "4 ranks: the s-error is in (0, 2], falls, and ends below 0.01"

# LOOM_STATS=1: each rank prints the word rows' statistics when loom-lda
# frees them (before finalize), with the traffic of the rotation
OMP_NUM_THREADS=1 LOOM_STATS=1 run_job "$T/st" "$LOOMRUN" -n 2 "$L" --train "$T/16.docword.txt" \
    --topics 10 --iters 3
st() { sed -n "s/^\[$1\] loom: rank $1: stats 'word_topic' (ring): sent \([0-9]*\) B, received \([0-9]*\) B, .* forwarded \([0-9]*\),.*/\1 \2 \3/p" "$T/st"; }
s0=$(st 0) s1=$(st 1)
[ $rc -eq 0 ] && echo "$s0" | awk 'NF == 3 && $1 > 0 && $2 > 0 && $3 > 0 { ok = 1 } END { exit !ok }' &&
    echo "$s1" | awk 'NF == 3 && $1 > 0 && $2 > 0 && $3 > 0 { ok = 1 } END { exit !ok }'
ok $? "LOOM_STATS=1: both ranks print 'word_topic' (ring) as it is freed (sent, received, forwarded: $s0 / $s1)"

# held-out perplexity (document completion) from a split, and --forward
OMP_NUM_THREADS=1 run_job "$T/p" "$LOOMRUN" -n 2 "$L" --train "$T/16.docword.txt" --topics 10 \
    --iters 15 --test-frac 0.2 --forward --log "$T/p.csv"
rcp=$rc
# without --forward the rows go at each rotation instead of as each is
# finished: the successor must get the same rows, so the same run
OMP_NUM_THREADS=1 run_job "$T/pn" "$LOOMRUN" -n 2 "$L" --train "$T/16.docword.txt" --topics 10 \
    --iters 15 --test-frac 0.2 --log "$T/pn.csv"
[ $rcp -eq 0 ] && [ $rc -eq 0 ] &&
    [ "$(head -1 "$T/p.csv")" = "iter,samples,seconds,loglik,perplexity,s_error,tokens_per_s" ] &&
    col "$T/p.csv" perplexity | awk 'NR == 1 { p0 = $1 } { p = $1 } END { exit !(p > 1 && p < 0.8 * p0) }' &&
    [ "$(cut -d, -f1,2,4-6 "$T/p.csv")" = "$(cut -d, -f1,2,4-6 "$T/pn.csv")" ]
ok $? "2 ranks, --test-frac 0.2, --forward: perplexity falls ($(col "$T/p.csv" perplexity | sed -n '1p;$p' | tr '\n' ' ')first and last), every pass as without --forward"

# plain text, one document per line, with a text test set and the model
awk 'FNR == NR { v[FNR] = $1; next } FNR > 3 { if ($1 != d) { if (d) printf "\n"; d = $1 }
     for (i = 0; i < $3; i++) printf "%s ", v[$2] } END { printf "\n" }' \
    "$T/16.vocab.txt" "$T/16.docword.txt" >"$T/all.txt"
head -900 "$T/all.txt" >"$T/train.txt"
tail -100 "$T/all.txt" >"$T/test.txt"
OMP_NUM_THREADS=1 run_job "$T/x" "$LOOMRUN" -n 2 "$L" --text "$T/train.txt" --test "$T/test.txt" \
    --topics 10 --iters 10 --model "$T/model" --top 5
[ $rc -eq 0 ] && has "$T/x" "900 documents.* 100 held-out documents" &&
    has "$T/x" "iter 10 .*perplexity [0-9]" && [ "$(wc -l <"$T/model/topics.txt")" -eq 10 ] &&
    [ "$(awk -F'\t' '{ print split($2, w, " ") }' "$T/model/topics.txt" | sort -u)" = 5 ] &&
    [ "$(sed -n 2p "$T/model/word_topic.txt")" = 10 ] &&
    [ "$(awk 'NR > 3 { s += $3 } END { print s }' "$T/model/word_topic.txt")" = \
      "$(wc -w <"$T/train.txt")" ]
ok $? "text input and test set on 2 ranks: perplexity; model: 10 topics x 5 words, counts sum to the tokens"

# malformed input: FILE:LINE and a non-zero exit, on 1 and 2 ranks
printf '3\n5\n4\n1 1 2\n1 3 1\n3 x 3\n3 2 1\n' >"$T/bad.docword.txt"
OMP_NUM_THREADS=1 run_job "$T/e1" "$LOOMRUN" -n 2 "$L" --train "$T/bad.docword.txt" --topics 3
[ $rc -ne 0 ] && has "$T/e1" "bad.docword.txt:6: bad wordID 'x'"
ok $? "a malformed docword line is named FILE:LINE (2 ranks, exit $rc)"
printf 'fine words\nmore words\nbinary\000junk\n' >"$T/bad.txt"
run_job "$T/e2" "$L" --text "$T/bad.txt" --topics 3
[ $rc -ne 0 ] && has "$T/e2" "bad.txt:3: a NUL byte at column 7"
ok $? "a text file with a NUL byte is named FILE:LINE (exit $rc)"
run_job "$T/e3" "$L" --text "$T/bad.txt" --topics 3 --alpha -1
[ $rc -eq 2 ] && has "$T/e3" "--alpha must be > 0; try --help"
ok $? "a bad argument is named, exit 2"
finish
