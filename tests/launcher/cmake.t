#!/bin/sh
# cmake.t — building against an installed Loom the HPC ways: a CMake
# project with find_package(Loom REQUIRED) builds docs/first.c against
# Loom::loom and against Loom::loom_static, find_package(Loom 99) is
# refused by LoomConfigVersion.cmake, and loomcc (the compiler wrapper,
# installed and in the build tree) compiles and links it, --showme
# printing the command; each program runs on 2 ranks under loomrun with
# the exact sum.
. "$(dirname "$0")/../lib.sh"
command -v help2man >/dev/null 2>&1 || [ "$(id -u)" = 0 ] ||
    skip_all "help2man is not installed (make install needs it: apt-get install help2man)"
plan 8
top=$(cd "$(dirname "$0")/../.." && pwd)
P=$T/prefix
san=${LOOMTEST_SANITIZE:+-fsanitize=address,undefined}
make -s -C "$top" BUILD="$B" SANITIZE="${LOOMTEST_SANITIZE:-}" install PREFIX="$P" \
    >"$T/install.log" 2>&1
st=$?
[ $st -eq 0 ] && [ -f "$P/lib/cmake/Loom/LoomConfig.cmake" ] &&
    [ -f "$P/lib/cmake/Loom/LoomConfigVersion.cmake" ] && [ -x "$P/bin/loomcc" ] ||
    { { diag "make install:"; tail -n 20 "$T/install.log"; } >&2; false; }
ok $? "make install PREFIX=\$T/prefix puts LoomConfig.cmake, LoomConfigVersion.cmake and loomcc there"
sum="sum of 1..1000000 = 500000500000 on 2 ranks"

if command -v cmake >/dev/null 2>&1; then
    mkdir -p "$T/proj"
    cp "$top/docs/first.c" "$T/proj/"
    cat >"$T/proj/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.13)
project(first C)
find_package(Loom \${WANT} REQUIRED)
add_executable(first first.c)
target_link_libraries(first PRIVATE Loom::loom)
add_executable(first_static first.c)
target_link_libraries(first_static PRIVATE Loom::loom_static)
CM
    cmake -S "$T/proj" -B "$T/cb" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$san" \
        -DCMAKE_EXE_LINKER_FLAGS="$san" >"$T/cmake.log" 2>&1 &&
        cmake --build "$T/cb" >>"$T/cmake.log" 2>&1
    st=$?
    [ $st -eq 0 ] || { { diag "cmake:"; tail -n 30 "$T/cmake.log"; } >&2; false; }
    ok $? "a CMake project with find_package(Loom REQUIRED) builds first.c against Loom::loom and Loom::loom_static"
    run_job "$T/run" "$P/bin/loomrun" -n 2 "$T/cb/first"
    [ $rc -eq 0 ] && has "$T/run" "$sum" && ldd "$T/cb/first" | grep -q "libloom.so.0 => $P/lib/"
    ok $? "the Loom::loom program finds the installed libloom.so.0 and sums exactly on 2 ranks"
    run_job "$T/run_s" "$P/bin/loomrun" -n 2 "$T/cb/first_static"
    [ $rc -eq 0 ] && has "$T/run_s" "$sum" && ! ldd "$T/cb/first_static" | grep -q libloom
    ok $? "the Loom::loom_static program (no libloom.so) sums exactly on 2 ranks"
    cmake -S "$T/proj" -B "$T/cb99" -DCMAKE_PREFIX_PATH="$P" -DWANT=99 >"$T/cmake99.log" 2>&1
    [ $? -ne 0 ] && has "$T/cmake99.log" "requested version \"99\"" &&
        has "$T/cmake99.log" "LoomConfig.cmake, version: 0.1"
    ok $? "find_package(Loom 99) is refused: the installed 0.1 is not compatible"
else
    skip 4 "cmake is not installed (tools/deps.sh install)"
fi

"$P/bin/loomcc" --showme -fopenmp first.c -o first >"$T/showme"
has "$T/showme" "^cc -I$P/include -fopenmp first.c -o first -L$P/lib -Wl,-rpath,$P/lib .*-lloom" &&
    [ "$("$P/bin/loomcc" --showme -c first.c)" = "cc -I$P/include -c first.c" ]
ok $? "loomcc --showme prints the command: include path, and libloom with its rpath when linking"
(cd "$T" && "$P/bin/loomcc" -fopenmp $san "$top/docs/first.c" -o "$T/first_cc") >"$T/cc.log" 2>&1 &&
    run_job "$T/run_cc" "$P/bin/loomrun" -n 2 "$T/first_cc" && [ $rc -eq 0 ] && has "$T/run_cc" "$sum"
ok $? "the installed loomcc -fopenmp first.c -o first builds a program that sums exactly on 2 ranks"
"$B/bin/loomcc" -fopenmp $san "$top/docs/first.c" -o "$T/first_bt" >"$T/bt.log" 2>&1 &&
    run_job "$T/run_bt" "$LOOMRUN" -n 2 "$T/first_bt" && [ $rc -eq 0 ] && has "$T/run_bt" "$sum" &&
    ldd "$T/first_bt" | grep -q "libloom.so.0 => $B/"
ok $? "the build tree's loomcc links against the build tree's libloom"
finish
