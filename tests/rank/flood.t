#!/bin/sh
# flood.t — what one rank may leave unmatched at another is bounded
# (lib/transport.c: 2^20 messages or 1 GiB): 600 000 early messages are
# queued and each matched exactly, twice over (1.2 million in all: the
# count goes down as they match), while a rank that sends 1.1 million no
# one receives stops the job with one message naming it, instead of
# growing the receiver's memory without end.
. "$(dirname "$0")/../lib.sh"
plan 2
run_job "$T/d" "$LOOMRUN" -n 2 "$B/tests/bin/tp_flood" drain 600000
[ $rc -eq 0 ] && has "$T/d" "tp_flood: ok 600000"
ok $? "600 000 early messages, twice: all matched with their payloads"
run_job "$T/f" "$LOOMRUN" -n 2 "$B/tests/bin/tp_flood" flood 1100000
[ $rc -ne 0 ] && has "$T/f" "rank 1 has sent 1048576 messages .* that no receive here has matched" &&
    [ "$(grep -c 'no receive here' "$T/f")" -eq 1 ] && [ "$(grep -c 'loomrun:' "$T/f")" -eq 0 ]
ok $? "1.1 million unmatched messages: the job stops at the bound, naming the sender once"
finish
