#!/bin/sh
# shm.t — no shared-memory file of a job outlives it.  UCX makes each
# segment a file in /dev/shm and unlinks it only after filling it, so a
# rank stopped while starting UCX left the file behind (2 of 40 jobs whose
# rank 1 fails 0-79 ms after the start, measured before this test).  Now
# loomrun gives its local ranks UCX_POSIX_DIR=/dev/shm/loom.XXXXXX and
# removes it, with what is in it, after the job (apps/loomrun/shm.c); the
# next loomrun removes the one of a loomrun killed with SIGKILL.
# UCX's SysV segments leak the same way (one of 12 KiB was found after
# such runs): loomrun removes those its local ranks created and nobody
# attached.
. "$(dirname "$0")/../lib.sh"
plan 6
C=$B/tests/bin/coll_check

run_job "$T/o1" "$LOOMRUN" -n 2 sh -c 'echo "dir=$UCX_POSIX_DIR"; exec "$0"' "$C"
d=$(sed -n 's/^\[0\] dir=//p' "$T/o1")
[ $rc -eq 0 ] && has "$T/o1" "coll_check: ok P=2" && has "$T/o1" "^\[1\] dir=$d$" &&
    case "$d" in /dev/shm/loom.[0-9]*.??????) true ;; *) false ;; esac && [ ! -e "$d" ]
ok $? "local ranks share the job's own UCX_POSIX_DIR ($d), gone after the job"

# A rank killed with a segment file in place (as inside UCX's start): the
# file goes with the directory.
run_job "$T/o2" "$LOOMRUN" -n 2 sh -c '
    if [ $LOOM_RANK = 0 ]; then
        echo "dir=$UCX_POSIX_DIR"
        head -c 1048576 /dev/zero >"$UCX_POSIX_DIR/ucx_shm_posix_1f2e3d4c"
        kill -9 $$
    fi
    exec "$0"' "$C"
d=$(sed -n 's/^\[0\] dir=//p' "$T/o2")
[ $rc -ne 0 ] && [ -n "$d" ] && [ ! -e "$d/ucx_shm_posix_1f2e3d4c" ] && [ ! -e "$d" ]
ok $? "a segment file of a killed rank is removed with the directory (rc $rc)"

# Jobs stopped while rank 0 starts UCX: none leaves its directory.
left=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    run_job "$T/o3" "$LOOMRUN" -n 2 sh -c '[ $LOOM_RANK = 1 ] && { sleep 0.0$1; exit 3; };
        echo "dir=$UCX_POSIX_DIR"; exec "$0"' "$C" $((i * 7 % 10))
    d=$(sed -n 's/^\[0\] dir=//p' "$T/o3")
    [ -n "$d" ] && [ -e "$d" ] && left=$((left + 1))
done
[ $left -eq 0 ]
ok $? "10 jobs stopped while rank 0 starts: no directory left ($left)"

# A rank that dies between shmget and IPC_RMID (as inside UCX's start),
# played by perl.
run_job "$T/o5" "$LOOMRUN" -n 1 perl -e '$| = 1; my $id = shmget(0, 4096, 0600 | 01000);
    print "id=$id\n"; kill 9, $$'
id=$(sed -n 's/^id=//p' "$T/o5")
gone=1
[ -n "$id" ] && grep -qE "^ *[0-9]+ +$id " /proc/sysvipc/shm && { gone=0; ipcrm -m "$id"; }
[ $rc -eq 137 ] && [ -n "$id" ] && [ $gone -eq 1 ]
ok $? "a killed rank's unattached SysV segment ($id) is removed after the job"

# The directory of a loomrun killed with SIGKILL (its pid gone) is
# removed by the next loomrun.
dead=$(sh -c 'echo $$')
stale=/dev/shm/loom.$dead.Ab1234
mkdir -p "$stale" && head -c 4096 /dev/zero >"$stale/ucx_shm_posix_5e6f7a8b"
run_job "$T/o6" "$LOOMRUN" -n 2 "$C"
gone=1; [ -e "$stale" ] && { gone=0; rm -rf "$stale"; }
[ $rc -eq 0 ] && [ $gone -eq 1 ]
ok $? "a dead loomrun's directory (pid $dead) is removed by the next one"

mkdir "$T/mine"
UCX_POSIX_DIR=$T/mine run_job "$T/o4" "$LOOMRUN" -n 2 sh -c 'echo "dir=$UCX_POSIX_DIR"; exec "$0"' "$C"
[ $rc -eq 0 ] && has "$T/o4" "^\[0\] dir=$T/mine$" && [ -d "$T/mine" ]
ok $? "a user's own UCX_POSIX_DIR is kept"
finish
