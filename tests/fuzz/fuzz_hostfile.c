/* fuzz_hostfile.c — loomrun's hostfile parser (apps/loomrun/hostfile.c)
 * on arbitrary files, then rank placement over what it accepted.
 * Invariants of an accepted file: at least one host, every name a valid
 * host name of at most 255 bytes, no name twice, slots >= 1; placing as
 * many ranks as there are slots succeeds, filling hosts in order, and one
 * more rank is refused. */
#include "fuzz.h"
#include "hostfile.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    loom_hostlist hl;
    char err[512];
    if (loom_hostfile_parse(fuzz_file(0, d, n), &hl, err, sizeof err)) {
        FUZZ_CHECK(hl.n == 0 && hl.hosts == NULL && err[0], "%s", "a refusal leaves no list");
        return 0;
    }
    FUZZ_CHECK(hl.n >= 1, "%d hosts", hl.n);
    long total = 0;
    for (int i = 0; i < hl.n; i++) {
        const loom_host *h = &hl.hosts[i];
        size_t len = strnlen(h->name, sizeof h->name);
        FUZZ_CHECK(len > 0 && len < sizeof h->name, "host %d name length %zu", i, len);
        FUZZ_CHECK(strspn(h->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789.-_:[]") == len, "host name '%s'", h->name);
        FUZZ_CHECK(h->slots >= 1, "host '%s' slots %d", h->name, h->slots);
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(hl.hosts[j].name, h->name), "host '%s' twice", h->name);
        total += h->slots;
    }
    if (total <= 1 << 16) { /* placement arrays of that many ranks */
        int *host_of = malloc(sizeof(int) * (size_t)(total + 1));
        int *local = malloc(sizeof(int) * (size_t)(total + 1));
        FUZZ_CHECK(host_of && local, "%s", "memory");
        FUZZ_CHECK(!loom_place(&hl, (int)total, host_of, local, "hosts", err, sizeof err),
                   "placing %ld ranks on %ld slots: %s", total, total, err);
        for (long r = 1; r < total; r++)
            FUZZ_CHECK((host_of[r] == host_of[r - 1] && local[r] == local[r - 1] + 1) ||
                           (host_of[r] == host_of[r - 1] + 1 && local[r] == 0),
                       "rank %ld placed out of order", r);
        FUZZ_CHECK(loom_place(&hl, (int)total + 1, host_of, local, "hosts", err, sizeof err),
                   "%ld ranks placed on %ld slots", total + 1, total);
        free(host_of);
        free(local);
    }
    loom_hostlist_free(&hl);
    return 0;
}
