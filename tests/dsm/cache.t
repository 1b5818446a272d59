#!/bin/sh
# cache.t — the bounded cache (LOOM_CACHE_BYTES, docs/dsm.md): with a cap
# of a tenth of the model, every read of tests/bin/dsm_cache is still
# exact (rows: sums of every rank's adds over 4 epochs; pages: every
# rank's writes), the copies held after each sync point fit the cap, and
# so does the memory the system reports resident for the working copies
# (mincore); without a cap the same runs hold the whole model.  Rows of
# 256 B under bsp on 3 ranks, rows of 40 B (sharing OS pages) under ssp
# on 2 ranks x 2 threads, 64 KiB page units under bsp on 3 ranks; a bad
# value stops the job with one message.  A .repeated data-parallel loop
# under a cap (tests/bin/for_modes repeat) fetches the rows its rounds
# dropped in batches on its later calls (sched/prefetch.c): exact sums,
# and under 0.7x the single misses of the same loop not marked repeated.
# A bsp data-parallel loop over a 32 MiB model on 3 ranks (dsm_cache
# loop): exact either way; unbounded the process grows by at least twice
# the model (copies, the loop's staged copies and originals, per-row add
# buffers), with a 1 MiB cap by at most 0.4x that (its home share and
# one round's rows); in the sanitizer builds, whose allocators keep freed
# memory, only the sums are checked.
. "$(dirname "$0")/../lib.sh"
plan 9
capped() { # NAME CAP RANKS THREADS PROGRAM ARGS...: a job under LOOM_CACHE_BYTES=CAP; 0 if it ended well
    name=$1 cap=$2 n=$3 t=$4; shift 4
    OMP_NUM_THREADS=$t LOOM_CACHE_BYTES=$cap run_job "$T/$name" "$LOOMRUN" -n $n "$@"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$T/$name"
    return $rc
}
cache() { # NAME CAP RANKS THREADS ARGS...: run dsm_cache, leave "resident evicted cached" in $T/NAME.v
    name=$1 cap=$2 n=$3 t=$4; shift 4
    capped "$name" "$cap" "$n" "$t" "$B/tests/bin/dsm_cache" "$@"
    sed -n 's/.*dsm_cache: ok P=[0-9]* resident_max=\([0-9]*\) evicted=\([0-9]*\) cached=\([0-9]*\).*/\1 \2 \3/p' \
        "$T/$name" >"$T/$name.v"
    [ $rc -eq 0 ] && [ -s "$T/$name.v" ] || { sed 's/^/#   /' "$T/$name"; return 1; }
}
# within CAP (+ SLACK bytes of OS pages shared with kept rows), evictions
# made, and the unbounded run NAME0 held at least 5 times the cap
bounded() { # NAME NAME0 CAP SLACK
    read -r res ev held <"$T/$1.v"; read -r res0 _ _ <"$T/$2.v"
    echo "#   resident $res B (unbounded $res0 B), evicted $ev, cached $held B, cap $3 B"
    [ "$res" -le $(($3 + $4)) ] && [ "$held" -le "$3" ] && [ "$ev" -gt 0 ] && [ "$res0" -ge $((5 * $3)) ]
}
cache r0 0 3 1 rows 4096 256 4 && cache r1 104857 3 1 rows 4096 256 4
ok $? "rows of 256 B, bsp, 3 ranks: exact with a cap of 1/10 of the 1 MiB model, and without"
bounded r1 r0 104857 0
ok $? "rows: the copies and the resident memory fit the cap; unbounded, the whole model"
cache s0 0 2 2 rows 3000 40 3 && cache s1 12000 2 2 rows 3000 40 3
[ $? -eq 0 ] && LOOM_COHERENCE=ssp LOOM_STALENESS=1 cache s2 12000 2 2 rows 3000 40 3
ok $? "rows of 40 B (sharing OS pages), bsp and ssp 1, 2 ranks x 2 threads: exact with a cap of 1/10"
bounded s1 s0 12000 8192 && bounded s2 s0 12000 8192
ok $? "rows of 40 B: the copies fit the cap, the resident memory within two shared OS pages of it"
cache p0 0 3 1 pages 64 65536 4 && cache p1 419430 3 1 pages 64 65536 4
ok $? "64 KiB page units, bsp, 3 ranks: exact with a cap of 1/10 of the 4 MiB model, and without"
read -r res _ held <"$T/p1.v"; read -r res0 _ _ <"$T/p0.v"
echo "#   resident $res B (unbounded $res0 B), cached $held B"
[ "$res" -le 419430 ] && [ "$res0" -ge $((5 * 419430)) ]
ok $? "pages: the resident memory fits the cap; what an acquire dropped is given back at the next sync point (resident $res B against $res0 B unbounded)"
capped rep0 16K 2 2 "$B/tests/bin/for_modes" repeat 0 && capped rep1 16K 2 2 "$B/tests/bin/for_modes" repeat 1
r=$?
pre=$(sed -n 's/.*repeat 1: exact sums after 3 calls; prefetched \([0-9]*\), single misses \([0-9]*\).*/\1 \2/p' "$T/rep1")
one0=$(sed -n 's/.*repeat 0: exact sums after 3 calls; prefetched 0, single misses \([0-9]*\).*/\1/p' "$T/rep0")
echo "#   repeated: prefetched and single misses $pre; not repeated: single misses $one0"
[ $r -eq 0 ] && [ -n "$pre" ] && [ -n "$one0" ] &&
    awk -v p="${pre% *}" -v s="${pre#* }" -v s0="$one0" 'BEGIN { exit !(p > 0 && s < 0.7 * s0) }'
ok $? "a .repeated loop under a 16 KiB cap prefetches its rounds' rows: exact; prefetched and single misses $pre, against $one0 single misses"
L="$B/tests/bin/dsm_cache loop 8192 4096 2"
capped loop0 0 3 1 $L && capped loop1M 1M 3 1 $L
r=$?
g0=$(sed -n 's/.*dsm_cache: ok loop P=3 rss_growth=\([0-9]*\).*/\1/p' "$T/loop0")
g1=$(sed -n 's/.*dsm_cache: ok loop P=3 rss_growth=\([0-9]*\).*/\1/p' "$T/loop1M")
echo "#   resident growth: $g0 B unbounded, $g1 B with a 1 MiB cap (model 33554432 B)"
[ $r -eq 0 ] && [ -n "$g0" ] && [ -n "$g1" ] &&
    { [ -n "${LOOMTEST_SANITIZE:-}" ] ||
      { [ "$g0" -ge $((2 * 33554432)) ] && awk -v a="$g1" -v b="$g0" 'BEGIN { exit !(a <= 0.4 * b) }'; }; }
ok $? "a data-parallel loop under a 1 MiB cap: exact, the process grew $g1 B against $g0 B unbounded"
LOOM_CACHE_BYTES=12Q run_job "$T/bad" "$LOOMRUN" -n 2 "$B/tests/bin/dsm_cache" rows 10 8 1
[ $rc -ne 0 ] && has "$T/bad" "LOOM_CACHE_BYTES='12Q' is not valid: expected a byte count >= 0, optionally with K, M or G" &&
    [ "$(grep -c "LOOM_CACHE_BYTES" "$T/bad")" -eq 1 ]
ok $? "LOOM_CACHE_BYTES=12Q: one message, exit $rc"
finish
