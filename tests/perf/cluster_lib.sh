# cluster_lib.sh — a simulated cluster on one machine, for benchmarks
# (sourced by tests/perf/cluster.sh).  cluster_up N RATE builds N network
# namespaces ("hosts") joined by veth links to a bridge in a switch
# namespace, addresses 10.214.X.1..N/24, every link shaped by tc tbf to
# RATE (e.g. 100mbit; "none" leaves it unshaped) in both directions.
# cluster_run N CMD... runs CMD in host 1 with a hostfile of the N hosts
# (one slot each) in $CLUSTER_HOSTS and UCX held to TCP, so every byte
# between ranks crosses a shaped link.  cluster_down removes it all.
# Needs root and iproute2 (cluster_require checks).  The kernel here has no netem, so no latency
# can be added; where `tc qdisc add ... netem` works, CLUSTER_DELAY=5ms adds
# that one-way delay on every link.  CLUSTER_BURST (default 256kb) is tbf's
# bucket: a link idle for a while then sends that much at veth speed, which
# flatters a program that idles its links (docs/dsm.md, "Programs that
# prefetch"); 16kb is closer to a real link.

CLUSTER_ID=${CLUSTER_ID:-$(( $$ % 200 + 20 ))}

# cluster_require NAME: unless this runs as root with iproute2 (ip, tc),
# say why the benchmark NAME is skipped and exit 0.
cluster_require() {
    [ "$(id -u)" = 0 ] || { echo "$1: needs root (network namespaces); skipped" >&2; exit 0; }
    command -v tc >/dev/null && command -v ip >/dev/null ||
        { echo "$1: iproute2 (ip, tc) missing; skipped" >&2; exit 0; }
}
CLUSTER_NS=()

cluster_down() {
    local h
    for h in "${CLUSTER_NS[@]}" "loomsw$CLUSTER_ID"; do ip netns del "$h" 2>/dev/null || true; done
    CLUSTER_NS=()
}

# shape NS DEV RATE: tbf (and netem delay when CLUSTER_DELAY is set) on
# DEV's egress inside namespace NS.
cluster_shape() {
    local ns=$1 dev=$2 rate=$3 burst=${CLUSTER_BURST:-256kb}
    if [ -n "${CLUSTER_DELAY:-}" ]; then
        ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: netem delay "$CLUSTER_DELAY"
        [ "$rate" = none ] || ip netns exec "$ns" tc qdisc add dev "$dev" parent 1: handle 2: \
            tbf rate "$rate" burst "$burst" latency 200ms
    elif [ "$rate" != none ]; then
        ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 200ms
    fi
}

cluster_up() {
    local n=$1 rate=$2 sw="loomsw$CLUSTER_ID" i h
    cluster_down
    ip netns add "$sw"
    ip -n "$sw" link add br0 type bridge
    ip -n "$sw" link set br0 up
    ip -n "$sw" link set lo up
    for i in $(seq "$n"); do
        h="loomc$CLUSTER_ID-$i"
        CLUSTER_NS+=("$h")
        ip netns add "$h"
        ip link add "v$i" netns "$h" type veth peer name "p$i" netns "$sw"
        ip -n "$sw" link set "p$i" master br0 up
        ip -n "$h" addr add "10.214.$CLUSTER_ID.$i/24" dev "v$i"
        ip -n "$h" link set "v$i" up
        ip -n "$h" link set lo up
        cluster_shape "$h" "v$i" "$rate"
        cluster_shape "$sw" "p$i" "$rate"
    done
    CLUSTER_HOSTS=$(mktemp)
    for h in "${CLUSTER_NS[@]}"; do echo "$h slots=1"; done >"$CLUSTER_HOSTS"
    sleep 0.3 # the bridge forwards once its ports are up
}

cluster_run() {
    local n=$1; shift
    LOOM_RSH="ip netns exec" LOOM_RENDEZVOUS_HOST="10.214.$CLUSTER_ID.1" UCX_TLS=tcp,self \
        ip netns exec "${CLUSTER_NS[0]}" "$B/bin/loomrun" -n "$n" -H "$CLUSTER_HOSTS" "$@"
}
