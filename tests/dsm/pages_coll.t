#!/bin/sh
# pages_coll.t — loom_bcast and loom_allreduce into Loom
# page units no rank has touched (4 KiB to 1 MiB, 4 KiB and 64 KiB units)
# receive exactly what was sent, and the bytes reach every rank after a
# barrier; read(2) into an untouched remote unit fails with EFAULT as
# documented, and works after loom_touch (tests/bin/dsm_coll.c).
. "$(dirname "$0")/../lib.sh"
plan 5
for cfg in 1:1 2:1 3:2 4:1; do
    n=${cfg%:*} t=$(threads ${cfg#*:})
    OMP_NUM_THREADS=$t run_job "$T/o$n" "$LOOMRUN" -n $n "$B/tests/bin/dsm_coll" "$T/f$n"
    [ $rc -eq 0 ] && grep -q "dsm_coll: ok" "$T/o$n"
    ok $? "$n ranks x $t threads: collectives into untouched page units"
done
UCX_TLS=tcp,self OMP_NUM_THREADS=1 run_job "$T/otcp" "$LOOMRUN" -n 3 "$B/tests/bin/dsm_coll" "$T/ftcp"
[ $rc -eq 0 ] && grep -q "dsm_coll: ok" "$T/otcp"
ok $? "3 ranks over TCP"
finish
