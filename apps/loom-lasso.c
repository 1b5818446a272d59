/* loom-lasso.c — Lasso by coordinate descent under the priority schedule
 * (STRADS-Dynamic, seed 000 §5.1.2, seed 002 §3):
 *     min_β ½‖y − Xβ‖² + λ‖β‖₁
 * Each rank holds every P-th row of X and y; a round draws candidate
 * coordinates with probability ∝ δβ_j² + η, drops those correlated above
 * ρ with one already kept, sums x_jᵀr over the ranks' rows (push,
 * allreduce) and applies the soft-threshold update on every rank (pull).
 * --select uniform draws uniformly instead (the baseline); --serial runs
 * the serial twin.  Flags, formats, output: docs/loom-lasso.md.
 *
 *   loom-lasso (--X FILE --y FILE | --libsvm FILE)
 *              (--lambda L | --lambda-path N [--lambda-min-ratio R])
 *              [--select priority|uniform] [--serial cyclic|random]
 *              [--rho R] [--batch L] [--candidates C] [--rounds R]
 *              [--iters N] [--tol T] [--target F] [--eta E] [--seed S]
 *              [--log FILE.csv] [--model FILE]
 *
 * Exit status: 0; 1 for unreadable or malformed data (FILE:LINE named) or
 * a failed write; 2 for bad arguments. */
#include "../kernels/lasso.h"
#include "../kernels/report.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: loom-lasso (--X FILE --y FILE | --libsvm FILE)\n"
    "                  (--lambda L | --lambda-path N [--lambda-min-ratio R])\n"
    "                  [--select priority|uniform] [--serial cyclic|random]\n"
    "                  [--rho R] [--batch L] [--candidates C] [--rounds R]\n"
    "                  [--iters N] [--tol T] [--target F] [--eta E] [--seed S]\n"
    "                  [--log FILE.csv] [--model FILE]\n"
    "  minimizes 1/2 |y - X beta|^2 + lambda |beta|_1 by coordinate descent\n"
    "  --X, --y          MatrixMarket X (coordinate or array) and y (n x 1 or vector)\n"
    "  --libsvm          one LIBSVM file instead: 'y index:value ...' per row\n"
    "  --lambda          the penalty; or a path of N values from lambda_max =\n"
    "  --lambda-path N   max|X'y| down to R * lambda_max (R default 0.01), warm starts\n"
    "  --select          priority (draw coordinates by delta^2 + eta, default) or\n"
    "                    uniform (the baseline)\n"
    "  --serial          run the serial twin instead (one rank): cyclic or random order\n"
    "  --rho             two columns correlated above R are not updated together\n"
    "                    (default 0.1; 1 turns the filter off)\n"
    "  --batch           coordinates updated in parallel per round (default 8)\n"
    "  --candidates      coordinates drawn per round (default 2 * batch)\n"
    "  --rounds          rounds per iteration (default features / batch: one pass)\n"
    "  --iters           iterations at most, per lambda (default 100)\n"
    "  --tol             stop when the duality gap <= T * objective (default 1e-6;\n"
    "                    0: never, and no gap is computed)\n"
    "  --target          stop when the objective <= F\n"
    "  --eta             sampling weight floor (default 1e-6)\n"
    "  --seed            of the schedule's draws (default 1)\n"
    "  --log             CSV: iter,updates,seconds,objective,nnz,lambda,gap\n"
    "  --model           writes beta (of the last lambda), one value per line\n";

struct opts {
    const char *x, *y, *libsvm, *log, *model, *select, *serial;
    double lambda, min_ratio, rho, tol, target, eta;
    long path, batch, candidates, rounds, iters;
    uint64_t seed;
    int have_lambda, have_target;
};

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "loom-lasso: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return 2;
}

static int parse_real(const char *s, double *v)
{
    char *end;
    if (!*s || strpbrk(s, "xXpPnNiI") || *s == ' ')
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    return errno || *end ? -1 : 0;
}

static int parse_long(const char *s, long lo, long *v)
{
    double x;
    if (parse_real(s, &x) || x != floor(x) || x < (double)lo || x > 1e15)
        return -1;
    *v = (long)x;
    return 0;
}

