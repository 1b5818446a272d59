#!/bin/sh
# deps.sh — make sure the Debian packages Loom needs are installed.
#   tools/deps.sh               what building and testing need
#   tools/deps.sh bench         also Open MPI, ucx_perftest and gensim, for the
#                               side-by-side benchmarks
#   tools/deps.sh plots         also gnuplot, for make plots
#   tools/deps.sh fuzz          also clang with libFuzzer, for the fuzz harnesses (make fuzz)
#   tools/deps.sh valgrind      also valgrind, for the memcheck test
#   tools/deps.sh install       also help2man, for the man pages of make install,
#                               and cmake, for the find_package(Loom) test
#   tools/deps.sh slurm         also Slurm (slurmctld, slurmd, srun), munge,
#                               libpmi2 and libpmix, for the real-Slurm test
#   tools/deps.sh --optional G  only groups G, and never fail: without root a
#                               note says what the skipped tests need
# Groups combine (tools/deps.sh fuzz valgrind).  As root, missing packages
# are installed with apt-get; otherwise the exact command is printed and
# the script fails.  python3-sklearn (tests/apps/lasso.t compares with
# scikit-learn) and python3-nltk, python3-numpy, wordnet-base (w2v.t scores
# the vectors against WordNet) are always optional: their absence only
# skips those checks; so does liblinear-tools' (lr_text.t compares with liblinear).
set -eu
pkgs="gcc make libc6-dev libucx-dev libnuma-dev zlib1g-dev iproute2 perl procps"
# data the app tests train on: Fashion-MNIST (loom-lr), the King James Bible (loom-w2v)
pkgs="$pkgs dataset-fashion-mnist bible-kjv"
opt="python3-sklearn python3-nltk python3-numpy wordnet-base liblinear-tools"
optional=0
for g in "$@"; do
    case $g in
    --optional) optional=1 pkgs="" opt="" ;;
    bench) pkgs="$pkgs openmpi-bin libopenmpi-dev ucx-utils python3-gensim" ;;
    plots) pkgs="$pkgs gnuplot-nox" ;;
    fuzz) pkgs="$pkgs clang libclang-rt-dev libomp-dev" ;; # clang -fopenmp needs libomp
    valgrind) pkgs="$pkgs valgrind" ;;
    install) pkgs="$pkgs help2man cmake" ;;
    slurm) pkgs="$pkgs slurm-wlm munge libpmi2-0 libpmix2" ;;
    *) echo "deps: unknown group '$g' (bench, plots, fuzz, valgrind, install, slurm)" >&2; exit 2 ;;
    esac
done
[ $optional = 1 ] && opt=$pkgs pkgs=""
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing="" optmissing=""
for p in $pkgs; do installed "$p" || missing="$missing $p"; done
for p in $opt; do installed "$p" || optmissing="$optmissing $p"; done
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
    echo "deps: the tests that need$optmissing will be skipped; as root:  apt-get install -y --no-install-recommends$optmissing" >&2
if [ -n "$missing" ]; then
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: run as root:  apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
exit 0
