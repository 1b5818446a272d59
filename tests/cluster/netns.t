#!/bin/sh
# netns.t — a job across three "hosts": network namespaces joined by veth
# links to a bridge (in a fourth, switch namespace), addresses
# 10.213.N.0/24 inside them only.  loomrun runs on host 1 and starts the
# ranks with LOOM_RSH="ip netns exec"; UCX is held to TCP so every byte
# crosses the veths.  Then a link is cut mid-job: the job must end within
# 10 s naming the rank behind it, with no process left.
# Needs root and ip(8); skipped otherwise.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root to create network namespaces"
command -v ip >/dev/null 2>&1 || skip_all "ip (iproute2) is not installed"
net=$(( $$ % 200 + 20 ))
sw=loomsw$$
H="loomh1$$ loomh2$$ loomh3$$"
cleanup() {
    for h in $H $sw; do ip netns del "$h" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
ip netns add $sw || skip_all "cannot create network namespaces here"
ip -n $sw link add br0 type bridge && ip -n $sw link set br0 up && ip -n $sw link set lo up
i=0
for h in $H; do
    i=$((i + 1))
    ip netns add $h
    ip link add v$i netns $h type veth peer name p$i netns $sw
    ip -n $sw link set p$i master br0 up
    ip -n $h addr add 10.213.$net.$i/24 dev v$i
    ip -n $h link set v$i up
    ip -n $h link set lo up
done
sleep 0.3 # the bridge (STP off) forwards once its ports are up
plan 4
printf '# three hosts\nloomh1%s slots=1\nloomh2%s slots=1\nloomh3%s slots=1\n' $$ $$ $$ >"$T/hosts"
export LOOM_RSH="ip netns exec" LOOM_RENDEZVOUS_HOST=10.213.$net.1 UCX_TLS=tcp,self

run_job "$T/o1" ip netns exec loomh1$$ "$LOOMRUN" -H "$T/hosts" "$B/tests/bin/coll_check"
[ $rc -eq 0 ] && has "$T/o1" "coll_check: ok P=3"
ok $? "collectives exact across 3 namespaces over TCP"

run_job "$T/o2" ip netns exec loomh1$$ "$LOOMRUN" -H "$T/hosts" sh -c \
    'echo "rank $LOOM_RANK in $(ip -o -4 addr show scope global | awk "{print \$4}")"'
[ $rc -eq 0 ] && has "$T/o2" "^\[1\] rank 1 in 10.213.$net.2/24" && has "$T/o2" "^\[2\] rank 2 in 10.213.$net.3/24"
ok $? "each rank runs on its own host"

LOOM_TIMEOUT=3 timeout -k 5 60 ip netns exec loomh1$$ "$LOOMRUN" -H "$T/hosts" \
    "$B/tests/bin/spin" 60 "$T/pid" >"$T/o3" 2>&1 &
lr=$!
i=0; while [ "$(ls "$T"/pid.* 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
ip -n loomh3$$ link set v3 down
t0=$(date +%s)
wait $lr; rc=$?
dt=$(( $(date +%s) - t0 ))
sleep 0.5
left=$(pgrep -f "$T/pid" | wc -l)
[ $rc -ne 0 ] && [ $dt -le 10 ] && [ "$left" -eq 0 ] && has "$T/o3" "rank 2 \(host [^)]*\)"
ok $? "cutting host 3's link ends the job in ${dt}s naming rank 2 (exit $rc, $left left)"
printf 'loomh1%s slots=1\nloomgone%s slots=1\n' $$ $$ >"$T/hosts4"
run_job "$T/o4" ip netns exec loomh1$$ "$LOOMRUN" -H "$T/hosts4" "$B/tests/bin/coll_check"
[ $rc -ne 0 ] && has "$T/o4" "rank 1 \(host loomgone$$.*the remote shell 'ip' failed with status 255 before the rank started"
ok $? "a host the remote shell cannot reach is named, and the job ends (exit $rc)"
finish
