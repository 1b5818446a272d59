/* loom-lasso.c — Lasso by coordinate descent:
 *     min_β ½‖y − Xβ‖² + λ‖β‖₁
 * the command line around kernels/lasso_dist.h, which holds the solver's
 * Loom version beside its serial twin: each rank holds every P-th row of
 * X and y (--standardize: centred and scaled first), or every rank the
 * whole of a problem too small to split; by default a working set grown
 * from the duality gap (at most 2 allreduces an iteration, whatever the
 * ranks); with --solver priority (or the schedule's flags), the priority
 * schedule (STRADS-Dynamic) through loom_for, --select uniform its
 * baseline; --serial the serial twin.  Here: the flags, the λ path, the
 * per-iteration report and stopping rules, divergence, the summary and
 * the model file.  Flags, formats, output: docs/loom-lasso.md.
 *
 *   loom-lasso (--X FILE --y FILE | --libsvm FILE)
 *              (--lambda L | --lambda-path N [--lambda-min-ratio R])
 *              [--standardize] [--solver workset|priority] [--select priority|uniform]
 *              [--serial cyclic|random] [--rho R] [--rho-rows M] [--batch L]
 *              [--candidates C] [--pipeline D] [--rounds R] [--iters N]
 *              [--tol T] [--target F] [--eta E] [--seed S] [--log FILE.csv]
 *              [--model FILE]
 *
 * Exit status: 0; 1 for unreadable or malformed data (FILE:LINE named) or
 * a failed write; 2 for bad arguments; 3 when the objective diverges. */
#include "common/flags.h"
#include "../kernels/lasso_dist.h"
#include "common/report.h"
#include "common/start.h"

#include <loom.h>

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    const char *x, *y, *libsvm, *log, *model, *select, *serial, *solver;
    double lambda, min_ratio, rho, tol, target, eta;
    long path, batch, candidates, pipeline, rounds, iters, rho_rows;
    uint64_t seed;
    int have_lambda, have_target, standardize, zero_based;
    int twin; /* --serial given */
    int workset; /* 1: the working-set solver; 0: the priority schedule */
};

static const char APP[] = "loom-lasso";

/* Fills *o from argv; returns 0, 1 after --help or --version, -1 after
 * saying what is wrong (rank 0). */
