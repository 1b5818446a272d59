#!/bin/sh
# records_rss.t — a serializable loom_for_records with .in_place plans
# without copying its records: on 4 000 000 records of 12 bytes (MF's
# shape), the plan raises the process's peak resident size by at most 6
# bytes a record (the rows read where they are, the records moved within
# their own array; a scratch copy of one cell per thread), where the
# copying layout takes 20 (8 for the rows of A and B, 12 for the copy).
# The records afterwards are the same records (a checksum).  Not under a
# sanitizer, whose shadow memory is resident too.
. "$(dirname "$0")/../lib.sh"
[ -n "${LOOMTEST_SANITIZE:-}" ] && skip_all "resident memory means nothing under a sanitizer"
plan 3
for t in 1 2; do
    OMP_NUM_THREADS=$t run_job "$T/i$t" "$LOOMRUN" -n 1 "$B/tests/bin/records_rss" inplace
    b=$(sed -n 's/.* \([0-9.]*\) bytes a record; checksum unchanged$/\1/p' "$T/i$t")
    [ $rc -eq 0 ] && [ -n "$b" ] && awk -v b="$b" 'BEGIN { exit !(b <= 6) }'
    ok $? "in place, 1 rank x $t thread(s): ${b:-?} bytes a record <= 6, the same records"
    [ -n "$b" ] || sed 's/^/# /' "$T/i$t"
done
# the measure sees a copy: the copying layout on the same records
OMP_NUM_THREADS=2 run_job "$T/c" "$LOOMRUN" -n 1 "$B/tests/bin/records_rss" copy
b=$(sed -n 's/.* \([0-9.]*\) bytes a record; checksum unchanged$/\1/p' "$T/c")
[ $rc -eq 0 ] && [ -n "$b" ] && awk -v b="$b" 'BEGIN { exit !(b >= 16) }'
ok $? "copied, 1 rank x 2 threads: ${b:-?} bytes a record >= 16 (what in place saves)"
finish
