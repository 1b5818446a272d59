#!/bin/sh
# layers.sh — the layers call downward only (docs/architecture.md, "Layers").
#
#   tools/layers.sh OBJ...     the library's object files, build/obj/<folder>/<file>.o
#
# The layers, bottom up:  lib  <  dsm  <  sched  <  lifecycle  <  any other folder
# (kernels, data, apps/common: code written against the public API).  A folder
# may use what its own and lower folders define, never what a higher one
# does.  Checked twice:
#   - at link level: every symbol an object leaves undefined (nm -u) must not
#     be one that an object of a higher folder defines (nm --defined-only);
#   - at source level: no file in lib/ includes a header of dsm/ or sched/,
#     none in dsm/ includes one of sched/, and none of the launcher
#     (apps/loomrun/) one of dsm/ or sched/.
# Inside dsm/, checkpointing (dsm/ckpt/, ranked with dsm/) hooks into the
# core (alloc, clock, diff, fault, lock, notice): no core object calls what
# dsm/ckpt/ defines, and no core file includes a dsm/ckpt/ header.  The
# leaves dsm/lookup.c and dsm/store.c call nothing of dsm/ (only lib/).
# Inside sched/, plan.c dispatches: only for.c calls it, and the helpers the
# plans share (balance.c, phase.c) call nothing of plan.c or of the plans
# (rotation.c, groups.c, ordered.c).
# Names: every global symbol a folder of the library defines that lib/loom.h
# does not name carries that folder's prefix (lib loom_rt_, dsm loom_dsm_,
# dsm/ckpt loom_ckpt_, sched loom_sched_, lifecycle loom_lc_), and so does
# every static inline function of an internal header (lib/internal.h,
# dsm/*.h, dsm/ckpt/*.h, sched/*.h), so a reader tells public from internal,
# and an internal name's layer, at a glance (docs/architecture.md, "Names").
# Prints one line per violation (file, symbol, the folder defining it) and
# exits 1 if there is any; exits 0 in silence otherwise.
set -eu
[ $# -gt 0 ] || { echo "usage: tools/layers.sh OBJ..." >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)

# The rank of a folder: its position bottom up; any other folder is above all.
rank() {
    case $1 in
    lib) echo 0 ;; dsm | dsm/ckpt) echo 1 ;; sched) echo 2 ;; lifecycle) echo 3 ;; *) echo 4 ;;
    esac
}

