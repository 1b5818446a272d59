#!/bin/sh
# ssp.t — the ssp guarantee: with random delays and a straggler, for
# s in {0, 1, 3} no read (row or page) misses an update older than c - s,
# own writes are always visible, and slack lets fast ranks run ahead: fewer
# blocked reads at s = 3 than at s = 0.  s = 0 behaves as bsp (lag <= 1).
# And no update is lost: the additive stress passes under ssp too.
. "$(dirname "$0")/../lib.sh"
plan 6
for s in 0 1 3; do
    LOOM_COHERENCE=ssp LOOM_STALENESS=$s run_job "$T/o$s" "$LOOMRUN" -n 4 "$B/tests/bin/ssp_bound" 40
    line=$(grep -o 'ssp_bound: .*' "$T/o$s")
    lag=$(echo "$line" | sed -n 's/.*maxlag=\([0-9]*\).*/\1/p')
    [ $rc -eq 0 ] && echo "$line" | grep -q "violations=0" && [ -n "$lag" ] && [ "$lag" -le $((s + 1)) ]
    ok $? "s=$s: no stale read beyond the bound ($line)"
done
b0=$(sed -n 's/.*blocked=\([0-9]*\).*/\1/p' "$T/o0")
b3=$(sed -n 's/.*blocked=\([0-9]*\).*/\1/p' "$T/o3")
[ -n "$b0" ] && [ -n "$b3" ] && [ "$b3" -lt "$b0" ]
ok $? "fast ranks run ahead: $b3 blocked reads at s=3 < $b0 at s=0"
for path in rows pages; do
    LOOM_COHERENCE=ssp LOOM_STALENESS=2 OMP_NUM_THREADS=2 run_job "$T/a$path" "$LOOMRUN" -n 3 \
        "$B/tests/bin/dsm_add" $path 1000000 5000 4
    [ $rc -eq 0 ] && has "$T/a$path" "dsm_add: ok $path P=3"
    ok $? "no lost update under ssp ($path, 3 ranks x 2 threads)"
done
finish
