#!/bin/bash
# run.sh — collective benchmarks, Loom side by side with Debian's Open MPI.
#   tests/perf/run.sh BUILD_DIR      (what `make bench` runs, BUILD_DIR=build)
# Builds BUILD_DIR/tests/perf/coll_bench_mpi with mpicc, then runs
# coll_bench (Loom, under BUILD_DIR/bin/loomrun) and coll_bench_mpi (under
# mpirun, two set-ups; three if Loom needs TCP here) at 2 and 4 ranks,
# BENCH_REPS times each (default 7, at least 5), interleaved (Loom, MPI,
# MPI-UCX, Loom, ...) so noise hits all alike, and writes the medians to
# docs/bench-collectives.md.  Raw outputs are kept in BUILD_DIR/perf/coll/.
# Any failed or hung run stops the script non-zero, before the document is
# touched.  BENCH_LOOM_VIA_MPIRUN=1 runs the Loom side under mpirun as a
# foreign launcher when loomrun has not been built (development only).
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: tests/perf/run.sh BUILD_DIR"
cd "$(dirname "$0")/../.."
BUILD=$1
REPS=${BENCH_REPS:-7}
[ "$REPS" -ge 5 ] 2>/dev/null || die "BENCH_REPS must be an integer >= 5 (got '$REPS')"
RANKS="2 4"
LOOM_BIN=$BUILD/tests/perf/coll_bench
MPI_BIN=$BUILD/tests/perf/coll_bench_mpi
RAW=$BUILD/perf/coll
DOC=docs/bench-collectives.md
START=$(date +%s)
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

command -v mpicc >/dev/null || die "mpicc not found: install libopenmpi-dev (tools/deps.sh bench)"
command -v mpirun >/dev/null || die "mpirun not found: install openmpi-bin (tools/deps.sh bench)"
[ -x "$LOOM_BIN" ] || die "$LOOM_BIN is missing: run make first"

# The MPI twin, compiled like the Loom side (the Makefile's default CFLAGS).
mkdir -p "$(dirname "$MPI_BIN")"
MPI_CC="mpicc -std=gnu11 -O2 -g -Wall -Wextra -Werror"
$MPI_CC -o "$MPI_BIN" tests/perf/coll_bench_mpi.c || die "building $MPI_BIN failed"

# Open MPI refuses to run as root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Same placement for everyone: Loom does not bind, so neither does MPI.
MPIRUN="mpirun --oversubscribe --bind-to none"
# Open MPI's default on a host with no InfiniBand: ob1 over shared memory.
MPI_OB1="--mca pml ob1 --mca btl self,vader"
# The same UCX library Loom uses (by default Open MPI 4.1 only picks
# pml ucx for mlx* devices; "any" lets it run over UCX's shared memory).
MPI_UCX="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
# The same, restricted to UCX's TCP transport: only run when Loom itself
# is on TCP here (see the probe), to tell the transport from the algorithms.
MPI_TCP="-x UCX_TLS=tcp,self $MPI_UCX"

if [ -x "$BUILD/bin/loomrun" ]; then
    BENCH_LAUNCH="$BUILD/bin/loomrun"
elif [ "${BENCH_LOOM_VIA_MPIRUN:-0}" = 1 ]; then
    BENCH_LAUNCH="mpirun (foreign launcher; BENCH_LOOM_VIA_MPIRUN=1)"
else
    die "$BUILD/bin/loomrun not found: build it (make) before make bench"
fi

port=$((17000 + $$ % 20000))
# loom_argv N ARGS...: set L to the command that runs coll_bench on N ranks.
loom_argv() {
    local n=$1; shift
    if [ -x "$BUILD/bin/loomrun" ]; then
        L=("$BUILD/bin/loomrun" -n "$n" "$LOOM_BIN" "$@")
    else
        port=$((port + 1))
        # shellcheck disable=SC2206
        L=($MPIRUN -n "$n" ${UCX_TLS+-x UCX_TLS} -x LOOM_RENDEZVOUS=127.0.0.1:$port
           -x LOOM_JOB_KEY=00112233445566778899aabbccddeeff "$LOOM_BIN" "$@")
    fi
}

