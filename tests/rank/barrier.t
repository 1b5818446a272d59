#!/bin/sh
# barrier.t — loom_barrier really orders events: in every round all ranks'
# "before" lines precede all "after" lines, though one rank arrives late.
. "$(dirname "$0")/../lib.sh"
plan 3
for n in 2 3 4; do
    f=$T/events.$n
    run_job "$T/out.$n" "$LOOMRUN" -n $n "$B/tests/bin/barrier_order" "$f" 6
    awk -v P=$n '
        { i = NR }
        $1 == "B" { nb[$2]++; if (i > lastb[$2]) lastb[$2] = i }
        $1 == "A" { na[$2]++; if (!($2 in firsta) || i < firsta[$2]) firsta[$2] = i }
        END {
            for (k = 0; k < 6; k++) {
                if (nb[k] != P || na[k] != P) { print "# round " k ": missing lines"; exit 1 }
                if (lastb[k] > firsta[k]) { print "# round " k ": an after-line precedes a before-line"; exit 1 }
            }
        }' "$f"
    s=$?
    [ $rc -eq 0 ] && [ $s -eq 0 ]
    ok $? "barrier orders 6 rounds on $n ranks"
done
finish
