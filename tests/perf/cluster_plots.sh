#!/bin/sh
# cluster_plots.sh BUILD — objective against time per coherence policy on
# the simulated cluster, from the CSV logs tests/perf/cluster_policies.sh
# left in BUILD/perf/policies (of each configuration's runs, the one whose
# training time is the median; 2 hosts):
#   docs/plots/cluster-mf-RATE.png   MF test RMSE: bsp, ssp, priority
#                                    budgets, and loom-mf's ring
#   docs/plots/cluster-lda.png       loom-lda log-likelihood (ring) at
#                                    each link rate
# Part of `make plots`; says so and does nothing when there are no logs
# (the benchmark needs root: `make bench` as root first).
set -eu
B=$1
cd "$(dirname "$0")/../.."
L=$B/perf/policies
if [ ! -f "$L/ps-1-local.1.csv" ]; then
    echo "cluster_plots.sh: no logs in $L (run tests/perf/cluster_policies.sh as root); skipped" >&2
    exit 0
fi
mkdir -p docs/plots
n=${PLOT_HOSTS:-2}
# the column number of NAME in CSV FILE
col() { head -1 "$1" | tr ',' '\n' | grep -n "^$2\$" | cut -d: -f1; }
# the log, of PREFIX.1.csv, PREFIX.2.csv ..., whose last line's seconds is the median
median_run() {
    for f in "$1".*.csv; do
        echo "$(tail -1 "$f" | cut -d, -f"$(col "$f" seconds)") $f"
    done | sort -g | awk '{ f[NR] = $2 } END { print f[int((NR + 1) / 2)] }'
}
for f in "$L"/bsp-$n-*.1.csv; do
    rate=${f#"$L/bsp-$n-"}
    rate=${rate%.1.csv}
    lines=""
    for g1 in "$L"/*-$n-$rate.1.csv; do
        cfg=${g1#"$L/"}
        cfg=${cfg%%-*}
        g=$(median_run "${g1%.1.csv}")
        case $cfg in
        ldaring) continue ;;
        bsp) t=bsp ;;
        ssp*) t="ssp, staleness ${cfg#ssp}" ;;
        prio0) t="priority, no early sending" ;;
        prio*) t="priority, ${cfg#prio} Mbit/s budget" ;;
        mfring) t="loom-mf (ring)" ;;
        esac
        x=$(col "$g" seconds) y=$(col "$g" test_rmse)
        lines="$lines${lines:+, }\"$g\" every ::1 using $x:$y with linespoints title \"$t\""
    done
    gnuplot <<GP
set terminal pngcairo size 720,440 font ",10"
set output "docs/plots/cluster-mf-$rate.png"
set datafile separator ","
set key top right box opaque
set grid
set title "MF on MovieLens u1, $n ranks over ${rate%bit} bit/s links: test RMSE"
set xlabel "seconds (training)"
set ylabel "test RMSE"
set yrange [:1.1]
plot $lines
GP
    echo "plots: docs/plots/cluster-mf-$rate.png"
done
lines=""
for g1 in "$L"/ldaring-$n-*.1.csv; do
    rate=${g1#"$L/ldaring-$n-"}
    rate=${rate%.1.csv}
    g=$(median_run "${g1%.1.csv}")
    x=$(col "$g" seconds) y=$(col "$g" loglik)
    lines="$lines${lines:+, }\"$g\" every ::1 using $x:$y with linespoints title \"${rate%bit} bit/s\""
done
one=$(median_run "$L/ldaring-1-local")
x=$(col "$one" seconds) y=$(col "$one" loglik)
gnuplot <<GP
set terminal pngcairo size 720,440 font ",10"
set output "docs/plots/cluster-lda.png"
set datafile separator ","
set key bottom right box opaque
set grid
set title "loom-lda (ring), $n ranks: log-likelihood by link rate"
set xlabel "seconds"
set ylabel "log-likelihood"
plot "$one" every ::1 using $x:$y with linespoints title "1 rank, no network", $lines
GP
echo "plots: docs/plots/cluster-lda.png"
