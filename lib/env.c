/* env.c — every LOOM_* variable, read once into internal control variables.
 *
 * As in libgomp's env.c, the environment is parsed once (at loom_init, or
 * by loomrun at start) into the struct loom_rt_icv; nothing else in Loom calls
 * getenv for a LOOM_* name.  The table below is the single list of
 * variables: docs/env.md documents each, LOOM_DISPLAY_ENV prints them, and
 * a variable set in the environment but missing here draws a warning (a
 * typo must not silently fall back to a default).  UCX_* variables are not
 * read here: UCX reads them itself. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ICV_DEFAULTS                          \
    .rank = 0, .nranks = 1, .local_rank = 0,  \
    .timeout = 6.0, .join_timeout = 60.0, .rsh = "ssh", \
    .dsm_arena = (size_t)1 << 40, \
    .test_kill = {.rank = -1}, .checkpoint_sync = 1, .checkpoint_chain = 8

struct loom_rt_icv loom_rt_icv = {ICV_DEFAULTS};

/* Plain decimal only: no leading space or '+', no hex, no exponent games
 * beyond what a person writes ("2", "0.5", "1e3"). */
static int plain_number(const char *s, int allow_minus)
{
    if (allow_minus && *s == '-')
        s++;
    if (!(*s >= '0' && *s <= '9') && *s != '.')
        return 0;
    return strpbrk(s, "xXpP") == NULL;
}

int loom_rt_parse_seconds(const char *s, double *out)
{
    char *end;
    if (!plain_number(s, 0))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 1e-3 || v > 1e6)
        return -1;
    *out = v;
    return 0;
}

int loom_rt_parse_number(const char *s, double lo, double hi, double *out)
{
    char *end;
    if (!plain_number(s, 0))
        return -1;
    double x = strtod(s, &end);
    if (*end || !(x >= lo && x <= hi))
        return -1;
    *out = x;
    return 0;
}

int loom_rt_parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (!plain_number(s, 1) || strchr(s, '.'))
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int loom_rt_parse_bool(const char *s, int *out)
{
    static const char *yes[] = {"1", "true", "yes", "on"};
    static const char *no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) { *out = 1; return 0; }
        if (!strcasecmp(s, no[i])) { *out = 0; return 0; }
    }
    return -1;
}

/* A POSIX shell's word splitting without expansions: blanks separate
 * words; '...' keeps everything; "..." keeps everything but \ before
 * $ ` " \ or a newline; \ outside quotes keeps the next byte.  What a shell
 * would expand or redirect ($ ` | & ; < > ( ) unquoted) is refused: the
 * words are run with execvp, not by a shell, and must not mean something
 * else than they would there.  One allocation: the pointers, then the
 * words (free the result with free).  Returns NULL with the reason in err
 * when s is not such a list or holds no word. */
char **loom_rt_parse_words(const char *s, char *err, size_t errlen)
{
    size_t len = strlen(s), nmax = len / 2 + 2;
    char **w = malloc(nmax * sizeof *w + len + 1);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char *o = (char *)(w + nmax);
    size_t n = 0;
    const char *why = NULL;
    while (*s && !why) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s)
            break;
        w[n++] = o;
        char q = 0;
        for (; *s && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
            if (q == '\'') {
                if (*s == '\'')
                    q = 0;
                else
                    *o++ = *s;
            } else if (q == '"') {
                if (*s == '"')
                    q = 0;
                else if (*s == '\\' && s[1] && strchr("$`\"\\\n", s[1]))
                    *o++ = *++s;
                else if (*s == '$' || *s == '`') {
                    why = "a shell expansion ($ or `) it would not expand";
                    break;
                } else
                    *o++ = *s;
            } else if (*s == '\'' || *s == '"')
                q = *s;
            else if (*s == '\\') {
                if (!s[1]) {
                    why = "a trailing backslash";
                    break;
                }
                *o++ = *++s;
            } else if (strchr("$`|&;<>()", *s)) {
                why = "a shell operator or expansion ($ ` | & ; < > ( )) it would not run";
                break;
            } else
                *o++ = *s;
        }
        if (q && !why)
            why = "an unterminated quote";
        *o++ = 0;
    }
    if (!why && !n)
        why = "no command";
    if (why) {
        snprintf(err, errlen, "%s", why);
        free(w);
        return NULL;
    }
    w[n] = NULL;
    return w;
}

