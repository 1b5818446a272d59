#!/bin/sh
# fuzz.t — the libFuzzer harnesses of tests/fuzz/ in `make check`: build
# them (clang, ASan, UBSan), then for each replay its seeds and every
# input that once crashed it (tests/fuzz/regress/NAME/), and fuzz it for
# LOOMTEST_FUZZ_SECONDS (default 3) seconds.  Any crash, sanitizer report
# or broken invariant fails the harness's test; run.sh's line is the name.
# Skipped without clang and libFuzzer (tools/deps.sh fuzz installs them),
# and in the sanitizer builds of the suite (the harnesses are ASan+UBSan
# builds themselves).  `make fuzz` runs them longer.
. "$(dirname "$0")/../lib.sh"
[ -z "${LOOMTEST_SANITIZE:-}" ] || skip_all "runs in the plain build's check (the harnesses carry their own sanitizers)"
command -v clang >/dev/null 2>&1 || skip_all "clang is not installed (tools/deps.sh fuzz)"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)\n{ (void)d; (void)n; return 0; }\n' >"$T/probe.c"
clang -fsanitize=fuzzer "$T/probe.c" -o "$T/probe" >/dev/null 2>&1 ||
    skip_all "clang cannot link libFuzzer (tools/deps.sh fuzz installs libclang-rt-dev)"
top=$(cd "$(dirname "$0")/../.." && pwd)
fb=$top/build-fuzz
names=$(ls "$top"/tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_\(.*\)\.c$|\1|')
plan $((1 + $(echo "$names" | wc -w)))
make -s -C "$top" -j2 fuzz-build FUZZ_BUILD="$fb" >"$T/build.log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# /' "$T/build.log" | tail -20
ok $rc "the harnesses build with clang -fsanitize=fuzzer,address,undefined"
for name in $names; do
    "$top/tests/fuzz/run.sh" "$fb" "${LOOMTEST_FUZZ_SECONDS:-3}" "$name" >"$T/$name" 2>&1
    rc=$?
    [ $rc -eq 0 ] || sed 's/^/# /' "$T/$name"
    ok $rc "$(head -1 "$T/$name")"
done
finish
