#!/bin/sh
# collectives.t — barrier, bcast and allreduce give exact results on 1-4
# ranks started by loomrun (every type, op, root; small and large paths).
. "$(dirname "$0")/../lib.sh"
plan 4
for n in 1 2 3 4; do
    run_job "$T/out.$n" "$LOOMRUN" -n $n "$B/tests/bin/coll_check"
    [ $rc -eq 0 ] && has "$T/out.$n" "coll_check: ok P=$n"
    ok $? "collectives exact on $n rank(s)"
done
finish
