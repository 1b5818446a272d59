#!/bin/sh
# lasso_corr.t — loom-lasso's correlation filter on 1-3 ranks
# (tests/bin/lasso_corr.c): the sample every rank builds from the ranks'
# gathered entries gives, for all 276 pairs of a 37 x 24 matrix, the
# correlation over exactly the rows it should hold (every row, or the
# first ceil(10 / P) of each rank's share), and the same value on every
# rank, bit for bit.
. "$(dirname "$0")/../lib.sh"
plan 6
for n in 1 2 3; do
    for rows in 0 10; do
        OMP_NUM_THREADS=1 run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/lasso_corr" $rows
        [ $rc -eq 0 ] && has "$T/o" "ok - $n rank" && ! grep -q "not ok" "$T/o"
        ok $? "$n rank(s), a sample of $rows rows (0: every row)"
    done
done
finish
