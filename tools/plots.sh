#!/bin/sh
# plots.sh — convergence plots for docs/: runs the apps on the demo data
# with the serial twin and two Loom layouts, logging CSV, and renders with
# gnuplot the objective against time and against samples processed.
#   tools/plots.sh BUILD     (make plots)
# CSV logs go to BUILD/plots/, PNG images to docs/plots/.
set -eu
B=$1
cd "$(dirname "$0")/.."
L=$B/plots
mkdir -p "$L" docs/plots
ML=../shared/data/movielens-100k
if [ -f $ML/u1.base ]; then train=$ML/u1.base test=$ML/u1.test what="MovieLens 100K u1"
else
    "$B/bin/loom-gen" ratings --users 900 --items 1600 --rank 5 --samples 100000 --out "$L/ratings" >/dev/null
    train=$L/ratings.train test=$L/ratings.test what="generated ratings"
fi

# run NAME RANKS THREADS APP ARGS...: one logged run, its stdout kept
run() {
    name=$1 n=$2 t=$3 app=$4; shift 4
    echo "plots: $name ($n rank(s) x $t thread(s))"
    OMP_NUM_THREADS=$t "$B/bin/loomrun" -n "$n" "$B/bin/$app" "$@" --log "$L/$name.csv" >"$L/$name.out"
}
run mf-serial 1 1 loom-mf --train "$train" --test "$test" --serial
run mf-1x2 1 2 loom-mf --train "$train" --test "$test"
run mf-2x1 2 1 loom-mf --train "$train" --test "$test"

# plot OUT TITLE XCOL XLABEL YCOL YLABEL PREFIX [KEY]: one line per layout
plot() {
    out=$1 title=$2 x=$3 xl=$4 y=$5 yl=$6 p=$7 key=${8:-top right}
    gnuplot <<GP
set terminal pngcairo size 720,440 font ",10"
set output "docs/plots/$out"
set datafile separator ","
set key $key box opaque
set grid
set title "$title"
set xlabel "$xl"
set ylabel "$yl"
plot "$L/$p-serial.csv" every ::1 using $x:$y with linespoints title "serial twin", \
     "$L/$p-1x2.csv" every ::1 using $x:$y with linespoints title "Loom 1 rank x 2 threads", \
     "$L/$p-2x1.csv" every ::1 using $x:$y with linespoints title "Loom 2 ranks x 1 thread"
GP
    echo "plots: docs/plots/$out"
}
plot mf-objective-time.png "loom-mf on $what: training objective" 3 "seconds (training)" 4 "objective" mf
plot mf-objective-samples.png "loom-mf on $what: training objective" 2 "samples (updates)" 4 "objective" mf
plot mf-test-rmse.png "loom-mf on $what: test RMSE" 2 "samples (updates)" 6 "test RMSE" mf

if [ -x "$B/bin/loom-lda" ]; then
    "$B/bin/loom-gen" lda --docs 2000 --vocab 2000 --topics 20 --doc-length 100 --out "$L/corpus" >/dev/null
    lda="--train $L/corpus.docword.txt --vocab $L/corpus.vocab.txt --topics 20 --iters 30"
    run lda-serial 1 1 loom-lda $lda
    run lda-1x2 1 2 loom-lda $lda
    run lda-2x1 2 1 loom-lda $lda
    col=$(head -1 "$L/lda-serial.csv" | tr ',' '\n' | grep -n '^loglik$' | cut -d: -f1)
    plot lda-loglik-time.png "loom-lda on a generated corpus (K=20): log-likelihood" 3 "seconds" "$col" "log-likelihood" lda "bottom right"
    plot lda-loglik-samples.png "loom-lda on a generated corpus (K=20): log-likelihood" 2 "samples (tokens)" "$col" "log-likelihood" lda "bottom right"
fi
