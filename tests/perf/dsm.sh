#!/bin/bash
# dsm.sh — DSM benchmarks, Loom side by side with raw UCX (ucx_perftest),
# with UCX's default transports and again with UCX_TLS=tcp,self.
#   tests/perf/dsm.sh BUILD_DIR      (run.sh calls it; so does `make bench`)
# Runs BUILD_DIR/tests/perf/dsm_bench (see its header for what each mode
# measures): remote page fetch at 2 ranks next to ucx_perftest's ucp_get
# and ucp_put_bw on loopback; row get / prefetch / add at 1-4 ranks; the
# STREAM triad and a sum over Loom memory and malloc'd memory at 1 rank
# (no loomrun) and at 2 ranks.  DSM_REPS runs of everything (default 5, at
# least 5), interleaved: each round runs every Loom and raw measurement
# once, in both transport set-ups, so noise hits all alike.  Medians (and
# min-max) go to docs/bench-dsm.md; raw outputs stay in BUILD_DIR/perf/dsm/.
# Any failed or hung run stops the script non-zero before the document is
# touched.
set -euo pipefail

die() { echo "dsm.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: tests/perf/dsm.sh BUILD_DIR"
cd "$(dirname "$0")/../.."
BUILD=$1
REPS=${DSM_REPS:-5}
[ "$REPS" -ge 5 ] 2>/dev/null || die "DSM_REPS must be an integer >= 5 (got '$REPS')"
BIN=$BUILD/tests/perf/dsm_bench
LOOMRUN=$BUILD/bin/loomrun
RAW=$BUILD/perf/dsm
DOC=docs/bench-dsm.md
PERFTEST=${UCX_PERFTEST:-ucx_perftest}
START=$(date +%s)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

[ -x "$BIN" ] || die "$BIN is missing: run make first"
[ -x "$LOOMRUN" ] || die "$LOOMRUN is missing: run make first"
command -v "$PERFTEST" >/dev/null || die "ucx_perftest not found: install ucx-utils"

# Work sizes.  Iteration counts scale down over TCP, where one remote access
# costs 5-10 times more; the same scale for Loom and for ucx_perftest.
STREAM_MIB1=64   # MiB per array, one rank (3 arrays: 192 MiB)
STREAM_MIB2=32   # MiB per array per rank, two ranks
STREAM_REPS=10
RANKS_ROWS="1 2 3 4"
SIZES="4096 65536 1048576"
CFGS="default tcp"
declare -A FETCH_SCALE=([default]=1 [tcp]=0.1)
declare -A ROWS_SCALE=([default]=0.25 [tcp]=0.05)
# ucx_perftest iterations per size: default transports, then TCP
declare -A PT_N=([default,ucp_get,4096]=20000 [default,ucp_get,65536]=10000
                 [default,ucp_get,1048576]=1000 [default,ucp_put_bw,4096]=20000
                 [default,ucp_put_bw,65536]=10000 [default,ucp_put_bw,1048576]=1000
                 [tcp,ucp_get,4096]=100 [tcp,ucp_get,65536]=100 [tcp,ucp_get,1048576]=50
                 [tcp,ucp_put_bw,4096]=2000 [tcp,ucp_put_bw,65536]=500
                 [tcp,ucp_put_bw,1048576]=40)

# tls CFG: set UCX_TLS for a transport set-up (never inherit the caller's).
tls() {
    unset UCX_TLS
    if [ "$1" = tcp ]; then export UCX_TLS=tcp,self; fi
}

# check FILE KEY...: every KEY has a numeric line in FILE.
check() {
    local f=$1; shift
    for k in "$@"; do
        grep -qE "^$k( [a-z0-9]+)? [0-9.]+$" "$f" || die "no '$k' result in $f"
    done
}

# loom NAME N ARGS...: one dsm_bench job on N ranks (N=0: no loomrun),
# output kept in $RAW/NAME.out with the rank tags removed.
loom() {
    local name=$1 n=$2; shift 2
    local out=$RAW/$name.out err=$RAW/$name.err cmd
    if [ "$n" = 0 ]; then cmd=("$BIN" "$@"); else cmd=("$LOOMRUN" -n "$n" "$BIN" "$@"); fi
    if ! timeout 120 "${cmd[@]}" >"$out" 2>"$err"; then
        echo "dsm.sh: FAILED ($name, UCX_TLS=${UCX_TLS-unset}): ${cmd[*]}" >&2
        cat "$err" "$out" >&2
        exit 1
    fi
    sed -i -E 's/^\[[0-9]+\] //' "$out"
}

port=$((20000 + $$ % 20000))
# perftest NAME TEST SIZE ITERS: ucx_perftest server in the background,
# client on 127.0.0.1, nothing bound; the client's CSV line kept.
perftest() {
    local name=$1 test=$2 size=$3 n=$4 spid i
    local out=$RAW/$name.out srv=$RAW/$name.srv
    port=$((port + 1))
    timeout 60 "$PERFTEST" -p "$port" >"$srv" 2>&1 &
    spid=$!
    for i in $(seq 250); do
        grep -q "Waiting for connection" "$srv" && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.02
    done
    if ! timeout 60 "$PERFTEST" 127.0.0.1 -p "$port" -t "$test" -s "$size" -n "$n" \
            -w $((n / 10 + 1)) -v >"$out" 2>&1; then
        kill "$spid" 2>/dev/null || true
        echo "dsm.sh: FAILED ($name, UCX_TLS=${UCX_TLS-unset}): $PERFTEST 127.0.0.1 -p $port" \
             "-t $test -s $size -n $n" >&2
        cat "$srv" "$out" >&2
        exit 1
    fi
    wait "$spid" || { cat "$srv" >&2; die "ucx_perftest server failed ($name)"; }
    grep -qE '^[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,' "$out" ||
        die "no result line in $out"
}

rm -rf "$RAW"
mkdir -p "$RAW"
echo "dsm.sh: $REPS rounds; load average before: $LOAD"
for rep in $(seq 1 "$REPS"); do
    # one rank, no loomrun, no network: Loom and malloc alternate inside the run
    unset UCX_TLS
    loom "stream1-$rep" 0 stream "$STREAM_MIB1" "$STREAM_REPS"
    check "$RAW/stream1-$rep.out" s1_triad_mibps s1_sum_mibps
    for cfg in $CFGS; do
        tls "$cfg"
        loom "fetch-$cfg-$rep" 2 fetch "${FETCH_SCALE[$cfg]}"
        check "$RAW/fetch-$cfg-$rep.out" fetch_us acqfetch_us tpget_us tpgetsame_us
        for s in $SIZES; do
            for t in ucp_get ucp_put_bw; do
                perftest "pt-$cfg-$t-$s-$rep" "$t" "$s" "${PT_N[$cfg,$t,$s]}"
            done
        done
        for n in $RANKS_ROWS; do
            loom "rows-$cfg-$n-$rep" "$n" rows "${ROWS_SCALE[$cfg]}"
            check "$RAW/rows-$cfg-$n-$rep.out" rowget_rps rowpf_rps rowadd_rps
        done
        OMP_NUM_THREADS=1 loom "stream2-$cfg-$rep" 2 stream "$STREAM_MIB2" "$STREAM_REPS"
        check "$RAW/stream2-$cfg-$rep.out" s2_triad_mibps s2_triad1_mibps s2_relbar_ms
    done
    unset UCX_TLS
    echo "  round $rep done ($(($(date +%s) - START)) s)"
done

ELAPSED=$(($(date +%s) - START))
B_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
B_KERNEL=$(uname -r)
B_NPROC=$(nproc)
B_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
B_UCX=$(dpkg-query -W libucx0 | tr '\t' ' ')
B_UCXUTILS=$(dpkg-query -W ucx-utils 2>/dev/null | tr '\t' ' ' || echo "ucx-utils ?")
B_CC=$(${CC:-cc} --version | head -1)
B_THP=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo "?")
B_LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
B_OMP1=$(sed -n 's/^stream_iters [0-9]* [0-9]* //p' "$RAW/stream1-1.out")
B_FETCH_ITERS_D=$(grep '^fetch_iters' "$RAW/fetch-default-1.out" | cut -d' ' -f2- | tr '\n' ';')
B_FETCH_ITERS_T=$(grep '^fetch_iters' "$RAW/fetch-tcp-1.out" | cut -d' ' -f2- | tr '\n' ';')
B_ROWS_ITERS_D=$(grep '^rows_iters' "$RAW/rows-default-2-1.out" | cut -d' ' -f2- | tr '\n' ';')
B_ROWS_ITERS_T=$(grep '^rows_iters' "$RAW/rows-tcp-2-1.out" | cut -d' ' -f2- | tr '\n' ';')
PT_N_LIST=""
for cfg in $CFGS; do for t in ucp_get ucp_put_bw; do for s in $SIZES; do
    PT_N_LIST="$PT_N_LIST $cfg,$t,$s=${PT_N[$cfg,$t,$s]}"
done; done; done
export RAW REPS ELAPSED LOAD B_DATE B_KERNEL B_NPROC B_CPU B_UCX B_UCXUTILS B_CC B_THP \
       B_LOAD_AFTER B_OMP1 B_FETCH_ITERS_D B_FETCH_ITERS_T B_ROWS_ITERS_D B_ROWS_ITERS_T \
       STREAM_MIB1 STREAM_MIB2 STREAM_REPS PT_N_LIST SIZES CFGS RANKS_ROWS
export FETCH_SCALE_D=${FETCH_SCALE[default]} FETCH_SCALE_T=${FETCH_SCALE[tcp]}
export ROWS_SCALE_D=${ROWS_SCALE[default]} ROWS_SCALE_T=${ROWS_SCALE[tcp]}

python3 - "$RAW/doc.md" <<'PYEOF'
@@PY@@
PYEOF
cp "$RAW/doc.md" "$DOC"
echo "dsm.sh: wrote $DOC ($ELAPSED s)"
