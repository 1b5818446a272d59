#!/bin/sh
# unreachable.t — a rank whose rendezvous address takes no connection
# (packets to it dropped: here a listener with a full backlog of one
# connection it never accepts, so the kernel drops every further SYN)
# gives up when LOOM_JOIN_TIMEOUT says, with one message naming the
# address, instead of waiting out the kernel's SYN retries (about two
# minutes: lib/join.c connect_by).  Mutation caught: dial() back to a
# blocking connect (the rank is still waiting when the test's 20 s run
# out).
. "$(dirname "$0")/../lib.sh"
plan 1
perl -MSocket -e '
    socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
    bind($s, pack_sockaddr_in(0, inet_aton("127.0.0.1"))) or die "bind: $!";
    listen($s, 0) or die "listen: $!";    # a backlog of one connection
    my ($port) = unpack_sockaddr_in(getsockname($s));
    socket(my $c, PF_INET, SOCK_STREAM, 0) or die;
    connect($c, pack_sockaddr_in($port, inet_aton("127.0.0.1"))) or die "connect: $!";
    open my $f, ">", "$ARGV[0]" or die; print $f "$port\n"; close $f;
    sleep 30;' "$T/port" &
holder=$!
i=0
while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$T/port")
key=0123456789abcdef0123456789abcdef
start=$(date +%s)
PMI_RANK=1 PMI_SIZE=2 MPI_LOCALRANKID=1 LOOM_RENDEZVOUS=127.0.0.1:$port LOOM_JOB_KEY=$key \
    LOOM_JOIN_TIMEOUT=2 timeout -k 5 20 "$B/tests/bin/coll_check" >"$T/out" 2>&1
rc=$?
took=$(($(date +%s) - start))
kill $holder 2>/dev/null
wait $holder 2>/dev/null
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $took -le 10 ] && [ "$(grep -c . "$T/out")" -eq 1 ] &&
    has "$T/out" "cannot reach the rendezvous at 127.0.0.1:$port"
ok $? "a rendezvous that drops connections: the rank gives up after LOOM_JOIN_TIMEOUT=2 (exit $rc in ${took} s), one message"
finish
