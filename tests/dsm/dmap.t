#!/bin/sh
# dmap.t — the distributed map (docs/dmap.md): sparse 64-bit keys added to
# by every rank and thread sum exactly, keys one rank writes are seen by
# all after a barrier, absent keys read as absent zeros, the shards list
# each key once, loom_dmap_rows gives each key one row (the same on every
# rank) of the values allocation, put overwrites (and an add after a put
# of the same key joins it, once); on 1-4 ranks x 1-2 threads, over TCP,
# under ssp; a full shard stops the job with one message naming the map;
# a checkpointed map comes back on restart.
. "$(dirname "$0")/../lib.sh"
plan 9
for cfg in 1:2 2:1 2:2 3:2 4:1; do
    n=${cfg%:*} t=${cfg#*:}
    OMP_NUM_THREADS=$t run_job "$T/o" "$LOOMRUN" -n $n "$B/tests/bin/dmap_check" check 20000
    [ $rc -eq 0 ] && has "$T/o" "dmap_check: ok P=$n T=$t keys=20000"
    ok $? "20000 sparse keys exact on $n rank(s) x $t thread(s)"
done
OMP_NUM_THREADS=1 UCX_TLS=tcp,self run_job "$T/o" "$LOOMRUN" -n 3 "$B/tests/bin/dmap_check" check 5000
[ $rc -eq 0 ] && has "$T/o" "dmap_check: ok P=3 T=1 keys=5000" && ! grep -q WARN "$T/o"
ok $? "exact over TCP, 3 ranks, and UCX warns of nothing"
OMP_NUM_THREADS=2 LOOM_COHERENCE=ssp LOOM_STALENESS=2 run_job "$T/o" "$LOOMRUN" -n 2 "$B/tests/bin/dmap_check" check 5000
[ $rc -eq 0 ] && has "$T/o" "dmap_check: ok P=2 T=2 keys=5000"
ok $? "exact under ssp (values are rows of an ssp allocation)"
OMP_NUM_THREADS=1 run_job "$T/o" "$LOOMRUN" -n 2 "$B/tests/bin/dmap_check" overflow 1000
[ $rc -ne 0 ] && has "$T/o" "map 'tiny': the shard of rank [01] is full" &&
    [ "$(grep -c "full\|exited with" "$T/o")" -eq 1 ]
ok $? "a full shard stops the job with one message naming the map (exit $rc)"
export LOOM_CHECKPOINT_DIR="$T/ck"
OMP_NUM_THREADS=2 run_job "$T/o" "$LOOMRUN" -n 3 "$B/tests/bin/dmap_check" save 5000
OMP_NUM_THREADS=2 run_job "$T/o2" "$LOOMRUN" --restart -n 3 "$B/tests/bin/dmap_check" load 5000
[ $rc -eq 0 ] && has "$T/o" "dmap_check: saved \(0\)" && has "$T/o2" "dmap_check: ok P=3 T=2 keys=5000"
ok $? "a checkpointed map comes back whole on restart (keys, values, shards)"
finish
