#!/bin/sh
# deps.sh — make sure the Debian packages Loom needs are installed.
#   tools/deps.sh         what building and testing need
#   tools/deps.sh bench   also Open MPI and ucx_perftest, for the side-by-side benchmarks
#   tools/deps.sh plots   also gnuplot, for make plots
# As root, missing packages are installed with apt-get; otherwise the exact
# command is printed and the script fails.  Optional packages (wanted by
# tests that skip without them) are installed as root too, but their
# absence only prints the command.
set -eu
pkgs="gcc make libc6-dev libucx-dev libnuma-dev zlib1g-dev iproute2 perl procps"
# data the app tests train on: Fashion-MNIST (loom-lr), the King James Bible (loom-w2v)
pkgs="$pkgs dataset-fashion-mnist bible-kjv"
# tests/apps/lasso.t compares loom-lasso with scikit-learn's Lasso
optional="python3-sklearn"
[ "${1:-}" = bench ] && pkgs="$pkgs openmpi-bin libopenmpi-dev ucx-utils"
[ "${1:-}" = plots ] && pkgs="$pkgs gnuplot-nox"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing="" optmissing=""
for p in $pkgs; do installed "$p" || missing="$missing $p"; done
for p in $optional; do installed "$p" || optmissing="$optmissing $p"; done
[ -z "$missing$optmissing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    if [ -n "$missing" ]; then
        cmd="apt-get install -y --no-install-recommends$missing"
        echo "deps: installing$missing"
        $cmd >/dev/null || { echo "deps: '$cmd' failed" >&2; exit 1; }
    fi
    if [ -n "$optmissing" ]; then
        cmd="apt-get install -y --no-install-recommends$optmissing"
        echo "deps: installing (optional)$optmissing"
        $cmd >/dev/null || echo "deps: '$cmd' failed; the tests that need it will skip" >&2
    fi
    exit 0
fi
[ -n "$optmissing" ] &&
    echo "deps: optional, some tests skip without them; as root:  apt-get install -y --no-install-recommends$optmissing" >&2
if [ -n "$missing" ]; then
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run as root:  apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
exit 0