/* "host:port" or "[v6addr]:port", port 1..65535. */
int loom_rt_parse_hostport(const char *s, char *host, size_t hostlen, int *port)
{
    const char *colon;
    size_t hl;
    if (s[0] == '[') {
        const char *rb = strchr(s, ']');
        if (!rb || rb[1] != ':')
            return -1;
        hl = (size_t)(rb - s - 1);
        s++;
        colon = rb + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || memchr(s, ':', (size_t)(colon - s)))
            return -1; /* an IPv6 address needs brackets */
        hl = (size_t)(colon - s);
    }
    long p;
    if (hl == 0 || hl >= hostlen || loom_rt_parse_int(colon + 1, 1, 65535, &p))
        return -1;
    memcpy(host, s, hl);
    host[hl] = 0;
    *port = (int)p;
    return 0;
}

/* ---- the table -------------------------------------------------------- */

typedef int (*setter)(const char *value);

static int set_timeout(const char *v) { return loom_rt_parse_seconds(v, &loom_rt_icv.timeout); }
static int set_join_timeout(const char *v) { return loom_rt_parse_seconds(v, &loom_rt_icv.join_timeout); }
static int set_key(const char *v)
{
    if (loom_rt_key_parse(v, loom_rt_icv.job_key))
        return -1;
    loom_rt_icv.have_key = 1;
    return 0;
}
static int set_display(const char *v)
{
    if (!strcasecmp(v, "verbose")) { loom_rt_icv.display_env = 2; return 0; }
    return loom_rt_parse_bool(v, &loom_rt_icv.display_env);
}
static int set_string(char *dst, size_t n, const char *v)
{
    if (!*v || strlen(v) >= n)
        return -1;
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}
static int set_rendezvous(const char *v)
{
    char host[256];
    int port;
    if (loom_rt_parse_hostport(v, host, sizeof host, &port))
        return -1;
    /* a host of up to 255 bytes and a port need not fit: refused, not cut */
    return set_string(loom_rt_icv.rendezvous, sizeof loom_rt_icv.rendezvous, v);
}
static int set_rsh(const char *v)
{
    char why[128], **w = loom_rt_parse_words(v, why, sizeof why);
    free(w);
    return w ? set_string(loom_rt_icv.rsh, sizeof loom_rt_icv.rsh, v) : -1;
}
static int set_rv_host(const char *v)
{
    return set_string(loom_rt_icv.rendezvous_host, sizeof loom_rt_icv.rendezvous_host, v);
}
static int set_staleness(const char *v)
{
    long x;
    if (loom_rt_parse_int(v, 0, 1000000, &x))
        return -1;
    loom_rt_icv.staleness = (int)x;
    return 0;
}
static int set_stats(const char *v) { return loom_rt_parse_bool(v, &loom_rt_icv.stats); }
static int set_wire(const char *v)
{
    if (!strcasecmp(v, "fp16") || !strcasecmp(v, "fp32")) {
        loom_rt_icv.wire_fp16 = !strcasecmp(v, "fp16");
        return 0;
    }
    return -1;
}
/* Kept as 1 + the boolean: 0 means unset (each allocation's option). */
static int set_merge_avg(const char *v)
{
    int x;
    if (loom_rt_parse_bool(v, &x))
        return -1;
    loom_rt_icv.merge_avg = 1 + x;
    return 0;
}
/* A policy's name, kept as given: the DSM's registry (dsm/policy.c)
 * checks it in loom_init, with a message of the same form. */
