#!/bin/sh
# ring_sparse.t — a ring hand-off sends only what its successor lacks, and
# every change: on 1-4 ranks (and over TCP), three tables of mostly zero
# words edited sparsely (tests/bin/ring_sparse.c) arrive at every owner
# equal to a replay of every edit, end equal after a collect, and the
# hand-offs carry fewer units than the rotation moved and under a quarter
# of their dense bytes; in check mode too.  A table that every owner
# rewrites whole (as SGD does its factor rows) goes raw without being
# looked at, and turns sparse again when the edits thin out (12 rotations).
. "$(dirname "$0")/../lib.sh"
plan 8
for n in 1 2 3 4; do
    run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/ring_sparse" 3
    [ $rc -eq 0 ] && has "$T/o" "ring_sparse: ok P=$n rotations=3"
    ok $? "$n rank(s): every change arrives, hand-offs sparse ($(grep -o 'units.*' "$T/o" | head -1))"
done
for n in 2 3; do
    run_job "$T/d" "$LOOMRUN" -n $n "$B/tests/bin/ring_sparse" 12
    [ $rc -eq 0 ] && has "$T/d" "ring_sparse: ok P=$n rotations=12"
    ok $? "$n ranks: a dense table goes raw, then sparse again ($(grep -o "'turns'.*" "$T/d" | head -1))"
done
UCX_TLS=tcp,self run_job "$T/t" "$LOOMRUN" -n 3 "$B/tests/bin/ring_sparse" 2
[ $rc -eq 0 ] && has "$T/t" "ring_sparse: ok P=3"
ok $? "the same over TCP"
LOOM_CHECK=dsm run_job "$T/c" "$LOOMRUN" -n 3 "$B/tests/bin/ring_sparse" 2
[ $rc -eq 0 ] && has "$T/c" "ring_sparse: ok P=3"
ok $? "the same in check mode"
finish
