#!/bin/sh
# writethrough.t — the example policy of docs/dsm.md, "Adding a policy"
# (dsm/policy_writethrough.c: one file plus one registry line), run by the
# DSM's own exactness tests under LOOM_COHERENCE=writethrough: additions
# from every rank and thread sum exactly (rows and pages), writes are
# visible after a barrier and an unlock, a seeded random page program is
# byte-identical to a serial run; LOOM_STATS names the policy, so these
# ran under it.  And the registry is the one list of names: a name it
# lacks is refused, by loomrun and by a program started alone, with one
# line listing what it has.
. "$(dirname "$0")/../lib.sh"
plan 8
export LOOM_COHERENCE=writethrough
for cfg in rows:3:2 pages:2:2; do
    path=${cfg%%:*} n=${cfg#*:} t=${n#*:} n=${n%%:*}
    t=$(threads $t)
    OMP_NUM_THREADS=$t run_job "$T/a$path" "$LOOMRUN" -n $n "$B/tests/bin/dsm_add" $path 200000 3000 4
    [ $rc -eq 0 ] && has "$T/a$path" "dsm_add: ok $path P=$n T=$t total=200000"
    ok $? "$path: 2x10^5 additions exact on $n ranks x $t thread(s)"
done
OMP_NUM_THREADS=$(threads 2) LOOM_STATS=1 run_job "$T/v" "$LOOMRUN" -n 3 "$B/tests/bin/dsm_visible"
[ $rc -eq 0 ] && has "$T/v" "dsm_visible: ok P=3"
ok $? "writes visible after barrier and unlock on 3 ranks"
has "$T/v" "stats '[a-z]+' \(writethrough\)"
ok $? "LOOM_STATS names the policy the allocations ran under"
run_job "$T/s" env -u LOOM_COHERENCE OMP_NUM_THREADS=1 "$LOOMRUN" -n 1 "$B/tests/bin/dsm_pages" "$T/serial.bin" 8 3
[ $rc -eq 0 ]
ok $? "serial run of the random page program"
OMP_NUM_THREADS=$(threads 2) run_job "$T/p" "$LOOMRUN" -n 3 "$B/tests/bin/dsm_pages" "$T/p3.bin" 8 3
[ $rc -eq 0 ] && cmp -s "$T/serial.bin" "$T/p3.bin"
ok $? "3 ranks: the random page program byte-identical to the serial run"
bad="is not valid: expected local, bsp, ssp, ring, priority or writethrough"
LOOM_COHERENCE=nosuch run_job "$T/l" "$LOOMRUN" -n 2 "$B/tests/bin/dsm_visible"
[ $rc -ne 0 ] && has "$T/l" "LOOM_COHERENCE='nosuch' $bad" && [ "$(wc -l <"$T/l")" -eq 1 ]
ok $? "loomrun refuses LOOM_COHERENCE=nosuch in one line naming every registered policy"
LOOM_COHERENCE_PAGES=nosuch run_job "$T/o" "$B/tests/bin/dsm_visible"
[ $rc -ne 0 ] && has "$T/o" "LOOM_COHERENCE_PAGES is not valid: expected LOOM_COHERENCE_<NAME>=local, bsp, ssp, ring, priority or writethrough"
ok $? "a program alone (loom_init) refuses LOOM_COHERENCE_PAGES=nosuch the same way"
finish
