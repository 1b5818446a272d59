#!/bin/sh
# memory.t — sizes read from input are checked against the memory the job
# may use before anything is allocated (data/mem.c: MemAvailable, the
# cgroup limit, LOOM_MEM_LIMIT), with one message naming the file, the
# size and the need; loom-mf numbers its ids densely, so a 3-line file
# with ids of 2^31 - 1 and 2^63 - 1 costs three rows.  Each case runs
# under a 4 GB address-space limit (and a 1 GB arena), so that a check
# that lets a size through fails here rather than calling the OOM killer;
# under ASan (whose shadow memory needs the address space) its allocator
# refuses such sizes instead.
. "$(dirname "$0")/../lib.sh"
plan 7
export LOOM_DSM_ARENA=1G OMP_NUM_THREADS=2
# $AS CMD...: CMD under the limit (none under a sanitizer)
AS=$T/as
if [ -n "${LOOMTEST_SANITIZE:-}" ]; then printf '#!/bin/sh\nexec "$@"\n' >"$AS"
else printf '#!/bin/sh\nulimit -v 4000000 && exec "$@"\n' >"$AS"; fi
chmod +x "$AS"
one() { [ "$(grep -cE "$2" "$1")" -eq 1 ] || { diag "expected one /$2/ in:"; sed "s/^/#   /" "$1"; return 1; } >&2; }

printf '1 1 5\n2147483647 2147483647 3\n9223372036854775807 9223372036854775807 4\n' >"$T/big.train"
printf '2147483647 1 4\n' >"$T/big.test"
run_job "$T/o1" "$AS" "$B/bin/loom-mf" --train "$T/big.train" --test "$T/big.test" --epochs 2 \
    --model "$T/m"
[ $rc -eq 0 ] && has "$T/o1" "3 users x 3 items" && [ "$(wc -l <"$T/m/W.txt")" -eq 3 ] &&
    [ "$(tr '\n' ' ' <"$T/m/user_ids.txt")" = "1 2147483647 9223372036854775807 " ] &&
    [ "$(tr '\n' ' ' <"$T/m/item_ids.txt")" = "1 2147483647 9223372036854775807 " ]
ok $? "loom-mf: ids 1, 2^31 - 1 and 2^63 - 1 make 3 rows, the saved model keeps the ids (rc $rc)"

LOOM_MEM_LIMIT=100 run_job "$T/o2" "$AS" "$B/bin/loom-mf" --train "$T/big.train" --test "$T/big.test"
[ $rc -ne 0 ] && one "$T/o2" "loom-mf: $T/big.train: 3 users x 3 items at --rank 20 needs [0-9.]+ MB of memory, but this job may use 0.0001 MB"
ok $? "loom-mf: the model's need is checked (LOOM_MEM_LIMIT=100; rc $rc)"

export LOOM_MEM_LIMIT=2G
printf '1 2147483647:1\n0 1:1\n' >"$T/x.svm"
run_job "$T/o3" "$AS" "$B/bin/loom-lasso" --libsvm "$T/x.svm" --lambda 1
[ $rc -ne 0 ] && one "$T/o3" "x.svm: feature index 2147483647 needs [0-9.]+ GB of memory, but this job may use 2.15 GB"
ok $? "loom-lasso: a LIBSVM index of 2^31 - 1 is refused before allocating (rc $rc)"

printf '2147483646\n10\n1\n1 1 1\n' >"$T/d.uci"
run_job "$T/o4" "$AS" "$B/bin/loom-lda" --train "$T/d.uci" --topics 5
[ $rc -ne 0 ] && one "$T/o4" "d.uci: D = 2147483646 documents needs [0-9.]+ GB of memory"
ok $? "loom-lda: a UCI header's D is checked (rc $rc)"

printf '2\n10\n2\n1 1 2147483647\n2 2 1\n' >"$T/c.uci"
run_job "$T/o5" "$AS" "$B/bin/loom-lda" --train "$T/c.uci" --topics 5
[ $rc -ne 0 ] && one "$T/o5" "c.uci: line 4: 2147483647 tokens needs [0-9.]+ GB of memory"
ok $? "loom-lda: a count of 2^31 - 1 is checked (rc $rc)"

run_job "$T/o6" "$AS" "$B/bin/loom-gen" ratings --users 2147483647 --items 2147483647 --samples 10 \
    --out "$T/g"
[ $rc -ne 0 ] && one "$T/o6" "loom-gen ratings: --users 2147483647 --items 2147483647 --rank 10 needs [0-9.]+ GB of memory" &&
    [ ! -e "$T/g.train" ]
ok $? "loom-gen: --users and --items of 2^31 - 1 are checked (rc $rc)"

LOOM_MEM_LIMIT=lots run_job "$T/o7" "$B/bin/loom-mf" --train "$T/big.train" --test "$T/big.test"
[ $rc -ne 0 ] && has "$T/o7" "LOOM_MEM_LIMIT='lots' is not valid" && [ "$(wc -l <"$T/o7")" -eq 1 ]
ok $? "a bad LOOM_MEM_LIMIT is refused with one line (rc $rc)"
finish
