#!/bin/sh
# ordered.t — the ordered 2D schedule (.ordered, sched/ordered.c) on SGD
# matrix factorization (tests/bin/ordered_mf.c): with 2-4 threads W and H
# are bitwise equal to the plain serial loop's after 3 passes, also under
# LOOM_CHECK=serial (where every record first checks that the previous
# record of each of its rows has run); LOOM_STATS shows K x 4K cells in
# 5K - 1 time steps (B cut into 4 columns a thread: 19 quarter steps on
# 4 threads where Orion's K x K grid takes 7 whole ones); records in
# an order the wavefront cannot keep (one user's last item moved first)
# are refused with a message naming both records.  Across ranks (W local,
# H a mirrored ring, each rank a run of users): 2-4 ranks of 1 thread and
# 2 x 2 give W and H bitwise the serial loop's over all ratings, with
# Orion's 2P - 1 time steps (7 on 4 ranks, seed 001 Fig. 3.8), also under LOOM_CHECK=serial and
# LOOM_CHECK=dsm (a rank touching a partition it does not own stops the
# job); ranks whose users are not in rank order, and a loop without
# .local and a ring, are refused with one message, without a hang.
. "$(dirname "$0")/../lib.sh"
plan 13
M="$B/tests/bin/ordered_mf"
for t in 2 4; do
    OMP_NUM_THREADS=$t LOOM_STATS=1 run_job "$T/o" "$M" same 3
    [ $rc -eq 0 ] && has "$T/o" "ordered_mf: threads=$t passes=3 same=1" &&
        has "$T/o" "ordered: $t x $((4 * t)) cells, $((5 * t - 1)) time steps"
    ok $? "$t threads: bitwise the serial loop's result, $t x $((4 * t)) cells in $((5 * t - 1)) time steps"
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
for lay in 2x1 3x1 4x1 2x2; do
    r=${lay%x*} t=${lay#*x}
    OMP_NUM_THREADS=$t LOOM_STATS=1 run_job "$T/r$lay" "$LOOMRUN" -n "$r" "$M" ranks_same 3
    [ $rc -eq 0 ] && has "$T/r$lay" "ordered_mf: ranks=$r passes=3 same=1" &&
        has "$T/r$lay" "ordered: $r ranks x $t threads: $r x $r partitions, $((2 * r - 1)) time steps"
    ok $? "$r ranks x $t threads: bitwise the serial loop's result, $((2 * r - 1)) time steps"
done
OMP_NUM_THREADS=2 LOOM_CHECK=serial run_job "$T/rc" "$LOOMRUN" -n 2 "$M" ranks_same 2
[ $rc -eq 0 ] && has "$T/rc" "ordered_mf: ranks=2 passes=2 same=1"
ok $? "2 x 2 under LOOM_CHECK=serial: the serial loop's result"
OMP_NUM_THREADS=1 LOOM_CHECK=dsm run_job "$T/rd" "$LOOMRUN" -n 3 "$M" ranks_same 2
[ $rc -eq 0 ] && has "$T/rd" "ordered_mf: ranks=3 passes=2 same=1"
ok $? "3 ranks under LOOM_CHECK=dsm: no rank touches a partition it does not hold"
OMP_NUM_THREADS=1 run_job "$T/rs" "$LOOMRUN" -n 3 "$M" ranks_same 1 swapped
[ $rc -ne 0 ] && has "$T/rs" "rank 1's rows of .fields\[0\] \([0-9]+\.\.[0-9]+\) do not all come after rank 0's" &&
    has "$T/rs" "ordered_mf: refused" && [ "$(grep -c 'do not all come after' "$T/rs")" = 1 ]
ok $? "ranks whose users are not in rank order: refused with one message, no hang"
run_job "$T/r" "$LOOMRUN" -n 2 "$M" same 1
[ $rc -ne 0 ] && has "$T/r" "ordered on several ranks takes each rank's own records" && has "$T/r" "ordered_mf: refused"
ok $? "two ranks without .local: refused with a message, no hang"
finish
