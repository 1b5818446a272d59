#!/bin/sh
# lda_cli.t — loom-lda --text as a user meets it: the built-in English
# stop words are dropped by default (the top words are not "the of and"),
# --stopwords FILE replaces the list and --stopwords none keeps every
# word; --min-count drops rare words; --model DIR writes vocab.txt beside
# word_topic.txt so its ids can be read (each topic's top word in
# topics.txt is the vocab.txt word of its largest count); a missing stop
# list is named with exit 1; --stopwords without --text is refused;
# doc_topic.txt holds one proportion row per training document, in order,
# that tells the two themes apart, on 1 and 2 ranks, and
# test_doc_topic.txt the same for held-out documents.
. "$(dirname "$0")/../lib.sh"
plan 9
L=$B/bin/loom-lda
# 400 documents: two themes, each line padded with function words and
# one rare word per document
awk 'BEGIN { srand(7)
    split("river boat water fish shore sail", a, " "); split("court judge law trial crime jury", b, " ")
    for (d = 1; d <= 400; d++) {
        line = "the of and the to"
        for (k = 0; k < 12; k++) { i = 1 + int(rand() * 6); line = line " " (d % 2 ? a[i] : b[i]) " the" }
        print line " rare" d } }' >"$T/t.txt"
export OMP_NUM_THREADS=1
run_job "$T/d" "$L" --text "$T/t.txt" --topics 2 --iters 20 --model "$T/md"
run_job "$T/n" "$L" --text "$T/t.txt" --topics 2 --iters 20 --model "$T/mn" --stopwords none
[ $rc -eq 0 ] && ! grep -qwE "the|of|and|to" "$T/md/topics.txt" && ! grep -qxE "the|of|and|to" "$T/md/vocab.txt" &&
    grep -qw the "$T/mn/topics.txt" && grep -qx the "$T/mn/vocab.txt"
ok $? "the built-in stop list drops 'the of and to' (topics: $(cut -f2 "$T/md/topics.txt" | tr '\n' '|')); --stopwords none keeps them"

printf '# mine\nRiver\nboat\n\nthe\n' >"$T/stop"
run_job "$T/s" "$L" --text "$T/t.txt" --topics 2 --iters 5 --model "$T/ms" --stopwords "$T/stop"
[ $rc -eq 0 ] && ! grep -qxE "river|boat|the" "$T/ms/vocab.txt" && grep -qx of "$T/ms/vocab.txt" &&
    grep -qx water "$T/ms/vocab.txt"
ok $? "--stopwords FILE drops its words (lowercased; comments skipped) and only them"

run_job "$T/c" "$L" --text "$T/t.txt" --topics 2 --iters 5 --model "$T/mc" --min-count 2
[ $rc -eq 0 ] && ! grep -q "^rare" "$T/mc/vocab.txt" && [ "$(grep -c '^rare' "$T/md/vocab.txt")" -eq 400 ]
ok $? "--min-count 2 drops the 400 words seen once"

# vocab.txt: line k is word k of word_topic.txt; each topic's top word
# (topics.txt) has, through vocab.txt, the topic's largest count
V=$(sed -n 1p "$T/md/word_topic.txt")
awk -v FS='[ \t]' 'FILENAME ~ /vocab/ { id[$0] = FNR; next }
    FILENAME ~ /word_topic/ { if (FNR > 3) { c[$1, $2] = $3; if ($3 > best[$2]) best[$2] = $3 } next }
    { k = $1 + 1; n++; if (!($2 in id) || c[id[$2], k] != best[k] || !best[k]) bad = 1 }
    END { exit bad || n != 2 }' "$T/md/vocab.txt" "$T/md/word_topic.txt" "$T/md/topics.txt"
[ $? -eq 0 ] && [ "$(wc -l <"$T/md/vocab.txt")" -eq "$V" ]
ok $? "vocab.txt holds the $V words of word_topic.txt's ids; every topic's top word matches"

run_job "$T/e" "$L" --text "$T/t.txt" --topics 2 --stopwords "$T/nope"
[ $rc -eq 1 ] && has "$T/e" "loom-lda: .*nope: No such file or directory" && [ "$(wc -l <"$T/e")" -eq 1 ]
ok $? "a missing stop-word file is named, exit 1"
run_job "$T/u" "$L" --train "$T/t.txt" --topics 2 --stopwords "$T/stop"
[ $rc -eq 2 ] && has "$T/u" "--stopwords goes with --text"
ok $? "--stopwords without --text is refused, exit 2"
# theta FILE N: N rows "d p1 p2" numbered 1..N in order, each summing to 1;
# prints the share of documents whose larger topic agrees with the parity
# of their number (the two themes alternate), the larger of it and 1 - it
theta() {
    awk -v n="$2" 'NF != 3 || $1 != NR || ($2 + $3 - 1) ^ 2 > 1e-8 { bad = 1 }
        { same += (($2 > $3) == ($1 % 2)) }
        END { if (bad || NR != n) print "bad"; else { s = same / NR; print (s > 1 - s ? s : 1 - s) } }' "$1"
}
for n in 1 2; do
    OMP_NUM_THREADS=1 run_job "$T/th$n" "$LOOMRUN" -n $n "$L" --text "$T/t.txt" --topics 2 --iters 30 \
        --model "$T/mt$n"
    a=$(theta "$T/mt$n/doc_topic.txt" 400)
    [ $rc -eq 0 ] && [ "$a" != bad ] && awk -v a="$a" 'BEGIN { exit !(a >= 0.95) }'
    ok $? "$n rank(s): doc_topic.txt has 400 rows in order and tells the themes apart (share $a)"
done
OMP_NUM_THREADS=1 run_job "$T/tt" "$LOOMRUN" -n 2 "$L" --text "$T/t.txt" --topics 2 --iters 30 \
    --model "$T/mtt" --test-frac 0.25
ntest=$(wc -l <"$T/mtt/test_doc_topic.txt") ntrain=$(wc -l <"$T/mtt/doc_topic.txt")
at=$(awk 'NF != 3 || $1 != NR || ($2 + $3 - 1) ^ 2 > 1e-8 { print "bad"; exit }
    { s += $2 > $3 ? $2 : $3 } END { print s / NR }' "$T/mtt/test_doc_topic.txt")
[ $rc -eq 0 ] && [ "$at" != bad ] && [ $((ntest + ntrain)) -eq 400 ] && [ "$ntest" -gt 50 ] &&
    awk -v t="$at" 'BEGIN { exit !(t >= 0.8) }'
ok $? "test_doc_topic.txt: $ntest held-out rows beside $ntrain training rows, folded in (mean top share $at)"
finish