static int set_coherence(const char *v)
{
    return set_string(loom_rt_icv.coherence, sizeof loom_rt_icv.coherence, v);
}
/* LOOM_CHECK: comma-separated checks; "dsm" (overwrite conflicts),
 * "serial" (serializable loops), "all"/"1" for every check, "0"/"none"
 * for none. */
static int set_check(const char *v)
{
    char buf[128];
    if (strlen(v) >= sizeof buf)
        return -1;
    strcpy(buf, v);
    loom_rt_icv.check_dsm = loom_rt_icv.check_serial = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int all = !strcasecmp(t, "all") || !strcmp(t, "1");
        if (all || !strcasecmp(t, "dsm"))
            loom_rt_icv.check_dsm = 1;
        if (all || !strcasecmp(t, "serial"))
            loom_rt_icv.check_serial = 1;
        if (!all && strcasecmp(t, "dsm") && strcasecmp(t, "serial") && strcasecmp(t, "none") &&
            strcmp(t, "0"))
            return -1;
    }
    return 0;
}
/* v, a number *x >= 0 with one of the suffixes in units (K, M, G, T: *mult
 * is the power of 1024; a '-' in units admits none, *mult 1); -1 if not. */
static int scan_size(const char *v, const char *units, double *x, double *mult)
{
    char *end;
    if (!plain_number(v, 0))
        return -1;
    *x = strtod(v, &end);
    char u = (char)(*end >= 'a' && *end <= 'z' ? *end - 'a' + 'A' : *end);
    int shift = !u ? 0 : u == 'K' ? 10 : u == 'M' ? 20 : u == 'G' ? 30 : u == 'T' ? 40 : -1;
    if (shift < 0 || (u && end[1]) || !strchr(units, u ? u : '-') || !(*x >= 0))
        return -1;
    *mult = (double)(1ull << shift);
    return 0;
}

