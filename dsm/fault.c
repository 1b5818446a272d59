/* fault.c — the page path: plain loads and stores on page-unit allocations.
 *
 * A unit's protection at its global address follows its state:
 *   invalid  PROT_NONE         any access faults: read_miss fetches it
 *   clean    PROT_READ         a write faults: first_write makes a twin
 *   dirty    PROT_READ|WRITE   no faults until the next release/acquire
 *   home     PROT_READ|WRITE   a home unit kept in place (dsm.h): never faults
 * The SIGSEGV handler finds the allocation and unit of the faulting
 * address, takes the unit's lock (other threads faulting on it wait), asks
 * the allocation's policy to make the unit readable or writable, sets the
 * protection and returns: the access is retried and succeeds.
 *
 * The handler runs on the faulting thread, which was executing the
 * program's own load or store, not Loom code: it holds no Loom lock, so
 * calling the transport from here is safe in practice even though UCX is
 * not async-signal-safe.  The one case where that is false — a Loom
 * allocation touched from inside the transport (e.g. passed to
 * loom_bcast before its pages were touched) — is detected and reported.
 * A fault outside every allocation goes to the handler that was installed
 * before ours, or kills the process as usual. */
#include "dsm.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction previous;

void loom_dsm_protect(loom_dsm_alloc *a, size_t u0, size_t u1, int prot)
{
    if (u1 > u0 && mprotect(a->base + u0 * a->unit, (u1 - u0) * a->unit, prot))
        loom_die(1, "mprotect of '%s' failed (vm.max_map_count too low for %zu units? "
                 "use a larger page_unit)", a->name, a->nunits);
}

static void pass_on(int sig, siginfo_t *si, void *uc)
{
    if (previous.sa_flags & SA_SIGINFO && previous.sa_sigaction) {
        previous.sa_sigaction(sig, si, uc);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
        previous.sa_handler) {
        previous.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL); /* the access is retried and kills us as usual */
}

/* Bring unit u of a to at least `want` (U_CLEAN or U_DIRTY), as a read
 * or write fault would. */
static void make_valid(loom_dsm_alloc *a, size_t u, int want)
{
    if (atomic_load(&a->state[u]) == U_HOME) /* in place: always accessible */
        return;
    loom_unit_lock(a, u);
    int st = atomic_load(&a->state[u]);
    if (st == U_INVALID) {
        a->policy->read_miss(a, u);
        st = U_CLEAN;
    }
    if (want == U_DIRTY && st == U_CLEAN) {
        a->policy->first_write(a, u);
        st = U_DIRTY;
    }
    atomic_store(&a->state[u], (uint8_t)st);
    loom_dsm_protect(a, u, u + 1, st == U_DIRTY ? PROT_READ | PROT_WRITE : PROT_READ);
    loom_unit_unlock(a, u);
}

int loom_touch(void *p, size_t len, int write)
{
    loom_dsm_alloc *a = loom_dsm_find(p);
    if (!a || (char *)p + len > a->base + a->mapped) {
        loom_log("loom_touch: [%p, +%zu) is not inside one Loom allocation", p, len);
        return LOOM_ERR_ARG;
    }
    if (!len || a->kind != LOOM_UNIT_PAGE || !a->state)
        return LOOM_OK; /* rows and plain memory are always accessible */
    size_t u0 = (size_t)((char *)p - a->base) / a->unit;
    size_t u1 = (size_t)((char *)p + len - 1 - a->base) / a->unit;
    for (size_t u = u0; u <= u1; u++)
        make_valid(a, u, write ? U_DIRTY : U_CLEAN);
    return LOOM_OK;
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    loom_dsm_alloc *a = loom_dsm_find(si->si_addr);
    if (!a || a->kind != LOOM_UNIT_PAGE || !a->state) {
        pass_on(sig, si, ucv);
        return;
    }
    if (loom_tp_busy())
        loom_die(1, "'%s' at %p was touched inside a Loom communication call before this "
                 "rank had read it; read it first or pass a private buffer",
                 a->name, si->si_addr);
    ucontext_t *uc = ucv;
    int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    make_valid(a, (size_t)((char *)si->si_addr - a->base) / a->unit, write ? U_DIRTY : U_CLEAN);
}

int loom_fault_init(void)
{
    static int done;
    if (done)
        return LOOM_OK;
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous)) {
        loom_log("cannot install the page-fault handler");
        return LOOM_ERR_STATE;
    }
    done = 1;
    return LOOM_OK;
}
