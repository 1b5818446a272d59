/* start.c — the apps' shared prologue (start.h). */
#include "start.h"

#include <loom.h>

#include <stdio.h>

/* Contract: start.h. */
int loom_app_start(const char *app, int *argc, char ***argv,
                   int (*parse)(int argc, char **argv, void *opts), void *opts,
                   const int *serial)
{
    if (loom_init(argc, argv))
        return 2;
    int rc = parse(*argc, *argv, opts); /* after loom_init: only rank 0 complains */
    if (rc) {
        loom_finalize();
        return rc < 0 ? 2 : 0;
    }
    if (serial && *serial && loom_size() > 1) { /* one message, from rank 0 */
        if (loom_rank() == 0)
            fprintf(stderr, "%s: --serial runs on one rank (got %d)\n", app, loom_size());
        loom_finalize();
        return 2;
    }
    return LOOM_APP_GO;
}