static int parse(int argc, char **argv, void *opts)
{
    struct opts *o = opts;
    *o = (struct opts){.min_ratio = 0.01, .rho = NAN, .tol = 1e-6, .eta = 1e-6, .batch = 0,
                       .iters = 100, .seed = 1, .lambda = NAN, .target = NAN};
    struct { /* the counts as the flag parser writes them (0: not given) */
        long long path, rho_rows, batch, candidates, pipeline, rounds, iters;
    } n = {.iters = 100};
    unsigned long long seed = 1;
    const loom_flag flags[] = {
        {"X", LOOM_FLAG_STR, &o->x, "FILE", 0, 0,
         "MatrixMarket X (coordinate or array); with --y"},
        {"y", LOOM_FLAG_STR, &o->y, "FILE", 0, 0, "MatrixMarket y (n x 1 or a vector)"},
        {"libsvm", LOOM_FLAG_STR, &o->libsvm, "FILE", 0, 0,
         "one LIBSVM file instead: 'y index:value ...' per row"},
        {"zero-based", LOOM_FLAG_SET, &o->zero_based, NULL, 0, 0,
         "the LIBSVM file's indices start at 0 (as\nscikit-learn's dump_svmlight_file writes)"},
        {"lambda", LOOM_FLAG_NUM, &o->lambda, "L", 0, HUGE_VAL, "the penalty"},
        {"lambda-path", LOOM_FLAG_LONG, &n.path, "N", 1, HUGE_VAL,
         "or a path of N values from lambda_max =\nmax|X'y| down to R * lambda_max, warm starts"},
        {"lambda-min-ratio", LOOM_FLAG_NUM, &o->min_ratio, "R", 0, 1,
         "the path's last lambda / lambda_max, 0 < R <= 1\n(default 0.01)"},
        {"standardize", LOOM_FLAG_SET, &o->standardize, NULL, 0, 0,
         "centre and scale every column (mean 0, sum of\nsquares n), centre y and fit an "
         "intercept; the\nmodel is reported in the original units\n(columns are then stored "
         "densely)"},
        {"solver", LOOM_FLAG_STR, &o->solver, "HOW", 0, 0,
         "workset (default: coordinate descent on a\nworking set grown from the duality gap, with\n"
         "gap-safe screening; a few allreduces an\niteration) or priority (the STRADS schedule:\n"
         "an allreduce a round; the default when any of\nits flags below is given)"},
        {"select", LOOM_FLAG_STR, &o->select, "HOW", 0, 0,
         "priority schedule: priority (draw coordinates\nby delta^2 + eta, default) or uniform "
         "(the\nbaseline)"},
        {"serial", LOOM_FLAG_STR, &o->serial, "ORDER", 0, 0,
         "run the serial twin instead (one rank): cyclic\nor random order"},
        {"rho", LOOM_FLAG_NUM, &o->rho, "R", 0, HUGE_VAL,
         "two columns correlated above R are not updated\ntogether (default 0.1; 1 turns the "
         "filter off)"},
        {"rho-rows", LOOM_FLAG_LONG, &n.rho_rows, "M", 1, HUGE_VAL,
         "rows the correlations are estimated on (default\n1024; more than the data set: all, "
         "exact)"},
        {"batch", LOOM_FLAG_LONG, &n.batch, "L", 1, HUGE_VAL,
         "coordinates updated in parallel per round\n(default 8).  Without it a rank runs a "
         "thread\nper 256 values of a column (up to\nOMP_NUM_THREADS; they split the rows), "
         "one\nrank with one thread updates one coordinate at\na time, and with under 768 "
         "values a column\nevery rank solves the whole problem alone"},
        {"candidates", LOOM_FLAG_LONG, &n.candidates, "C", 1, HUGE_VAL,
         "coordinates drawn per round (default 2 * batch)"},
        {"pipeline", LOOM_FLAG_LONG, &n.pipeline, "D", 1, HUGE_VAL,
         "rounds in flight at once, sharing one allreduce\n(default 1; their updates see the "
         "state before\nthe others' results)"},
        {"rounds", LOOM_FLAG_LONG, &n.rounds, "R", 1, HUGE_VAL,
         "rounds per iteration (default features / batch:\none pass)"},
        {"iters", LOOM_FLAG_LONG, &n.iters, "N", 1, HUGE_VAL,
         "iterations at most, per lambda (default 100)"},
        {"tol", LOOM_FLAG_NUM, &o->tol, "T", 0, HUGE_VAL,
         "stop when the duality gap <= T * objective\n(default 1e-6; 0: never, and no gap is "
         "computed)"},
        {"target", LOOM_FLAG_NUM, &o->target, "F", 0, 0, "stop when the objective <= F"},
        {"eta", LOOM_FLAG_NUM, &o->eta, "E", 0, 0, "sampling weight floor, > 0 (default 1e-6)"},
        {"seed", LOOM_FLAG_ULONG, &seed, "S", 0, 0, "of the schedule's draws (default 1)"},
        {"log", LOOM_FLAG_STR, &o->log, "FILE.csv", 0, 0,
         "CSV: iter,updates,seconds,objective,nnz,lambda,\ngap"},
        {"model", LOOM_FLAG_STR, &o->model, "FILE", 0, 0,
         "writes beta (of the last lambda), one value per\nline; with --standardize in "
         "original units,\nthen the intercept"},
        {0}};
    const loom_cli cli = {
        .app = "loom-lasso",
        .usage = "loom-lasso --X FILE --y FILE (--lambda L | --lambda-path N) [OPTION]...\n"
                 "loom-lasso --libsvm FILE (--lambda L | --lambda-path N) [OPTION]...",
        .about = "Lasso by coordinate descent, on a working set (default) or under the\n"
                 "priority schedule (--solver priority).\n"
                 "Minimizes 1/2 |y - X beta|^2 + lambda |beta|_1 on the ranks loomrun starts.\n"
                 "scikit-learn's Lasso(alpha=A) minimizes 1/(2n) |y - X beta|^2 + A |beta|_1\n"
                 "over n samples: the same problem with lambda = n * A (alpha = lambda / n);\n"
                 "its fit_intercept=True on standardized columns is --standardize here.",
        .flags = flags,
        .more = "Exit status: 0; 1 unreadable or empty data, or a failed write; 2 bad\n"
                "arguments; 3 the objective diverged (lower --rho, --batch or --pipeline).\n"
                "See docs/loom-lasso.md."};
    int rc = loom_flags_parse(&cli, argc, argv, 1);
    if (rc)
        return rc;
    o->path = (long)n.path, o->rho_rows = (long)n.rho_rows, o->batch = (long)n.batch;
    o->candidates = (long)n.candidates, o->pipeline = (long)n.pipeline, o->rounds = (long)n.rounds;
    o->iters = (long)n.iters, o->seed = seed;
    o->have_lambda = !isnan(o->lambda);
    o->have_target = !isnan(o->target);
    int sched = o->select || !isnan(o->rho) || n.rho_rows || o->batch || o->candidates ||
                o->pipeline || o->rounds;
    if (o->solver && strcmp(o->solver, "workset") && strcmp(o->solver, "priority"))
        return loom_flags_complain(APP, "--solver must be workset or priority");
    o->workset = o->solver ? !strcmp(o->solver, "workset") : !sched;
    if (o->workset && sched)
        return loom_flags_complain(APP, "--select, --rho, --rho-rows, --batch, --candidates, "
                                        "--pipeline and --rounds belong to --solver priority");
    o->select = o->select ? o->select : "priority";
    o->rho = isnan(o->rho) ? 0.1 : o->rho;
    o->rho_rows = n.rho_rows ? o->rho_rows : 1024;
    if (strcmp(o->select, "priority") && strcmp(o->select, "uniform"))
        return loom_flags_complain(APP, "--select must be priority or uniform");
    if (o->serial && strcmp(o->serial, "cyclic") && strcmp(o->serial, "random"))
        return loom_flags_complain(APP, "--serial must be cyclic or random");
    if (!(o->min_ratio > 0))
        return loom_flags_complain(APP, "--lambda-min-ratio must be > 0");
    if (!(o->eta > 0))
        return loom_flags_complain(APP, "--eta must be > 0");
    if (!o->libsvm && !(o->x && o->y))
        return loom_flags_complain(APP, o->x || o->y ? "--X and --y go together"
                                                     : "missing the data: --X FILE --y FILE, "
                                                       "or --libsvm FILE");
    if (o->libsvm && (o->x || o->y))
        return loom_flags_complain(APP, "--libsvm replaces --X and --y");
    if (o->zero_based && !o->libsvm)
        return loom_flags_complain(APP, "--zero-based goes with --libsvm (MatrixMarket is "
                                        "1-based)");
    if (o->have_lambda == !!o->path)
        return loom_flags_complain(APP, o->path ? "--lambda and --lambda-path exclude each other"
                                                : "missing --lambda L or --lambda-path N");
    if (o->candidates && o->candidates < o->batch)
        return loom_flags_complain(APP, "--candidates must be at least --batch");
    o->twin = o->serial != NULL;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    int rc = loom_app_start(APP, &argc, &argv, parse, &o, &o.twin);
    if (rc != LOOM_APP_GO)
        return rc;
    loom_lasso_dist d = {0};
    /* collective: bad or empty data ends the job with one message */
    loom_lasso_dist_load(&d, &(loom_lasso_files){o.x, o.y, o.libsvm, o.zero_based},
                         o.libsvm ? o.libsvm : o.x, o.batch, loom_report_agree);
    loom_lasso_dist_init(&d, &(loom_lasso_dist_opts){
                                 .serial = o.serial, .workset = o.workset,
                                 .standardize = o.standardize,
                                 .uniform = !strcmp(o.select, "uniform"), .batch = o.batch,
                                 .candidates = o.candidates, .pipeline = o.pipeline,
                                 .rounds = o.rounds, .rho_rows = o.rho_rows, .rho = o.rho,
                                 .eta = o.eta, .tol = o.tol, .seed = o.seed,
                                 .tick = loom_report_tick});
    loom_report_agree(!(d.lmax > 0), "loom-lasso: X'y is 0 (y is all zero, or constant with "
                      "--standardize): beta = 0 for every lambda, nothing to fit");
    loom_lasso_dist_start(&d);
    int64_t p = d.l.p;
    if (loom_rank() == 0) {
        printf("loom-lasso: %lld samples x %lld features, %.0f non-zeros, %d rank%s x %d "
               "thread%s; lambda_max %.6g; ",
               (long long)d.l.ntotal, (long long)p, d.nz, loom_size(), loom_size() > 1 ? "s" : "",
               omp_get_max_threads(), omp_get_max_threads() > 1 ? "s" : "", d.lmax);
        if (o.serial)
            printf("serial twin, %s order\n", o.serial);
        else if (o.workset)
            printf("working-set solver%s\n", o.standardize ? ", standardized" : "");
        else
            printf("%s selection, batch %ld of %ld candidates, rho %g, pipeline %ld, %ld rounds "
                   "per iteration%s\n",
                   o.select, d.L, d.C, o.rho, o.pipeline ? o.pipeline : 1, d.rounds,
                   o.standardize ? ", standardized" : "");
        if (d.whole)
            printf("loom-lasso: %.0f values a column, under %d, too few to split over the "
                   "ranks: every rank holds the whole problem and solves it alone, as one rank "
                   "would (--batch splits it anyway)\n", d.nz / (double)p, LOOM_LASSO_SPLIT_MIN);
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

    long nl = o.path ? o.path : 1, iter = (long)loom_clock_now(), iter0 = iter;
    int diverged = 0;
    double t0 = loom_wtime();
    /* Restartable (docs/checkpoint.md): a loom_clock per iteration, so
     * LOOM_CHECKPOINT_EVERY=N checkpoints every N; a restart goes on from
     * where the path stood (d.at). */
    loom_lasso_at *at = &d.at;
    double obj = d.back ? at->obj : NAN, gap = d.back ? at->gap : NAN;
    long setup = d.allreduces;
    for (long k = at->k; k < nl; k++) {
        double lambda = !o.path     ? o.lambda
                        : nl == 1   ? d.lmax * o.min_ratio
                                    : d.lmax * pow(o.min_ratio, (double)k / (double)(nl - 1));
        int resumed = d.back && k == at->k; /* beta, residual and weights came back */
        loom_lasso_dist_lambda(&d, resumed);
        int stop = resumed ? (int)at->stop : 0;
        for (long it = resumed ? at->it : 0; it < o.iters && !stop; it++) {
            loom_report_begin(rep, ++iter, loom_lasso_dist_work(&d));
            obj = loom_lasso_dist_iterate(&d, lambda, &gap);
            loom_report_row(rep, (double[]){(double)iter, (double)d.updates,
                                            loom_wtime() - t0, obj,
                                            (double)loom_lasso_nnz(&d.l), lambda, gap});
            stop = (o.tol > 0 && gap <= o.tol * obj) || (o.have_target && obj <= o.target);
            if (!isfinite(obj) || obj > 10 * d.f0) { /* every rank sees the same obj */
                if (loom_rank() == 0)
                    fprintf(stderr,
                            "loom-lasso: the objective diverged at iteration %ld (%.6g, more "
                            "than 10 times its value %.6g at beta = 0): coordinates updated "
                            "together interfere; lower --rho (now %g), --batch (now %ld) or "
                            "--pipeline (now %ld), or use --serial\n",
                            iter, obj, d.f0, o.rho, d.L, o.pipeline ? o.pipeline : 1);
                diverged = 1;
                break;
            }
            if (!o.serial) {
                *at = (loom_lasso_at){k, it + 1, stop, d.updates, at->ws, obj, gap};
                loom_clock(); /* LOOM_CHECKPOINT_EVERY=N: a checkpoint every N iterations */
            }
        }
        if (diverged)
            break;
        if (loom_rank() == 0) {
            printf("loom-lasso: lambda %.17g: objective %.17g, duality gap %.3g, %lld "
                   "non-zeros, %lld updates%s\n",
                   lambda, obj, gap, (long long)loom_lasso_nnz(&d.l), (long long)d.updates,
                   stop ? "" : " (stopped at --iters)");
            fflush(stdout);
        }
    }
    long iters = iter - iter0;
    loom_lasso_dist_stats st;
    loom_lasso_dist_stats_get(&d, &st);
    if (loom_rank() == 0) {
        printf("loom-lasso: %ld allreduces in %ld iterations (%.3g an iteration), %ld more to "
               "set up\n", d.allreduces - setup, iters,
               iters ? (double)(d.allreduces - setup) / (double)iters : 0.0, setup);
        if (o.workset)
            printf("loom-lasso: working set of %lld columns, %lld screened at the last "
                   "iteration, %lld passes over the set, %lld extrapolated\n", (long long)st.ws,
                   (long long)st.screened, (long long)st.passes, (long long)st.extrap);
    }
    if (st.corr && loom_rank() == 0)
        printf("loom-lasso: %lld column correlations computed for the filter, over %lld rows\n",
               (long long)st.corr_computed, (long long)st.corr_rows);
    rc = diverged ? 3 : 0;
    if (!diverged && o.standardize && loom_rank() == 0)
        printf("loom-lasso: intercept %.17g (coefficients in the original units: beta_j / "
               "scale_j; --model writes them)\n", loom_lasso_dist_intercept(&d));
    if (!diverged && o.model && loom_rank() == 0 && loom_lasso_dist_save(&d, o.model)) {
        fprintf(stderr, "loom-lasso: %s: %s\n", o.model, strerror(errno));
        rc = 1;
    }
    loom_report_close(rep);
    if (!diverged && loom_rank() == 0)
        printf("final objective=%.17g\n", obj);
    loom_lasso_dist_free(&d);
    loom_finalize();
    return rc;
}
