/* The ioprof log, writing side (profile/ioplog.h).  Runs inside the
 * profiled process: no allocation, no stdio stream, nothing but formatting
 * into the caller's buffers. */
#include "profile/ioplog.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR void ioplog_write_header(void (*put)(const char *s, size_t n), const struct ioplog_start *s)
{
    char line[IOPLOG_LINE_MAX];
    int n = snprintf(line, sizeof line,
                     IOPLOG_MAGIC " 1\n"
                     "start_wall_ns %" PRIu64 "\n"
                     "start_ticks %" PRIu64 "\n"
                     "ticks_per_sec %.1f\n"
                     "exe ",
                     s->wall_ns, s->ticks, s->ticks_per_sec);
    put(line, (size_t)n);
    put(line, ioplog_escape(line, sizeof line, s->exe));
    put("\nargs", 5);
    for (size_t i = 0; i < s->args_len; i += strlen(s->args + i) + 1) {
        put(" ", 1);
        put(line, ioplog_escape(line, sizeof line, s->args + i));
    }
    n = snprintf(line, sizeof line,
                 "\npid %d\nppid %d\n"
                 "columns op func tid t0 t1 result fd file bytes offset errno path\n",
                 s->pid, s->ppid);
    put(line, (size_t)n);
}

NOINSTR int ioplog_event_line(char *line, size_t size, const struct hookit_io *io, long tid,
                              const char *path)
{
    char token[IOPLOG_LINE_MAX / 2];
    ioplog_escape(token, sizeof token, path);
    int n = snprintf(line, size,
                     "%s %s %ld %" PRIu64 " %" PRIu64 " %" PRId64 " %d %u %" PRIu64 " %" PRId64 " %d %s\n",
                     ioplog_op_name(io->op), io->func ? io->func : "?", tid, io->t0, io->t1,
                     io->result, io->fd, io->file, io->bytes, io->offset, io->err, token);
    if (n >= 0 && (size_t)n >= size)
        n = (int)size - 1;
    return n;
}

NOINSTR int ioplog_fork_line(char *line, size_t size, uint64_t ticks)
{
    return snprintf(line, size, "# fork %" PRIu64 "\n", ticks);
}

NOINSTR int ioplog_end_line(char *line, size_t size, const char *how, uint64_t ticks, double ticks_per_sec)
{
    return snprintf(line, size, "# end %s %" PRIu64 " ticks_per_sec %.1f\n", how, ticks, ticks_per_sec);
}

NOINSTR void ioplog_file_name(char *out, size_t size, const char *dir, const char *exe, int pid,
                              unsigned gen)
{
    if (gen == 0)
        snprintf(out, size, "%s/ioprof.%s.%d.log", dir, exe, pid);
    else
        snprintf(out, size, "%s/ioprof.%s.%d.%u.log", dir, exe, pid, gen);
}
