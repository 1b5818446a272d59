/* fuzz.c — the harnesses' shared helpers (see fuzz.h): inputs as files,
 * catching the runtime's deliberate exits, invariant failures, and the
 * sanitizer defaults every harness runs with. */
#include "fuzz.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Huge allocations return NULL (the loaders then report "out of memory",
 * a path worth fuzzing too) instead of tripping libFuzzer's malloc limit:
 * a header may declare 2^31 documents. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=512:detect_leaks=1";
}

const char *fuzz_file(int slot, const uint8_t *data, size_t n)
{
    static int fds[4] = {-1, -1, -1, -1};
    static char paths[4][64];
    if (slot < 0 || slot > 3)
        abort();
    if (fds[slot] < 0) {
        fds[slot] = memfd_create("fuzz-input", 0);
        if (fds[slot] < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(paths[slot], sizeof paths[slot], "/proc/self/fd/%d", fds[slot]);
    }
    if (ftruncate(fds[slot], 0) || (n && pwrite(fds[slot], data, n, 0) != (ssize_t)n)) {
        perror("fuzz_file");
        abort();
    }
    return paths[slot];
}

/* --wrap=_exit: the runtime's _exit calls land here. */
void __real__exit(int code) __attribute__((noreturn));
void __wrap__exit(int code) __attribute__((noreturn));
static jmp_buf *catcher;

void __wrap__exit(int code)
{
    if (catcher) {
        jmp_buf *j = catcher;
        catcher = NULL;
        longjmp(*j, code ? code : 256);
    }
    __real__exit(code);
}

int fuzz_catch_exit(void (*fn)(void *), void *arg)
{
    jmp_buf j;
    int code = setjmp(j);
    if (code)
        return code;
    catcher = &j;
    fn(arg);
    catcher = NULL;
    return 0;
}

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: invariant failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

uint32_t fuzz_u32(const uint8_t *p, const uint8_t *end)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | (p + i < end ? p[i] : 0);
    return v;
}

uint16_t fuzz_u16(const uint8_t *p, const uint8_t *end)
{
    return (uint16_t)((p < end ? p[0] : 0) | (p + 1 < end ? p[1] : 0) << 8);
}