static int set_arena(const char *v)
{
    double x, mult;
    if (scan_size(v, "GT", &x, &mult) || !(x >= 1 / 1024.0 && x * mult <= (double)(1ull << 46)))
        return -1;
    loom_rt_icv.dsm_arena = ((size_t)(x * mult) + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
    return 0;
}
/* A byte count, plain or with K, M or G (powers of 1024); 0 = no cap. */
static int set_cache(const char *v)
{
    double x, mult;
    if (scan_size(v, "-KMG", &x, &mult) || !(x * mult < 0x1p62))
        return -1;
    loom_rt_icv.cache_bytes = (size_t)(x * mult);
    return 0;
}
/* LOOM_MEM_LIMIT: checked here, read by the ML library (data/mem.c). */
static int set_mem_limit(const char *v)
{
    double x, mult;
    return scan_size(v, "-KMGT", &x, &mult) || !(x * mult >= 1 && x * mult < 0x1p62) ? -1 : 0;
}
static int set_ckpt_dir(const char *v)
{
    return set_string(loom_rt_icv.checkpoint_dir, sizeof loom_rt_icv.checkpoint_dir, v);
}
static int set_ckpt_every(const char *v)
{
    return loom_rt_parse_int(v, 0, 1L << 40, &loom_rt_icv.checkpoint_every);
}
static int set_ckpt_sync(const char *v) { return loom_rt_parse_bool(v, &loom_rt_icv.checkpoint_sync); }
static int set_ckpt_chain(const char *v)
{
    return loom_rt_parse_int(v, 1, 1000000, &loom_rt_icv.checkpoint_chain);
}
static const char *const restart_names[] = {"false", "true", "auto"};
static int set_restart(const char *v)
{
    if (!strcasecmp(v, "auto")) {
        loom_rt_icv.restart = LOOM_RESTART_AUTO;
        return 0;
    }
    return loom_rt_parse_bool(v, &loom_rt_icv.restart); /* LOOM_RESTART_NO / _YES */
}
static const char *const kill_points[] = {"clock", "stop", "write", "commit"};
/* LOOM_TEST_KILL=RANK:CLOCK[:POINT] (a testing aid). */
static int set_test_kill(const char *v)
{
    char buf[64], *save;
    size_t n = strlen(v);
    if (n >= sizeof buf || !n || v[0] == ':' || v[n - 1] == ':' || strstr(v, "::"))
        return -1; /* strtok_r would skip empty fields */
    strcpy(buf, v);
    const char *r = strtok_r(buf, ":", &save), *c = strtok_r(NULL, ":", &save),
               *p = strtok_r(NULL, ":", &save);
    long rank, clock;
    if (!r || !c || strtok_r(NULL, ":", &save) || loom_rt_parse_int(r, 0, 1 << 20, &rank) ||
        loom_rt_parse_int(c, 1, 1L << 40, &clock))
        return -1;
    int point = p ? -1 : LOOM_KILL_CLOCK;
    for (int i = 0; p && i < 4; i++)
        if (!strcasecmp(p, kill_points[i]))
            point = i;
    if (point < 0)
        return -1;
    loom_rt_icv.test_kill.rank = (int)rank;
    loom_rt_icv.test_kill.clock = clock;
    loom_rt_icv.test_kill.point = point;
    return 0;
}
/* Rank variables are parsed by loom_rt_discover_rank; here they are only
 * known names. */
static int set_none(const char *v) { (void)v; return 0; }

/* Formats the effective value of one variable for LOOM_DISPLAY_ENV. */
typedef void (*shower)(char *buf, size_t n);
static void show_timeout(char *b, size_t n) { snprintf(b, n, "%g", loom_rt_icv.timeout); }
static void show_join(char *b, size_t n) { snprintf(b, n, "%g", loom_rt_icv.join_timeout); }
static void show_key(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.have_key ? "(set)" : "(unset)"); }
static void show_rv(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.rendezvous); }
static void show_display(char *b, size_t n)
{
    snprintf(b, n, "%s", loom_rt_icv.display_env == 2 ? "verbose" : loom_rt_icv.display_env ? "true" : "false");
}
static void show_rsh(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.rsh); }
static void show_coherence(char *b, size_t n)
{
    snprintf(b, n, "%s", loom_rt_icv.coherence[0] ? loom_rt_icv.coherence
                                                : loom_rt_icv.nranks > 1 ? "bsp" : "local");
}
static void show_staleness(char *b, size_t n) { snprintf(b, n, "%d", loom_rt_icv.staleness); }
static void show_stats(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.stats ? "true" : "false"); }
static void show_wire(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.wire_fp16 ? "fp16" : "fp32"); }
static void show_merge_avg(char *b, size_t n)
{
    snprintf(b, n, "%s", loom_rt_icv.merge_avg == 2 ? "true" : loom_rt_icv.merge_avg ? "false" : "unset");
}
static void show_check(char *b, size_t n)
{
    snprintf(b, n, "%s", loom_rt_icv.check_dsm && loom_rt_icv.check_serial ? "dsm,serial"
                         : loom_rt_icv.check_dsm ? "dsm" : loom_rt_icv.check_serial ? "serial" : "none");
}
static void show_cache(char *b, size_t n) { snprintf(b, n, "%zu", loom_rt_icv.cache_bytes); }
static void show_mem_limit(char *b, size_t n)
{
    const char *v = getenv("LOOM_MEM_LIMIT");
    snprintf(b, n, "%s", v ? v : "none");
}
static void show_arena(char *b, size_t n) { snprintf(b, n, "%zuG", loom_rt_icv.dsm_arena >> 30); }
static void show_ckpt_dir(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.checkpoint_dir); }
static void show_ckpt_every(char *b, size_t n) { snprintf(b, n, "%ld", loom_rt_icv.checkpoint_every); }
static void show_ckpt_chain(char *b, size_t n) { snprintf(b, n, "%ld", loom_rt_icv.checkpoint_chain); }
static void show_ckpt_sync(char *b, size_t n)
{
    snprintf(b, n, "%s", loom_rt_icv.checkpoint_sync ? "true" : "false");
}
static void show_restart(char *b, size_t n) { snprintf(b, n, "%s", restart_names[loom_rt_icv.restart]); }
static void show_test_kill(char *b, size_t n)
{
    if (loom_rt_icv.test_kill.rank < 0)
        snprintf(b, n, "%s", "");
    else
        snprintf(b, n, "%d:%ld:%s", loom_rt_icv.test_kill.rank, loom_rt_icv.test_kill.clock,
                 kill_points[loom_rt_icv.test_kill.point]);
}
static void show_rv_host(char *b, size_t n) { snprintf(b, n, "%s", loom_rt_icv.rendezvous_host); }
static void show_rank(char *b, size_t n) { snprintf(b, n, "%d", loom_rt_icv.rank); }
static void show_nranks(char *b, size_t n) { snprintf(b, n, "%d", loom_rt_icv.nranks); }
static void show_local(char *b, size_t n) { snprintf(b, n, "%d", loom_rt_icv.local_rank); }
/* LOOM_CC is read by loomcc (tools/loomcc.in), not by the runtime. */
static void show_cc(char *b, size_t n) { snprintf(b, n, "%s", getenv("LOOM_CC") ? getenv("LOOM_CC") : ""); }

