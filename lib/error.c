/* error.c — error strings, the runtime's one-line messages, loom_abort. */
#include "internal.h"

#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const messages[LOOM_ERR_COUNT] = {
    [LOOM_OK] = "success",
    [LOOM_ERR_ARG] = "invalid argument",
    [LOOM_ERR_ENV] = "invalid LOOM_* environment variable",
    [LOOM_ERR_NOMEM] = "out of memory",
    [LOOM_ERR_STATE] = "Loom is not initialized (or already finalized)",
    [LOOM_ERR_NET] = "transport failure",
    [LOOM_ERR_PEER] = "another rank of the job failed",
    [LOOM_ERR_KEY] = "job key refused",
    [LOOM_ERR_TIMEOUT] = "timed out",
    [LOOM_ERR_IO] = "input/output error",
    [LOOM_ERR_FORMAT] = "malformed input",
};

const char *loom_rt_shown(const void *s, size_t len, char *buf, size_t n)
{
    const unsigned char *p = s;
    size_t k = 0, max = len < LOOM_SHOWN_MAX ? len : LOOM_SHOWN_MAX;
    if (!n)
        return buf;
    for (size_t i = 0; i < max && k + 4 < n; i++)
        buf[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    if (k < len && k + 3 < n) /* cut: say so */
        memcpy(buf + k, "...", 3), k += 3;
    buf[k] = 0;
    return buf;
}

const char *loom_strerror(int err)
{
    if (err < 0 || err >= LOOM_ERR_COUNT)
        return "unknown Loom error code";
    return messages[err];
}

/* Formats the prefix and message into one buffer and writes it with a
 * single write(2), so lines from threads and ranks never interleave. */
static void vlog(const char *fmt, va_list ap)
{
    char buf[1024];
    int n;
    if (loom_rt_state == 1 && loom_rt_icv.nranks > 1)
        n = snprintf(buf, sizeof buf, "loom: rank %d: ", loom_rt_icv.rank);
    else
        n = snprintf(buf, sizeof buf, "loom: ");
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

void loom_rt_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void loom_rt_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
    _exit(code);
}

int loom_rt_exit_status(int64_t code)
{
    return code >= 1 && code <= 255 ? (int)code : 1;
}

void loom_abort(int code, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    code = loom_rt_exit_status(code);
    /* An app's message already names it ("loom-mf: FILE:LINE: ..."): shown
     * as it is, the form docs/data.md documents; the runtime's own are
     * "loom: rank R: abort: ...". */
    size_t n = strlen(program_invocation_short_name);
    if (!strncmp(why, program_invocation_short_name, n) && why[n] == ':') {
        char line[sizeof why + 1];
        int len = snprintf(line, sizeof line, "%s\n", why);
        ssize_t w = write(2, line, (size_t)(len < (int)sizeof line ? len : (int)sizeof line - 1));
        (void)w;
    } else {
        loom_rt_log("abort: %s", why);
    }
    fflush(stdout);
    loom_rt_join_abort(code, why);
    _exit(code);
}