# run SYSTEM N REP COMMAND...: one run, output checked and kept.
run() {
    local sys=$1 n=$2 rep=$3; shift 3
    local out=$RAW/$sys-$n-$rep.out err=$RAW/$sys-$n-$rep.err
    if ! timeout 180 "$@" >"$out" 2>"$err"; then
        echo "run.sh: FAILED ($sys, $n ranks, run $rep): $*" >&2
        cat "$err" "$out" >&2
        exit 1
    fi
    sed -i -E 's/^\[[0-9]+\] //' "$out"   # loomrun tags lines "[rank] "
    for k in barrier_us allreduce8_us bcast1m_mibps; do
        grep -q "^$k [0-9]" "$out" || die "$sys, $n ranks, run $rep: no '$k' line in $out"
    done
    printf '  %-8s n=%s run %s: %s\n' "$sys" "$n" "$rep" \
        "$(grep -E '^(barrier_us|allreduce8_us|bcast1m_mibps) ' "$out" | tr '\n' ' ')"
}

rm -rf "$RAW"
mkdir -p "$RAW"

# Can Loom use shared memory on one host?  Run it briefly with TCP removed
# from UCX.  probe: yes (it runs), peer (it fails, and UCX refuses its
# shared-memory transports for want of peer-failure handling: "no peer
# failure handler" in probe.err), no (it fails for another reason).
probe=no
export UCX_TLS='^tcp'
loom_argv 2 0.001
if timeout 60 "${L[@]}" >"$RAW/probe.out" 2>"$RAW/probe.err"; then
    probe=yes
elif grep -q "no peer failure handler" "$RAW/probe.err"; then
    probe=peer
fi
unset UCX_TLS

# Iteration counts are sized for shared memory; over TCP a small call is ~40
# times slower, so then everyone (Loom and MPI alike) runs 1/20 of them.
SYSTEMS="loom mpi mpiucx"
SCALE=1
if [ "$probe" != yes ]; then
    SYSTEMS="$SYSTEMS mpitcp"
    SCALE=0.05
fi

echo "run.sh: Loom launched by $BENCH_LAUNCH; Loom without TCP: $probe;" \
     "$REPS runs per configuration; iteration scale $SCALE"
for n in $RANKS; do
    for rep in $(seq 1 "$REPS"); do
        for sys in $SYSTEMS; do
            # shellcheck disable=SC2086
            case $sys in
            loom) loom_argv "$n" "$SCALE"; run loom "$n" "$rep" "${L[@]}" ;;
            mpi) run mpi "$n" "$rep" $MPIRUN -n "$n" $MPI_OB1 "$MPI_BIN" "$SCALE" ;;
            mpiucx) run mpiucx "$n" "$rep" $MPIRUN -n "$n" $MPI_UCX "$MPI_BIN" "$SCALE" ;;
            mpitcp) run mpitcp "$n" "$rep" $MPIRUN -n "$n" $MPI_TCP "$MPI_BIN" "$SCALE" ;;
            esac
        done
    done
done

ELAPSED=$(($(date +%s) - START))
B_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
B_KERNEL=$(uname -r)
B_NPROC=$(nproc)
B_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
B_UCX=$(dpkg-query -W libucx0 | tr '\t' ' ')
B_OMPI=$(dpkg-query -W openmpi-bin | tr '\t' ' ')
B_CC=$(${CC:-cc} --version | head -1)
B_ITERS_2=$(sed -n 's/^iters //p' "$RAW/loom-2-1.out")
B_ITERS_4=$(sed -n 's/^iters //p' "$RAW/loom-4-1.out")
export RAW REPS RANKS SYSTEMS SCALE ELAPSED LOAD probe MPIRUN MPI_OB1 MPI_UCX \
       MPI_TCP MPI_CC BENCH_LAUNCH B_DATE B_KERNEL B_NPROC B_CPU B_UCX B_OMPI \
       B_CC B_ITERS_2 B_ITERS_4

python3 - "$RAW/doc.md" <<'EOF'
import os, statistics, sys

E = os.environ
raw, reps, ranks = E["RAW"], int(E["REPS"]), E["RANKS"].split()
systems = E["SYSTEMS"].split()
tcp = "mpitcp" in systems
metrics = [("barrier_us", "barrier latency", "µs", "lat"),
           ("allreduce8_us", "allreduce 8 B (1 double, SUM)", "µs", "lat"),
           ("bcast1m_mibps", "bcast 1 MiB (root 0)", "MiB/s", "bw")]
short = {"barrier_us": "barrier", "allreduce8_us": "8-byte allreduce",
         "bcast1m_mibps": "1 MiB bcast"}
label = {"mpi": "MPI (ob1/vader)", "mpiucx": "MPI-UCX (pml ucx)",
         "mpitcp": "MPI-TCP (pml ucx, UCX_TLS=tcp,self)"}

vals = {}
for s in systems:
    for n in ranks:
        for rep in range(1, reps + 1):
            with open(f"{raw}/{s}-{n}-{rep}.out") as f:
                for line in f:
                    k, _, v = line.partition(" ")
                    if k in short:
                        vals.setdefault((s, n, k), []).append(float(v))