static const struct var {
    const char *name;
    setter set;
    shower show;
    const char *allowed;  /* said in the error for a bad value */
    int launcher_only;    /* shown only by LOOM_DISPLAY_ENV=verbose */
} vars[] = {
    {"LOOM_RANK", set_none, show_rank, "an integer 0..LOOM_NRANKS-1 (set by loomrun)", 0},
    {"LOOM_NRANKS", set_none, show_nranks, "an integer >= 1 (set by loomrun)", 0},
    {"LOOM_LOCAL_RANK", set_none, show_local, "an integer >= 0 (set by loomrun)", 0},
    {"LOOM_RENDEZVOUS", set_rendezvous, show_rv, "host:port of the rendezvous, e.g. 10.0.0.1:7000", 0},
    {"LOOM_JOB_KEY", set_key, show_key, "32 hexadecimal digits", 0},
    {"LOOM_TIMEOUT", set_timeout, show_timeout, "seconds from 0.001 to 1e6 (heartbeat timeout)", 0},
    {"LOOM_JOIN_TIMEOUT", set_join_timeout, show_join, "seconds from 0.001 to 1e6 (how long ranks wait for each other at start)", 0},
    {"LOOM_COHERENCE", set_coherence, show_coherence, "a coherence policy's name (docs/dsm.md)", 0},
    {"LOOM_STALENESS", set_staleness, show_staleness, "an integer >= 0 (clocks an ssp read may lag)", 0},
    {"LOOM_WIRE", set_wire, show_wire, "fp32 or fp16 (precision of float deltas sent early)", 0},
    {"LOOM_MERGE_AVG", set_merge_avg, show_merge_avg, "true or false (also 1/0, yes/no, on/off): add-merge float rows of bsp/ssp average instead of sum (true: as each allocation's .average asks, else the mean; unset: each allocation's .average)", 0},
    {"LOOM_STATS", set_stats, show_stats, "true or false (also 1/0, yes/no, on/off)", 0},
    {"LOOM_CHECK", set_check, show_check, "a comma-separated list of: dsm, serial, all, none", 0},
    {"LOOM_CACHE_BYTES", set_cache, show_cache, "a byte count >= 0, optionally with K, M or G, e.g. 64M (each allocation's working copies kept per rank; 0 = no cap)", 0},
    {"LOOM_MEM_LIMIT", set_mem_limit, show_mem_limit, "a byte count >= 1, optionally with K, M, G or T, e.g. 8G (the most memory an app may plan for input-derived sizes; default: MemAvailable and the cgroup limit)", 0},
    {"LOOM_DSM_ARENA", set_arena, show_arena, "a size with G or T, e.g. 1T (address space for allocations)", 0},
    {"LOOM_CHECKPOINT_DIR", set_ckpt_dir, show_ckpt_dir, "a directory path (where checkpoints are written and read)", 0},
    {"LOOM_CHECKPOINT_EVERY", set_ckpt_every, show_ckpt_every, "an integer >= 0 (checkpoint at every N-th loom_clock; 0 = never)", 0},
    {"LOOM_CHECKPOINT_SYNC", set_ckpt_sync, show_ckpt_sync, "true or false (also 1/0, yes/no, on/off): fsync checkpoint files and directories", 0},
    {"LOOM_CHECKPOINT_CHAIN", set_ckpt_chain, show_ckpt_chain, "an integer >= 1 (incremental checkpoints: a unit is written again at least every N checkpoints; 1 = every checkpoint whole)", 0},
    {"LOOM_RESTART", set_restart, show_restart, "true, false or auto (also 1/0, yes/no, on/off): resume from LOOM_CHECKPOINT_DIR", 0},
    {"LOOM_TEST_KILL", set_test_kill, show_test_kill, "RANK:CLOCK[:clock|stop|write|commit] (a testing aid: docs/checkpoint.md)", 0},
    {"LOOM_CC", set_none, show_cc, "a C compiler command (loomcc's compiler)", 1},
    {"LOOM_DISPLAY_ENV", set_display, show_display, "true, false or verbose (also 1/0, yes/no, on/off)", 0},
    {"LOOM_RSH", set_rsh, show_rsh, "a remote-shell command as shell words (quotes allowed, no $ | ; & < > ( ) `), e.g. ssh or \"ip netns exec\"", 1},
    {"LOOM_RENDEZVOUS_HOST", set_rv_host, show_rv_host, "the address ranks use to reach loomrun", 1},
};
#define NVARS (sizeof vars / sizeof vars[0])

