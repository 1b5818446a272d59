#!/bin/bash
# examples.sh — the ported OpenMP programs of examples/ against their
# originals, side by side in one run (what `make bench` runs):
#   tests/perf/examples.sh BUILD_DIR
# For each of kmeans, jacobi and pagerank at its default size, BENCH_RUNS
# rounds (default 5, at least 3), each round interleaved so noise hits all
# alike: omp.c at 2 threads, loom.c on 1 rank x 2 threads, loom.c on 2
# ranks x 1 thread (loomrun, local).  Wall seconds of each run (the whole
# process, start-up included); the medians and their ratios to omp.c go
# to docs/bench-examples.md.  Every run's output must equal omp.c's, or
# the script stops non-zero before the document is touched.
set -euo pipefail
die() { echo "examples.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: tests/perf/examples.sh BUILD_DIR"
cd "$(dirname "$0")/../.."
B=$1
RUNS=${BENCH_RUNS:-5}
[ "$RUNS" -ge 3 ] 2>/dev/null || die "BENCH_RUNS must be an integer >= 3 (got '$RUNS')"
DOC=docs/bench-examples.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

# secs OUT CMD...: runs CMD, its stdout to OUT; prints the wall seconds
secs() {
    local out=$1 t0 t1
    shift
    t0=$(date +%s.%N)
    "$@" > "$out" 2>"$out.err" || die "failed: $* ($(tail -1 "$out.err"))"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

rows=""
for e in kmeans jacobi pagerank; do
    : > "$TMP/$e.o"; : > "$TMP/$e.12"; : > "$TMP/$e.21"
    for r in $(seq "$RUNS"); do
        OMP_NUM_THREADS=2 secs "$TMP/out.o" "$B/examples/$e/omp" >> "$TMP/$e.o"
        OMP_NUM_THREADS=2 secs "$TMP/out.12" "$B/bin/loomrun" -n 1 "$B/examples/$e/loom" >> "$TMP/$e.12"
        OMP_NUM_THREADS=1 secs "$TMP/out.21" "$B/bin/loomrun" -n 2 --no-tag-output \
            "$B/examples/$e/loom" >> "$TMP/$e.21"
        cmp -s "$TMP/out.o" "$TMP/out.12" && cmp -s "$TMP/out.o" "$TMP/out.21" ||
            die "$e: loom.c's answer differs from omp.c's"
    done
    o=$(median < "$TMP/$e.o") a=$(median < "$TMP/$e.12") b=$(median < "$TMP/$e.21")
    k=$(diff "examples/$e/omp.c" "examples/$e/loom.c" | grep -c '^[<>]' || true)
    rows+=$(awk -v e="$e" -v k="$k" -v o="$o" -v a="$a" -v b="$b" \
        'BEGIN {printf "| %s | %d | %.3f | %.3f (%.2f×) | %.3f (%.2f×) |", e, k, o, a, a / o, b, b / o}')$'\n'
    echo "examples.sh: $e: omp $o s, loom 1x2 $a s, loom 2x1 $b s" >&2
done

cat > "$DOC" <<DOC
# The ported OpenMP programs against their originals

\`tests/perf/examples.sh $B\` (run by \`make bench\`) on $(nproc) CPUs, $(date -u +%Y-%m-%d),
load average before the run: $LOAD.  Median wall seconds of $RUNS interleaved
rounds, start-up included; each ratio is to omp.c at 2 threads (lower is
faster).  Every run printed exactly what omp.c printed.

| program | lines changed by the port | omp.c, 2 threads | loom.c, 1 rank × 2 threads | loom.c, 2 ranks × 1 thread |
|---|---|---|---|---|
$rows
Goals (issue "Ordinary OpenMP programs"): 1 × 2 within 1.05× of OpenMP,
2 × 1 within 1.3× on one host.  The programs, their sizes and what they
print are in examples/NAME/omp.c; docs/openmp.md explains each port.
DOC
echo "examples.sh: wrote $DOC" >&2
