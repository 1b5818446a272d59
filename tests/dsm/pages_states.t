#!/bin/sh
# pages_states.t — the page path's sharing states (tests/bin/dsm_states.c):
# units written only by their home (kept in place), read by many and
# written by one other rank, written by two ranks byte-interleaved (the
# home in place, the other by diff), and private units becoming shared;
# every rank checks every byte after every barrier.  1-4 ranks x 1-2
# threads, shared memory and TCP, 4 KiB and 64 KiB units, bsp, ssp and
# priority.  Under ThreadSanitizer: one OpenMP thread, no TCP (pages.t).
. "$(dirname "$0")/../lib.sh"
plan 12
S="$B/tests/bin/dsm_states"
for cfg in 1:1 1:2 2:1 2:2 3:1 3:2 4:1 4:2; do
    n=${cfg%:*} t=$(threads ${cfg#*:})
    OMP_NUM_THREADS=$t run_job "$T/o$n.$t" "$LOOMRUN" -n $n "$S" 4096 96 4
    [ $rc -eq 0 ] && grep -q "dsm_states: ok" "$T/o$n.$t"
    ok $? "$n ranks x $t threads, 4 KiB units: every byte right after every barrier"
done
t=$(threads 2)
OMP_NUM_THREADS=$t run_job "$T/o64k" "$LOOMRUN" -n 3 "$S" 65536 12 4
[ $rc -eq 0 ] && grep -q "dsm_states: ok" "$T/o64k"
ok $? "3 ranks x $t threads, 64 KiB units"
if [ "${LOOMTEST_SANITIZE:-}" = thread ]; then
    skip 1 "TCP under ThreadSanitizer: UCX's software get reads a whole home unit while the home writes it in place (docs/dsm.md)"
else
    UCX_TLS=tcp,self OMP_NUM_THREADS=2 run_job "$T/otcp" "$LOOMRUN" -n 3 "$S" 4096 48 3
    [ $rc -eq 0 ] && grep -q "dsm_states: ok" "$T/otcp"
    ok $? "3 ranks x 2 threads over TCP"
fi
OMP_NUM_THREADS=1 run_job "$T/ossp" "$LOOMRUN" -n 2 "$S" 4096 48 3 ssp
[ $rc -eq 0 ] && grep -q "dsm_states: ok" "$T/ossp"
ok $? "2 ranks, ssp (staleness 0 by default)"
OMP_NUM_THREADS=$t run_job "$T/oprio" "$LOOMRUN" -n 4 "$S" 4096 48 3 priority
[ $rc -eq 0 ] && grep -q "dsm_states: ok" "$T/oprio"
ok $? "4 ranks x $t threads, priority on pages"
finish
