#!/bin/sh
# rsh.t — LOOM_RSH and --rsh are split into words as a POSIX shell splits
# them (blanks, quotes, backslashes; no expansion), or refused with one
# message: a leading blank once ended in "free(): invalid pointer" after
# the job, all blanks in a segfaulting child, and a quoted path with a
# space in it was cut in two.
. "$(dirname "$0")/../lib.sh"
plan 5

LOOM_RSH=' ssh' run_job "$T/o1" "$LOOMRUN" -n 2 true
[ $rc -eq 0 ] && ! grep -qiE "invalid pointer|AddressSanitizer" "$T/o1"
ok $? "LOOM_RSH with a leading blank: the job ends cleanly (rc $rc)"

printf 'nodeA slots=1\nnodeB slots=1\n' >"$T/hosts"
LOOM_RSH='   ' run_job "$T/o2" "$LOOMRUN" -H "$T/hosts" -n 2 true
[ $rc -ne 0 ] && [ $rc -lt 128 ] && has "$T/o2" "LOOM_RSH='   ' is not valid: expected a remote-shell command" &&
    [ "$(wc -l <"$T/o2")" -eq 1 ]
ok $? "LOOM_RSH of blanks only is refused with one line (rc $rc)"

run_job "$T/o3" "$LOOMRUN" -H "$T/hosts" -n 2 --rsh ' 	 ' true
[ $rc -eq 2 ] && has "$T/o3" "--rsh is not a command loomrun can run: no command" &&
    [ "$(wc -l <"$T/o3")" -eq 1 ]
ok $? "--rsh of blanks only is refused with one line (rc $rc)"

# A remote shell whose path holds a blank, quoted, with a quoted argument
# holding one too: every word must arrive whole.
mkdir -p "$T/my bin"
cat >"$T/my bin/remote" <<'EOS'
#!/bin/sh
[ "$1" = "two words" ] || { echo "remote: first argument '$1'" >&2; exit 9; }
shift 2   # the argument and the host name
exec "$@"
EOS
chmod +x "$T/my bin/remote"
LOOM_RENDEZVOUS_HOST=127.0.0.1 run_job "$T/o4" "$LOOMRUN" -H "$T/hosts" -n 2 \
    --rsh "'$T/my bin/remote' \"two words\"" "$B/tests/bin/coll_check"
[ $rc -eq 0 ] && has "$T/o4" "coll_check: ok P=2"
ok $? "a quoted remote shell path and argument with blanks are kept whole (rc $rc)"

run_job "$T/o5" "$LOOMRUN" -H "$T/hosts" -n 2 --rsh 'ssh; touch '"$T/pwned" true
[ $rc -eq 2 ] && has "$T/o5" "--rsh is not a command loomrun can run: a shell operator" &&
    [ ! -e "$T/pwned" ]
ok $? "an unquoted shell operator in --rsh is refused, not run (rc $rc)"
finish
