#!/bin/sh
# ring_sparse.t — a ring hand-off sends only what its successor lacks, and
# every change: on 1-4 ranks (and over TCP), three tables of mostly zero
# words edited sparsely (tests/bin/ring_sparse.c) arrive at every owner
# equal to a replay of every edit, end equal after a collect, and the
# hand-offs carry fewer units than the rotation moved and under a quarter
# of their dense bytes; in check mode too.  A table that every owner
# rewrites whole (as SGD does its factor rows) goes raw without being
# looked at (loom_stats' raw_handoffs; the sparse tables never do), and
# turns sparse again when the edits thin out (12 rotations).
. "$(dirname "$0")/../lib.sh"
plan 8
# (one rank has the local policy: no hand-offs, only the edits kept)
for n in 1 2 3 4; do
    run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/ring_sparse" 3
    [ $rc -eq 0 ] && has "$T/o" "ring_sparse: ok P=$n rotations=3"
    st=$?
    what="every change arrives, hand-offs sparse"
    [ $n -eq 1 ] && what="every edit kept (no hand-offs on one rank)"
    ok $st "$n rank(s): $what ($(grep -o 'units.*' "$T/o" | head -1))"
done
for n in 2 3; do
    run_job "$T/d" "$LOOMRUN" -n $n "$B/tests/bin/ring_sparse" 12
    [ $rc -eq 0 ] && has "$T/d" "ring_sparse: ok P=$n rotations=12" &&
        has "$T/d" "'turns' raw sub-epochs [1-9]"
    ok $? "$n ranks: a dense table goes raw (loom_stats counts it), then sparse again ($(grep -o "'turns'.*" "$T/d" | head -1))"
done
UCX_TLS=tcp,self run_job "$T/t" "$LOOMRUN" -n 3 "$B/tests/bin/ring_sparse" 2
[ $rc -eq 0 ] && has "$T/t" "ring_sparse: ok P=3"
ok $? "the same over TCP"
LOOM_CHECK=dsm run_job "$T/c" "$LOOMRUN" -n 3 "$B/tests/bin/ring_sparse" 2
[ $rc -eq 0 ] && has "$T/c" "ring_sparse: ok P=3"
ok $? "the same in check mode"
finish