/* The components' tables (loom_rt_env_register), after lib's own above. */
static const loom_env_table *tables[16];
static size_t ntables;

void loom_rt_env_register(const loom_env_table *t)
{
    if (ntables == sizeof tables / sizeof tables[0]) {
        fprintf(stderr, "loom: more than 16 environment tables (%s's is one too many)\n",
                t->owner);
        abort();
    }
    tables[ntables++] = t;
}

/* The registered variable named by the first nl bytes of name, or NULL. */
static const loom_env_var *registered(const char *name, size_t nl)
{
    for (size_t t = 0; t < ntables; t++)
        for (size_t i = 0; i < tables[t]->n; i++)
            if (strlen(tables[t]->vars[i].name) == nl && !strncmp(tables[t]->vars[i].name, name, nl))
                return &tables[t]->vars[i];
    return NULL;
}

#define COH_PREFIX "LOOM_COHERENCE_"

/* LOOM_COHERENCE_<NAME>=policy for the allocation named NAME (the policy
 * name is checked as LOOM_COHERENCE's is). */
static int load_named(char *err, size_t errlen)
{
    char sh[LOOM_SHOWN_BUF];
    extern char **environ;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, COH_PREFIX, strlen(COH_PREFIX)))
            continue;
        const char *name = *e + strlen(COH_PREFIX), *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : 0;
        size_t pl = eq ? strlen(eq + 1) : 0;
        if (!eq || !nl || nl >= 64 || !pl || pl >= sizeof loom_rt_icv.coherence_named[0].policy ||
            loom_rt_icv.ncoherence_named == 16) {
            size_t vl = strcspn(*e, "=");
            snprintf(err, errlen, "%s is not valid: expected LOOM_COHERENCE_<NAME>=<a coherence "
                     "policy's name>, NAME an allocation's name (at most 16 such variables)",
                     loom_rt_shown(*e, vl, sh, sizeof sh));
            return LOOM_ERR_ENV;
        }
        int k = loom_rt_icv.ncoherence_named++;
        memcpy(loom_rt_icv.coherence_named[k].alloc, name, nl);
        loom_rt_icv.coherence_named[k].alloc[nl] = 0;
        snprintf(loom_rt_icv.coherence_named[k].policy, 16, "%s", eq + 1);
    }
    return LOOM_OK;
}

