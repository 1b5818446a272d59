#!/bin/sh
# errors.t — loomrun's clear errors and plain behaviour: a malformed
# hostfile (file:line), too few slots, a missing program, a bad LOOM_*
# value (in loomrun and in a rank), an unresolvable host, exit codes,
# tagged output, the rank variables, and forwarding through a remote shell.
. "$(dirname "$0")/../lib.sh"
plan 17

printf '# nodes\n\nlocalhost slots=2\nlocalhost slots=two\n' >"$T/bad1"
run_job "$T/o1" "$LOOMRUN" -H "$T/bad1" -n 2 true
[ $rc -ne 0 ] && has "$T/o1" "bad1:4: slots='two' is not a whole number"
ok $? "malformed slots= names file:line"

printf 'localhost\nlocalhost cores=4\n' >"$T/bad2"
run_job "$T/o2" "$LOOMRUN" -H "$T/bad2" true
[ $rc -ne 0 ] && has "$T/o2" "bad2:2: unknown attribute 'cores'"
ok $? "unknown attribute names file:line"

printf 'localhost slots=2 # two slots\n127.0.0.1\n' >"$T/hosts3"
run_job "$T/o3" "$LOOMRUN" -H "$T/hosts3" -n 4 true
[ $rc -ne 0 ] && has "$T/o3" "provides 3 slots for 4 ranks"
ok $? "too few slots is refused before anything starts"

run_job "$T/o4" "$LOOMRUN" -n 2 ./no-such-program
[ $rc -eq 127 ] && has "$T/o4" "cannot run './no-such-program'"
ok $? "a missing program is named (exit 127)"

LOOM_TIMEOUT=soon run_job "$T/o5" "$LOOMRUN" -n 2 true
[ $rc -ne 0 ] && has "$T/o5" "LOOM_TIMEOUT='soon' is not valid: expected seconds from 0.001 to 1e6"
ok $? "a bad LOOM_* value in loomrun names the variable and what is allowed"

LOOM_DISPLAY_ENV=maybe run_job "$T/o6" "$B/tests/bin/coll_check"
[ $rc -ne 0 ] && has "$T/o6" "LOOM_DISPLAY_ENV='maybe' is not valid"
ok $? "a bad LOOM_* value in a rank names the variable"

LOOM_DISPLAY_ENV=1 LOOM_PRIORITY_QUEUE=7 run_job "$T/o7" "$LOOMRUN" -n 2 "$B/tests/bin/coll_check"
[ $rc -eq 0 ] && has "$T/o7" "LOOM DISPLAY ENVIRONMENT BEGIN" && has "$T/o7" "LOOM_TIMEOUT = '6'" &&
    has "$T/o7" "LOOM_PRIORITY = 'relative'" && has "$T/o7" "LOOM_PRIORITY_QUEUE = '7'" &&
    ! grep -qE "unknown|not a Loom variable" "$T/o7"
ok $? "LOOM_DISPLAY_ENV=1 prints the effective values, the priority policy's own table's too"

# a policy's own variables (dsm/policy_priority.c's table) are checked as lib/env.c's are
LOOM_PRIORITY=loudest run_job "$T/o7b" "$B/tests/bin/coll_check"
[ $rc -ne 0 ] && has "$T/o7b" "LOOM_PRIORITY='loudest' is not valid: expected relative, absolute, random or roundrobin"
ok $? "a bad value of a policy's own variable names it and what is allowed"

# loomrun checks the environment as loom_init does (lifecycle.h's
# loom_lc_env_check): a policy's own table too, once, before any rank
LOOM_PRIORITY=loudest run_job "$T/o7c" "$LOOMRUN" -n 2 "$B/tests/bin/coll_check"
[ $rc -ne 0 ] && has "$T/o7c" "loomrun: LOOM_PRIORITY='loudest' is not valid: expected relative, absolute, random or roundrobin" &&
    [ "$(wc -l <"$T/o7c")" -eq 1 ]
ok $? "loomrun refuses a bad value of a policy's own variable in one line, before any rank"

printf 'no-such-host.invalid slots=2\n' >"$T/hosts8"
run_job "$T/o8" "$LOOMRUN" -H "$T/hosts8" -n 2 true
[ $rc -ne 0 ] && has "$T/o8" "cannot resolve host 'no-such-host.invalid'"
ok $? "an unresolvable host is named"

