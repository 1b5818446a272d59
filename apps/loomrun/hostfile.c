/* hostfile.c — parse an Open MPI style hostfile and place ranks by slot. */
#include "hostfile.h"
#include "internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int loom_host_is_local(const char *name)
{
    char me[256] = "";
    struct in_addr a4;
    if (!strcmp(name, "localhost") || !strcmp(name, "localhost.localdomain") ||
        !strcmp(name, "::1") || !strcmp(name, "[::1]"))
        return 1;
    if (inet_pton(AF_INET, name, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    gethostname(me, sizeof me - 1);
    return !strcmp(name, me);
}

static int valid_host(const char *s)
{
    if (!*s || strlen(s) >= 256)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(".-_:[]", *s))
            return 0;
    return 1;
}

int loom_hostlist_add(loom_hostlist *hl, const char *name, int slots)
{
    for (int i = 0; i < hl->n; i++)
        if (!strcmp(hl->hosts[i].name, name)) {
            hl->hosts[i].slots += slots;
            return 0;
        }
    loom_host *nh = realloc(hl->hosts, (size_t)(hl->n + 1) * sizeof *nh);
    if (!nh)
        return -1;
    hl->hosts = nh;
    loom_host *h = &hl->hosts[hl->n++];
    snprintf(h->name, sizeof h->name, "%s", name);
    h->slots = slots;
    h->local = loom_host_is_local(name);
    return 0;
}

/* One line of f into buf (size n, NUL-terminated, its newline kept) and
 * its length, NUL bytes included, into *len.  Returns 0, 1 when the line
 * does not fit (the rest is not read), or -1 at the end of the file. */
static int read_line(FILE *f, char *buf, size_t n, size_t *len)
{
    size_t k = 0;
    int c = EOF;
    while (k + 1 < n && (c = getc(f)) != EOF) {
        buf[k++] = (char)c;
        if (c == '\n')
            break;
    }
    buf[k] = 0;
    *len = k;
    if (k + 1 == n && c != '\n' && (c = getc(f)) != EOF && c != '\n')
        return 1;
    return k || c != EOF ? 0 : -1;
}

int loom_hostfile_parse(const char *path, loom_hostlist *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    *out = (loom_hostlist){0};
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096], sh[LOOM_SHOWN_BUF];
    size_t len;
    int lineno = 0, got;
    long total = 0;
    while ((got = read_line(f, line, sizeof line, &len)) >= 0) {
        lineno++;
        if (got) {
            snprintf(err, errlen, "%s:%d: line too long", path, lineno);
            goto fail;
        }
        if (len != strlen(line)) {
            snprintf(err, errlen, "%s:%d: a NUL byte at column %zu: this is not a text file",
                     path, lineno, strlen(line) + 1);
            goto fail;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *save, *tok = strtok_r(line, " \t\r\n", &save);
        if (!tok)
            continue; /* blank or comment */
        if (!valid_host(tok)) {
            snprintf(err, errlen, "%s:%d: '%s' is not a host name", path, lineno,
                     loom_rt_shown(tok, strlen(tok), sh, sizeof sh));
            goto fail;
        }
        char host[256];
        snprintf(host, sizeof host, "%s", tok);
        int slots = 1;
        while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
            long v;
            char *eq = strchr(tok, '=');
            if (!eq) {
                snprintf(err, errlen, "%s:%d: unexpected '%s' (expected slots=N)", path,
                         lineno, loom_rt_shown(tok, strlen(tok), sh, sizeof sh));
                goto fail;
            }
            *eq = 0;
            int is_slots = !strcmp(tok, "slots");
            int is_max = !strcmp(tok, "max_slots") || !strcmp(tok, "max-slots");
            if (!is_slots && !is_max) {
                snprintf(err, errlen, "%s:%d: unknown attribute '%s' (expected slots=N)",
                         path, lineno, loom_rt_shown(tok, strlen(tok), sh, sizeof sh));
                goto fail;
            }
            if (loom_rt_parse_int(eq + 1, 1, 1 << 16, &v)) {
                snprintf(err, errlen, "%s:%d: %s='%s' is not a whole number from 1 to 65536",
                         path, lineno, tok, loom_rt_shown(eq + 1, strlen(eq + 1), sh, sizeof sh));
                goto fail;
            }
            if (is_slots)
                slots = (int)v;
        }
        if ((total += slots) > LOOM_SLOTS_MAX) {
            snprintf(err, errlen, "%s:%d: more than %d slots in all", path, lineno,
                     LOOM_SLOTS_MAX);
            goto fail;
        }
        if (loom_hostlist_add(out, host, slots)) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    if (out->n == 0) {
        snprintf(err, errlen, "%s: no hosts in the file", path);
        loom_hostlist_free(out);
        return -1;
    }
    return 0;
fail:
    fclose(f);
    loom_hostlist_free(out);
    return -1;
}

void loom_hostlist_local(loom_hostlist *out, int slots)
{
    *out = (loom_hostlist){0};
    loom_hostlist_add(out, "localhost", slots);
}

int loom_place(const loom_hostlist *hl, int n, int *host_of, int *local_rank,
               const char *what, char *err, size_t errlen)
{
    int total = 0;
    for (int i = 0; i < hl->n; i++)
        total += hl->hosts[i].slots;
    if (n > total) {
        snprintf(err, errlen,
                 "%s provides %d slot%s for %d ranks: add hosts or slots=N, or lower -n",
                 what, total, total == 1 ? "" : "s", n);
        return -1;
    }
    int h = 0, used = 0;
    for (int r = 0; r < n; r++) {
        while (used == hl->hosts[h].slots) {
            h++;
            used = 0;
        }
        host_of[r] = h;
        local_rank[r] = used++;
    }
    return 0;
}

void loom_hostlist_free(loom_hostlist *hl)
{
    free(hl->hosts);
    *hl = (loom_hostlist){0};
}
