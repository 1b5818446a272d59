#!/bin/sh
# idx_head.sh IN N OUT — the first N items of the gzipped IDX file IN
# (Fashion-MNIST's images or labels), uncompressed into OUT with the
# header's count set to N: the 20 000-image cut that loom-lr's check
# (tests/apps/lr.t) and benchmarks (tests/perf/structure.sh,
# tests/perf/threads2.sh) train on.  gzip ends on a broken pipe once perl
# has read what it needs; the exit status is perl's.
gzip -dc "$1" | perl -e 'binmode STDIN; binmode STDOUT; read STDIN, $m, 4; $d = unpack("C", substr($m, 3, 1));
    read STDIN, $h, 4 * $d; @n = unpack("N*", $h); $per = 1; $per *= $_ for @n[1 .. $#n]; $n[0] = $ARGV[0];
    read STDIN, $b, $per * $ARGV[0]; print $m, pack("N*", @n), $b' "$2" >"$3"
