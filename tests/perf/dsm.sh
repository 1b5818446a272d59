#!/bin/bash
# dsm.sh — DSM benchmarks, Loom side by side with raw UCX (ucx_perftest),
# with UCX's default transports and again with UCX_TLS=tcp,self.
#   tests/perf/dsm.sh BUILD_DIR      (run.sh calls it; so does `make bench`)
# Section 0 of the document comes from tests/perf/dsm_cases.sh, run at
# the end (DSM_CASES=0: keep the section its last run left in BUILD_DIR).
# Runs BUILD_DIR/tests/perf/dsm_bench (see its header for what each mode
# measures): remote page fetch at 2 ranks next to ucx_perftest's ucp_get
# and ucp_put_bw on loopback; row get / prefetch / add at 1-4 ranks; the
# STREAM triad and a sum over Loom memory and malloc'd memory at 1 rank
# (no loomrun) and at 2 ranks.  DSM_REPS runs of everything (default 7, at
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
REPS=${DSM_REPS:-7}
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

. tests/perf/dsm_lib.sh # port, in_use, perftest

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
        check "$RAW/fetch-$cfg-$rep.out" fetch_us acqfetch_us tpget_us tpgetsame_us localfault_us osfault_us
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
import glob, os, re, statistics, sys

E = os.environ
raw, reps = E["RAW"], int(E["REPS"])
sizes = [int(s) for s in E["SIZES"].split()]
cfgs = E["CFGS"].split()
ranks = E["RANKS_ROWS"].split()

# vals[(file kind, cfg, n, key, arg)] -> [value per run]
vals = {}
def add(key, v):
    vals.setdefault(key, []).append(v)

for path in sorted(glob.glob(f"{raw}/*.out")):
    name = os.path.basename(path)[:-4]
    parts = name.split("-")
    kind = parts[0]
    if kind == "pt":  # pt-CFG-TEST-SIZE-REP
        cfg, test, size = parts[1], parts[2], int(parts[3])
        with open(path) as f:
            for line in f:
                c = line.strip().split(",")
                if len(c) >= 8 and re.fullmatch(r" *[0-9]+", c[0]):
                    add(("pt", cfg, test, "lat", size), float(c[3]))
                    add(("pt", cfg, test, "bw", size), float(c[5]))
        continue
    if kind == "stream1":
        cfg, n = "-", "1"
    elif kind == "stream2":
        cfg, n = parts[1], "2"
    elif kind == "fetch":
        cfg, n = parts[1], "2"
    elif kind == "rows":
        cfg, n = parts[1], parts[2]
    else:
        continue
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and not w[0].endswith("_iters"):
                arg = int(w[1]) if w[1].isdigit() else w[1]
                add((kind, cfg, n, w[0], arg), float(w[2]))

for k, v in vals.items():
    if len(v) != reps:
        sys.exit(f"dsm.sh: {k}: {len(v)} results, want {reps}")

def med(*k):
    return statistics.median(vals[k])

def fmt(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.0f} k"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"

def cell(*k):
    v = vals[k]
    return f"{fmt(statistics.median(v))} ({fmt(min(v))}–{fmt(max(v))})"

