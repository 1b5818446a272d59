/* report.h — what every Loom app prints while it trains: one line per
 * iteration on stdout, the same figures as a CSV log with a header, a
 * progress line every few seconds while one iteration runs long, and a
 * closing "final NAME=VALUE" line.  Only rank 0 writes; on other ranks
 * every call is a no-op, so apps call them unconditionally.
 *
 *   loom_report *r = loom_report_open("loom-mf", "log.csv",
 *                                     "iter,samples,seconds,train_obj,test_rmse", err, n);
 *   loom_report_begin(r, 3, local_updates);   // iteration 3 starts
 *   ... loop body calls loom_report_tick(1) per sample ...
 *   loom_report_row(r, (double[]){3, 240000, 1.25, 4.1e4, 0.93});
 *   loom_report_final(r, "test_rmse", 0.93);
 *   loom_report_close(r);
 *
 * The CSV is flushed after every row, so a killed job keeps its log. */
#ifndef LOOM_APPS_REPORT_H
#define LOOM_APPS_REPORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_report loom_report;

/* Opens the report of app `app` with the comma-separated column names
 * `columns` (at most 16).  csv may be NULL (no log file); otherwise rank 0
 * creates it (truncating) and writes the header; a run resumed from a
 * checkpoint (loom_restarted) appends to it instead.  Returns NULL with a
 * message in err ("FILE: strerror") when the log cannot be created.
 * Rank 0 also starts the progress ticker thread.  Call on every rank. */
loom_report *loom_report_open(const char *app, const char *csv, const char *columns,
                              char *err, size_t errlen);

/* Iteration `iter` starts; this rank will do `total` samples of it (the
 * denominator of the progress percentage; 0 = unknown).  Resets the tick
 * counters. */
void loom_report_begin(loom_report *r, long iter, int64_t total);

/* Count n samples done by the calling thread (any thread, any rank; cheap:
 * a plain store to a per-thread slot, no atomic read-modify-write). */
void loom_report_tick(int64_t n);

/* Prints one line ("app: iter 3  samples 240000  seconds 1.25 ...") and
 * appends one CSV row: one value per column, in the order of `columns`.
 * Ends the progress display of the current iteration.  With several ranks
 * the line ends with the megabytes rank 0's messages carried, sent and
 * received, since the last row ("rank0_sent_MB 1.2 rank0_recv_MB 3.4":
 * allocations and collectives, loom_stats' wire_*), and under
 * LOOM_STATS every rank prints its own on stderr ("app: rank 1 iter 3:
 * sent N B, received M B").  Not collective. */
void loom_report_row(loom_report *r, const double *values);

/* Prints "final NAME=VALUE" (value with 6 decimals).  A value that is nan
 * or infinite is never reported as a result: rank 0 ends the job instead
 * (loom_abort, exit status 1) with "APP: the final NAME is nan: ...",
 * except in a restarted job that reported no row: it resumed after the
 * last epoch, had nothing to run, and says so in one line instead (an app
 * that can recompute its figure from the model, as loom-mf does, passes
 * it and it is printed as usual). */
void loom_report_final(loom_report *r, const char *name, double value);

/* Stops the ticker, closes the CSV, frees r (NULL is fine). */
void loom_report_close(loom_report *r);

/* Collective: every rank calls it after a step that may fail on some
 * ranks (loading input, say).  If no rank failed it returns.  Otherwise
 * the job ends with exit status 1 and one message: `msg` of the lowest
 * failing rank (other ranks' messages, often the same, are not shown). */
void loom_report_agree(int failed, const char *msg);

/* Collective, after each epoch, with `loss` the same on every rank
 * (allreduced): returns if it is finite and at most 1.5 times `untrained`,
 * what a model that learnt nothing scores.  Otherwise training ran away and
 * the model is worse than none: the job ends with exit status 3 (as
 * loom-lasso's diverged objective does) and one message from rank 0
 * naming the epoch, both losses, `advice` and docs/APP.md's "Runaway
 * training".  Call it before the epoch's checkpoint and the model's save. */
void loom_report_runaway(const char *app, int epoch, double loss, double untrained,
                         const char *advice);

/* Seconds between progress lines while one iteration runs (default 5). */
extern double loom_report_every;

#endif
