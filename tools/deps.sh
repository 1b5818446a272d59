#!/bin/sh
# deps.sh — make sure the Debian packages Loom needs are installed.
#   tools/deps.sh               what building and testing need
#   tools/deps.sh bench         also Open MPI and ucx_perftest, for the side-by-side benchmarks
#   tools/deps.sh fuzz          also clang with libFuzzer, for the fuzz harnesses (make fuzz)
#   tools/deps.sh valgrind      also valgrind, for the memcheck test
#   tools/deps.sh --optional G  the same for groups G, but never fail: without
#                               root a note says what the skipped tests need
# Groups combine (tools/deps.sh fuzz valgrind).  As root, missing packages
# are installed with apt-get; otherwise the exact command is printed and
# the script fails.
set -eu
pkgs="gcc make libc6-dev libucx-dev libnuma-dev iproute2 perl procps"
optional=0
for g in "$@"; do
    case $g in
    --optional) optional=1 pkgs="" ;;
    bench) pkgs="$pkgs openmpi-bin libopenmpi-dev ucx-utils" ;;
    fuzz) pkgs="$pkgs clang libclang-rt-dev libomp-dev" ;; # clang -fopenmp needs libomp
    valgrind) pkgs="$pkgs valgrind" ;;
    *) echo "deps: unknown group '$g' (bench, fuzz, valgrind)" >&2; exit 2 ;;
    esac
done
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    if ! $cmd >/dev/null; then
        echo "deps: '$cmd' failed" >&2
        [ $optional = 1 ] && exit 0
        exit 1
    fi
elif [ $optional = 1 ]; then
    echo "deps: the tests that need$missing will be skipped; as root:  $cmd" >&2
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run as root:  $cmd" >&2
    exit 1
fi
