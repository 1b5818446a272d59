#!/bin/sh
# add.t — additive stress: 10^6 additions from every rank and thread into
# random rows sum exactly, and every row equals a serial replay; on the
# row path (loom_row_add) and the page path (plain atomic adds).
. "$(dirname "$0")/../lib.sh"
plan 8
for path in rows pages; do
    for cfg in 1:1 2:2 3:1 4:2; do
        n=${cfg%:*} t=${cfg#*:}
        OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/dsm_add" $path 1000000 5000 4
        [ $rc -eq 0 ] && has "$T/o" "dsm_add: ok $path P=$n T=$t total=1000000"
        ok $? "$path: 10^6 additions exact on $n rank(s) x $t thread(s)"
    done
done
finish
