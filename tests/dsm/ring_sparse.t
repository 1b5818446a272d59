#!/bin/sh
# ring_sparse.t — a ring hand-off sends only what its successor lacks, and
# every change: on 1-4 ranks (and over TCP), three tables of mostly zero
# words edited sparsely (tests/bin/ring_sparse.c) arrive at every owner
# equal to a replay of every edit, end equal after a collect, and the
# hand-offs carry fewer units than the rotation moved and under a quarter
# of their dense bytes; in check mode too.
. "$(dirname "$0")/../lib.sh"
plan 6
for n in 1 2 3 4; do
    run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/ring_sparse" 3
    [ $rc -eq 0 ] && has "$T/o" "ring_sparse: ok P=$n rotations=3"
    ok $? "$n rank(s): every change arrives, hand-offs sparse ($(grep -o 'units.*' "$T/o" | head -1))"
done
UCX_TLS=tcp,self run_job "$T/t" "$LOOMRUN" -n 3 "$B/tests/bin/ring_sparse" 2
[ $rc -eq 0 ] && has "$T/t" "ring_sparse: ok P=3"
ok $? "the same over TCP"
LOOM_CHECK=dsm run_job "$T/c" "$LOOMRUN" -n 3 "$B/tests/bin/ring_sparse" 2
[ $rc -eq 0 ] && has "$T/c" "ring_sparse: ok P=3"
ok $? "the same in check mode"
finish
