#!/bin/sh
# pages.t — page-path equivalence: a seeded random read/write program over
# a 64 MiB page-unit array gives byte-identical results on 2-4 ranks (with
# 1-2 threads, over shared memory and over TCP) and in a serial run.
# Under ThreadSanitizer (make check-tsan): 16 MiB, one OpenMP thread (the
# fault server and the progress agent are the threads it checks), no TCP.
. "$(dirname "$0")/../lib.sh"
plan 5
M=64
[ "${LOOMTEST_SANITIZE:-}" = thread ] && M=16
OMP_NUM_THREADS=1 run_job "$T/o1" "$LOOMRUN" -n 1 "$B/tests/bin/dsm_pages" "$T/serial.bin" $M 3
[ $rc -eq 0 ] && [ "$(stat -c %s "$T/serial.bin")" -eq $((M << 20)) ]
ok $? "serial run writes $M MiB"
for cfg in 2:2 3:1 4:2; do
    n=${cfg%:*} t=${cfg#*:}
    t=$(threads $t)
    OMP_NUM_THREADS=$t run_job "$T/o$n" "$LOOMRUN" -n $n "$B/tests/bin/dsm_pages" "$T/p$n.bin" $M 3
    [ $rc -eq 0 ] && cmp -s "$T/serial.bin" "$T/p$n.bin"
    ok $? "$n ranks x $t threads: byte-identical to the serial run"
done
if [ "${LOOMTEST_SANITIZE:-}" = thread ]; then
    skip 1 "TCP under ThreadSanitizer: UCX's software get reads a whole home unit while the home writes it in place (docs/dsm.md)"
else
    UCX_TLS=tcp,self OMP_NUM_THREADS=2 run_job "$T/otcp" "$LOOMRUN" -n 3 "$B/tests/bin/dsm_pages" "$T/tcp.bin" $M 3
    [ $rc -eq 0 ] && cmp -s "$T/serial.bin" "$T/tcp.bin"
    ok $? "3 ranks over TCP: byte-identical to the serial run"
fi
finish