# "rank folder symbol" lines: what each object defines (D) and leaves undefined (U).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/def"
: >"$tmp/objdef"
: >"$tmp/undef"
for o in "$@"; do
    f=${o#*/obj/}
    folder=${f%/*}
    r=$(rank "$folder")
    nm --defined-only -g "$o" | awk -v r="$r" -v d="$folder" -v f="$f" 'NF == 3 {
        print r, d, $3 >>"'"$tmp/def"'"; print f, $3 >>"'"$tmp/objdef"'" }'
    nm -u "$o" | awk -v r="$r" -v f="$f" '{ print r, f, $NF }' >>"$tmp/undef"
done
bad=0
# Names: what a folder defines and loom.h does not name carries its prefix
# (not the compiler's and sanitizers' own, reserved names: __odr_asan.*, ...).
grep -oE '\<loom_[a-z0-9_]+' "$src/lib/loom.h" | sort -u >"$tmp/public"
awk 'NR == FNR { pub[$1] = 1; next }
     { p = ""; if ($2 == "lib") p = "loom_rt_"; if ($2 == "dsm") p = "loom_dsm_"
       if ($2 == "dsm/ckpt") p = "loom_ckpt_"; if ($2 == "sched") p = "loom_sched_"
       if ($2 == "lifecycle") p = "loom_lc_" }
     p != "" && !($3 in pub) && index($3, p) != 1 && $3 !~ /^__/ {
         printf "layers: %s/ defines %s, which is not in lib/loom.h and lacks its prefix %s\n", $2, $3, p
         bad = 1 }
     END { exit bad }' "$tmp/public" "$tmp/def" || bad=1
for h in "$src"/lib/internal.h "$src"/dsm/*.h "$src"/dsm/ckpt/*.h "$src"/sched/*.h; do
    d=${h#"$src"/}
    d=${d%/*}
    case $d in lib) p=loom_rt_ ;; dsm) p=loom_dsm_ ;; dsm/ckpt) p=loom_ckpt_ ;; *) p=loom_sched_ ;; esac
    grep -nE 'static inline' "$h" | grep -oE '\<loom_[a-z0-9_]+\(' | tr -d '(' | grep -v "^$p" |
        sed "s|^|layers: $d/${h##*/} defines static inline |; s|\$|, which lacks its prefix $p|" | grep . && bad=1
done
# An undefined symbol defined by a folder of higher rank than the user's.
awk 'NR == FNR { if (!($3 in top) || $1 > top[$3]) { top[$3] = $1; by[$3] = $2 }; next }
     ($3 in top) && top[$3] > $1 {
         printf "layers: %s calls %s, defined in %s/ (a higher layer)\n", $2, $3, by[$3]; bad = 1 }
     END { exit bad }' "$tmp/def" "$tmp/undef" || bad=1
# The DSM core calls nothing of dsm/ckpt/ (it reaches it through the hooks,
# dsm.h's loom_dsm_ckpt).
awk '$2 == "dsm/ckpt" { ck[$3] = 1; next } FILENAME ~ /undef$/ && ($3 in ck) &&
     $2 ~ /^dsm\/(alloc|clock|diff|fault|lock|notice)\.o$/ {
         printf "layers: %s calls %s, defined in dsm/ckpt/ (the core reaches it through hooks)\n", $2, $3
         bad = 1 }
     END { exit bad }' "$tmp/def" "$tmp/undef" || bad=1
for f in alloc clock diff fault lock notice; do
    if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(ckpt/|checkpoint\.h)' "$src/dsm/$f.c" >/dev/null; then
        echo "layers: dsm/$f.c includes a dsm/ckpt/ header"
        bad=1
    fi
done
# The DSM's leaves call nothing of the DSM.
awk '$2 == "dsm" || $2 == "dsm/ckpt" { dsm[$3] = 1; next } FILENAME ~ /undef$/ && ($3 in dsm) &&
     $2 ~ /^dsm\/(lookup|store)\.o$/ {
         printf "layers: %s calls %s of dsm/ (a leaf calls only lib/)\n", $2, $3; bad = 1 }
     END { exit bad }' "$tmp/def" "$tmp/undef" || bad=1
# In sched/, plan.c dispatches: only the entry point (for.o) calls what
# plan.o defines, and the plans' shared helpers (balance.o, phase.o) call
# nothing of plan.o or of the plans (rotation.o, groups.o, ordered.o).
awk 'NR == FNR { by[$2] = $1; next }
     ($3 in by) && by[$3] == "sched/plan.o" && $2 ~ /^sched\// && $2 != "sched/for.o" && $2 != "sched/plan.o" {
         printf "layers: %s calls %s of sched/plan.o (only for.o calls the dispatcher)\n", $2, $3; bad = 1 }
     ($3 in by) && by[$3] ~ /^sched\/(plan|rotation|groups|ordered)\.o$/ && $2 ~ /^sched\/(balance|phase)\.o$/ {
         printf "layers: %s calls %s of %s (a shared helper calls no plan)\n", $2, $3, by[$3]; bad = 1 }
     END { exit bad }' "$tmp/objdef" "$tmp/undef" || bad=1
# Headers: lib/ knows no dsm/ or sched/ header, dsm/ no sched/ header.
# The launcher (apps/loomrun/) none of dsm/ or sched/: it reaches them
# through the runtime's headers and lifecycle/lifecycle.h only.
for pat in "lib:dsm\.h|policy\.h|sched\.h|checkpoint\.h|\.\./dsm/|\.\./sched/" "dsm:sched\.h|\.\./sched/" \
    "apps/loomrun:dsm\.h|policy\.h|sched\.h|checkpoint\.h|(\.\./)+(dsm|sched)/"; do
    dir=${pat%%:*}
    hits=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"(${pat#*:})" \
        "$src/$dir"/*.c "$src/$dir"/*.h 2>/dev/null || true)
    if [ -n "$hits" ]; then
        echo "$hits" | sed "s|^$src/|layers: includes a header its layer may not know: |"
        bad=1
    fi
done
exit $bad
