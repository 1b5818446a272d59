#!/bin/sh
# install.t — `make install PREFIX=...` gives headers, libraries, loom.pc
# and loomrun; a user program builds with pkg-config alone and runs under
# the installed loomrun.
. "$(dirname "$0")/../lib.sh"
command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config is not installed"
plan 3
top=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$top" BUILD="$B" SANITIZE="${LOOMTEST_SANITIZE:-}" install PREFIX="$T/prefix" \
    >"$T/install.log" 2>&1
ok $? "make install PREFIX=$T/prefix"
export PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc $(pkg-config --cflags --libs loom) -fopenmp "$top/docs/first.c" -o "$T/first" \
    ${LOOMTEST_SANITIZE:+-fsanitize=address,undefined} >"$T/cc.log" 2>&1
ok $? "docs/first.c builds with cc \$(pkg-config --cflags --libs loom) -fopenmp"
run_job "$T/run" "$T/prefix/bin/loomrun" -n 3 "$T/first"
[ $rc -eq 0 ] && has "$T/run" "sum of 1..1000000 = 500000500000 on 3 ranks"
ok $? "it runs on 3 ranks under the installed loomrun with the exact sum"
finish
