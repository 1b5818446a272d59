#!/bin/sh
# layers.t — tools/layers.sh, the check `make check` runs before the suite,
# passes on the build's library objects and fails where it should: on an
# object whose internal symbol lacks its folder's prefix (a loom_sched_
# function renamed back to plain loom_), and on an object that calls a
# higher layer (a dsm/ object made to call what sched/ defines), and on a
# plans' helper calling the dispatcher (sched/phase.o made to call
# sched/plan.o).  The
# mutations are made with objcopy on copies of the objects, so the build is
# untouched.
. "$(dirname "$0")/../lib.sh"
command -v nm >/dev/null && command -v objcopy >/dev/null || skip_all "nm, objcopy (binutils) are not installed"
R=$(cd "$(dirname "$0")/../.." && pwd)
need "$B/obj/sched/plan.o" "the build"
plan 5

objs() { ls "$1"/lib/*.o "$1"/dsm/*.o "$1"/dsm/ckpt/*.o "$1"/sched/*.o "$1"/lifecycle/*.o; }
"$R/tools/layers.sh" $(objs "$B/obj") >"$T/out" 2>&1
ok $? "layers.sh passes on the build's $(objs "$B/obj" | wc -l) library objects"
[ -s "$T/out" ] && sed 's/^/#   /' "$T/out"

# the rule is not vacuous: the library has internal symbols, all prefixed
n=$(nm -g --defined-only $(objs "$B/obj") | awk 'NF == 3 { print $3 }' | grep -cE '^loom_(rt|dsm|ckpt|sched)_')
[ "$n" -gt 200 ]
ok $? "the library's objects define $n internal symbols with a layer prefix"

cp -r "$B/obj" "$T/obj"
objcopy --redefine-sym loom_sched_balance=loom_balance "$T/obj/sched/balance.o"
"$R/tools/layers.sh" $(objs "$T/obj") >"$T/out" 2>&1
[ $? -eq 1 ] && has "$T/out" "sched/ defines loom_balance, which is not in lib/loom.h and lacks its prefix loom_sched_"
ok $? "an internal sched/ symbol named loom_balance fails, named"

cp "$B/obj/sched/balance.o" "$T/obj/sched/balance.o"
objcopy --redefine-sym loom_dsm_barrier=loom_sched_init "$T/obj/dsm/dmap.o"
"$R/tools/layers.sh" $(objs "$T/obj") >"$T/out" 2>&1
[ $? -eq 1 ] && has "$T/out" "dsm/dmap.o calls loom_sched_init, defined in sched/"
ok $? "a dsm/ object calling a sched/ function fails, named"

cp "$B/obj/dsm/dmap.o" "$T/obj/dsm/dmap.o"
objcopy --redefine-sym loom_sched_check_iter=loom_sched_plan_get "$T/obj/sched/phase.o"
"$R/tools/layers.sh" $(objs "$T/obj") >"$T/out" 2>&1
[ $? -eq 1 ] && has "$T/out" "sched/phase.o calls loom_sched_plan_get of sched/plan.o" &&
    has "$T/out" "a shared helper calls no plan"
ok $? "a plans' helper (phase.o) calling the dispatcher (plan.o) fails, named"

finish