med = {key: statistics.median(v) for key, v in vals.items()}

def fmt(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.2f}" if x < 10 else f"{x:.1f}"

def rng(key):
    return f"{fmt(min(vals[key]))}–{fmt(max(vals[key]))}"

def ratio(m, n, other="mpi"):
    return med[("loom", n, m)] / med[(other, n, m)]

# "Loom faster / slower / on par" against another set-up; within 10 % is par.
def verdict(m, kind, n, other="mpi"):
    r = ratio(m, n, other)
    speed = r if kind == "bw" else 1 / r  # > 1: Loom better
    if speed > 1.1:
        return "Loom ahead"
    if speed < 1 / 1.1:
        return "Loom behind"
    return "on par"

out = []
w = out.append
w("# Collective benchmarks: Loom vs Open MPI")
w("")
w("Generated by `tests/perf/run.sh` — do not edit by hand; regenerate with")
w("")
w("    make bench")
w("")
w(f"- date: {E['B_DATE']} (the whole run took {E['ELAPSED']} s; load average "
  f"before it: {E['LOAD']})")
w(f"- kernel (`uname -r`): {E['B_KERNEL']}; CPU: {E['B_CPU']}; `nproc`: {E['B_NPROC']}")
w(f"- UCX (`dpkg-query -W libucx0`): {E['B_UCX']}")
w(f"- Open MPI (`dpkg-query -W openmpi-bin`): {E['B_OMPI']}")
w(f"- compiler: {E['B_CC']}, `-O2 -g` for both sides")
order = ", ".join({"loom": "Loom", "mpi": "MPI", "mpiucx": "MPI-UCX",
                   "mpitcp": "MPI-TCP"}[s] for s in systems)
w(f"- {reps} runs per (system, ranks), interleaved {order}, Loom, …; every "
  "number below is the median of those runs")
w("")
w("## Results (loopback, one host)")
w("")
w("Ratio = Loom / MPI.  For latency (µs, lower is better) a ratio above 1 "
  "means Loom is slower; for bandwidth (MiB/s, higher is better) a ratio below "
  "1 means Loom is slower.  The reference is Open MPI's default set-up "
  "(ob1/vader); MPI-UCX is Open MPI over the same UCX library as Loom.")
if tcp:
    w("MPI-TCP is Open MPI restricted to UCX's TCP transport, the one Loom "
      "ends up on here (see Interpretation).")
w("")
head = "| metric | ranks | Loom median | MPI median (ob1/vader) | Loom/MPI ratio |"
head += " MPI-UCX median | Loom/MPI-UCX |"
if tcp:
    head += " MPI-TCP median | Loom/MPI-TCP |"
w(head)
w("|---|---:" + "|---:" * (head.count("|") - 3) + "|")
for m, name, unit, kind in metrics:
    for n in ranks:
        better = "lower is better" if kind == "lat" else "higher is better"
        row = (f"| {name}, {unit} ({better}) | {n} | {fmt(med[('loom', n, m)])} | "
               f"{fmt(med[('mpi', n, m)])} | {ratio(m, n):.2f} | "
               f"{fmt(med[('mpiucx', n, m)])} | {ratio(m, n, 'mpiucx'):.2f} |")
        if tcp:
            row += f" {fmt(med[('mpitcp', n, m)])} | {ratio(m, n, 'mpitcp'):.2f} |"
        w(row)
w("")
w("Spread (min–max over the runs):")
w("")
w("| metric | ranks | Loom | " + " | ".join(label[s] for s in systems[1:]) + " |")
w("|---|---:" + "|---:" * len(systems) + "|")
for m, name, unit, kind in metrics:
    for n in ranks:
        w(f"| {m} | {n} | " + " | ".join(rng((s, n, m)) for s in systems) + " |")
w("")
w("## Method")
w("")
w("`tests/perf/coll_bench.c` (Loom) and `tests/perf/coll_bench_mpi.c` (Open MPI) "
  "share one benchmark body: the MPI file defines MPI versions of the few calls "
  "and `#include`s `coll_bench.c`, so loops, iteration counts, warm-up and timing "
  "are identical.  Per metric: 10 % of the iterations as warm-up, a barrier, the "
  "timed loop (`loom_wtime()` / `MPI_Wtime()`), and the slowest rank's time "
  "(a MAX allreduce) divided by the iteration count.  The allreduce input changes "
  "every call and the sums are checked; the bcast buffer is checked at the end.  "
  f"Iterations (barrier, allreduce, bcast): {E['B_ITERS_2']} at 2 ranks, "
  f"{E['B_ITERS_4']} at 4 ranks"
  + (f" (the programs' counts times {E['SCALE']}, as Loom is on TCP here)"
     if E["SCALE"] != "1" else "")
  + ".  Bandwidth = 1 MiB / time per bcast.")