run_job "$T/o9" "$LOOMRUN" -n 3 sh -c 'exit $((LOOM_RANK == 2 ? 7 : 0))'
[ $rc -eq 7 ] && has "$T/o9" "rank 2 .* exited with status 7"
ok $? "the first non-zero exit code is returned and the rank named"

run_job "$T/o9b" "$LOOMRUN" -n 1 sh -c 'echo "prog: bad input" >&2; exit 3'
[ $rc -eq 3 ] && has "$T/o9b" "^prog: bad input$" && [ "$(wc -l <"$T/o9b")" -eq 1 ]
ok $? "a 1-rank job that fails: its own message only, its exit code (rc $rc)"

run_job "$T/o10" "$LOOMRUN" -n 3 sh -c 'echo "r=$LOOM_RANK n=$LOOM_NRANKS l=$LOOM_LOCAL_RANK"'
[ $rc -eq 0 ] && has "$T/o10" '^\[0\] r=0 n=3 l=0$' && has "$T/o10" '^\[2\] r=2 n=3 l=2$'
ok $? "any program gets LOOM_RANK/NRANKS/LOCAL_RANK; output is tagged"

run_job "$T/o11" "$LOOMRUN" -n 2 --no-tag-output sh -c 'echo plain'
[ $rc -eq 0 ] && [ "$(grep -c '^plain$' "$T/o11")" -eq 2 ]
ok $? "--no-tag-output passes lines through"

# A remote shell that keeps only what loomrun forwards on its command line
# (env -i): ranks on "hosts" that are not this machine must still get the
# job variables and the LOOM_/OMP_/UCX_ ones, and meet.
cat >"$T/remote" <<'EOS'
#!/bin/sh
shift   # the host name
exec env -i PATH="$PATH" "$@"
EOS
chmod +x "$T/remote"
printf 'nodeA slots=1\nnodeB slots=2\n' >"$T/hosts12"
# LOOM_TIMEOUT: a user's LOOM_ variable that loomrun itself does not set
OMP_NUM_THREADS=3 UCX_TLS=tcp,self LOOM_RENDEZVOUS_HOST=127.0.0.1 LOOM_TIMEOUT=17 run_job "$T/o12" \
    "$LOOMRUN" -H "$T/hosts12" --rsh "$T/remote" sh -c \
    'echo "r=$LOOM_RANK omp=$OMP_NUM_THREADS ucx=$UCX_TLS to=$LOOM_TIMEOUT"; exec '"$B/tests/bin/coll_check"
[ $rc -eq 0 ] && has "$T/o12" '^\[2\] r=2 omp=3 ucx=tcp,self to=17$' && has "$T/o12" "coll_check: ok P=3"
ok $? "through a remote shell, LOOM_/OMP_/UCX_ variables are forwarded and ranks meet"

# An ssh-like remote shell runs its one command string in a shell: loomrun
# must quote every word (spaces and quotes survive) and cd to our folder.
mkdir -p "$T/sshbin"
cat >"$T/sshbin/ssh" <<'EOS'
#!/bin/sh
shift   # the host name
exec env -i PATH="$PATH" sh -c "$1"
EOS
chmod +x "$T/sshbin/ssh"
printf 'nodeA
nodeB
' >"$T/hosts14"
(cd /tmp && LOOM_RENDEZVOUS_HOST=127.0.0.1 run_job "$T/o14" "$LOOMRUN" -H "$T/hosts14" \
    --rsh "$T/sshbin/ssh" sh -c 'printf "<%s> <%s>\n" "$1" "$(pwd)"' _ "it's a b"; exit $rc)
rc=$?
[ $rc -eq 0 ] && has "$T/o14" "^\[0\] <it's a b> <\/tmp>" && has "$T/o14" "^\[1\] <it's a b> <\/tmp>"
ok $? "through ssh, arguments are quoted and the working directory kept"

run_job "$T/o13" "$LOOMRUN" -n 2 --bogus true
[ $rc -eq 2 ] && has "$T/o13" "unknown option '--bogus'"
ok $? "an unknown option is refused"
finish
