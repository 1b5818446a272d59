/* test_env.c — unit tests for env.c and rank discovery (init.c):
 * the value parsers loom_rt_parse_seconds/int/bool/hostport, loom_rt_env_load
 * (each LOOM_* variable's good and bad values), loom_rt_env_unknown (typos)
 * and loom_rt_discover_rank (loomrun, Slurm, Open MPI and PMI variables). */
#include "internal.h"
#include "../tap.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Every variable the code under test reads, so that the tests see only
 * what they set (they may themselves run under Slurm or mpirun). */
static const char *const launcher_vars[] = {
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
};

/* Unset every LOOM_* variable and every launcher variable. */
static void clear_env(void)
{
    for (;;) {
        char name[256] = "";
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "LOOM_", 5)) {
                size_t n = strcspn(*e, "=");
                snprintf(name, sizeof name, "%.*s", (int)n, *e);
                break;
            }
        if (!name[0])
            break;
        unsetenv(name);
    }
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        unsetenv(launcher_vars[i]);
}

/* ---- parsers ---------------------------------------------------------- */

static void test_parse_seconds(void)
{
    static const struct { const char *s; double v; } good[] = {
        {"1", 1.0}, {"0.5", 0.5}, {"2.25", 2.25}, {"1e-3", 1e-3},
        {"1e6", 1e6}, {"1000000", 1e6}, {"60.0", 60.0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double d = -7;
        int rc = loom_rt_parse_seconds(good[i].s, &d);
        ok(rc == 0 && d == good[i].v, "parse_seconds('%s') = %g (got rc %d, %g)",
           good[i].s, good[i].v, rc, d);
    }
    static const char *const bad[] = {
        "", "0", "0.0", "-1", "-0.5", "1000000.5", "1e7", "abc", "5s", "1.5 ",
        "inf", "nan", "1e999", "--1", "1e-300", "0.0009", "1e-4",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double d = -7;
        int rc = loom_rt_parse_seconds(bad[i], &d);
        ok(rc == -1 && d == -7, "parse_seconds('%s') rejected, output untouched", bad[i]);
    }
}

static void test_parse_int(void)
{
    long v = -99;
    ok(!loom_rt_parse_int("42", 0, 100, &v) && v == 42, "parse_int('42', 0..100) = 42");
    ok(!loom_rt_parse_int("0", 0, 100, &v) && v == 0, "parse_int lower bound accepted");
    ok(!loom_rt_parse_int("100", 0, 100, &v) && v == 100, "parse_int upper bound accepted");
    ok(!loom_rt_parse_int("-10", -10, 10, &v) && v == -10, "parse_int negative lower bound");

    char buf[64];
    snprintf(buf, sizeof buf, "%ld", LONG_MAX);
    ok(!loom_rt_parse_int(buf, 0, LONG_MAX, &v) && v == LONG_MAX, "parse_int LONG_MAX");

    static const struct { const char *s; long lo, hi; } bad[] = {
        {"-1", 0, 100}, {"101", 0, 100}, {"-11", -10, 10}, {"", 0, 100},
        {"abc", 0, 100}, {"12a", 0, 100}, {"1.5", 0, 100}, {"7 ", 0, 100},
        {"99999999999999999999999", 0, LONG_MAX},
        {"-99999999999999999999999", LONG_MIN, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = -99;
        int rc = loom_rt_parse_int(bad[i].s, bad[i].lo, bad[i].hi, &v);
        ok(rc == -1 && v == -99, "parse_int('%s', %ld..%ld) rejected, output untouched",
           bad[i].s, bad[i].lo, bad[i].hi);
    }
}

static void test_parse_bool(void)
{
    static const struct { const char *s; int v; } good[] = {
        {"1", 1}, {"true", 1}, {"yes", 1}, {"on", 1}, {"TRUE", 1}, {"Yes", 1}, {"ON", 1},
        {"0", 0}, {"false", 0}, {"no", 0}, {"off", 0}, {"FALSE", 0}, {"No", 0}, {"oFF", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int b = -1;
        int rc = loom_rt_parse_bool(good[i].s, &b);
        ok(rc == 0 && b == good[i].v, "parse_bool('%s') = %d", good[i].s, good[i].v);
    }
    static const char *const bad[] = {"", "2", "-1", "tru", "yess", "y", "n", "enabled", " on"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int b = -1;
        int rc = loom_rt_parse_bool(bad[i], &b);
        ok(rc == -1 && b == -1, "parse_bool('%s') rejected", bad[i]);
    }
}

static void test_parse_hostport(void)
{
    static const struct { const char *s, *host; int port; } good[] = {
        {"localhost:7000", "localhost", 7000},
        {"10.0.0.1:1", "10.0.0.1", 1},
        {"h:65535", "h", 65535},
        {"[::1]:80", "::1", 80},
        {"[fe80::1%eth0]:7000", "fe80::1%eth0", 7000},
        {"node-01.cluster:12345", "node-01.cluster", 12345},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char host[64] = "";
        int port = -1;
        int rc = loom_rt_parse_hostport(good[i].s, host, sizeof host, &port);
        ok(rc == 0 && !strcmp(host, good[i].host) && port == good[i].port,
           "parse_hostport('%s') = '%s' port %d (got rc %d, '%s', %d)", good[i].s,
           good[i].host, good[i].port, rc, host, port);
    }
    static const char *const bad[] = {
        "", "localhost", "h:0", "h:65536", "h:", ":80", "h:-1", "h:80x", "h:8 0",
        "[::1]", "[::1]80", "[::1]x8080", "[::1]]:80", "[::1]:", "[]:80", "[::1:80",
        "[::1]:0", "[::1]:70000",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char host[64] = "untouched";
        int port = -1;
        int rc = loom_rt_parse_hostport(bad[i], host, sizeof host, &port);
        ok(rc == -1 && port == -1 && !strcmp(host, "untouched"),
           "parse_hostport('%s') rejected", bad[i]);
    }
    /* The host must fit with its terminating NUL. */
    char host[4] = "";
    int port = -1;
    ok(!loom_rt_parse_hostport("abc:9", host, sizeof host, &port) && !strcmp(host, "abc") &&
           port == 9, "parse_hostport: host of hostlen-1 chars fits");
    ok(loom_rt_parse_hostport("abcd:9", host, sizeof host, &port) == -1,
       "parse_hostport: host of hostlen chars rejected");
    ok(loom_rt_parse_hostport("[abcd]:9", host, sizeof host, &port) == -1,
       "parse_hostport: bracketed host of hostlen chars rejected");
}

/* ---- loom_rt_env_load ---------------------------------------------------- */

static int load(char *err, size_t n)
{
    err[0] = 0;
    return loom_rt_env_load(err, n);
}

static void test_env_defaults(void)
{
    char err[512];
    clear_env();
    is_int(load(err, sizeof err), LOOM_OK, "env_load with no LOOM_ variables: LOOM_OK");
    ok(loom_rt_icv.timeout == 6.0, "default LOOM_TIMEOUT is 6 s (got %g)", loom_rt_icv.timeout);
    ok(loom_rt_icv.join_timeout == 60.0, "default LOOM_JOIN_TIMEOUT is 60 s (got %g)",
       loom_rt_icv.join_timeout);
    is_str(loom_rt_icv.rsh, "ssh", "default LOOM_RSH is ssh");
    is_str(loom_rt_icv.rendezvous, "", "default LOOM_RENDEZVOUS is empty");
    is_int(loom_rt_icv.have_key, 0, "no job key by default");
    is_int(loom_rt_icv.display_env, 0, "LOOM_DISPLAY_ENV off by default");
}

/* Set name=value, load, expect LOOM_OK; unset name again. */
static int load_good(const char *name, const char *value)
{
    char err[512];
    setenv(name, value, 1);
    int rc = load(err, sizeof err);
    unsetenv(name);
    if (rc != LOOM_OK)
        diag("%s='%s': unexpected error: %s", name, value, err);
    return rc == LOOM_OK;
}

/* Set name=value, load, expect LOOM_ERR_ENV with a message that names the
 * variable, repeats the value (its first LOOM_SHOWN_MAX bytes and "...",
 * if longer) and contains `allowed`. */
static void load_bad(const char *name, const char *value, const char *allowed)
{
    char err[512], sh[LOOM_SHOWN_BUF], shown[LOOM_SHOWN_BUF + 2];
    snprintf(shown, sizeof shown, "'%s'", loom_rt_shown(value, strlen(value), sh, sizeof sh));
    setenv(name, value, 1);
    int rc = load(err, sizeof err);
    unsetenv(name);
    is_int(rc, LOOM_ERR_ENV, "%s='%s' -> LOOM_ERR_ENV", name, value);
    ok(strstr(err, name) && strstr(err, allowed) && strstr(err, shown),
       "%s='%s': message names the variable, value and what is allowed", name, value);
    if (!(strstr(err, name) && strstr(err, allowed)))
        diag("message was: %s", err);
}

static void test_env_load(void)
{
    clear_env();

    ok(load_good("LOOM_TIMEOUT", "2.5") && loom_rt_icv.timeout == 2.5,
       "LOOM_TIMEOUT=2.5 sets timeout");
    ok(load_good("LOOM_TIMEOUT", "1e6") && loom_rt_icv.timeout == 1e6,
       "LOOM_TIMEOUT=1e6 (the largest) accepted");
    load_bad("LOOM_TIMEOUT", "0", "seconds from 0.001 to 1e6");
    load_bad("LOOM_JOIN_TIMEOUT", "1e-300", "seconds from 0.001 to 1e6");
    /* a value's control bytes are not echoed (no escape sequence reaches
     * the terminal): each shows as '?' */
    char err[512];
    setenv("LOOM_TIMEOUT", "\033]0;PWNED\007", 1);
    load(err, sizeof err);
    unsetenv("LOOM_TIMEOUT");
    ok(!strpbrk(err, "\033\007") && strstr(err, "'?]0;PWNED?'"),
       "control bytes of a bad value are shown as '?' (message: %s)", err);
    load_bad("LOOM_TIMEOUT", "-3", "seconds from 0.001 to 1e6");
    load_bad("LOOM_TIMEOUT", "5s", "seconds from 0.001 to 1e6");
    load_bad("LOOM_TIMEOUT", "", "seconds from 0.001 to 1e6");
    load_bad("LOOM_TIMEOUT", " 2", "seconds from 0.001 to 1e6");
    load_bad("LOOM_TIMEOUT", "+2", "seconds from 0.001 to 1e6");
    load_bad("LOOM_TIMEOUT", "0x1p3", "seconds from 0.001 to 1e6");
    {
        char err[512];
        ok(load(err, sizeof err) == LOOM_OK && loom_rt_icv.timeout == 6.0,
           "with LOOM_TIMEOUT unset again, a reload gives the default 6 s");
    }

    ok(load_good("LOOM_JOIN_TIMEOUT", "0.25") && loom_rt_icv.join_timeout == 0.25,
       "LOOM_JOIN_TIMEOUT=0.25 sets join_timeout");
    load_bad("LOOM_JOIN_TIMEOUT", "never", "seconds from 0.001 to 1e6");
    load_bad("LOOM_JOIN_TIMEOUT", "inf", "seconds from 0.001 to 1e6");

    ok(load_good("LOOM_RENDEZVOUS", "10.0.0.1:7000") &&
           !strcmp(loom_rt_icv.rendezvous, "10.0.0.1:7000"),
       "LOOM_RENDEZVOUS=10.0.0.1:7000 sets rendezvous");
    ok(load_good("LOOM_RENDEZVOUS", "[::1]:7001") && !strcmp(loom_rt_icv.rendezvous, "[::1]:7001"),
       "LOOM_RENDEZVOUS=[::1]:7001 sets rendezvous");
    load_bad("LOOM_RENDEZVOUS", "10.0.0.1", "host:port");
    load_bad("LOOM_RENDEZVOUS", "10.0.0.1:0", "host:port");
    load_bad("LOOM_RENDEZVOUS", "10.0.0.1:65536", "host:port");
    load_bad("LOOM_RENDEZVOUS", "::1:80", "host:port");
    load_bad("LOOM_RENDEZVOUS", "h: 80", "host:port");
    { /* a 253-byte host is a host, but with its port it would not fit the
       * 256 bytes kept: refused whole, never kept cut (found by fuzz_env) */
        char v[300];
        memset(v, 'h', 253);
        snprintf(v + 253, sizeof v - 253, ":7000");
        load_bad("LOOM_RENDEZVOUS", v, "host:port");
        is_str(loom_rt_icv.rendezvous, "", "the refused value is not kept");
    }

    static const uint8_t key[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
    ok(load_good("LOOM_JOB_KEY", "00112233445566778899AABBCCDDEEFF") && loom_rt_icv.have_key &&
           !memcmp(loom_rt_icv.job_key, key, 16),
       "LOOM_JOB_KEY=<32 hex digits> sets the key");
    load_bad("LOOM_JOB_KEY", "00112233445566778899aabbccddeef", "32 hexadecimal digits");
    load_bad("LOOM_JOB_KEY", "00112233445566778899aabbccddeeff0", "32 hexadecimal digits");
    load_bad("LOOM_JOB_KEY", "0011223344556677-899aabbccddeeff", "32 hexadecimal digits");

    ok(load_good("LOOM_DISPLAY_ENV", "verbose") && loom_rt_icv.display_env == 2,
       "LOOM_DISPLAY_ENV=verbose -> 2");
    ok(load_good("LOOM_DISPLAY_ENV", "VERBOSE") && loom_rt_icv.display_env == 2,
       "LOOM_DISPLAY_ENV=VERBOSE -> 2");
    ok(load_good("LOOM_DISPLAY_ENV", "true") && loom_rt_icv.display_env == 1,
       "LOOM_DISPLAY_ENV=true -> 1");
    ok(load_good("LOOM_DISPLAY_ENV", "off") && loom_rt_icv.display_env == 0,
       "LOOM_DISPLAY_ENV=off -> 0");
    ok(load_good("LOOM_DISPLAY_ENV", "1") && loom_rt_icv.display_env == 1,
       "LOOM_DISPLAY_ENV=1 -> 1");
    load_bad("LOOM_DISPLAY_ENV", "maybe", "true, false or verbose");
    load_bad("LOOM_DISPLAY_ENV", "2", "true, false or verbose");

    ok(load_good("LOOM_RSH", "ip netns exec") && !strcmp(loom_rt_icv.rsh, "ip netns exec"),
       "LOOM_RSH='ip netns exec' sets rsh");
    load_bad("LOOM_RSH", "", "remote-shell command");
    char longv[300];
    memset(longv, 'x', sizeof longv - 1);
    longv[sizeof longv - 1] = 0;
    load_bad("LOOM_RSH", longv, "remote-shell command");
    {   /* a value longer than the message buffer: still says what is wrong
         * (found by tests/fuzz/fuzz_env) */
        static char huge[2000];
        memset(huge, '7', sizeof huge - 1);
        load_bad("LOOM_TIMEOUT", huge, "seconds from 0.001 to 1e6");
        char name[700] = "LOOM_COHERENCE_", err[512];
        memset(name + 15, 'N', sizeof name - 16);
        setenv(name, "bsp", 1);
        int rc = load(err, sizeof err);
        unsetenv(name);
        ok(rc == LOOM_ERR_ENV && strstr(err, "is not valid: expected LOOM_COHERENCE_<NAME>"),
           "a 684-byte LOOM_COHERENCE_<NAME> is refused with a whole message");
    }
    {
        char err[512];
        ok(load(err, sizeof err) == LOOM_OK, "reload with LOOM_RSH unset");
        is_str(loom_rt_icv.rsh, "ssh", "with LOOM_RSH unset again, rsh is the default ssh");
    }

    ok(load_good("LOOM_RENDEZVOUS_HOST", "192.168.1.5") &&
           !strcmp(loom_rt_icv.rendezvous_host, "192.168.1.5"),
       "LOOM_RENDEZVOUS_HOST=192.168.1.5 sets rendezvous_host");
    load_bad("LOOM_RENDEZVOUS_HOST", "", "address ranks use");

    /* Checkpoints (docs/checkpoint.md). */
    {
        char err[512];
        clear_env();
        ok(load(err, sizeof err) == LOOM_OK && !loom_rt_icv.checkpoint_dir[0] &&
               loom_rt_icv.checkpoint_every == 0 && loom_rt_icv.checkpoint_sync == 1 &&
               loom_rt_icv.restart == LOOM_RESTART_NO && loom_rt_icv.test_kill.rank == -1,
           "checkpoint defaults: no directory, never, fsync on, no restart, no test kill");
    }
    ok(load_good("LOOM_CHECKPOINT_DIR", "/tmp/ck") && !strcmp(loom_rt_icv.checkpoint_dir, "/tmp/ck"),
       "LOOM_CHECKPOINT_DIR=/tmp/ck sets checkpoint_dir");
    load_bad("LOOM_CHECKPOINT_DIR", "", "directory path");
    load_bad("LOOM_CHECKPOINT_EVERY", "5", "is not usable without LOOM_CHECKPOINT_DIR");
    load_bad("LOOM_RESTART", "true", "is not usable without LOOM_CHECKPOINT_DIR");
    setenv("LOOM_CHECKPOINT_DIR", "ck", 1);
    ok(load_good("LOOM_CHECKPOINT_EVERY", "5") && loom_rt_icv.checkpoint_every == 5,
       "LOOM_CHECKPOINT_EVERY=5 (with a directory) sets checkpoint_every");
    ok(load_good("LOOM_CHECKPOINT_EVERY", "0") && loom_rt_icv.checkpoint_every == 0,
       "LOOM_CHECKPOINT_EVERY=0: never");
    ok(load_good("LOOM_CACHE_BYTES", "64M") && loom_rt_icv.cache_bytes == 64u << 20,
       "LOOM_CACHE_BYTES=64M is 64 MiB");
    ok(load_good("LOOM_CACHE_BYTES", "1.5k") && loom_rt_icv.cache_bytes == 1536,
       "LOOM_CACHE_BYTES=1.5k is 1536 bytes");
    ok(load_good("LOOM_CACHE_BYTES", "4096") && loom_rt_icv.cache_bytes == 4096,
       "LOOM_CACHE_BYTES=4096 is 4096 bytes");
    ok(load_good("LOOM_CACHE_BYTES", "0") && loom_rt_icv.cache_bytes == 0, "LOOM_CACHE_BYTES=0: no cap");
    load_bad("LOOM_CACHE_BYTES", "12Q", "a byte count >= 0, optionally with K, M or G");
    load_bad("LOOM_CACHE_BYTES", "-1", "a byte count >= 0");
    load_bad("LOOM_CACHE_BYTES", "1MB", "a byte count >= 0");
    load_bad("LOOM_CACHE_BYTES", "", "a byte count >= 0");
    load_bad("LOOM_CHECKPOINT_EVERY", "-1", "integer >= 0");
    load_bad("LOOM_CHECKPOINT_EVERY", "1.5", "integer >= 0");
    load_bad("LOOM_CHECKPOINT_EVERY", "often", "integer >= 0");
    ok(load_good("LOOM_RESTART", "true") && loom_rt_icv.restart == LOOM_RESTART_YES,
       "LOOM_RESTART=true (with a directory) -> yes");
    ok(load_good("LOOM_RESTART", "AUTO") && loom_rt_icv.restart == LOOM_RESTART_AUTO,
       "LOOM_RESTART=AUTO -> auto");
    ok(load_good("LOOM_RESTART", "0") && loom_rt_icv.restart == LOOM_RESTART_NO,
       "LOOM_RESTART=0 -> no");
    load_bad("LOOM_RESTART", "sometimes", "true, false or auto");
    unsetenv("LOOM_CHECKPOINT_DIR");
    ok(load_good("LOOM_CHECKPOINT_SYNC", "off") && loom_rt_icv.checkpoint_sync == 0,
       "LOOM_CHECKPOINT_SYNC=off turns fsync off");
    load_bad("LOOM_CHECKPOINT_SYNC", "lazy", "true or false");
    ok(load_good("LOOM_CHECKPOINT_CHAIN", "1") && loom_rt_icv.checkpoint_chain == 1,
       "LOOM_CHECKPOINT_CHAIN=1: every checkpoint whole");
    load_bad("LOOM_CHECKPOINT_CHAIN", "0", "integer >= 1");
    ok(load_good("LOOM_TEST_KILL", "1:8") && loom_rt_icv.test_kill.rank == 1 &&
           loom_rt_icv.test_kill.clock == 8 && loom_rt_icv.test_kill.point == LOOM_KILL_CLOCK,
       "LOOM_TEST_KILL=1:8 -> rank 1, clock 8, after the clock");
    ok(load_good("LOOM_TEST_KILL", "0:3:Write") && loom_rt_icv.test_kill.rank == 0 &&
           loom_rt_icv.test_kill.clock == 3 && loom_rt_icv.test_kill.point == LOOM_KILL_WRITE,
       "LOOM_TEST_KILL=0:3:Write -> rank 0, clock 3, mid-write");
    static const char *const bad_kill[] = {"1", "1:0", "a:1", "-1:2", "1:2:later", "1:2:stop:x",
                                           "1::2", ":1:2"};
    for (size_t i = 0; i < sizeof bad_kill / sizeof bad_kill[0]; i++)
        load_bad("LOOM_TEST_KILL", bad_kill[i], "RANK:CLOCK");

    /* The rank variables are checked by loom_rt_discover_rank, not here. */
    ok(load_good("LOOM_RANK", "3"), "LOOM_RANK accepted by env_load");
    ok(load_good("LOOM_NRANKS", "4"), "LOOM_NRANKS accepted by env_load");
    ok(load_good("LOOM_LOCAL_RANK", "0"), "LOOM_LOCAL_RANK accepted by env_load");

    /* Several variables at once. */
    setenv("LOOM_TIMEOUT", "3", 1);
    setenv("LOOM_JOIN_TIMEOUT", "30", 1);
    setenv("LOOM_RENDEZVOUS", "host1:5000", 1);
    int rc = load(err, sizeof err);
    ok(rc == LOOM_OK && loom_rt_icv.timeout == 3 && loom_rt_icv.join_timeout == 30 &&
           !strcmp(loom_rt_icv.rendezvous, "host1:5000"),
       "three variables set at once all take effect");
    clear_env();
}

/* ---- loom_rt_env_unknown ------------------------------------------------- */

static void test_env_unknown(void)
{
    char buf[256];
    clear_env();
    is_int(loom_rt_env_unknown(buf, sizeof buf), 0, "no LOOM_ variables: none unknown");
    is_str(buf, "", "no LOOM_ variables: empty list");

    static const char *const known[] = {
        "LOOM_RANK", "LOOM_NRANKS", "LOOM_LOCAL_RANK", "LOOM_RENDEZVOUS", "LOOM_JOB_KEY",
        "LOOM_TIMEOUT", "LOOM_JOIN_TIMEOUT", "LOOM_DISPLAY_ENV", "LOOM_RSH",
        "LOOM_RENDEZVOUS_HOST", "LOOM_CHECKPOINT_DIR", "LOOM_CHECKPOINT_EVERY",
        "LOOM_CHECKPOINT_SYNC", "LOOM_RESTART", "LOOM_TEST_KILL",
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        setenv(known[i], "1", 1);
    setenv("LOOMX", "1", 1);           /* not a LOOM_ variable */
    setenv("NOT_LOOM_TIMEOTU", "1", 1);
    is_int(loom_rt_env_unknown(buf, sizeof buf), 0, "every known variable set: none unknown");

    setenv("LOOM_TIMEOTU", "5", 1);
    is_int(loom_rt_env_unknown(buf, sizeof buf), 1, "LOOM_TIMEOTU reported as unknown");
    is_str(buf, "LOOM_TIMEOTU", "the list names LOOM_TIMEOTU");

    setenv("LOOM_RAN", "1", 1);        /* prefix of a known name */
    setenv("LOOM_TIMEOUTS", "1", 1);   /* a known name plus a letter */
    is_int(loom_rt_env_unknown(buf, sizeof buf), 3, "prefixes/extensions of known names are unknown");
    has_str(buf, "LOOM_RAN", "list names LOOM_RAN");
    has_str(buf, "LOOM_TIMEOUTS", "list names LOOM_TIMEOUTS");
    has_str(buf, ", ", "names separated by ', '");
    ok(!strstr(buf, "LOOM_TIMEOUT,") && !strstr(buf, "LOOM_RANK") && !strstr(buf, "="),
       "known names and values are not listed (got '%s')", buf);

    char small[10];
    memset(small, '@', sizeof small);
    int n = loom_rt_env_unknown(small, sizeof small);
    is_int(n, 3, "a short buffer still counts every unknown variable");
    ok(memchr(small, 0, sizeof small) != NULL, "a short buffer stays NUL-terminated");

    unsetenv("NOT_LOOM_TIMEOTU");
    unsetenv("LOOMX");
    clear_env();
}

/* ---- loom_rt_discover_rank ----------------------------------------------- */

static void set3(const char *a, const char *av, const char *b, const char *bv,
                 const char *c, const char *cv)
{
    if (a) setenv(a, av, 1);
    if (b) setenv(b, bv, 1);
    if (c) setenv(c, cv, 1);
}

/* Poison the result so that a test sees what discover_rank wrote. */
static int discover(char *err, size_t n)
{
    loom_rt_icv.rank = loom_rt_icv.nranks = loom_rt_icv.local_rank = -42;
    loom_rt_icv.source = (loom_rank_source)-1;
    err[0] = 0;
    return loom_rt_discover_rank(err, n);
}

static void expect_rank(const char *what, int rank, int nranks, int local,
                        loom_rank_source src)
{
    char err[512];
    int rc = discover(err, sizeof err);
    ok(rc == LOOM_OK && loom_rt_icv.rank == rank && loom_rt_icv.nranks == nranks &&
           loom_rt_icv.local_rank == local && loom_rt_icv.source == src,
       "%s: rank %d of %d, local %d, source %d (got rc %d, %d of %d, local %d, source %d)",
       what, rank, nranks, local, (int)src, rc, loom_rt_icv.rank, loom_rt_icv.nranks,
       loom_rt_icv.local_rank, (int)loom_rt_icv.source);
    if (rc != LOOM_OK)
        diag("error: %s", err);
}

/* Expect LOOM_ERR_ENV and a message containing both strings. */
static void expect_error(const char *what, const char *s1, const char *s2)
{
    char err[512];
    int rc = discover(err, sizeof err);
    is_int(rc, LOOM_ERR_ENV, "%s: LOOM_ERR_ENV", what);
    ok(strstr(err, s1) && (!s2 || strstr(err, s2)), "%s: message mentions %s%s%s", what, s1,
       s2 ? " and " : "", s2 ? s2 : "");
    if (!(strstr(err, s1) && (!s2 || strstr(err, s2))))
        diag("message was: %s", err);
}

static void test_discover_rank(void)
{
    clear_env();
    expect_rank("no launcher", 0, 1, 0, LOOM_SRC_SINGLETON);

    set3("LOOM_RANK", "2", "LOOM_NRANKS", "4", "LOOM_LOCAL_RANK", "1");
    expect_rank("loomrun", 2, 4, 1, LOOM_SRC_LOOMRUN);
    clear_env();

    set3("SLURM_PROCID", "3", "SLURM_NTASKS", "8", "SLURM_LOCALID", "3");
    expect_rank("Slurm", 3, 8, 3, LOOM_SRC_SLURM);
    clear_env();

    set3("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2",
         "OMPI_COMM_WORLD_LOCAL_RANK", "1");
    expect_rank("Open MPI", 1, 2, 1, LOOM_SRC_MPIRUN);
    clear_env();

    set3("PMI_RANK", "5", "PMI_SIZE", "6", "MPI_LOCALRANKID", "2");
    expect_rank("PMI (Hydra)", 5, 6, 2, LOOM_SRC_PMI);
    clear_env();

    set3("PMI_RANK", "0", "PMI_SIZE", "1", NULL, NULL);
    expect_rank("PMI without a local rank: local 0", 0, 1, 0, LOOM_SRC_PMI);
    clear_env();

    set3("LOOM_RANK", "1048575", "LOOM_NRANKS", "1048576", NULL, NULL);
    expect_rank("largest job (2^20 ranks)", 1048575, 1048576, 0, LOOM_SRC_LOOMRUN);
    clear_env();

    /* Precedence: loomrun > Slurm > Open MPI > PMI. */
    set3("LOOM_RANK", "1", "LOOM_NRANKS", "2", "LOOM_LOCAL_RANK", "0");
    set3("SLURM_PROCID", "5", "SLURM_NTASKS", "6", "SLURM_LOCALID", "1");
    set3("PMI_RANK", "3", "PMI_SIZE", "4", NULL, NULL);
    expect_rank("LOOM_RANK wins over SLURM_PROCID", 1, 2, 0, LOOM_SRC_LOOMRUN);
    unsetenv("LOOM_RANK");
    unsetenv("LOOM_NRANKS");
    unsetenv("LOOM_LOCAL_RANK");
    set3("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "9", NULL, NULL);
    expect_rank("Slurm wins over Open MPI and PMI", 5, 6, 1, LOOM_SRC_SLURM);
    clear_env();
    set3("OMPI_COMM_WORLD_RANK", "7", "OMPI_COMM_WORLD_SIZE", "9", NULL, NULL);
    set3("PMI_RANK", "3", "PMI_SIZE", "4", NULL, NULL);
    expect_rank("Open MPI wins over PMI", 7, 9, 0, LOOM_SRC_MPIRUN);
    clear_env();

    /* Errors. */
    set3("LOOM_RANK", "4", "LOOM_NRANKS", "4", NULL, NULL);
    expect_error("LOOM_RANK=4 of 4", "LOOM_RANK", "0..3");
    clear_env();
    set3("SLURM_PROCID", "2", "SLURM_NTASKS", "1", NULL, NULL);
    expect_error("SLURM_PROCID=2 of 1", "SLURM_PROCID", "0..0");
    clear_env();
    set3("LOOM_RANK", "-1", "LOOM_NRANKS", "4", NULL, NULL);
    expect_error("LOOM_RANK=-1", "LOOM_RANK", NULL);
    clear_env();
    set3("LOOM_RANK", "zero", "LOOM_NRANKS", "4", NULL, NULL);
    expect_error("LOOM_RANK=zero", "LOOM_RANK", NULL);
    clear_env();
    set3("LOOM_RANK", "0", "LOOM_NRANKS", "0", NULL, NULL);
    expect_error("LOOM_NRANKS=0", "LOOM_NRANKS", ">= 1");
    clear_env();
    set3("LOOM_RANK", "0", "LOOM_NRANKS", "1048577", NULL, NULL);
    expect_error("LOOM_NRANKS=2^20+1", "LOOM_NRANKS", NULL);
    clear_env();
    set3("LOOM_RANK", "0", "LOOM_NRANKS", "2", "LOOM_LOCAL_RANK", "-1");
    expect_error("LOOM_LOCAL_RANK=-1", "LOOM_LOCAL_RANK", ">= 0");
    clear_env();
    set3("LOOM_RANK", "0", NULL, NULL, NULL, NULL);
    expect_error("LOOM_RANK without LOOM_NRANKS", "LOOM_RANK is set but LOOM_NRANKS is not",
                 NULL);
    clear_env();
    set3("SLURM_NTASKS", "4", NULL, NULL, NULL, NULL);
    expect_error("SLURM_NTASKS without SLURM_PROCID",
                 "SLURM_NTASKS is set but SLURM_PROCID is not", NULL);
    clear_env();
    set3("LOOM_NRANKS", "2", "SLURM_PROCID", "0", "SLURM_NTASKS", "2");
    expect_error("a half-set loomrun pair is not skipped for Slurm", "LOOM_NRANKS",
                 "LOOM_RANK");
    clear_env();
}

int main(void)
{
    test_parse_seconds();
    test_parse_int();
    test_parse_bool();
    test_parse_hostport();
    test_env_defaults();
    test_env_load();
    test_env_unknown();
    test_discover_rank();
    return done_testing();
}