/* Fills *o from argv; returns 0, or 2 after the usage on stderr. */
static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.select = "priority", .min_ratio = 0.01, .rho = 0.1, .tol = 1e-6,
                       .eta = 1e-6, .batch = 8, .iters = 100, .seed = 1};
    for (int a = 1; a < argc; a++) {
        const char *f = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        long seed = 0;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            fputs(usage_text, stdout);
            exit(0);
        }
        static const char *const known[] = {
            "--X", "--y", "--libsvm", "--lambda", "--lambda-path", "--lambda-min-ratio",
            "--select", "--serial", "--rho", "--batch", "--candidates", "--rounds", "--iters",
            "--tol", "--target", "--eta", "--seed", "--log", "--model", NULL};
        int k = 0;
        while (known[k] && strcmp(known[k], f))
            k++;
        if (!known[k])
            return usage_error("unknown option '%s'", f);
        if (!v)
            return usage_error("%s needs a value", f);
        a++;
        int bad = 0;
        const char *want = "a number";
        if (!strcmp(f, "--X"))
            o->x = v;
        else if (!strcmp(f, "--y"))
            o->y = v;
        else if (!strcmp(f, "--libsvm"))
            o->libsvm = v;
        else if (!strcmp(f, "--log"))
            o->log = v;
        else if (!strcmp(f, "--model"))
            o->model = v;
        else if (!strcmp(f, "--select")) {
            o->select = v;
            bad = strcmp(v, "priority") && strcmp(v, "uniform");
            want = "priority or uniform";
        } else if (!strcmp(f, "--serial")) {
            o->serial = v;
            bad = strcmp(v, "cyclic") && strcmp(v, "random");
            want = "cyclic or random";
        } else if (!strcmp(f, "--lambda")) {
            bad = parse_real(v, &o->lambda) || !(o->lambda >= 0);
            o->have_lambda = 1;
            want = "a number >= 0";
        } else if (!strcmp(f, "--lambda-min-ratio")) {
            bad = parse_real(v, &o->min_ratio) || !(o->min_ratio > 0 && o->min_ratio <= 1);
            want = "a number in (0, 1]";
        } else if (!strcmp(f, "--rho")) {
            bad = parse_real(v, &o->rho) || !(o->rho >= 0);
            want = "a number >= 0";
        } else if (!strcmp(f, "--tol")) {
            bad = parse_real(v, &o->tol) || !(o->tol >= 0);
            want = "a number >= 0";
        } else if (!strcmp(f, "--target")) {
            bad = parse_real(v, &o->target);
            o->have_target = 1;
        } else if (!strcmp(f, "--eta")) {
            bad = parse_real(v, &o->eta) || !(o->eta > 0);
            want = "a number > 0";
        } else {
            long *dst = !strcmp(f, "--lambda-path") ? &o->path
                        : !strcmp(f, "--batch")      ? &o->batch
                        : !strcmp(f, "--candidates") ? &o->candidates
                        : !strcmp(f, "--rounds")     ? &o->rounds
                        : !strcmp(f, "--iters")      ? &o->iters
                                                     : &seed;
            bad = parse_long(v, dst == &seed ? 0 : 1, dst);
            want = dst == &seed ? "an integer >= 0" : "an integer >= 1";
            if (dst == &seed)
                o->seed = (uint64_t)seed;
        }
        if (bad) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s wants %s, not '%%s'", f, want);
            return usage_error(msg, v);
        }
    }
    if (!o->libsvm && !(o->x && o->y))
        return usage_error("%s", o->x || o->y ? "--X and --y go together"
                                              : "missing the data: --X FILE --y FILE, or "
                                                "--libsvm FILE");
    if (o->libsvm && (o->x || o->y))
        return usage_error("%s", "--libsvm replaces --X and --y");
    if (o->have_lambda == !!o->path)
        return usage_error("%s", o->path ? "--lambda and --lambda-path exclude each other"
                                         : "missing --lambda L or --lambda-path N");
    if (o->candidates && o->candidates < o->batch)
        return usage_error("%s", "--candidates must be at least --batch");
    return 0;
}

/* ---- the priority schedule's callbacks ------------------------------------ */

struct run {
    loom_lasso *l;
    loom_lasso_corr *corr;
    double lambda, rho;
    int uniform;
    int64_t updates;
};

