/* output.c — forward ranks' stdout and stderr line by line, tagged "[rank] ".
 *
 * Each line goes out with one write(2), so lines of different ranks never
 * mix.  A line longer than the buffer is cut into buffer-sized pieces,
 * each tagged.  --output-filename sends each rank's streams to files of
 * their own (untagged), --output-rank drops the other ranks' stdout. */
#include "loomrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void emit(int to, int rank, int tag, const char *s, size_t n, int newline)
{
    if (to < 0)
        return; /* dropped (--output-rank) */
    char line[sizeof(((out_stream *)0)->buf) + 32];
    size_t k = tag ? (size_t)snprintf(line, 32, "[%d] ", rank) : 0;
    memcpy(line + k, s, n);
    k += n;
    if (newline)
        line[k++] = '\n';
    const char *p = line;
    while (k) {
        ssize_t w = write(to, p, k);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* our own stdout is gone: drop, keep running */
        p += w;
        k -= (size_t)w;
    }
}

int loom_out_pump(out_stream *s, int rank, int tag)
{
    ssize_t r = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (r <= 0) {
        loom_out_flush(s, rank, tag);
        close(s->fd);
        s->fd = -1;
        return 0;
    }
    s->len += (size_t)r;
    char *start = s->buf, *nl;
    while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf)))) {
        emit(s->to, rank, tag && !s->file, start, (size_t)(nl - start), 1);
        start = nl + 1;
    }
    s->len -= (size_t)(start - s->buf);
    memmove(s->buf, start, s->len);
    if (s->len == sizeof s->buf) { /* a very long line: pass a piece on */
        emit(s->to, rank, tag && !s->file, s->buf, s->len, 1);
        s->len = 0;
    }
    return 1;
}

void loom_out_flush(out_stream *s, int rank, int tag)
{
    if (s->len)
        emit(s->to, rank, tag && !s->file, s->buf, s->len, 1);
    s->len = 0;
}

/* Opens dir/rank.N/name for writing into *fd (the folders made as
 * needed); -1 after a message. */
static int open_in(const char *dir, int rank, const char *name, int *fd)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    if (mkdir(path, 0777) && errno != EEXIST)
        goto fail;
    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    if (mkdir(path, 0777) && errno != EEXIST)
        goto fail;
    snprintf(path, sizeof path, "%s/rank.%d/%s", dir, rank, name);
    if ((*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0)
        return 0;
fail:
    fprintf(stderr, "loomrun: --output-filename: cannot write %s: %s\n", path, strerror(errno));
    return -1;
}

int loom_out_route(rank_proc *p, const char *dir, int only)
{
    if (dir) {
        if (open_in(dir, p->rank, "stdout", &p->out.to) || open_in(dir, p->rank, "stderr", &p->err.to))
            return -1;
        p->out.file = p->err.file = 1;
    } else if (only >= 0 && p->rank != only) {
        p->out.to = -1;
    }
    return 0;
}
