#!/bin/sh
# output.t — what loomrun does with the ranks' output and with a program
# that is not a Loom program (apps/loomrun/output.c, loomrun.c): a job of
# several ranks none of which called loom_init gets one note naming
# loom_init at its end (exit status unchanged), a Loom program none;
# --output-filename DIR puts each rank's stdout and stderr in
# DIR/rank.N/{stdout,stderr} (untagged) and nothing on loomrun's own;
# --output-rank R shows only rank R's stdout and every rank's stderr; a bad
# value of either ends with one message and status 2 or 1, before any rank
# runs.  Mutation caught: never_joined() not called (no note).
. "$(dirname "$0")/../lib.sh"
plan 6
run_job "$T/plain" "$LOOMRUN" -n 2 sh -c 'echo work $LOOM_RANK'
[ $rc -eq 0 ] && [ "$(grep -c "none of the 2 ranks called loom_init: 'sh' ran 2 times" "$T/plain")" -eq 1 ] &&
    has "$T/plain" "\[1\] work 1"
ok $? "a program that never calls loom_init: one note naming loom_init, exit 0"
OMP_NUM_THREADS=1 run_job "$T/loom" "$LOOMRUN" -n 2 "$B/tests/bin/omp_forms"
[ $rc -eq 0 ] && has "$T/loom" "omp_forms: ok" && ! grep -q "loom_init" "$T/loom"
ok $? "a Loom program: no note"
OMP_NUM_THREADS=1 run_job "$T/files" "$LOOMRUN" -n 3 --output-filename "$T/out" sh -c \
    'echo "out of $LOOM_RANK"; echo "err of $LOOM_RANK" >&2'
good=0
for r in 0 1 2; do
    [ "$(cat "$T/out/rank.$r/stdout")" = "out of $r" ] && [ "$(cat "$T/out/rank.$r/stderr")" = "err of $r" ] ||
        good=1
done
[ $rc -eq 0 ] && [ $good -eq 0 ] && ! grep -qE "(out|err) of" "$T/files"
ok $? "--output-filename: each rank's stdout and stderr in DIR/rank.N, untagged, none on loomrun's"
run_job "$T/only" "$LOOMRUN" -n 3 --output-rank 1 sh -c 'echo "out of $LOOM_RANK"; echo "err of $LOOM_RANK" >&2'
[ $rc -eq 0 ] && [ "$(grep -c "out of" "$T/only")" -eq 1 ] && has "$T/only" "\[1\] out of 1" &&
    [ "$(grep -c "err of" "$T/only")" -eq 3 ]
ok $? "--output-rank 1: rank 1's stdout only, every rank's stderr"
run_job "$T/bad1" "$LOOMRUN" -n 2 --output-rank 2 true
[ $rc -eq 2 ] && [ "$(wc -l < "$T/bad1")" -eq 1 ] && has "$T/bad1" "output-rank 2: the job has ranks 0 to 1"
ok $? "--output-rank beyond the job: one message, status 2"
: > "$T/afile"
run_job "$T/bad2" "$LOOMRUN" -n 2 --output-filename "$T/afile/sub" true
[ $rc -ne 0 ] && has "$T/bad2" "output-filename: cannot write .*afile/sub" && ! grep -q "ran 2 times" "$T/bad2"
ok $? "--output-filename where no directory can be made: a message naming it, non-zero"
finish
