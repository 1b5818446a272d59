#!/bin/sh
# am_early.t — a DSM message for an id that the receiving rank has not
# registered yet stops the job with one clear message and a non-zero exit
# (lib/transport.c registers every id at start-up, so none can vanish):
# UCX drops such a message with only a warning on stdout, and a rank that
# waited for it would hang (this is how an early collective once hung the
# final barrier: docs/dsm.md, "Message handlers").  tests/bin/am_early
# sends a map request before any map exists.
. "$(dirname "$0")/../lib.sh"
plan 1
run_job "$T/o" "$LOOMRUN" -n 2 "$B/tests/bin/am_early"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && has "$T/o" "a message \(id 14\) came before its handler was registered" &&
    ! grep -q "delivered nowhere" "$T/o" && [ "$(wc -l <"$T/o")" -eq 1 ]
ok $? "a message before its handler: the job ends with that one message (exit $rc)"
finish
