#!/bin/sh
# hint.t — "Ranks or threads" (docs/launcher.md): when more ranks share a
# host than it has NUMA nodes, rank 0 of every app prints one hint line
# naming the threaded run to compare with; one rank prints none, and nor
# do two ranks on two hosts (the second "host" is this machine under
# another host name: a UTS namespace, entered through --rsh).
. "$(dirname "$0")/../lib.sh"
plan 5
"$B/bin/loom-gen" ratings --users 60 --items 50 --samples 2000 --out "$T/r" >/dev/null
MF="$B/bin/loom-mf --train $T/r.train --test $T/r.test --epochs 1"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l); [ "$nodes" -ge 1 ] || nodes=1
hints() { grep -c 'hint: .* ranks share this host' "$1"; }
n=$((nodes + 1))
OMP_NUM_THREADS=1 run_job "$T/a" "$LOOMRUN" -n $n $MF
[ $rc -eq 0 ] && [ "$(hints "$T/a")" -eq 1 ] &&
    has "$T/a" "^\[0\] loom-mf: hint: $n ranks share this host \($nodes NUMA node.*OMP_NUM_THREADS=$n "
ok $? "loom-mf on $n ranks of one host with $nodes NUMA node(s): one hint, naming OMP_NUM_THREADS=$n"
OMP_NUM_THREADS=2 run_job "$T/b" "$LOOMRUN" -n $n $MF
[ $rc -eq 0 ] && [ "$(hints "$T/b")" -eq 1 ] && has "$T/b" "OMP_NUM_THREADS=$((2 * n)) "
ok $? "with 2 threads a rank, the hint names OMP_NUM_THREADS=$((2 * n))"
run_job "$T/c" "$LOOMRUN" -n 1 $MF
[ $rc -eq 0 ] && [ "$(hints "$T/c")" -eq 0 ]
ok $? "one rank: no hint"
"$B/bin/loom-gen" lasso --samples 200 --features 40 --nonzeros 5 --out "$T/l" >/dev/null
OMP_NUM_THREADS=1 run_job "$T/d" "$LOOMRUN" -n $n "$B/bin/loom-lasso" --libsvm "$T/l.svm" --lambda 1
[ $rc -eq 0 ] && [ "$(hints "$T/d")" -eq 1 ] && has "$T/d" "^\[0\] loom-lasso: hint: "
ok $? "loom-lasso too: one hint line"
addr=$(ip -o -4 addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ "$nodes" -eq 1 ] && [ -n "$addr" ] && unshare --uts true 2>/dev/null; then
    cat >"$T/otherhost" <<'EOS'
#!/bin/sh
shift   # the host name: run it here, under another host name
exec unshare --uts sh -c 'hostname loom-hint-other && exec "$@"' sh "$@"
EOS
    chmod +x "$T/otherhost"
    printf 'localhost slots=1\n%s slots=1\n' "$addr" >"$T/hosts"
    OMP_NUM_THREADS=1 run_job "$T/e" "$LOOMRUN" -H "$T/hosts" --rsh "$T/otherhost" $MF
    [ $rc -eq 0 ] && has "$T/e" "2 rank\(s\) x 1 thread" && [ "$(hints "$T/e")" -eq 0 ]
    ok $? "two ranks on two host names: no hint"
else
    skip 1 "needs one NUMA node, a non-loopback address and unshare --uts"
fi
finish
