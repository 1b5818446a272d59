#!/bin/sh
# heap.t — with several ranks the transport keeps message-sized blocks in
# malloc's heap instead of a fresh mapping per block, which page-faulted
# every page of every message anew (docs/dsm.md, "Message buffers and
# malloc"); a user's own malloc tuning stands, and one rank is left alone.
# Skipped under the sanitizers, whose allocators replace glibc's.
. "$(dirname "$0")/../lib.sh"
[ -n "${LOOMTEST_SANITIZE:-}" ] && skip_all "the sanitizers replace glibc's malloc"
plan 3
run_job "$T/two" "$LOOMRUN" -n 2 "$B/tests/bin/tp_heap"
[ $rc -eq 0 ] && has "$T/two" "tp_heap: rank 0 mmapped 0" && has "$T/two" "tp_heap: rank 1 mmapped 0"
ok $? "2 ranks: a 1 MiB block comes from the heap on every rank"
MALLOC_MMAP_THRESHOLD_=131072 run_job "$T/user" "$LOOMRUN" -n 2 "$B/tests/bin/tp_heap"
[ $rc -eq 0 ] && has "$T/user" "tp_heap: rank 0 mmapped 1" && has "$T/user" "tp_heap: rank 1 mmapped 1"
ok $? "2 ranks, MALLOC_MMAP_THRESHOLD_ set by the user: it stands (its own mapping)"
run_job "$T/one" "$LOOMRUN" -n 1 "$B/tests/bin/tp_heap"
[ $rc -eq 0 ] && has "$T/one" "tp_heap: rank 0 mmapped 1"
ok $? "1 rank: malloc is left alone"
finish
