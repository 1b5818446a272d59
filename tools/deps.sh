#!/bin/sh
# deps.sh — make sure the Debian packages Loom needs are installed.
#   tools/deps.sh         what building and testing need
#   tools/deps.sh bench   also Open MPI and ucx_perftest, for the side-by-side benchmarks
#   tools/deps.sh plots   also gnuplot, for make plots
# As root, missing packages are installed with apt-get; otherwise the exact
# command is printed and the script fails.
set -eu
pkgs="gcc make libc6-dev libucx-dev libnuma-dev zlib1g-dev iproute2 perl procps"
# data the app tests train on: Fashion-MNIST (loom-lr), the King James Bible (loom-w2v)
pkgs="$pkgs dataset-fashion-mnist bible-kjv"
[ "${1:-}" = bench ] && pkgs="$pkgs openmpi-bin libopenmpi-dev ucx-utils"
[ "${1:-}" = plots ] && pkgs="$pkgs gnuplot-nox"
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
    $cmd >/dev/null || { echo "deps: '$cmd' failed" >&2; exit 1; }
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run as root:  $cmd" >&2
    exit 1
fi
