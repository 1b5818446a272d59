#!/bin/sh
# control_bytes.t — a message that quotes input never passes its control
# bytes to the terminal (an OSC sequence could retitle it, or worse): the
# UCI header (loom-lda), the MatrixMarket banner (loom-mf, loom-lasso) and
# hostfile words (loomrun) are quoted with each such byte shown as '?',
# and so are flag values and commands (every app's flag messages).
# The hostfile's other refusals: a NUL byte is named as such (it was "line
# too long"), and slots that add up past loomrun's largest -n are refused
# (40 000 lines of slots=65536 were reported as -1673527296 slots).
. "$(dirname "$0")/../lib.sh"
plan 10
# clean FILE: no ESC, BEL or other control byte but newline and tab
clean() { ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$1"; }

printf '\033]0;PWNED\007\n5\n10\n' >"$T/uci"
run_job "$T/o1" "$B/bin/loom-lda" --train "$T/uci" --topics 5
[ $rc -ne 0 ] && clean "$T/o1" && has "$T/o1" "uci:1: bad header line '\?\]0;PWNED\?'"
ok $? "loom-lda: the UCI header's control bytes show as '?' (rc $rc)"

printf '%%%%MatrixMarket matrix \033]0;PWNED\007 real general\n2 2 1\n1 1 3\n' >"$T/m.mtx"
"$B/bin/loom-gen" ratings --users 10 --items 10 --samples 60 --out "$T/r" >/dev/null
run_job "$T/o2" "$B/bin/loom-mf" --train "$T/m.mtx" --test "$T/r.test"
[ $rc -ne 0 ] && clean "$T/o2" && has "$T/o2" "m.mtx:1: unsupported MatrixMarket header '%%MatrixMarket matrix \?\]0;PWNED\? real general'"
ok $? "loom-mf: the MatrixMarket banner's control bytes show as '?' (rc $rc)"

printf '%%%%MatrixMarket matrix array real general\n2 1\n1\n2\n' >"$T/y.mtx"
run_job "$T/o3" "$B/bin/loom-lasso" --X "$T/m.mtx" --y "$T/y.mtx" --lambda 1
[ $rc -ne 0 ] && clean "$T/o3" && has "$T/o3" "m.mtx:1: unsupported MatrixMarket header '%%MatrixMarket matrix \?\]0;PWNED\? real general'"
ok $? "loom-lasso: the MatrixMarket banner's control bytes show as '?' (rc $rc)"

run_job "$T/f1" "$B/bin/loom-mf" --train x --test y --epochs "$(printf '\033]0;PWNED\007')"
[ $rc -eq 2 ] && clean "$T/f1" && has "$T/f1" "loom-mf: --epochs: '\?\]0;PWNED\?' is not an integer"
ok $? "a flag's value: control bytes show as '?' (rc $rc)"

run_job "$T/f2" "$B/bin/loom-gen" "$(printf 'x\033[2J')"
[ $rc -eq 2 ] && clean "$T/f2" && has "$T/f2" "loom-gen: unknown command 'x\?\[2J'"
ok $? "loom-gen's command: control bytes show as '?' (rc $rc)"

run_job "$T/f3" "$LOOMRUN" "$(printf -- '--x\033[2J')" true
[ $rc -eq 2 ] && clean "$T/f3" && has "$T/f3" "loomrun: unknown option '--x\?\[2J'"
ok $? "loomrun's own messages: control bytes show as '?' (rc $rc)"

printf 'localhost\nnode\033]0;PWNED\007 slots=1\n' >"$T/h1"
run_job "$T/o4" "$LOOMRUN" -H "$T/h1" true
[ $rc -ne 0 ] && clean "$T/o4" && has "$T/o4" "h1:2: 'node\?\]0;PWNED\?' is not a host name"
ok $? "loomrun: a host name's control bytes show as '?' (rc $rc)"

printf 'localhost slots=\033[2J\n' >"$T/h2"
run_job "$T/o5" "$LOOMRUN" -H "$T/h2" true
[ $rc -ne 0 ] && clean "$T/o5" && has "$T/o5" "h2:1: slots='\?\[2J' is not a whole number"
ok $? "loomrun: a slots value's control bytes show as '?' (rc $rc)"

printf 'localhost\nloc\000alhost slots=2\n' >"$T/h3"
run_job "$T/o6" "$LOOMRUN" -H "$T/h3" true
[ $rc -ne 0 ] && has "$T/o6" "h3:2: a NUL byte at column 4: this is not a text file"
ok $? "loomrun: a NUL byte in a hostfile line is named (rc $rc)"

awk 'BEGIN { for (i = 0; i < 40000; i++) print "localhost slots=65536" }' >"$T/h4"
run_job "$T/o7" "$LOOMRUN" -H "$T/h4" -n 2 true
[ $rc -ne 0 ] && has "$T/o7" "h4:17: more than 1048576 slots in all" && ! grep -q -- "-[0-9]* slots" "$T/o7"
ok $? "loomrun: slots past 2^20 in all are refused at the line that passes it (rc $rc)"
finish