w("")
w("Commands (N = 2, 4; the trailing number scales the iteration counts, the "
  "same for every system):")
w("")
if E["BENCH_LAUNCH"].endswith("loomrun"):
    w(f"- Loom: `{E['BENCH_LAUNCH']} -n N build/tests/perf/coll_bench {E['SCALE']}`")
else:
    w(f"- Loom: launched by {E['BENCH_LAUNCH']}")
cmd = {"mpi": E["MPI_OB1"], "mpiucx": E["MPI_UCX"], "mpitcp": E["MPI_TCP"]}
for s in systems[1:]:
    w(f"- {label[s]}: `{E['MPIRUN']} -n N {cmd[s]} build/tests/perf/coll_bench_mpi "
      f"{E['SCALE']}`")
w(f"- MPI build: `{E['MPI_CC']} -o build/tests/perf/coll_bench_mpi "
  "tests/perf/coll_bench_mpi.c`")
w("")
w("Open MPI set-up.  `ob1` with the `vader` shared-memory BTL is what Open MPI "
  "4.1 picks by default on a host without InfiniBand (its `pml ucx` only "
  "selects itself for `mlx*` devices, and refuses to start otherwise), and it "
  "is its fastest option on one host: that is the reference column.  "
  "`pml ucx`, forced with `pml_ucx_tls any` and `pml_ucx_devices any`, runs "
  "on the same UCX library as Loom and is shown for comparison.  Nothing is "
  "bound to cores (`--bind-to none`), because Loom does not bind.")
w("")
w(f"Oversubscription.  This host has {E['B_NPROC']} cores, so the 4-rank runs "
  "put two polling processes on each core.  Both libraries suffer from this "
  "alike (same launch, no binding); the 4-rank numbers say more about how a "
  "library behaves when oversubscribed — how soon a waiting rank gives its "
  "core to the rank it waits for — than about its algorithms, and they are "
  "much noisier (see the spread table).")
w("")
w("## Interpretation")
w("")

def describe(n, other="mpi"):
    parts = []
    for m, _, unit, kind in metrics:
        parts.append(f"{short[m]} {fmt(med[('loom', n, m)])} vs "
                     f"{fmt(med[(other, n, m)])} {unit} ({verdict(m, kind, n, other)}, "
                     f"ratio {ratio(m, n, other):.2f})")
    return f"at {n} ranks " + ", ".join(parts)

def listed(which, other="mpi"):
    return [f"{short[m]} at {n} ranks" for m, _, _, kind in metrics for n in ranks
            if verdict(m, kind, n, other) == which]

text = ("Loom against Open MPI's default (differences within 10 % count as on "
        "par): " + "; ".join(describe(n) for n in ranks) + ".  ")
behind, ahead = listed("Loom behind"), listed("Loom ahead")
if not behind:
    text += "Loom is nowhere behind Open MPI here by more than 10 %"
    text += ("; it is ahead on " + ", ".join(ahead) + ".  ") if ahead else ".  "
else:
    text += "Loom is behind on " + ", ".join(behind)
    text += ("; ahead on " + ", ".join(ahead) + ".  ") if ahead else ".  "
if E["probe"] == "yes":
    text += ("Loom runs over UCX's shared-memory transports on one host (a run "
             "with TCP removed from UCX, `UCX_TLS=^tcp`, succeeded), as Open "
             "MPI does, so these are differences in the runtimes and their "
             "collective algorithms, not in the transport.")
else:
    text += ("Loom does not run with TCP removed from UCX (`UCX_TLS=^tcp`, "
             "checked by this script), so on one host its traffic goes through "
             "TCP over loopback while Open MPI's goes through shared memory")
    if E["probe"] == "peer":
        text += ("; UCX says why: its shared-memory transports have \"no peer "
                 "failure handler\", and Loom asks for peer-failure handling "
                 "(`UCP_ERR_HANDLING_MODE_PEER`) on those endpoints")
    text += (".  Held to the same transport (MPI-TCP): "
             + "; ".join(describe(n, "mpitcp") for n in ranks) + ".")
w(text)
w("")
w("Small-message latencies at 2 ranks are a fraction of a microsecond for "
  "both, so a few tens of nanoseconds of per-call overhead show up as tens of "
  "percent; the 1 MiB bcast is mostly bound by memory copies.  The 4-rank "
  "figures are dominated by oversubscription.  Any run can be hit by other "
  "work on a 2-core machine: trust the medians, and check the spread table "
  "before reading much into a difference of a few tens of percent.")
