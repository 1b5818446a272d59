#!/bin/sh
# thin_apps.t — the apps are command lines around kernels/ (issue 44):
# every apps/loom-*.c stays under 450 lines (a structural check: an
# algorithm's Loom version lives in kernels/ beside its serial twin, the
# app keeps flags, I/O and reporting), and the prologue they share
# (apps/common/start.c) behaves alike in each: --serial on 2 ranks ends
# the job with exit 2 and one message, from rank 0; a bad LOOM_ variable
# ends it with exit 2 and loom_init's one line; --help exits 0.
. "$(dirname "$0")/../lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
plan 12
for f in "$src"/apps/loom-*.c; do
    n=$(wc -l <"$f") name="$(basename "$f"): $n lines < 450"
    [ "$n" -lt 450 ]
    ok $? "$name"
done
export OMP_NUM_THREADS=1
for a in "loom-lr --serial" "loom-lasso --serial cyclic --libsvm x --lambda 1" \
    "loom-w2v --serial --train x --output y" "loom-mf --serial --train x --test y"; do
    app=${a%% *}
    run_job "$T/s$app" "$LOOMRUN" -n 2 "$B/bin/$app" ${a#* }
    [ $rc -eq 2 ] && [ "$(grep -c -- "--serial runs on one rank (got 2)" "$T/s$app")" -eq 1 ]
    ok $? "$app --serial on 2 ranks: exit 2 and one message ($(grep -c . "$T/s$app") line(s))"
done
bad=0
for app in loom-lr loom-lasso loom-w2v loom-lda loom-mf; do
    LOOM_CHECKPOINT_EVERY=abc "$B/bin/$app" --help >"$T/e$app" 2>&1
    r=$?
    [ $r -eq 2 ] && [ "$(wc -l <"$T/e$app")" -eq 1 ] && has "$T/e$app" "LOOM_CHECKPOINT_EVERY='abc' is not valid" ||
        { diag "$app: exit $r"; bad=1; }
done
ok $bad "a bad LOOM_ variable: exit 2 and one line from every app"
bad=0
for app in loom-lr loom-lasso loom-w2v loom-lda loom-mf; do
    "$B/bin/$app" --help >"$T/h$app" 2>&1 && has "$T/h$app" "^Usage: $app" || bad=1
done
ok $bad "--help: exit 0 and the usage, every app"
finish
