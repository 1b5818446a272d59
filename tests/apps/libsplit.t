#!/bin/sh
# libsplit.t — a user program that links libloom carries no app code: the
# runtime libraries (libloom.so, libloom.a: lib/ dsm/ sched/) define no
# symbol of the ML library (libloom-ml.a: kernels/ and data/) or of the
# apps' shared helpers (libloom-apps.a: apps/common/), and libloom.so
# refers to none of them (no call upward); libloom.so exports exactly the
# functions lib/loom.h declares (lib/libloom.map).  The lists are read with nm;
# the ML and helper lists must hold known names, so an empty archive
# cannot make the claims pass.
. "$(dirname "$0")/../lib.sh"
command -v nm >/dev/null || skip_all "nm (binutils) is not installed"
for f in libloom.so libloom.a libloom-ml.a libloom-apps.a; do need "$B/$f" "the build"; done
plan 6

# the global names the ML library and the helpers define
nm -g --defined-only "$B/libloom-ml.a" "$B/libloom-apps.a" 2>/dev/null |
    awk 'NF == 3 && $2 != "U" { print $3 }' | sort -u >"$T/app"
grep -qx loom_lda_sweep "$T/app" && grep -qx loom_corpus_free "$T/app" &&
    grep -qx loom_flags_parse "$T/app" && grep -qx loom_report_open "$T/app"
ok $? "the ML library and the apps' helpers define their names ($(wc -l <"$T/app") symbols)"

nm -D --defined-only "$B/libloom.so" | awk 'NF == 3 { print $3 }' | sed 's/@.*//' | sort -u >"$T/so"
comm -12 "$T/so" "$T/app" >"$T/so_app"
[ -s "$T/so" ] && [ ! -s "$T/so_app" ]
ok $? "libloom.so defines no kernels/, data/ or apps/ symbol"
[ -s "$T/so_app" ] && diag "in libloom.so:" && head -20 "$T/so_app" | sed 's/^/#   /'

nm -g --defined-only "$B/libloom.a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$T/a"
comm -12 "$T/a" "$T/app" >"$T/a_app"
[ -s "$T/a" ] && [ ! -s "$T/a_app" ]
ok $? "libloom.a defines no kernels/, data/ or apps/ symbol"
[ -s "$T/a_app" ] && diag "in libloom.a:" && head -20 "$T/a_app" | sed 's/^/#   /'

nm -D --undefined-only "$B/libloom.so" | awk '{ print $NF }' | sed 's/@.*//' | sort -u >"$T/und"
comm -12 "$T/und" "$T/app" >"$T/und_app"
[ ! -s "$T/und_app" ]
ok $? "libloom.so calls nothing of kernels/, data/ or apps/"
[ -s "$T/und_app" ] && diag "needed by libloom.so:" && head -20 "$T/und_app" | sed 's/^/#   /'

# the same from the sources: no object of libloom was compiled from those
# folders (by the archive's member names against the folders' files)
ar t "$B/libloom.a" | sort -u >"$T/members"
R=$(cd "$(dirname "$0")/../.." && pwd)
ls "$R"/kernels/*.c "$R"/data/*.c "$R"/apps/common/*.c | sed 's|.*/||; s/\.c$/.o/' | sort -u >"$T/appobj"
comm -12 "$T/members" "$T/appobj" >"$T/mem_app"
[ -s "$T/members" ] && [ ! -s "$T/mem_app" ]
ok $? "no member of libloom.a is named after a kernels/, data/ or apps/common/ file"
[ -s "$T/mem_app" ] && diag "members:" && sed 's/^/#   /' "$T/mem_app"
# libloom.so exports exactly the functions lib/loom.h declares
# (lib/libloom.map): no internal loom_* helper is part of its ABI
grep -oE '\bloom_[a-z0-9_]+[[:space:]]*\(' "$(dirname "$0")/../../lib/loom.h" | sed 's/[[:space:]]*($//' |
    sort -u >"$T/api"
nm -D --defined-only "$B/libloom.so" | awk 'NF == 3 && $2 == "T" { print $3 }' | sed 's/@.*//' |
    sort -u >"$T/exp"
[ "$(wc -l <"$T/api")" -gt 50 ] && cmp -s "$T/api" "$T/exp"
ok $? "libloom.so exports exactly the $(wc -l <"$T/api") functions lib/loom.h declares ($(wc -l <"$T/exp") exported)"
comm -3 "$T/api" "$T/exp" | head -10 | sed 's/^/#   differ: /'

finish
