#!/usr/bin/env bash
# lasso_ranks.sh BUILD [BASE_BUILD] — loom-lasso at 2 ranks x 1 thread
# against 1 rank x 2 threads (issue 15's goal), each layout at its
# defaults: seconds to the objective F*(1 + 1e-6), F* from the serial twin
# run to a duality gap of 1e-12.  Data: loom-gen lasso, 2000 features, 50
# planted, density 0.05, with the samples and lambda of each LASSO_SETS
# entry (SAMPLES:LAMBDA; default "5000:0.1 50000:1").  ROUNDS (default 5)
# interleaved rounds, layouts in rotating order; medians of the per-round
# ratios.  "2x1split": 2 x 1 with --batch 8, the rows split over the
# ranks whatever the problem's size (without --batch a problem with under
# 768 values a column runs whole on every rank).  With
# BASE_BUILD, that build's 1 x 2 and 2 x 1 run in the same rounds.
# LAYOUTS (RxT, RxTsplit; 1x2 among them) replaces the layouts compared.
# Prints a Markdown table; part of tests/perf/ranks.sh (make bench).
set -euo pipefail
B=${1:-build}
BASE=${2:-}
R=${ROUNDS:-5}
SETS=${LASSO_SETS:-"5000:0.1 50000:1"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lays=${LAYOUTS:-"1x2 2x1 2x1split"}
[ -n "$BASE" ] && lays="$lays base1x2 base2x1"

# one LAYOUT DATA LAMBDA TARGET: one run; prints "seconds updates", or
# "inf updates" when the target was not reached.
one() {
    local bin=$B/bin lay=$1 extra=
    [ "${lay#base}" != "$lay" ] && bin=$BASE/bin lay=${lay#base}
    [ "${lay%split}" != "$lay" ] && extra="--batch 8" lay=${lay%split}
    OMP_NUM_THREADS=${lay#*x} "$bin/loomrun" -n "${lay%x*}" "$bin/loom-lasso" --X "$2.X.mtx" \
        --y "$2.y.mtx" --lambda "$3" --iters 5000 --tol 0 --target "$4" --log "$tmp/log.csv" $extra \
        >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
    tail -1 "$tmp/log.csv" | awk -F, -v t="$4" '{print ($4 <= t ? $3 : "inf"), $2}'
}

echo "| samples x features, lambda | layout | seconds to F*(1 + 1e-6), median | updates | 1 x 2 / this, median of rounds (range) |"
echo "|---|---|---|---|---|"
for set in $SETS; do
    n=${set%:*} lambda=${set#*:}
    "$B/bin/loom-gen" lasso --samples "$n" --features 2000 --nonzeros 50 --density 0.05 \
        --out "$tmp/d" >/dev/null
    fstar=$(OMP_NUM_THREADS=1 "$B/bin/loomrun" -n 1 "$B/bin/loom-lasso" --X "$tmp/d.X.mtx" \
        --y "$tmp/d.y.mtx" --lambda "$lambda" --serial cyclic --iters 20000 --tol 1e-12 |
        sed -n 's/^final objective=//p')
    target=$(python3 -c "print(repr($fstar * (1 + 1e-6)))")
    : >"$tmp/times"
    order=($lays)
    for ((r = 0; r < R; r++)); do
        for ((k = 0; k < ${#order[@]}; k++)); do
            lay=${order[$(((k + r) % ${#order[@]}))]}
            echo "$r $lay $(one "$lay" "$tmp/d" "$lambda" "$target")" >>"$tmp/times"
        done
    done
    python3 - "$tmp/times" "$n x 2000, lambda $lambda" $lays <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
t = {}
for r, lay, sec, upd in rows:
    t.setdefault(lay, {})[int(r)] = (float(sec), int(upd))
for lay in sys.argv[3:]:
    secs = [v[0] for v in t[lay].values()]
    upd = statistics.median(v[1] for v in t[lay].values())
    ratios = sorted(t["1x2"][r][0] / t[lay][r][0] for r in t[lay])
    name = lay[4:].replace("x", " x ") + ", base build" if lay.startswith("base") else lay.replace("x", " x ")
    name = name.replace("split", ", split (--batch 8)")
    print(f"| {sys.argv[2]} | {name} | {statistics.median(secs):.4f} | "
          f"{upd:.0f} | {statistics.median(ratios):.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f}) |")
EOF
done
echo
echo "1 x 2 is loom-lasso's default on one rank: a thread per 256 values of a column, so one"
echo "thread on the 5 000-sample set (threads do not pay for updates of a few microseconds): one"
echo "coordinate at a time, no filter.  R x 1 at its default splits the rows where they hold"
echo "768 values of a column or more (the 50 000-sample set: 2 500), whatever R, and draws"
echo "batches of 8 of 16 candidates through the correlation filter, with one allreduce a batch;"
echo "below that (the 5 000-sample set: 250) every rank holds the whole problem and solves it"
echo "alone, as one rank does."
echo "The split rows (--batch 8) run the batches whatever the size (docs/loom-lasso.md)."