def rat(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"

def pair(kind, cfg, n, key):
    """Loom / malloc per run (both measured in the same run): median (min–max)."""
    x, y = vals[(kind, cfg, n, key, "loom")], vals[(kind, cfg, n, key, "malloc")]
    r = [a / b for a, b in zip(x, y)]
    return statistics.median(r), f"{statistics.median(r):.3f} ({min(r):.3f}–{max(r):.3f})"

def kib(s):
    return f"{s // 1048576} MiB" if s >= 1048576 else f"{s // 1024} KiB"

cfgname = {"default": "UCX default transports (`UCX_TLS` unset)",
           "tcp": "`UCX_TLS=tcp,self`"}

out = []
w = out.append
w("# DSM benchmarks: Loom vs raw UCX, Loom memory vs plain memory")
w("")
w("Generated by `tests/perf/dsm.sh` (part of `make bench`) — do not edit by hand; "
  "regenerate with `make bench`, or `tests/perf/dsm.sh build` after `make -j2 all`.")
w("")
w(f"- date: {E['B_DATE']}; the whole run took {E['ELAPSED']} s; load average "
  f"before it {E['LOAD']}, after it {E['B_LOAD_AFTER']} (the benchmark's own "
  "polling ranks add about 2)")
w(f"- kernel (`uname -r`): {E['B_KERNEL']}; CPU: {E['B_CPU']}; `nproc`: {E['B_NPROC']}; "
  f"transparent huge pages: `{E['B_THP']}`")
w(f"- UCX (`dpkg-query -W libucx0`): {E['B_UCX']}; ucx_perftest from {E['B_UCXUTILS']}")
w(f"- compiler: {E['B_CC']}, `-O2 -g` (the Makefile's default)")
w(f"- {reps} rounds; each round runs every measurement once (Loom and "
  "ucx_perftest, default transports then TCP), so noise hits all alike.  "
  "Every number is the median of the rounds, with (min–max) after it.")
# after the run the load also counts our own two polling ranks
busy = max(float(E["LOAD"].split()[0]), float(E["B_LOAD_AFTER"].split()[0]) - 2)
if busy > 1.0:
    w(f"- **other work shared the machine around this run** (1-minute load "
      f"average {E['LOAD'].split()[0]} before, {E['B_LOAD_AFTER'].split()[0]} "
      f"after, on {E['B_NPROC']} cores): round trips between "
      "polling ranks suffer most; compare with the min–max ranges, and rerun "
      "on a quiet machine before trusting small differences.")
w(f"- this host has {E['B_NPROC']} cores: 3 and 4 ranks are oversubscribed "
  "(more busy-polling processes than cores), and so is anything that runs "
  "while another job uses the machine (see the load averages).")
w("")

# ---- 1. fetch ---------------------------------------------------------------
w("## 1. Remote page fetch, 2 ranks")
w("")
w("Rank 1 loads one 8-byte word of a page unit homed at rank 0, after an "
  "acquire invalidated it: the load faults, the SIGSEGV handler hands the "
  "fault to the rank's fault-server thread, which fetches the "
  "whole unit from rank 0's home store (`loom_dsm_fetch`: `ucp_get_nbx` with "
  "the home's key, then waits), then makes it readable.  Rank 0 meanwhile "
  "waits in `loom_barrier` (so it drives UCX progress).")
w("")
w("- **Loom fetch**: distinct units, 16 MiB (4 KiB units) or 64 MiB of them, "
  "one acquire per pass (the barrier's), 3 timed passes after an untimed one; "
  "time per fetch.")
w("- **Loom acq+fetch**: `loop { loom_acquire(); load unit 0 }` with only a "
  "2-unit allocation live: the same unit, warm in the caches, as ucx_perftest "
  "does; includes the acquire (shown alone: `acquire`).")
w("- **transport get**: the same `loom_rt_tp_get` + wait that a fetch makes, "
  "from a buffer rank 0 registered, without the DSM (no fault, no "
  "`mprotect`): distinct units / one unit over and over.")
w("- **ucx_perftest get**: `ucp_get` with one get outstanding (its default "
  "window for this test), the same buffer every time; its bandwidth column "
  "is size / latency.  **put_bw**: `ucp_put_bw`, 32 puts outstanding.")
w("")
for cfg in cfgs:
    w(f"### {cfgname[cfg]}")
    w("")
    w("Latency, µs per fetch (lower is better); ratio = Loom / ucx_perftest get "
      "(above 1: Loom slower).")
    w("")
    w("| unit | Loom fetch (distinct units) | Loom acq+fetch (same unit) | "
      "ucx_perftest get | fetch / raw | acq+fetch / raw |")
    w("|---|---:|---:|---:|---:|---:|")
    for s in sizes:
        raw_lat = med("pt", cfg, "ucp_get", "lat", s)
        w(f"| {kib(s)} | {cell('fetch', cfg, '2', 'fetch_us', s)} | "
          f"{cell('fetch', cfg, '2', 'acqfetch_us', s)} | "
          f"{cell('pt', cfg, 'ucp_get', 'lat', s)} | "
          f"{rat(med('fetch', cfg, '2', 'fetch_us', s) / raw_lat)} | "
          f"{rat(med('fetch', cfg, '2', 'acqfetch_us', s) / raw_lat)} |")
    w("")
    w("Where a fetch's time goes, µs: the transport alone (Loom's `loom_rt_tp_get` "
      "+ wait on a registered buffer, no DSM), the fault path alone (a unit "
      "homed at the faulting rank: signal, lock, local copy, `mprotect`; no "
      "network), the operating system alone (SIGSEGV + one `mprotect` per "
      "unit of a plain mapping, no copy), and an acquire with nothing to drop.")
    w("")
    w("| unit | Loom fetch (distinct units) | transport get, distinct | "
      "transport get, same unit | fault path, local unit | OS: signal + mprotect | "
      "acquire alone | transport same / ucx_perftest |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in sizes:
        w(f"| {kib(s)} | {cell('fetch', cfg, '2', 'fetch_us', s)} | "
          f"{cell('fetch', cfg, '2', 'tpget_us', s)} | "
          f"{cell('fetch', cfg, '2', 'tpgetsame_us', s)} | "
          f"{cell('fetch', cfg, '2', 'localfault_us', s)} | "
          f"{cell('fetch', cfg, '2', 'osfault_us', s)} | "
          f"{cell('fetch', cfg, '2', 'acquire_us', s)} | "
          f"{rat(med('fetch', cfg, '2', 'tpgetsame_us', s) / med('pt', cfg, 'ucp_get', 'lat', s))} |")
    w("")
    w("Bandwidth, MiB/s (higher is better); ratio = Loom / ucx_perftest "
      "(below 1: Loom slower).")
    w("")
    w("| unit | Loom fetch (distinct units) | ucx_perftest get | ucx_perftest put_bw | "
      "Loom / get | Loom / put_bw |")
    w("|---|---:|---:|---:|---:|---:|")
    for s in sizes:
        lm = med("fetch", cfg, "2", "fetch_mibps", s)
        w(f"| {kib(s)} | {cell('fetch', cfg, '2', 'fetch_mibps', s)} | "
          f"{cell('pt', cfg, 'ucp_get', 'bw', s)} | "
          f"{cell('pt', cfg, 'ucp_put_bw', 'bw', s)} | "
          f"{rat(lm / med('pt', cfg, 'ucp_get', 'bw', s))} | "
          f"{rat(lm / med('pt', cfg, 'ucp_put_bw', 'bw', s))} |")
    w("")

# ---- 2. rows ----------------------------------------------------------------
w("## 2. Row get / prefetch / add throughput, 1–4 ranks")
w("")
w("Every rank works on every row homed elsewhere (with one rank: every row; "
  "one rank's allocation is plain memory, so nothing is fetched or sent and "
  "the 1-rank column is the cost of the calls alone).  Aggregate rows/s = "
  "rows handled by all ranks / the slowest rank's time, over 3 timed passes "
  "after an untimed one.")
w("")
w("- **get**: `loom_barrier()` (its acquire invalidates every row), then "
  "`loom_row_get` of each row in turn: every get fetches (`ucp_get_nbx` of "
  "one row, waited for).  The values are checked.")
w("- **prefetch+get**: the same, but `loom_row_prefetch` of 256 rows first "
  "(all their gets in flight at once), then `loom_row_get` of each.")
w("- **add**: `loom_row_add` of a row of ones (`LOOM_INT64`, `LOOM_MERGE_ADD`) "
  "into each row, then the `loom_barrier` that pushes the additions home, "
  "timed together.  The sums are checked afterwards.")
w("")
for cfg in cfgs:
    w(f"### {cfgname[cfg]}")
    w("")
    w("Rows per second, all ranks together (higher is better).")
    w("")
    w("| operation | row | " + " | ".join(f"{n} rank{'s' if n != '1' else ''}"
                                          for n in ranks) + " |")
    w("|---|---:" + "|---:" * len(ranks) + "|")
    for op, label in (("rowget_rps", "get"), ("rowpf_rps", "prefetch+get"),
                      ("rowadd_rps", "add + barrier")):
        for s in (64, 256, 4096):
            w(f"| {label} | {s} B | " +
              " | ".join(cell("rows", cfg, n, op, s) for n in ranks) + " |")
    w("")
    w("Derived: µs per row per rank (ranks / aggregate rate) at 2 ranks, and "
      "the speed-up from prefetching.")
    w("")
    w("| row | get, µs per row per rank (2 ranks) | add, µs per row per rank (2 ranks) | " +
      " | ".join(f"prefetch / get, {n} ranks" for n in ranks if n != "1") + " |")
    w("|---:|---:|---:" + "|---:" * (len(ranks) - 1) + "|")
    for s in (64, 256, 4096):
        w(f"| {s} B | {2e6 / med('rows', cfg, '2', 'rowget_rps', s):.2f} | "
          f"{2e6 / med('rows', cfg, '2', 'rowadd_rps', s):.3f} | " +
          " | ".join(f"{med('rows', cfg, n, 'rowpf_rps', s) / med('rows', cfg, n, 'rowget_rps', s):.2f}"
                     for n in ranks if n != "1") + " |")
    w("")

# ---- 3. stream --------------------------------------------------------------
w("## 3. Memory-bound kernels on Loom memory vs malloc'd memory")
w("")
w("STREAM triad `a[i] = b[i] + s*c[i]` and a sum of `a` (`double`, `#pragma omp "
  "parallel for`, static schedule; the sum with `simd` so that it is bound by "
  "memory, not by one addition chain).  Bandwidth counts the bytes the kernel "
  "names (triad: 3 arrays, sum: 1), as STREAM does.  The values are checked.")
w("")
w(f"### One rank, no loomrun ({E['STREAM_MIB1']} MiB per array, "
  f"{E['B_OMP1']} OpenMP threads)")
w("")
w("Rank 0 of 1: `loom_alloc` must be plain memory.  Within one run the Loom "
  f"and malloc'd arrays alternate, {E['STREAM_REPS']} times each (the order "
  "flips every time), after an untimed first touch; a run's value is its "
  "median.")
w("")
w("| kernel | Loom memory, MiB/s | malloc'd memory, MiB/s | Loom / malloc (of the medians) | "
  "Loom / malloc, per run: median (min–max) |")
w("|---|---:|---:|---:|---:|")
for k, label in (("s1_triad_mibps", "triad"), ("s1_sum_mibps", "sum")):
    w(f"| {label} | {cell('stream1', '-', '1', k, 'loom')} | "
      f"{cell('stream1', '-', '1', k, 'malloc')} | "
      f"{med('stream1', '-', '1', k, 'loom') / med('stream1', '-', '1', k, 'malloc'):.3f} | "
      f"{pair('stream1', '-', '1', k)[1]} |")
w("")
w("The machine's speed varies from run to run (other work shares it); the "
  "per-run ratio compares Loom and malloc'd memory measured side by side in "
  "the same process and is the figure to trust.")
w("")
w(f"### Two ranks under loomrun ({E['STREAM_MIB2']} MiB per array per rank, "
  "`OMP_NUM_THREADS=1`: one thread per rank, one rank per core)")
w("")
w("The arrays are global page-unit allocations (64 KiB units, block "
  "distribution); each rank works on its own home block only, and the same "
  "steps run on malloc'd arrays in the same job, taking turns with Loom's "
  "in every step.  Steps, separated by barriers that do no release or "
  "acquire unless named: first writes of a, b, c (init: each rank's home "
  "block is kept in place, docs/dsm.md, so no unit faults, is copied or "
  "twinned: first-touch page allocation, as for malloc); one `loom_barrier` "
  "(nothing to diff or invalidate: no unit left its home); a first triad; "
  f"{E['STREAM_REPS']} steady-state triads and sums, Loom and "
  "malloc alternating which goes first; a `loom_barrier` after a was "
  "written; a first sum after it.  Slowest rank's time; bandwidth over "
  "both ranks' bytes; per-run ratios as above.")
w("")
for cfg in cfgs:
    w(f"#### {cfgname[cfg]}")
    w("")
    w("| step | Loom | malloc | Loom / malloc (of the medians) | Loom / malloc, per run |")
    w("|---|---:|---:|---:|---:|")
    def row(label, key, unit, lower_better):
        lm, mm = med("stream2", cfg, "2", key, "loom"), med("stream2", cfg, "2", key, "malloc")
        w(f"| {label}, {unit} | {cell('stream2', cfg, '2', key, 'loom')} | "
          f"{cell('stream2', cfg, '2', key, 'malloc')} | {lm / mm:.2f} | "
          f"{pair('stream2', cfg, '2', key)[1]} |")
    row("init: first writes of a, b, c", "s2_init_ms", "ms (lower is better)", True)
    w(f"| `loom_barrier` after init (releases 3 arrays), ms | "
      f"{cell('stream2', cfg, '2', 's2_initbar_ms', 'loom')} | — | — | — |")
    row("first triad after the barrier", "s2_triad1_mibps", "MiB/s", False)
    row("steady triad", "s2_triad_mibps", "MiB/s", False)
    row("steady sum", "s2_sum_mibps", "MiB/s", False)
    w(f"| `loom_barrier` releasing a, ms | "
      f"{cell('stream2', cfg, '2', 's2_relbar_ms', 'loom')} | — | — | — |")
    row("first sum after that barrier", "s2_sum1_mibps", "MiB/s", False)
    w("")

# ---- commands ---------------------------------------------------------------
w("## Commands")
w("")
w("Run by `tests/perf/dsm.sh build` (`make bench` runs it after the "
  "collectives); `UCX_TLS` unset for the default transports, "
  "`UCX_TLS=tcp,self` for TCP, for Loom and ucx_perftest alike.")
w("")
w("    # 1. fetch (SCALE: default transports " + E["FETCH_SCALE_D"] + ", TCP " +
  E["FETCH_SCALE_T"] + ")")
w("    build/bin/loomrun -n 2 build/tests/perf/dsm_bench fetch SCALE")
w("    ucx_perftest -p PORT &                       # server, in the background")
w("    ucx_perftest 127.0.0.1 -p PORT -t ucp_get    -s SIZE -n N -w N/10+1 -v")
w("    ucx_perftest -p PORT &")
w("    ucx_perftest 127.0.0.1 -p PORT -t ucp_put_bw -s SIZE -n N -w N/10+1 -v")
w("    # 2. rows, R = 1 2 3 4 (SCALE: default " + E["ROWS_SCALE_D"] + ", TCP " +
  E["ROWS_SCALE_T"] + ")")
w("    build/bin/loomrun -n R build/tests/perf/dsm_bench rows SCALE")
w("    # 3. stream")
w(f"    build/tests/perf/dsm_bench stream {E['STREAM_MIB1']} {E['STREAM_REPS']}")
w(f"    OMP_NUM_THREADS=1 build/bin/loomrun -n 2 build/tests/perf/dsm_bench stream "
  f"{E['STREAM_MIB2']} {E['STREAM_REPS']}")
w("")
w("Nothing is bound to cores (neither Loom nor ucx_perftest; no `-c`).  "
  "ucx_perftest iterations N (set-up,test,size=N):" + E["PT_N_LIST"] + ".  "
  "Loom fetch (size units passes same-unit-loops): default " +
  E["B_FETCH_ITERS_D"] + " TCP " + E["B_FETCH_ITERS_T"] + ".  Rows at 2 ranks "
  "(size rows-per-rank-per-pass passes): default " + E["B_ROWS_ITERS_D"] +
  " TCP " + E["B_ROWS_ITERS_T"] + ".  Raw outputs: `build/perf/dsm/`.")
w("")

# ---- interpretation --------------------------------------------------------
D, T = "default", "tcp"
def r2(x):
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"
def m(kind, cfg, n, key, arg):
    return med(kind, cfg, n, key, arg)
def F(cfg, key, s):
    return med("fetch", cfg, "2", key, s)
def PT(cfg, test, what, s):
    return med("pt", cfg, test, what, s)
def spread(k):
    v = vals[k]
    return max(v) / min(v)

w("## Interpretation")
w("")
f = {s: F(D, "fetch_us", s) for s in sizes}
a = {s: F(D, "acqfetch_us", s) for s in sizes}
p = {s: PT(D, "ucp_get", "lat", s) for s in sizes}
tps = {s: F(D, "tpgetsame_us", s) for s in sizes}
tpd = {s: F(D, "tpget_us", s) for s in sizes}
lf = {s: F(D, "localfault_us", s) for s in sizes}
osf = {s: F(D, "osfault_us", s) for s in sizes}
S0, S1, S2 = sizes
w(f"**Remote fetch, default transports: far from raw UCX, most of all for "
  f"small units.**  A 4 KiB fetch takes {fmt(f[S0])} µs, {r2(f[S0] / p[S0])}× "
  f"ucx_perftest's get ({fmt(p[S0])} µs); 64 KiB {fmt(f[S1])} against "
  f"{fmt(p[S1])} µs ({r2(f[S1] / p[S1])}×); 1 MiB {fmt(f[S2])} against "
  f"{fmt(p[S2])} µs ({r2(f[S2] / p[S2])}×; fetching the same unit again and "
  f"again, warm in the caches as ucx_perftest's buffer is: {fmt(a[S2])} µs, "
  f"{r2(a[S2] / p[S2])}×).  In bandwidth, a Loom fetch of 1 MiB units moves "
  f"{fmt(F(D, 'fetch_mibps', S2))} MiB/s, "
  f"{F(D, 'fetch_mibps', S2) / PT(D, 'ucp_get', 'bw', S2):.2f} of ucx_perftest's "
  f"get and {F(D, 'fetch_mibps', S2) / PT(D, 'ucp_put_bw', 'bw', S2):.2f} of its "
  "put bandwidth.  The breakdown table says where the time goes:")
w("")
w(f"- *The fault path* (signal, unit lock, copy, `mprotect`) costs "
  f"{fmt(lf[S0])} µs per 4 KiB unit even when the unit is local, "
  f"{100 * lf[S0] / f[S0]:.0f} % of a remote 4 KiB fetch.  Most of it is "
  f"the operating system: a SIGSEGV and one `mprotect` cost {fmt(osf[S0])} µs "
  "on this virtual machine without any Loom code.  Small page units are "
  "therefore bound by the fault cost, whatever the network; the row path, "
  "which never faults, fetches a small row in well under a microsecond at "
  "2 ranks (section 2).  For 1 MiB units the local fault costs "
  f"{fmt(lf[S2])} µs, of which the signal and `mprotect` are {fmt(osf[S2])} µs "
  "and the rest is the copy of a unit that is not in cache (64 MiB of units, "
  "more than the last-level cache).")
w(f"- *The transport*: Loom's own get of the same unit over and over, no "
  f"DSM, takes {fmt(tps[S0])} µs at 4 KiB ({r2(tps[S0] / p[S0])}× "
  f"ucx_perftest), {fmt(tps[S1])} µs at 64 KiB ({r2(tps[S1] / p[S1])}×), "
  f"{fmt(tps[S2])} µs at 1 MiB ({r2(tps[S2] / p[S2])}×).  The memory is "
  "reached differently.  ucx_perftest's buffers come from "
  "`ucp_mem_map(UCP_MEM_MAP_ALLOCATE)`, UCX's own shared-memory segments, so "
  "its get is a `memcpy` from a segment mapped into the client.  Loom's "
  "home store is ordinary `mmap` memory registered afterwards "
  "(`loom_rt_tp_mem_map`); on one host UCX 1.13 reads such memory only with "
  "`cma` (`process_vm_readv`), which UCP keeps for large zero-copy "
  "transfers, so `ucp_get_nbx` *emulates* the get with active messages that "
  "the home rank serves in `ucp_worker_progress`: a request/reply round trip "
  "between two polling processes.  Checked when this text was written: "
  "`strace -f -c` of a fetch run shows no `process_vm_readv`, and the "
  "numbers stay the same with `UCX_TLS=posix,sysv,self` (no cma).  Round "
  "trips between polling processes are also what suffers most when other "
  f"work takes the cores: this run's 4 KiB transport get ranged over "
  f"{fmt(min(vals[('fetch', D, '2', 'tpget_us', S0)]))}–"
  f"{fmt(max(vals[('fetch', D, '2', 'tpget_us', S0)]))} µs.")
w("- Because a fetch is served by the home's progress, a home that is "
  "computing answers through the background progress agent "
  "(`dsm/agent.c`, a thread polling every 50 µs), which needs a core of "
  "its own.  See finding 1 below.")
w("")
tf = {s: F(T, "fetch_us", s) for s in sizes}
tt = {s: F(T, "tpget_us", s) for s in sizes}
tp = {s: PT(T, "ucp_get", "lat", s) for s in sizes}
txt = (f"**Over TCP** a 4 KiB fetch costs {fmt(tf[S0])} µs, of which Loom's "
       f"transport get is {fmt(tt[S0])} µs (64 KiB: {fmt(tf[S1])} / "
       f"{fmt(tt[S1])} µs, 1 MiB: {fmt(tf[S2])} / {fmt(tt[S2])} µs): the "
       "network dominates and the fault path adds the same few microseconds "
       "as over shared memory.  ")
if tp[S0] > tf[S0]:
    txt += (f"ucx_perftest's TCP get reports {fmt(tp[S0])} µs at 4 KiB, slower "
            f"than Loom (ratio {tf[S0] / tp[S0]:.2f}); that is not a limit "
            "Loom beats but an artefact: over TCP a get is also served by the "
            "target's progress, and ucx_perftest's responder stops calling "
            "progress during a one-sided test (it waits in its own socket "
            "barrier), so each get waits for UCX's asynchronous thread (~1 ms).  "
            "Loom's home, waiting in a barrier, polls.  Read the TCP ratios "
            "with that in mind; the transport-get column is the fair TCP "
            "reference.")
else:
    txt += (f"ucx_perftest's TCP get: {fmt(tp[S0])} µs at 4 KiB (ratio "
            f"{tf[S0] / tp[S0]:.2f}).")
if spread(("pt", T, "ucp_put_bw", "bw", S2)) > 3:
    txt += ("  ucx_perftest's TCP put bandwidth at 1 MiB swings by more than "
            "3× between runs (see min–max): indicative only.")
w(txt)
w("")
g1 = m("rows", D, "1", "rowget_rps", 64)
g2 = {s: m("rows", D, "2", "rowget_rps", s) for s in (64, 256, 4096)}
pf2 = m("rows", D, "2", "rowpf_rps", 64)
pf4 = m("rows", D, "4", "rowpf_rps", 64)
g4 = m("rows", D, "4", "rowget_rps", 64)
ad2 = {s: m("rows", D, "2", "rowadd_rps", s) for s in (64, 256, 4096)}
ad1 = m("rows", D, "1", "rowadd_rps", 4096)
tg2 = m("rows", T, "2", "rowget_rps", 64)
w(f"**Rows.**  On one rank a get is a lookup ({fmt(g1)} rows/s).  At 2 ranks "
  f"every get is a round trip to the home: {fmt(g2[64])} rows/s for 64 B rows "
  f"({2e6 / g2[64]:.2f} µs per row per rank; no fault, so far cheaper than a "
  f"page fetch), {fmt(g2[4096])} for 4 KiB rows; over TCP {fmt(tg2)} rows/s "
  f"({2e6 / tg2:.0f} µs per row per rank).  Prefetching 256 rows puts their "
  f"gets in flight together: {pf2 / g2[64]:.1f}× the plain get at 2 ranks "
  f"(64 B), {pf4 / g4:.1f}× at 4 ranks, where a round trip waits for "
  "a peer that may not be on a core, and overlapping them matters most.  "
  "Additions never wait for the home: they are summed locally and pushed in "
  f"one message per home at the barrier, {fmt(ad2[64])} rows/s for 64 B rows "
  f"at 2 ranks, barrier included; 4 KiB rows add at {fmt(ad2[4096])} rows/s "
  f"({ad2[4096] * 4096 / 2**20:.0f} MiB/s) against {fmt(ad1)} on one rank.  "
  "With 3 and 4 ranks the 2-core host is oversubscribed, and the figures "
  "mostly measure how busy-polling ranks share two cores: 64 B additions "
  f"fall from {fmt(ad2[64])} rows/s at 2 ranks to "
  f"{fmt(m('rows', D, '3', 'rowadd_rps', 64))} at 3 "
  f"({fmt(m('rows', T, '3', 'rowadd_rps', 64))} over TCP), "
  f"{ad2[64] / m('rows', D, '3', 'rowadd_rps', 64):.1f}× less.  Before the "
  "background progress agent (commit 975c6ef) the drop was about 10×: "
  "timing the release inside that barrier separately (a debugging copy of "
  "this benchmark) gave 4, 8, 12, 20 and 24 ms per release at 3 ranks "
  "against 0.14 ms at 2, multiples of a scheduler time slice, because a "
  "rank waiting for an acknowledgement polls and calls `sched_yield`, "
  "which only yields to tasks queued on its own core (finding 4); the "
  "agent, which sleeps between polls, now answers many of those waits.")
w("")
st = pair("stream1", "-", "1", "s1_triad_mibps")
ss = pair("stream1", "-", "1", "s1_sum_mibps")
equal = abs(st[0] - 1) <= 0.05 and abs(ss[0] - 1) <= 0.05
w(f"**One rank: Loom memory is plain memory.**  Loom/malloc, measured side "
  f"by side in each run, is {st[1]} for the triad and {ss[1]} for the sum; "
  + ("equal speed within 5 %, the noise of this machine "
     if equal else
     ("Loom's memory is not slower; where it is more than 5 % faster the "
      "benchmark does not explain why (the two runs of each pair differ only "
      "in the arrays; page-aligning the malloc'd arrays did not change the "
      "picture when tried while writing this text), so read it as noise of a "
      "shared machine rather than a Loom advantage "
      if st[0] >= 1 and ss[0] >= 1 else
      "Loom's memory is more than 5 % slower here: unexpected for plain "
      "memory; check the spread before drawing conclusions "))
  + "(both are anonymous mappings, `loom_alloc` with one rank maps plain "
  "memory with no faults or copies; transparent huge pages are "
  f"`{E['B_THP']}` here).")
w("")
def s2(key, who="loom"):
    return m("stream2", D, "2", key, who)
t1 = pair("stream2", D, "2", "s2_triad1_mibps")[0]
tsr = pair("stream2", D, "2", "s2_triad_mibps")[0]
ssr = pair("stream2", D, "2", "s2_sum_mibps")[0]
s1r = pair("stream2", D, "2", "s2_sum1_mibps")[0]
w(f"**Two ranks, each on its own home block.**  Steady state runs at plain "
  f"speed (triad Loom/malloc = {tsr:.2f}, sum {ssr:.2f}).  The first pass "
  f"after a barrier does not: triad at {t1:.2f}× and sum at {s1r:.2f}× "
  "malloc's speed.  `loom_barrier`'s acquire invalidates *every* clean unit, "
  "the rank's own home units included, so the next touch of each 64 KiB "
  "unit faults and copies it from the home store into the working copy "
  "(a written unit is copied once more, into its twin).  The barriers "
  f"themselves cost {fmt(s2('s2_initbar_ms'))} ms after writing 3 × "
  f"{E['STREAM_MIB2']} MiB per rank and {fmt(s2('s2_relbar_ms'))} ms after "
  f"writing {E['STREAM_MIB2']} MiB: the release compares every dirty unit "
  "with its twin byte by byte and copies the changed bytes into the home "
  "store, although the writer is the home.  The first writes (init) cost "
  f"{pair('stream2', D, '2', 's2_init_ms')[0]:.1f}× the time of malloc's first "
  "touch for the same reasons.  A program that alternates a pass over its "
  "own block with a barrier pays all of this on every pass.  The TCP "
  "set-up gives the same picture (nothing here crosses the network).")
w("")
w("## Findings (not fixed here; for the DSM's owners)")
w("")
w("1. *A fetch is one-sided on one host for page units kept in place* "
  "(`dsm/alloc.c`, `make_store`: the home store is allocated by UCX at its "
  "global address, `loom_rt_tp_mem_alloc_at`; `UCX_PROTO_INFO=y` shows "
  "`copy-out` for gets up to ~30 KiB, so `loom_dsm_fetch_many` splits "
  "fetches into 16 KiB gets).  Row stores and page stores that are not in "
  "place are still registered `mmap` memory, whose gets UCX 1.13 emulates "
  "with active messages served by the home's progress agent (`dsm/agent.c`): "
  "their remote reads from a busy home cost the agent's scheduling delay.")
w("2. *Homes in place* (issue 12): a rank reads and writes the page units it "
  "homes with no fault, twin or diff, and acquire/release look only at the "
  "units this rank cached or wrote (`dsm/policy_bsp.c`); section 0 measures "
  "it.  The stream rows of section 3 date from before that change when this "
  "document was not regenerated since (see its date).")
w("3. *Small page units are bound by the fault cost* (a SIGSEGV and an "
  "`mprotect`, ~5 µs on this VM, per unit per acquire).  Not a bug; a "
  "reason to prefer 64 KiB or larger units, or rows, for data read "
  "remotely after every barrier.")
w("4. *Waiting ranks never sleep* (`lib/transport.c`, `progress`: spin, "
  "then `sched_yield` after 64 idle polls; used by `loom_rt_tp_wait_flag` and "
  "`loom_tp_wait_count`, i.e. every fetch and every release).  With more "
  "ranks than cores, a wait for a rank that is queued behind a busy poller "
  "on another core lasts until that poller's time slice ends (ms).  Before "
  "the progress agent this made releases at 3 ranks on this 2-core host "
  "take 4–24 ms (64 B add + barrier ~10× slower than at 2 ranks; "
  "reproduce with `build/bin/loomrun -n 3 build/tests/perf/dsm_bench rows "
  "0.25` at a commit before 975c6ef); the agent, which sleeps between "
  "polls, mitigates it (see section 2 for the drop now).  A blocking wait "
  "after a short spin (`ucp_worker_arm` + the worker's event fd) would let "
  "the other rank run without relying on the agent.")
with open(sys.argv[1], "w") as f:
    f.write("\n".join(out) + "\n")
PYEOF
cp "$RAW/doc.md" "$DOC"
echo "dsm.sh: wrote $DOC ($ELAPSED s)"
# Section 0 (the page path's four cases): measured now, or with
# DSM_CASES=0 kept from the last dsm_cases.sh run in this build.
if [ "${DSM_CASES:-1}" = 0 ]; then
    [ ! -f "$BUILD/perf/dsm-cases/section.md" ] ||
        insert_section0 "$BUILD/perf/dsm-cases/section.md" "$DOC"
else
    tests/perf/dsm_cases.sh "$BUILD"
fi
