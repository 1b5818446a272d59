#!/bin/sh
# examples.t — the ported OpenMP programs of examples/ (docs/openmp.md):
# for the k-means, the Jacobi heated plate and the PageRank, loom.c prints
# exactly what omp.c prints at 2 threads, on 1 rank x 2 threads and on 2
# and 3 ranks x 1 thread (each program's answer is exact whatever the
# order of its sums: see their header comments), and each port changes at
# most 20 lines of its OpenMP program (diff, added + removed).  The sizes
# are small so that the checks take seconds.
. "$(dirname "$0")/../lib.sh"
R=$(cd "$(dirname "$0")/../.." && pwd)
plan 12
for c in "kmeans 20000" "jacobi 96 0.05" "pagerank 20000"; do
    set -- $c
    e=$1
    shift
    OMP_NUM_THREADS=$(threads 2) run_job "$T/$e.omp" "$B/examples/$e/omp" "$@"
    [ $rc -eq 0 ] && [ -s "$T/$e.omp" ] || diag "$e/omp failed ($rc)"
    for nt in "1 2" "2 1" "3 1"; do
        set -- $nt $c
        n=$1 t=$2
        shift 3
        OMP_NUM_THREADS=$(threads $t) run_job "$T/$e.$n" "$LOOMRUN" -n $n --no-tag-output \
            "$B/examples/$e/loom" "$@"
        [ $rc -eq 0 ] && cmp -s "$T/$e.omp" "$T/$e.$n" ||
            { diag "$e on $n x $t:"; diff "$T/$e.omp" "$T/$e.$n" | sed 's/^/#   /' >&2; false; }
        ok $? "$e: loom.c on $n rank(s) x $t thread(s) prints what omp.c prints"
    done
done
for e in kmeans jacobi pagerank; do
    k=$(diff "$R/examples/$e/omp.c" "$R/examples/$e/loom.c" | grep -c '^[<>]')
    [ "$k" -le 20 ] || diag "$e: the port changes $k lines"
    [ "$k" -le 20 ]
    ok $? "$e: the port changes $k lines (at most 20)"
done
finish
