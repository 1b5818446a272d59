#!/bin/sh
# ordered.t — the ordered 2D schedule (.ordered, sched/ordered.c) on SGD
# matrix factorization (tests/bin/ordered_mf.c): with 2-4 threads W and H
# are bitwise equal to the plain serial loop's after 3 passes, also under
# LOOM_CHECK=serial (where every record first checks that the previous
# record of each of its rows has run); LOOM_STATS shows K x K cells and
# Orion's 2K - 1 time steps (7 on 4 x 4, seed 001 Fig. 3.8); records in
# an order the wavefront cannot keep (one user's last item moved first)
# are refused with a message naming both records; so is a run on two
# ranks (one rank only, for now).
. "$(dirname "$0")/../lib.sh"
plan 6
M="$B/tests/bin/ordered_mf"
for t in 2 4; do
    OMP_NUM_THREADS=$t LOOM_STATS=1 run_job "$T/o" "$M" same 3
    [ $rc -eq 0 ] && has "$T/o" "ordered_mf: threads=$t passes=3 same=1" &&
        has "$T/o" "ordered: $t x $t cells, $((2 * t - 1)) time steps"
    ok $? "$t threads: bitwise the serial loop's result, $((2 * t - 1)) time steps"
done
OMP_NUM_THREADS=3 LOOM_CHECK=serial run_job "$T/c" "$M" same 2
[ $rc -eq 0 ] && has "$T/c" "ordered_mf: threads=3 passes=2 same=1"
ok $? "LOOM_CHECK=serial: every record after its rows' previous records, result the serial one"
OMP_NUM_THREADS=4 run_job "$T/s" "$M" same 1 shuffled
[ $rc -ne 0 ] && has "$T/s" "ordered: records 0 and [0-9]+ share row 0 of .fields\[1\]|ordered: records [0-9]+ and [0-9]+ share row [0-9]+ of .fields" &&
    has "$T/s" "ordered_mf: refused"
ok $? "an order the wavefront cannot keep is refused, naming the records"
OMP_NUM_THREADS=1 run_job "$T/1" "$M" same 2
[ $rc -eq 0 ] && has "$T/1" "same=1"
ok $? "one thread: the serial loop"
run_job "$T/r" "$LOOMRUN" -n 2 "$M" same 1
[ $rc -ne 0 ] && has "$T/r" "the ordered schedule runs on one rank" && has "$T/r" "ordered_mf: refused"
ok $? "two ranks: refused with a message, no hang"
finish
