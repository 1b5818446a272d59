# dsm_lib.sh — shell helpers shared by tests/perf/dsm.sh and
# tests/perf/dsm_cases.sh (sourced; they define die, RAW and PERFTEST).
port=$((20000 + $$ % 20000))
# in_use PORT: 0 if PORT appears in the kernel's TCP table (any state).
in_use() {
    grep -qsE ":$(printf %04X "$1") " /proc/net/tcp /proc/net/tcp6
}

# perftest NAME TEST SIZE ITERS: ucx_perftest server in the background,
# client on 127.0.0.1, nothing bound; the client's CSV line kept.  A port
# taken meanwhile (the server cannot bind) is skipped, up to 5 times.
perftest() {
    local name=$1 test=$2 size=$3 n=$4 spid i try listening
    local out=$RAW/$name.out srv=$RAW/$name.srv
    for try in 1 2 3 4 5; do
        port=$((port + 1))
        while in_use "$port"; do port=$((port + 1)); done
        timeout 60 "$PERFTEST" -p "$port" >"$srv" 2>&1 &
        spid=$!
        # wait until it listens (its stdout is block-buffered: read the
        # socket table)
        listening=0
        for i in $(seq 500); do
            if grep -qsE "^ *[0-9]+: [0-9A-F]+:$(printf %04X "$port") [0-9A-F]+:0000 0A " \
                    /proc/net/tcp /proc/net/tcp6; then
                listening=1
                break
            fi
            kill -0 "$spid" 2>/dev/null || break
            sleep 0.01
        done
        [ "$listening" = 1 ] && break
        kill "$spid" 2>/dev/null || true
        wait "$spid" 2>/dev/null || true
        grep -q "bind() failed" "$srv" ||
            { cat "$srv" >&2; die "ucx_perftest server did not start ($name)"; }
    done
    [ "$listening" = 1 ] || die "no free port for ucx_perftest ($name)"
    if ! timeout 60 "$PERFTEST" 127.0.0.1 -p "$port" -t "$test" -s "$size" -n "$n" \
            -w $((n / 10 + 1)) -v >"$out" 2>&1; then
        kill "$spid" 2>/dev/null || true
        echo "$0: FAILED ($name, UCX_TLS=${UCX_TLS-unset}): $PERFTEST 127.0.0.1 -p $port" \
             "-t $test -s $size -n $n" >&2
        cat "$srv" "$out" >&2
        exit 1
    fi
    wait "$spid" || { cat "$srv" >&2; die "ucx_perftest server failed ($name)"; }
    grep -qE '^ *[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,' "$out" ||
        die "no result line in $out"
}


# insert_section0 SECTION DOC: replace section 0 of DOC with the file
# SECTION (dsm_cases.sh's), or insert it before section 1.
insert_section0() {
    python3 - "$1" "$2" <<'PYEOF'
import sys
sec, doc = open(sys.argv[1]).read(), open(sys.argv[2]).read()
a, b = doc.find("## 0. "), doc.find("## 1. ")
if b < 0:
    sys.exit("no '## 1.' section in " + sys.argv[2])
a = a if 0 <= a < b else b
open(sys.argv[2], "w").write(doc[:a] + sec + "\n" + doc[b:])
PYEOF
}
