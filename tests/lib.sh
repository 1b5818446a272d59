# lib.sh — shared helpers for the shell TAP tests (sourced, not run).
# Gives: $B (the build folder), $LOOMRUN, $T (a scratch folder removed at
# exit), plan N, ok COND-STATUS NAME, skip_all REASON, diag TEXT, and
# run_job OUTFILE CMD... (runs CMD with a 60 s safety limit, stdout+stderr
# to OUTFILE, and sets $rc), need FILE WHAT (fails the file, naming FILE,
# when data the claims are about is missing), need_movielens (sets $D to
# ../shared/data/movielens-100k and needs its u1.base and u1.test), skip N
# REASON (N skipped tests), ckpt_cmp A B (two jobs' rank files equal but for
# the job's identity).
B=${LOOMTEST_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
LOOMRUN=$B/bin/loomrun
T=$(mktemp -d /tmp/loomtest.XXXXXX)
trap 'rm -rf "$T"' EXIT
_n=0
_failed=0
plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
skip() { _i=0; while [ $_i -lt "$1" ]; do _i=$((_i + 1)) _n=$((_n + 1)); echo "ok $_n # SKIP $2"; done; }
need() { [ -f "$1" ] || { echo "1..1"; echo "not ok 1 - $2: $1 is missing"; exit 1; }; }
need_movielens() {
    D=$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/movielens-100k
    need "$D/u1.base" "MovieLens 100K (../shared/data/movielens-100k from the repository root)"
    need "$D/u1.test" "MovieLens 100K (../shared/data/movielens-100k from the repository root)"
}
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
ok() { # ok STATUS NAME: STATUS 0 passes
    _n=$((_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; _failed=1; fi
}
run_job() {
    _out=$1; shift
    timeout -k 5 60 "$@" >"$_out" 2>&1
    rc=$?
}
# has FILE PATTERN: grep -q with the file shown on failure (on stderr, so
# that prove shows it without -v and a CI log explains the failure)
has() {
    if grep -qE -- "$2" "$1"; then return 0; fi
    { diag "expected /$2/ in:"; sed 's/^/#   /' "$1"; } >&2; return 1
}
finish() { exit $_failed; }
# ckpt_cmp A B: two rank files of two jobs hold the same bytes but the
# header's job identity (bytes 48-63, dsm/ckpt/checkpoint.h) and the header's
# checksum over it (bytes 72-79); cmp(1)'s report on a difference
ckpt_cmp() { cmp -n 48 "$1" "$2" && cmp -i 64 -n 8 "$1" "$2" && cmp -i 80 "$1" "$2"; }
# threads N: N, or 1 under ThreadSanitizer (libgomp is not instrumented, so
# its barriers are invisible to TSan and OpenMP teams give false reports)
threads() { if [ "${LOOMTEST_SANITIZE:-}" = thread ]; then echo 1; else echo "$1"; fi; }
