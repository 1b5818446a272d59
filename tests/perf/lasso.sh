#!/bin/sh
# lasso.sh — coordinate updates loom-lasso needs to bring the objective
# within 1e-6 (relative) of the optimum: priority against uniform
# selection, and the serial twin, on planted problems from `loom-gen lasso`.
#   tests/perf/lasso.sh BUILD_DIR [SEEDS]      (SEEDS default "1 2 3 4 5")
# Prints a markdown table (docs/loom-lasso.md, "Measured"): per data set
# the median and the range over the schedule seeds.  The optimum is the
# serial twin's objective at a relative duality gap of 1e-12.  One rank,
# one thread: the counts are deterministic.  Takes about a minute.
set -eu
[ $# -ge 1 ] || { echo "usage: tests/perf/lasso.sh BUILD_DIR [SEEDS]" >&2; exit 2; }
B=$1
SEEDS=${2:-1 2 3 4 5}
T=$(mktemp -d /tmp/loomlasso.XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMP_NUM_THREADS=1

# field NAME FILE: the value after "NAME " on the last lambda line
last() { sed -n "s/^loom-lasso: lambda \([^:]*\): objective \([^,]*\),.* \([0-9]*\) updates.*/\\$1/p" "$2" | tail -1; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { m = (NR + 1) / 2; printf "%d", (v[int(m)] + v[int(m + 0.5)]) / 2 }'; }
range() { tr ' ' '\n' | grep . | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d–%d", lo, hi }'; }

echo "| data (n × p, k planted, column correlation, λ/λ_max) | priority: median (range) | uniform: median (range) | uniform / priority | serial twin, cyclic |"
echo "|---|---|---|---|---|"
# n p k correlation ratio
for set in "200 1000 10 0.3 0.2" "100 2000 5 0 0.2" "400 400 10 0.3 0.05" "200 1000 10 0.3 0.05"; do
    set -- $set
    "$B/bin/loom-gen" lasso --samples "$1" --features "$2" --nonzeros "$3" --correlation "$4" \
        --seed 1 --out "$T/d" >/dev/null
    X="--X $T/d.X.mtx --y $T/d.y.mtx"
    # lambda = ratio * lambda_max: read lambda_max from a zero-iteration run's header
    lmax=$("$B/bin/loom-lasso" $X --lambda 1 --iters 1 --tol 0 | sed -n 's/.*lambda_max \([^;]*\);.*/\1/p')
    lambda=$(awk -v m="$lmax" -v r="$5" 'BEGIN { printf "%.17g", m * r }')
    "$B/bin/loom-lasso" $X --lambda "$lambda" --serial cyclic --tol 1e-12 --iters 100000 >"$T/ref"
    opt=$(last 2 "$T/ref")
    target=$(awk -v f="$opt" 'BEGIN { printf "%.17g", f * (1 + 1e-6) }')
    "$B/bin/loom-lasso" $X --lambda "$lambda" --serial cyclic --tol 0 --target "$target" \
        --iters 100000 >"$T/twin"
    twin=$(last 3 "$T/twin")
    for sel in priority uniform; do
        counts=""
        for s in $SEEDS; do
            "$B/bin/loom-lasso" $X --lambda "$lambda" --select $sel --seed "$s" --tol 0 \
                --target "$target" --rounds 5 --iters 1000000 >"$T/run"
            counts="$counts $(last 3 "$T/run")"
        done
        eval "med_$sel=\$(echo \$counts | median); rng_$sel=\$(echo \$counts | range)"
    done
    ratio=$(awk -v u="$med_uniform" -v p="$med_priority" 'BEGIN { printf "%.2f", u / p }')
    echo "| $1 × $2, $3, $4, $5 | $med_priority ($rng_priority) | $med_uniform ($rng_uniform) | $ratio | $twin |"
done
