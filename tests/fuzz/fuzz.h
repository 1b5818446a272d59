/* fuzz.h — what the libFuzzer harnesses in tests/fuzz/ share.
 *
 * A harness is one file, tests/fuzz/fuzz_NAME.c, defining
 * LLVMFuzzerTestOneInput; its seed inputs live in tests/fuzz/corpus/NAME/
 * and the inputs that once crashed it in tests/fuzz/regress/NAME/ (replayed
 * by every `make check`).  The Makefile builds each fuzz_*.c it finds with
 * clang, ASan and UBSan against the runtime (with stub_transport.c in place
 * of UCX), and tests/fuzz/run.sh runs them all.  A parser that reads a file
 * by path gets the input through fuzz_file().  Adding a harness for a new
 * loader is a few lines, e.g. for data/libsvm.c:
 *
 *     #include "fuzz.h"
 *     #include "libsvm.h"
 *     int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
 *     {
 *         loom_libsvm x;
 *         char err[256];
 *         if (loom_libsvm_load(fuzz_file(0, d, n), &x, err, sizeof err) == LOOM_OK)
 *             loom_libsvm_free(&x);
 *         return 0;
 *     }
 *
 * plus a few valid files in tests/fuzz/corpus/libsvm/. */
#ifndef LOOM_FUZZ_H
#define LOOM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <loom.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a file: writes data[0..n) into the harness's memfd number
 * slot (0 to 3, each reused from input to input) and returns a path that
 * opens it from the start ("/proc/self/fd/N"). */
const char *fuzz_file(int slot, const uint8_t *data, size_t n);

/* Runs fn(arg).  If it calls loom_rt_die or loom_abort — how the runtime
 * stops the job on a message it cannot accept — the process does not exit:
 * fuzz_catch_exit returns that exit code instead (0 when fn returned).
 * fn must hold no lock where it may exit.  (The harnesses are linked with
 * -Wl,--wrap=_exit; see fuzz.c.) */
int fuzz_catch_exit(void (*fn)(void *), void *arg);

/* An invariant of the code under test: when it fails the harness aborts,
 * and libFuzzer keeps the input as a crash. */
#define FUZZ_CHECK(cond, ...) \
    do { if (!(cond)) fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); } while (0)
__attribute__((noreturn, format(printf, 4, 5)))
void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...);

/* Little-endian reads that never pass end: 0 for missing bytes. */
uint32_t fuzz_u32(const uint8_t *p, const uint8_t *end);
uint16_t fuzz_u16(const uint8_t *p, const uint8_t *end);

/* ---- stub_transport.c: lib/transport.c without UCX -------------------- */

/* Hand one active message to the handler registered for id (as UCX would:
 * the data in its own 8-byte-aligned buffer of exactly len bytes).
 * Returns 0; the exit code if the handler stopped the job (loom_abort,
 * loom_rt_die: see fuzz_catch_exit); -1 if no handler has that id. */
int fuzz_am_deliver(unsigned id, const void *hdr, size_t hlen, const void *data, size_t len);
/* Messages the runtime sent since the start (they go nowhere). */
long fuzz_am_sent(void);

#endif
