#!/bin/sh
# gen.t — the loom-gen command: usage and exit status 2 for missing or bad
# arguments, a ratings and an LDA run that write their files, and the same
# bytes from the same seed (the library itself: tests/unit/test_gen).
. "$(dirname "$0")/../lib.sh"
plan 8
G=$B/bin/loom-gen
run_job "$T/none" "$G"
[ $rc -eq 2 ] && has "$T/none" "missing command .*; try --help"
ok $? "no command: named, exit 2"
run_job "$T/help" "$G" --help
[ $rc -eq 0 ] && has "$T/help" "loom-gen lda --docs D"
ok $? "--help: usage, exit 0"
run_job "$T/unk" "$G" ratings --users 10 --items 10 --rank 2 --samples 20 --out "$T/x" --bogus 1
[ $rc -eq 2 ] && has "$T/unk" "unknown or ambiguous flag '--bogus'"
ok $? "an unknown option is named, exit 2"
run_job "$T/val" "$G" ratings --users 10 --items 10 --rank 2 --samples ten --out "$T/x"
[ $rc -eq 2 ] && has "$T/val" "--samples: 'ten' is not an integer"
ok $? "a bad value is named, exit 2"
run_job "$T/miss" "$G" lda --docs 10 --vocab 10 --topics 2 --out "$T/x"
[ $rc -eq 2 ] && has "$T/miss" "missing --doc-length"
ok $? "a missing option is named, exit 2"
run_job "$T/r1" "$G" ratings --users 500 --items 300 --rank 4 --samples 1e4 --seed 5 --out "$T/a"
[ $rc -eq 0 ] && has "$T/r1" "a.train [0-9]+ ratings, .*a.test [0-9]+ ratings" &&
    [ "$(cat "$T/a.train" "$T/a.test" | wc -l)" -eq 10000 ]
ok $? "ratings: 10^4 ratings in PREFIX.train and PREFIX.test"
run_job "$T/r2" "$G" ratings --users 500 --items 300 --rank 4 --samples 1e4 --seed 5 --out "$T/b"
cmp -s "$T/a.train" "$T/b.train" && cmp -s "$T/a.test" "$T/b.test"
ok $? "ratings: the same seed writes the same files"
run_job "$T/l" "$G" lda --docs 50 --vocab 100 --topics 3 --doc-length 20 --out "$T/c"
[ $rc -eq 0 ] && [ "$(head -2 "$T/c.docword.txt" | tr '\n' ' ')" = "50 100 " ] &&
    [ "$(wc -l <"$T/c.vocab.txt")" -eq 100 ] && [ "$(wc -l <"$T/c.topics.txt")" -eq 3 ]
ok $? "lda: docword (D 50, W 100), vocab (100 words), topics (3 lines)"
finish
