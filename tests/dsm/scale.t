#!/bin/sh
# scale.t — a 4 GiB allocation spread over the ranks works with little
# resident memory, and alloc/free cycles leak no mapping, memfd or UCX
# registration; misuse (bad row, foreign free, mismatched allocation) is
# a clear error and the program goes on.
. "$(dirname "$0")/../lib.sh"
plan 6
for n in 1 2 4; do
    run_job "$T/s$n" "$LOOMRUN" -n $n "$B/tests/bin/dsm_scale" 4
    [ $rc -eq 0 ] && has "$T/s$n" "dsm_scale: ok P=$n 4 GiB.*no leaks"
    ok $? "4 GiB over $n rank(s)$([ $n -eq 1 ] && echo ' (the local policy: plain memory)'), no leaks after 50 alloc/free cycles"
done
for n in 1 2 4; do
    run_job "$T/e$n" "$LOOMRUN" -n $n "$B/tests/bin/dsm_errors"
    [ $rc -eq 0 ] && has "$T/e$n" "dsm_errors: ok P=$n" &&
        has "$T/e$n" "row 100 is out of range for 'W' \(100 rows\)" &&
        has "$T/e$n" "loom_free\(0x[0-9a-f]+\): not an address loom_alloc returned" &&
        { [ $n -eq 1 ] || has "$T/e$n" "ranks asked for different sizes \(4096 to 8192 bytes\)"; }
    ok $? "misuse on $n rank(s) gives clear errors and the job goes on"
done
finish
