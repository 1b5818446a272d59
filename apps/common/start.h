/* start.h — the prologue every app's main shares: start the job
 * (loom_init), parse the command line (the app's flags.h table), and
 * refuse --serial (the serial twin) on several ranks.
 *
 *   int main(int argc, char **argv)
 *   {
 *       struct opts o;
 *       int rc = loom_app_start("loom-lr", &argc, &argv, parse, &o, &o.serial);
 *       if (rc != LOOM_APP_GO)
 *           return rc;
 *       ...
 */
#ifndef LOOM_APPS_START_H
#define LOOM_APPS_START_H

#define LOOM_APP_GO (-1)

/* Starts the job and fills opts through parse (the app's: returns 0, 1
 * after --help or --version, -1 after saying what is wrong, as
 * loom_flags_parse does).  Returns LOOM_APP_GO when the app goes on;
 * otherwise the status main returns: 2 when loom_init failed (it said
 * why) or the command line is bad, 0 after --help or --version (the job
 * finalized).  When serial is not NULL and *serial is set after parsing,
 * a job of several ranks ends with one message from rank 0, "APP:
 * --serial runs on one rank (got N)", and exit status 2 on every rank.  Call once, first
 * thing in main, on every rank. */
int loom_app_start(const char *app, int *argc, char ***argv,
                   int (*parse)(int argc, char **argv, void *opts), void *opts,
                   const int *serial);

#endif
