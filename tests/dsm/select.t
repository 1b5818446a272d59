#!/bin/sh
# select.t — what selects an allocation's behaviour, observed from the
# program (tests/bin/dsm_select): LOOM_COHERENCE_<NAME> gives the named
# allocation its policy and leaves the others alone (local: rank 0 does
# not see rank 1's write after a barrier; bsp: it does), and overrides
# LOOM_COHERENCE; .numa_node places the home memory there (get_mempolicy
# says MPOL_BIND to that node, move_pages finds every page on it; an
# allocation without it keeps the default policy), on this one-node
# machine as anywhere.
. "$(dirname "$0")/../lib.sh"
plan 5
sel() { # EXPECTED ENV...: run `dsm_select named` on 2 ranks with ENV
    want=$1; shift
    env "$@" timeout -k 5 60 "$LOOMRUN" -n 2 "$B/tests/bin/dsm_select" named >"$T/n" 2>&1
    [ $? -eq 0 ] && has "$T/n" "^\[0\] named: $want$"
}
sel "alpha 42 beta 42"
ok $? "no variable: both allocations bsp (rank 1's writes seen after the barrier)"
sel "alpha 0 beta 42" LOOM_COHERENCE_ALPHA=local
ok $? "LOOM_COHERENCE_ALPHA=local: alpha alone is rank-local"
sel "alpha 0 beta 42" LOOM_COHERENCE=local LOOM_COHERENCE_BETA=bsp
ok $? "LOOM_COHERENCE=local with LOOM_COHERENCE_BETA=bsp: beta alone is shared"
run_job "$T/numa" "$B/tests/bin/dsm_select" numa
[ $rc -eq 0 ] && has "$T/numa" "^numa: ok "
ok $? "numa_node 0: MPOL_BIND to node 0 and every page there; no numa_node: default policy ($(cat "$T/numa"))"
# on 2 ranks the home store is the rank's block under the working copy,
# placed by its own call (dsm/alloc.c): each rank checks its block
run_job "$T/numa2" "$LOOMRUN" -n 2 "$B/tests/bin/dsm_select" numa
[ $rc -eq 0 ] && [ "$(grep -c '^\[[01]\] numa: ok .* of 128 home pages' "$T/numa2")" -eq 2 ]
ok $? "2 ranks: each rank's home pages are bound to node 0, the plain allocation's are not ($(tr '\n' ' ' <"$T/numa2"))"
finish