with open(sys.argv[1], "w") as f:
    f.write("\n".join(out) + "\n")
EOF
cp "$RAW/doc.md" "$DOC"
echo "run.sh: wrote $DOC ($ELAPSED s)"

# The DSM benchmarks (page fetch, rows, stream) into docs/bench-dsm.md.
tests/perf/dsm.sh "$BUILD"

# Stale synchronous communication under a straggler into docs/bench-ssp.md.
tests/perf/ssp.sh "$BUILD"

# The parallel loop against OpenMP and the serial twin into docs/bench-loop.md.
tests/perf/loop.sh "$BUILD"

# The apps against their serial twins into docs/bench-apps.md.
tests/perf/apps.sh "$BUILD"

# Lasso against its serial twin and scikit-learn (tests/perf/lasso.sh).
tests/perf/lasso.sh "$BUILD" >docs/bench-lasso.md.tmp && mv docs/bench-lasso.md.tmp docs/bench-lasso.md
echo "run.sh: wrote docs/bench-lasso.md"

# loom-w2v against gensim, and 2 ranks' vectors against 1's (WordNet
# similarity; skips itself without gensim, NLTK or WordNet).
tests/perf/w2v_gensim.sh "$BUILD"

# loom-lr's weights in a distributed map against the dense vector, then
# what the bounded cache costs (its data is lr_map.sh's): the tables that
# docs/bench-lr-map.md and docs/dsm.md ("Bounded cache") quote.
tests/perf/lr_map.sh "$BUILD" >"$BUILD/perf/lr_map.md"
tests/perf/cache.sh "$BUILD" >"$BUILD/perf/cache.md"
echo "run.sh: wrote $BUILD/perf/lr_map.md and $BUILD/perf/cache.md"

# Start-up: launch to first output line, quiet and beside a CPU hog.
tests/perf/startup.sh "$BUILD"

# The apps on a simulated cluster of shaped links (root only; skips itself otherwise).
tests/perf/cluster.sh "$BUILD"

# The scaling model of docs/scaling.md, fitted on 1-4 namespaces (root only; skips itself otherwise).
tests/perf/scaling.sh "$BUILD"

# ... and checked on one host of 16 or more cores (docs/scaling-16.md): 1-16 ranks and threads, at the
# problem size of the fit and ten times it.  A 2-core machine skips it (16 ranks there measure the scheduler).
if [ "$(nproc)" -ge 16 ]; then
    RUNS=5 tests/perf/scaling_local.sh "$BUILD" "$BUILD/perf/scaling16-1"
    SCALE=10 RUNS=3 LAYOUTS="1x1 2x1 4x1 8x1 16x1 4x4 1x16" tests/perf/scaling_local.sh "$BUILD" "$BUILD/perf/scaling16-10"
    RUNS=3 LAYOUTS="1x1 8x1 12x1 16x1 1x16" tests/perf/scaling_local.sh "$BUILD" "$BUILD/perf/scaling16-12"
    python3 tests/perf/scaling_check.py "$BUILD"/perf/scaling16-{1,10,12} >docs/scaling-16.md
fi

# Placement by accessor against a build of a tree from before it (docs/bench-place.md), when
# BENCH_BASE names that build folder (e.g. a worktree at commit 327c7e7, built).
if [ -n "${BENCH_BASE:-}" ]; then
    tests/perf/place.sh "$BUILD" "$BENCH_BASE" >"$BUILD/perf/place.md"
fi

# Orion's ordered schedule against the unordered rotation (docs/loop.md quotes docs/bench-ordered.md,
# from a 16-core run; here into the build folder).
tests/perf/ordered.sh "$BUILD" "$BUILD/perf/ordered.md"

# Two ranks x 1 thread against 1 rank x 2 threads, app by app (issues 13 and 15), into docs/bench-ranks.md.
tests/perf/ranks.sh "$BUILD"

# What adding ranks costs the data-parallel apps: bytes, sync points and quality at 1-8 ranks (issue 42).
tests/perf/structure.sh "$BUILD" >docs/bench-structure.md.tmp && mv docs/bench-structure.md.tmp docs/bench-structure.md
echo "run.sh: wrote docs/bench-structure.md"

# One rank's two threads against one thread and against two jobs side by side, loom-lr and
# loom-w2v (issue 42, goal 3), into the build folder (docs/loom-lr.md and docs/loom-w2v.md quote it).
tests/perf/threads2.sh "$BUILD" >"$BUILD/perf/threads2.md"
echo "run.sh: wrote $BUILD/perf/threads2.md"