static void push(long j, double *partial, void *ctx)
{
    partial[0] = loom_lasso_dot_local(((struct run *)ctx)->l, j);
}

static double pull(long j, const double *sum, void *ctx)
{
    struct run *u = ctx;
    double d = loom_lasso_apply(u->l, j, sum[0], u->lambda);
    u->updates++;
    loom_report_tick(1);
    return u->uniform ? 1.0 : d;
}

static void prepare(const long *cand, long n, void *ctx)
{
    int rc = loom_lasso_corr_prepare(((struct run *)ctx)->corr, cand, n);
    if (rc)
        loom_abort(1, "loom-lasso: correlations of the candidates: %s", loom_strerror(rc));
}

static int conflict(long a, long b, void *ctx)
{
    const struct run *u = ctx;
    double c = loom_lasso_corr_get(u->corr, a, b);
    return c < 0 || c > u->rho;
}

/* ---- the program ------------------------------------------------------------ */

/* Sums v[0..n) over ranks in place; aborts the job if that fails. */
static void sum_all(double *v, size_t n)
{
    int rc = loom_size() > 1 ? loom_allreduce(LOOM_IN_PLACE, v, n, LOOM_DOUBLE, LOOM_SUM) : 0;
    if (rc)
        loom_abort(1, "loom-lasso: allreduce: %s", loom_strerror(rc));
}

/* Objective, and (when xtr is not NULL) the duality gap: one allreduce of
 * the p gradient entries and three sums. */
static double evaluate(const loom_lasso *l, double lambda, double *xtr, double *gap)
{
    size_t p = (size_t)l->p;
    double *s = xtr ? xtr + p : (double[3]){0};
    loom_lasso_sums_local(l, s);
    if (xtr)
        loom_lasso_xtv_local(l, l->r, xtr);
    sum_all(xtr ? xtr : s, xtr ? p + 3 : 3);
    *gap = NAN;
    if (xtr) {
        double m = 0;
        for (size_t j = 0; j < p; j++)
            m = fmax(m, fabs(xtr[j]));
        *gap = loom_lasso_gap(l, s[0], s[1], m, lambda);
    }
    return loom_lasso_objective(l, s[0], lambda);
}

/* Loads this rank's rows; on failure the lowest failing rank prints its
 * message and every rank returns the error. */
