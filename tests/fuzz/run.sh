#!/bin/sh
# run.sh — run the libFuzzer harnesses built into BUILD (make fuzz-build):
# for each, replay its seeds and every input kept in tests/fuzz/regress/,
# then fuzz it for SECONDS (0: replay only) from its seeds and the corpus
# earlier runs grew in BUILD/corpus/NAME/.
#   tests/fuzz/run.sh BUILD SECONDS [NAME...]      (default: every harness built)
# Prints one line per harness,
#   NAME: N executions in S s (E/s), corpus C inputs, R regression inputs replayed, K crashes
# and writes them to BUILD/fuzz-results.txt.  A crash's input is left in
# BUILD/crashes/NAME/ (emptied at the start of each run: keep it in
# tests/fuzz/regress/NAME/ once fixed) and
# the harness's output in BUILD/logs/NAME.log.  Exits 1 if any harness
# crashed, 0 otherwise.
set -u
build=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
    set --
    for f in "$build"/fuzz_*; do [ -x "$f" ] && set -- "$@" "${f##*/fuzz_}"; done
fi
mkdir -p "$build/logs"
: >"$build/fuzz-results.txt"
failed=0
for name in "$@"; do
    bin=$build/fuzz_$name
    seeds=$here/corpus/$name regress=$here/regress/$name
    work=$build/corpus/$name crashes=$build/crashes/$name
    log=$build/logs/$name.log
    rm -rf "$crashes"
    mkdir -p "$work" "$crashes"
    : >"$log"
    nreg=0 crashed=0
    # 1. replay: every seed and regression input once (a crash here is a regression)
    inputs=$(find "$seeds" "$regress" -type f 2>/dev/null | sort)
    if [ -n "$inputs" ]; then
        nreg=$(find "$regress" -type f 2>/dev/null | wc -l)
        # shellcheck disable=SC2086
        "$bin" -timeout=10 -rss_limit_mb=2048 $inputs >>"$log" 2>&1 || crashed=1
    fi
    # 2. fuzz
    execs=0
    if [ "$crashed" -eq 0 ] && [ "$secs" -gt 0 ]; then
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$crashes/" "$work" "$seeds" >>"$log" 2>&1 || crashed=1
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    fi
    ncorp=$(find "$work" -type f | wc -l)
    ncrash=$(find "$crashes" -type f | wc -l)
    [ "$crashed" -eq 1 ] && [ "$ncrash" -eq 0 ] && ncrash=1 # a seed or regression input
    rate=$([ "$secs" -gt 0 ] && echo "$(( ${execs:-0} / secs ))/s" || echo "replay only")
    line="$name: ${execs:-0} executions in $secs s ($rate), corpus $ncorp inputs, $nreg regression inputs replayed, $ncrash crashes"
    echo "$line" | tee -a "$build/fuzz-results.txt"
    if [ "$crashed" -eq 1 ]; then
        failed=1
        grep -E "ERROR|runtime error|invariant failed|SUMMARY|Test unit written|Running:" "$log" |
            tail -8 | sed 's/^/    /'
    fi
done
exit $failed
