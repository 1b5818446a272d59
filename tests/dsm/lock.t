#!/bin/sh
# lock.t — distributed locks: mutual exclusion with acquire/release (a
# counter incremented under one lock by every rank is exact), manager
# records freed when locks fall idle (none left after churning through
# 20 000 distinct ids), and the bound on what one rank may hold at one
# manager (a rank that never releases is stopped with a message naming it,
# instead of growing the manager's memory without end).
. "$(dirname "$0")/../lib.sh"
plan 4
run_job "$T/c2" "$LOOMRUN" -n 2 "$B/tests/bin/lock_check" count 300
[ $rc -eq 0 ] && has "$T/c2" "lock_check: ok count 300 P=2"
ok $? "2 ranks x 300 increments under one lock: the counter is exact"
run_job "$T/c3" env UCX_TLS=tcp,self "$LOOMRUN" -n 3 "$B/tests/bin/lock_check" count 200
[ $rc -eq 0 ] && has "$T/c3" "lock_check: ok count 200 P=3"
ok $? "3 ranks over TCP x 200 increments: the counter is exact"
run_job "$T/ch" "$LOOMRUN" -n 3 "$B/tests/bin/lock_check" churn 20000
[ $rc -eq 0 ] && has "$T/ch" "lock_check: ok churn 20000 P=3"
ok $? "20000 distinct locks per rank taken and released: no record is left"
run_job "$T/hog" "$LOOMRUN" -n 2 "$B/tests/bin/lock_check" hog
[ $rc -ne 0 ] && has "$T/hog" "rank 1 holds or waits for 16384 locks managed by rank 0" &&
    [ "$(grep -c 'locks managed by' "$T/hog")" -eq 1 ] && [ "$(grep -c 'loomrun:' "$T/hog")" -eq 0 ]
ok $? "a rank that takes locks and never releases them is stopped, named once"
finish