int loom_rt_env_load(char *err, size_t errlen)
{
    char sh[LOOM_SHOWN_BUF];
    /* Start from the defaults: a variable unset since the last load must
     * not keep its old value.  The rank fields belong to
     * loom_rt_discover_rank and are kept. */
    struct loom_rt_icv fresh = {ICV_DEFAULTS};
    fresh.rank = loom_rt_icv.rank;
    fresh.nranks = loom_rt_icv.nranks;
    fresh.local_rank = loom_rt_icv.local_rank;
    fresh.source = loom_rt_icv.source;
    loom_rt_icv = fresh;
    for (size_t i = 0; i < NVARS; i++) {
        const char *v = getenv(vars[i].name);
        if (v && vars[i].set(v)) {
            snprintf(err, errlen, "%s='%s' is not valid: expected %s", vars[i].name,
                     loom_rt_shown(v, strlen(v), sh, sizeof sh),
                     vars[i].allowed);
            return LOOM_ERR_ENV;
        }
    }
    for (size_t t = 0; t < ntables; t++) {
        tables[t]->defaults();
        for (size_t i = 0; i < tables[t]->n; i++) {
            const loom_env_var *x = &tables[t]->vars[i];
            const char *v = getenv(x->name);
            if (v && x->set(v)) {
                snprintf(err, errlen, "%s='%s' is not valid: expected %s", x->name,
                         loom_rt_shown(v, strlen(v), sh, sizeof sh), x->allowed);
                return LOOM_ERR_ENV;
            }
        }
    }
    /* Checkpointing and restarting need a place for the files. */
    if (!loom_rt_icv.checkpoint_dir[0] && (loom_rt_icv.checkpoint_every || loom_rt_icv.restart)) {
        const char *name = loom_rt_icv.checkpoint_every ? "LOOM_CHECKPOINT_EVERY" : "LOOM_RESTART";
        const char *v = getenv(name);
        snprintf(err, errlen, "%s='%s' is not usable without LOOM_CHECKPOINT_DIR (the "
                 "directory %s)", name, loom_rt_shown(v, strlen(v), sh, sizeof sh),
                 loom_rt_icv.checkpoint_every ? "to write checkpoints to"
                                           : "of the checkpoints to resume from");
        return LOOM_ERR_ENV;
    }
    return load_named(err, errlen);
}

void loom_rt_env_display(int verbose)
{
    char line[600], val[300];
    fprintf(stderr, "\nLOOM DISPLAY ENVIRONMENT BEGIN\n  _LOOM_VERSION = '%s'\n",
            LOOM_VERSION_STRING);
    for (size_t i = 0; i < NVARS; i++) {
        if (vars[i].launcher_only && !verbose)
            continue;
        vars[i].show(val, sizeof val);
        snprintf(line, sizeof line, "  %s = '%s'\n", vars[i].name, val);
        fputs(line, stderr);
    }
    for (size_t t = 0; t < ntables; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            tables[t]->vars[i].show(val, sizeof val);
            snprintf(line, sizeof line, "  %s = '%s'\n", tables[t]->vars[i].name, val);
            fputs(line, stderr);
        }
    fputs("LOOM DISPLAY ENVIRONMENT END\n", stderr);
}

int loom_rt_env_unknown(char *buf, size_t len)
{
    extern char **environ;
    int n = 0, shown = 0;
    buf[0] = 0;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "LOOM_", 5) || !strncmp(*e, COH_PREFIX, strlen(COH_PREFIX)))
            continue;
        size_t nl = strcspn(*e, "=");
        int known = 0;
        for (size_t i = 0; i < NVARS && !known; i++)
            known = strlen(vars[i].name) == nl && !strncmp(vars[i].name, *e, nl);
        known = known || registered(*e, nl);
        if (known)
            continue;
        size_t used = strlen(buf);
        if (used + nl + 3 < len) {
            snprintf(buf + used, len - used, "%s%.*s", shown ? ", " : "", (int)nl, *e);
            shown++;
        }
        n++;
    }
    return n;
}