static int load(const struct opts *o, loom_lasso *l)
{
    char err[1024];
    loom_lasso_files f = {o->x, o->y, o->libsvm};
    loom_rows share = {loom_rank(), loom_size()};
    int rc = loom_lasso_load(&f, &share, l, err, sizeof err);
    int32_t first = rc ? loom_rank() : loom_size();
    if (loom_size() > 1 && loom_allreduce(LOOM_IN_PLACE, &first, 1, LOOM_INT32, LOOM_MIN))
        return LOOM_ERR_NET;
    if (first == loom_rank())
        fprintf(stderr, "loom-lasso: %s\n", err);
    return first < loom_size() ? (rc ? rc : LOOM_ERR_FORMAT) : LOOM_OK;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    if (loom_init(&argc, &argv))
        return 1;
    if (o.serial && loom_size() > 1) {
        if (loom_rank() == 0)
            fprintf(stderr, "loom-lasso: --serial runs the serial twin on one rank, not %d\n",
                    loom_size());
        loom_finalize();
        return 2;
    }
    loom_lasso l;
    if (load(&o, &l)) {
        loom_finalize();
        return 1;
    }
    int64_t p = l.p;
    /* c_j and Xᵀy over every rank's rows; λ_max = max |Xᵀy|. */
    double *xtr = malloc((size_t)(p + 3) * sizeof *xtr);
    if (!xtr)
        loom_abort(1, "loom-lasso: out of memory");
    sum_all(l.norm2, (size_t)p);
    loom_lasso_xtv_local(&l, l.y, xtr);
    sum_all(xtr, (size_t)p);
    double lmax = 0;
    for (int64_t j = 0; j < p; j++)
        lmax = fmax(lmax, fabs(xtr[j]));
    double nz = (double)l.colptr[p];
    sum_all(&nz, 1);

    long L = o.batch, C = o.candidates ? o.candidates : 2 * o.batch;
    long rounds = o.rounds ? o.rounds : (long)((p + L - 1) / L);
    struct run u = {.l = &l, .rho = o.rho, .uniform = !strcmp(o.select, "uniform")};
    if (!o.serial && o.rho < 1 && !(u.corr = loom_lasso_corr_new(&l, (size_t)1 << 16)))
        loom_abort(1, "loom-lasso: out of memory");
    loom_priority pr = {.rounds = rounds, .candidates = C, .select = L, .eta = o.eta,
                        .width = 1, .seed = o.seed, .push = push, .pull = pull,
                        .conflict = u.corr ? conflict : NULL, .prepare = u.corr ? prepare : NULL};
    loom_for_opts fo = {.schedule = LOOM_PRIORITY, .priority = &pr};

    if (loom_rank() == 0) {
        printf("loom-lasso: %lld samples x %lld features, %.0f non-zeros, %d rank%s x %d "
               "thread%s; lambda_max %.6g; ",
               (long long)l.ntotal, (long long)p, nz, loom_size(), loom_size() > 1 ? "s" : "",
               omp_get_max_threads(), omp_get_max_threads() > 1 ? "s" : "", lmax);
        if (o.serial)
            printf("serial twin, %s order\n", o.serial);
        else
            printf("%s selection, batch %ld of %ld candidates, rho %g, %ld rounds per "
                   "iteration\n",
                   o.select, L, C, o.rho, rounds);
        fflush(stdout);
    }
    char err[1024];
    loom_report *rep = loom_report_open("loom-lasso", o.log,
                                        "iter,updates,seconds,objective,nnz,lambda,gap", err,
                                        sizeof err);
    if (!rep) {
        fprintf(stderr, "loom-lasso: %s\n", err);
        loom_finalize();
        return 1;
    }

    long nl = o.path ? o.path : 1, iter = 0;
    double t0 = loom_wtime(), obj = NAN, gap = NAN;
    uint64_t rng = o.seed;
    for (long k = 0; k < nl; k++) {
        double lambda = !o.path     ? o.lambda
                        : nl == 1   ? lmax * o.min_ratio
                                    : lmax * pow(o.min_ratio, (double)k / (double)(nl - 1));
        u.lambda = lambda;
        pr.restart = 1; /* a new lambda: the old deltas say little */
        loom_lasso_residual(&l);
        int stop = 0;
        for (long it = 0; it < o.iters && !stop; it++) {
            loom_report_begin(rep, ++iter, o.serial ? p : rounds * L);
            if (o.serial) {
                loom_lasso_pass(&l, lambda,
                                !strcmp(o.serial, "random") ? LOOM_LASSO_RANDOM
                                                            : LOOM_LASSO_CYCLIC,
                                &rng);
                u.updates += p;
            } else if ((rc = loom_for(0, p, NULL, &u, &fo))) {
                loom_abort(1, "loom-lasso: loom_for: %s", loom_strerror(rc));
            }
            pr.restart = 0;
            obj = evaluate(&l, lambda, o.tol > 0 ? xtr : NULL, &gap);
            loom_report_row(rep, (double[]){(double)iter, (double)u.updates,
                                            loom_wtime() - t0, obj,
                                            (double)loom_lasso_nnz(&l), lambda, gap});
            stop = (o.tol > 0 && gap <= o.tol * obj) || (o.have_target && obj <= o.target);
        }
        if (loom_rank() == 0) {
            printf("loom-lasso: lambda %.10g: objective %.12g, duality gap %.3g, %lld "
                   "non-zeros, %lld updates%s\n",
                   lambda, obj, gap, (long long)loom_lasso_nnz(&l), (long long)u.updates,
                   stop ? "" : " (stopped at --iters)");
            fflush(stdout);
        }
    }
    if (u.corr && loom_rank() == 0)
        printf("loom-lasso: %lld column correlations computed for the filter\n",
               (long long)loom_lasso_corr_computed(u.corr));
    rc = 0;
    if (o.model && loom_rank() == 0 && loom_lasso_save(o.model, l.beta, p)) {
        fprintf(stderr, "loom-lasso: %s: %s\n", o.model, strerror(errno));
        rc = 1;
    }
    loom_report_final(rep, "objective", obj);
    loom_report_close(rep);
    loom_lasso_corr_free(u.corr);
    loom_lasso_free(&l);
    free(xtr);
    loom_finalize();
    return rc;
}
