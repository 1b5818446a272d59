/* fault.c — the page path: plain loads and stores on page-unit allocations.
 *
 * A unit's protection at its global address follows its state:
 *   invalid  PROT_NONE         any access faults: read_miss fetches it
 *   clean    PROT_READ         a write faults: first_write makes a twin
 *   dirty    PROT_READ|WRITE   no faults until the next release/acquire
 *   home     PROT_READ|WRITE   a home unit kept in place (dsm.h): never faults
 *
 * The SIGSEGV handler does no Loom work itself: it only finds the
 * allocation and unit of the faulting address (loom_dsm_find reads the
 * published table, no lock), puts a request on its own stack, pushes it
 * onto a lock-free list and sleeps on a futex.  The *fault server*, one
 * thread per rank started with its first page-unit allocation, takes the requests, makes each
 * unit readable or writable (unit lock, the policy's read_miss or
 * first_write — UCX gets, malloc of a twin — and mprotect) and wakes the
 * faulting thread, whose access is then retried and succeeds.  So the
 * handler calls only async-signal-safe things (atomics, futex, write),
 * whatever the faulting thread was doing.
 *
 * Not done: userfaultfd.  The working copy is one memfd mapped twice
 * (dsm.h); serving its faults with userfaultfd would need minor-fault and
 * write-protect modes on shmem, with invalidation by unmapping pages
 * instead of mprotect — a different state machine — and the SIGSEGV path
 * would still be needed where userfaultfd is refused (non-root with
 * vm.unprivileged_userfaultfd=0).  System calls on absent units therefore
 * still fail with EFAULT (loom_touch first), as docs/dsm.md says.
 *
 * A Loom allocation touched from inside the transport (e.g. passed to a
 * communication call before its pages were read) would deadlock the
 * server against the transport lock the faulting thread holds: it is
 * detected and reported.  A fault outside every allocation goes to the
 * handler that was installed before ours, or kills the process as usual. */
#include "dsm.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction previous;

/* One fault waiting for the server: lives on the faulting thread's stack
 * until `done` is set. */
struct fault_req {
    loom_dsm_alloc *a;
    size_t unit;
    int want;              /* U_CLEAN or U_DIRTY */
    _Atomic int done;      /* futex word: 1 once served */
    struct fault_req *next;
};

static _Atomic(struct fault_req *) pending; /* pushed by handlers, taken whole */
static _Atomic int bell;                    /* futex word the server sleeps on */
static _Atomic int stop;
static _Atomic pid_t server_tid;
static pthread_t server;
static _Atomic int server_up;
static _Atomic uint64_t served;             /* faults served (LOOM_STATS) */

static void futex_wait(_Atomic int *w, int val)
{
    syscall(SYS_futex, (int *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic int *w)
{
    syscall(SYS_futex, (int *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
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
 * or write fault would.  Takes the unit's lock; never from a signal
 * handler (the fault server and loom_touch call it). */
static void make_valid(loom_dsm_alloc *a, size_t u, int want)
{
    if (atomic_load(&a->state[u]) == U_HOME) /* in place: always accessible */
        return;
    loom_dsm_unit_lock(a, u);
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
    loom_dsm_unit_unlock(a, u);
}

int loom_touch(void *p, size_t len, int write)
{
    loom_dsm_alloc *a = loom_dsm_find(p);
    if (!a || (char *)p + len > a->base + a->mapped) {
        loom_rt_log("loom_touch: [%p, +%zu) is not inside one Loom allocation", p, len);
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

/* The fault server: serve every pending request, sleep when none is.
 * A request's memory belongs to its thread again once `done` is set, so
 * `next` is read before. */
static void *serve(void *arg)
{
    (void)arg;
    atomic_store(&server_tid, (pid_t)syscall(SYS_gettid));
    while (!atomic_load(&stop)) {
        int b = atomic_load(&bell);
        struct fault_req *r = atomic_exchange(&pending, NULL);
        if (!r) {
            futex_wait(&bell, b);
            continue;
        }
        while (r) {
            struct fault_req *next = r->next;
            make_valid(r->a, r->unit, r->want);
            atomic_fetch_add_explicit(&served, 1, memory_order_relaxed);
            atomic_store_explicit(&r->done, 1, memory_order_release);
            futex_wake(&r->done);
            r = next;
        }
    }
    return NULL;
}

/* Async-signal-safe message and exit, for faults Loom cannot serve. */
static void fatal(const char *msg, const loom_dsm_alloc *a)
{
    char line[256];
    int n = snprintf(line, sizeof line, "loom: rank %d: '%s' %s\n", loom_rt_icv.rank, a->name, msg);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    _exit(1);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    loom_dsm_alloc *a = loom_dsm_find(si->si_addr);
    if (!a || a->kind != LOOM_UNIT_PAGE || !a->state) {
        pass_on(sig, si, ucv);
        return;
    }
    if (loom_rt_tp_busy())
        fatal("was touched inside a Loom communication call before this rank had read it; "
              "read it first or pass a private buffer", a);
    if (!server_up || (pid_t)syscall(SYS_gettid) == atomic_load(&server_tid))
        fatal("faulted where no fault server can serve it (Loom bug)", a);
    ucontext_t *uc = ucv;
    int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    int saved = errno;
    struct fault_req r = {.a = a, .unit = (size_t)((char *)si->si_addr - a->base) / a->unit,
                          .want = write ? U_DIRTY : U_CLEAN};
    r.next = atomic_load(&pending);
    while (!atomic_compare_exchange_weak(&pending, &r.next, &r))
        ;
    atomic_fetch_add(&bell, 1);
    futex_wake(&bell);
    while (!atomic_load_explicit(&r.done, memory_order_acquire))
        futex_wait(&r.done, 0);
    errno = saved;
}

/* Contract: start the fault server once (with every asynchronous signal
 * blocked, so the program's signals go to its own threads).  Called by
 * loom_alloc before it publishes a page-unit allocation with states, so a
 * job without page units never has the thread.  Returns LOOM_OK or
 * LOOM_ERR_STATE. */
int loom_dsm_fault_server_start(void)
{
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    int rc = LOOM_OK;
    if (!atomic_load(&server_up)) {
        sigset_t all, old;
        sigfillset(&all);
        sigdelset(&all, SIGSEGV);
        sigdelset(&all, SIGBUS);
        sigdelset(&all, SIGFPE);
        sigdelset(&all, SIGILL);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        atomic_store(&stop, 0);
        int e = pthread_create(&server, NULL, serve, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e) {
            loom_rt_log("cannot start the page-fault server: %s", strerror(e));
            rc = LOOM_ERR_STATE;
        } else
            atomic_store(&server_up, 1);
    }
    pthread_mutex_unlock(&once);
    return rc;
}

/* Contract: install the handler once (loom_dsm_init). */
int loom_dsm_fault_init(void)
{
    static int done;
    if (done)
        return LOOM_OK;
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous)) {
        loom_rt_log("cannot install the page-fault handler");
        return LOOM_ERR_STATE;
    }
    done = 1;
    return LOOM_OK;
}

/* Contract: stop and join the fault server (finalize, after the last
 * barrier: no thread faults on Loom memory any more). */
void loom_dsm_fault_fini(void)
{
    if (!atomic_load(&server_up))
        return;
    if (loom_rt_icv.stats)
        loom_rt_log("page faults: %llu, served by the fault thread",
                 (unsigned long long)atomic_load(&served));
    atomic_store(&stop, 1);
    atomic_fetch_add(&bell, 1);
    futex_wake(&bell);
    pthread_join(server, NULL);
    atomic_store(&server_up, 0);
}
