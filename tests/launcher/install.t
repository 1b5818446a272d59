#!/bin/sh
# install.t — `make install PREFIX=...` gives headers, libraries, loom.pc,
# loomrun, loomcc and the apps, and a man page for each program generated from its
# --help (help2man): named after its first line, listing every flag of the
# --help; a user program builds with pkg-config alone and runs under the
# installed loomrun.
. "$(dirname "$0")/../lib.sh"
command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config is not installed"
command -v help2man >/dev/null 2>&1 || [ "$(id -u)" = 0 ] ||
    skip_all "help2man is not installed (make install needs it: apt-get install help2man)"
plan 5
top=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$top" BUILD="$B" SANITIZE="${LOOMTEST_SANITIZE:-}" install PREFIX="$T/prefix" \
    >"$T/install.log" 2>&1
ok $? "make install PREFIX=$T/prefix"
export PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc $(pkg-config --cflags --libs loom) -fopenmp "$top/docs/first.c" -o "$T/first" \
    ${LOOMTEST_SANITIZE:+-fsanitize=address,undefined} >"$T/cc.log" 2>&1
ok $? "docs/first.c builds with cc \$(pkg-config --cflags --libs loom) -fopenmp"
# every program has its man page; each lists every --flag of its --help
progs="loomrun loomcc loom-gen loom-lasso loom-lda loom-lr loom-mf loom-w2v"
bad=""
for p in $progs; do
    m="$T/prefix/share/man/man1/$p.1"
    [ -x "$T/prefix/bin/$p" ] && [ -s "$m" ] || { bad="$bad $p(missing)"; continue; }
    man -l "$m" >"$T/$p.txt" 2>/dev/null || MANWIDTH=200 groff -man -Tutf8 "$m" >"$T/$p.txt"
    grep -q "^NAME" "$T/$p.txt" && ! grep -q "manual page for" "$T/$p.txt" || bad="$bad $p(name)"
    for f in $("$T/prefix/bin/$p" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
        grep -q -- "$f" "$T/$p.txt" || bad="$bad $p($f)"
    done
done
[ -z "$bad" ]
ok $? "man pages of $progs, each naming every flag of its --help${bad:+; wrong:$bad}"
# the man page's version is loomrun's
v=$("$T/prefix/bin/loomrun" --version)
vv=""
for p in $progs; do [ "$("$T/prefix/bin/$p" --version)" = "$p${v#loomrun}" ] || vv="$vv $p"; done
[ -z "$vv" ] && grep -q "${v#loomrun (Loom) }" "$T/loom-lr.txt"
ok $? "every program's --version is '$v' with its own name${vv:+; wrong:$vv}"
run_job "$T/run" "$T/prefix/bin/loomrun" -n 3 "$T/first"
[ $rc -eq 0 ] && has "$T/run" "sum of 1..1000000 = 500000500000 on 3 ranks"
ok $? "it runs on 3 ranks under the installed loomrun with the exact sum"
finish
