#!/bin/sh
# isolation.t — two jobs on one host stay apart, and a job listens only
# where it must.  Jobs A and B run at once, each with its own key: a rank
# holding B's key cannot join A and the other way round; a connection that
# does not prove the key (a zero MAC, a JOIN too short for one, a frame
# before joining) is refused with its reason and logged; both jobs finish
# unharmed.  While they run, every listening TCP socket of loomrun and of
# the ranks is bound to loopback (the rendezvous, and UCX's TCP transport
# held to "lo" for a local job).  A job with a "remote" host binds the
# rendezvous to the address it advertises, not to every interface.
. "$(dirname "$0")/../lib.sh"
command -v perl >/dev/null 2>&1 || skip_all "perl is not installed"
plan 9
here=$(dirname "$0")

# listeners PID: "addr:port" (hex, as /proc/net/tcp{,6} write them) of every
# listening TCP socket the process holds, one a line; tcp6 ones prefixed "6:"
listeners() {
    inodes=$(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
    [ -n "$inodes" ] || return 0
    for f in tcp tcp6; do
        awk -v want=" $inodes" -v pre="$([ $f = tcp6 ] && echo 6:)" \
            'NR > 1 && $4 == "0A" && index(want, " " $10 " ") { print pre $2 }' "/proc/net/$f"
    done
}

for j in A B; do
    timeout -k 5 60 "$LOOMRUN" -n 2 sh -c \
        'echo "$LOOM_RENDEZVOUS $LOOM_JOB_KEY" > '"$T/env$j"'.$LOOM_RANK; exec '"$B/tests/bin/spin"' 8 '"$T/pid$j" \
        >"$T/job$j" 2>&1 &
    eval "lr$j=\$!"
done
i=0
while [ "$(ls "$T"/pidA.* "$T"/pidB.* 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 200 ]; do
    sleep 0.1; i=$((i + 1))
done
read -r rvA keyA <"$T/envA.0"
read -r rvB keyB <"$T/envB.0"
[ -n "$keyA" ] && [ -n "$keyB" ] && [ "$keyA" != "$keyB" ] && [ "$rvA" != "$rvB" ]
ok $? "two jobs on one host get different keys and rendezvous ($rvA, $rvB)"

LOOM_RANK=1 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$rvA LOOM_JOB_KEY=$keyB \
    timeout 20 "$B/tests/bin/coll_check" >"$T/BtoA" 2>&1
rBA=$?
LOOM_RANK=1 LOOM_NRANKS=2 LOOM_RENDEZVOUS=$rvB LOOM_JOB_KEY=$keyA \
    timeout 20 "$B/tests/bin/coll_check" >"$T/AtoB" 2>&1
rAB=$?
[ $rBA -ne 0 ] && has "$T/BtoA" "refused this rank: wrong job key" &&
    [ $rAB -ne 0 ] && has "$T/AtoB" "refused this rank: wrong job key"
ok $? "a rank of one job cannot join the other (both ways)"

perl "$here/rvclient.pl" "$rvA" zero-mac >"$T/c1" 2>&1
has "$T/c1" "^REFUSE wrong job key$"
ok $? "a JOIN with no key (zero MAC) is refused"
perl "$here/rvclient.pl" "$rvA" short >"$T/c2" 2>&1
has "$T/c2" "^REFUSE malformed join$"
ok $? "a JOIN too short to carry a MAC is refused"
perl "$here/rvclient.pl" "$rvA" ping >"$T/c3" 2>&1
has "$T/c3" "^REFUSE spoke before joining$"
ok $? "a frame before joining is refused"

# Listening sockets of both launchers and all four ranks, while they run.
pids="$(pgrep -P "$lrA" -f loomrun) $(pgrep -P "$lrB" -f loomrun)"
for f in "$T"/pidA.* "$T"/pidB.*; do pids="$pids $(cat "$f")"; done
: >"$T/listen"
for p in $pids; do listeners "$p" | sed "s/^/$p /" >>"$T/listen"; done
diag "listening sockets (pid addr:port, hex):" "$(cat "$T/listen")"
nlr=0
for p in $(pgrep -P "$lrA" -f loomrun) $(pgrep -P "$lrB" -f loomrun); do
    nlr=$((nlr + $(grep -c "^$p " "$T/listen")))
done
# every rank holds a listener too (UCX's TCP transport, held to "lo"), so
# the check below covers it rather than passing for want of one
nbare=0
for f in "$T"/pidA.* "$T"/pidB.*; do
    grep -q "^$(cat "$f") " "$T/listen" || nbare=$((nbare + 1))
done
# every listener on 127.0.0.1 (0100007F), none on tcp6 or another address;
# each launcher exactly one (its rendezvous, on the port it advertised)
[ -s "$T/listen" ] && ! grep -vq " 0100007F:" "$T/listen" && [ "$nlr" -eq 2 ] && [ "$nbare" -eq 0 ] &&
    grep -q "0100007F:$(printf '%04X' "${rvA##*:}")\$" "$T/listen" &&
    grep -q "0100007F:$(printf '%04X' "${rvB##*:}")\$" "$T/listen"
ok $? "loomrun and the ranks of a local job listen on loopback only (each rank holds a listener), one rendezvous port per job"

wait "$lrA"; rcA=$?
wait "$lrB"; rcB=$?
[ $rcA -eq 0 ] && [ $rcB -eq 0 ] && has "$T/jobA" "spin: [0-9]+ rounds" && has "$T/jobB" "spin: [0-9]+ rounds"
ok $? "both jobs complete (exit $rcA, $rcB)"
[ "$(grep -c "rendezvous: refused a connection from 127.0.0.1:[0-9]*: " "$T/jobA")" -eq 4 ] &&
    has "$T/jobB" "rendezvous: refused a connection from 127.0.0.1:[0-9]+: wrong job key"
ok $? "every refusal is logged by the job that refused it"

# A job with a host that is not this machine (an address of ours that is
# not loopback, started through a remote shell that runs it here): the
# rendezvous listens on the address the ranks are told, not on 0.0.0.0.
addr=$(ip -o -4 addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ -z "$addr" ]; then
    echo "ok 9 # SKIP no non-loopback IPv4 address on this machine"
    _n=9
else
    cat >"$T/runhere" <<'EOS'
#!/bin/sh
shift   # the host name: run it here
exec "$@"
EOS
    chmod +x "$T/runhere"
    printf '%s slots=2\n' "$addr" >"$T/hosts"
    timeout -k 5 60 "$LOOMRUN" -H "$T/hosts" --rsh "$T/runhere" sh -c \
        'echo "$LOOM_RENDEZVOUS" > '"$T/envR"'.$LOOM_RANK; exec '"$B/tests/bin/spin"' 3 '"$T/pidR" \
        >"$T/jobR" 2>&1 &
    lrR=$!
    i=0
    while [ "$(ls "$T"/pidR.* 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    listeners "$(pgrep -P "$lrR" -f loomrun)" >"$T/listenR"
    wait "$lrR"; rcR=$?
    want=$(printf '%02X' $(echo "$addr" | tr . ' ') | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/')
    diag "remote-host job: rendezvous $(cat "$T/envR.0"), loomrun listens on $(cat "$T/listenR")"
    [ $rcR -eq 0 ] && [ "$(wc -l <"$T/listenR")" -eq 1 ] && grep -q "^$want:" "$T/listenR" &&
        has "$T/envR.0" "^$addr:"
    ok $? "with a remote host, loomrun listens only on the address it advertises ($addr)"
fi
finish
