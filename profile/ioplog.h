/*
 * The ioprof event log: libioprof writes it, `hookit io` reads it
 * (docs/io.md has the format).  Writer and reader live here together, as
 * the .prof format's do.
 *
 *   # ioprof log 1                 magic and version
 *   start_wall_ns N                header lines, "key value"
 *   start_ticks N
 *   ticks_per_sec R
 *   exe TOKEN
 *   args TOKEN...
 *   pid N
 *   ppid N
 *   columns op func tid t0 t1 result fd file bytes offset errno path
 *   OP FUNC TID T0 T1 RESULT FD FILE BYTES OFFSET ERRNO PATH     one per call
 *   # fork TICKS                   the process forked here
 *   # end HOW TICKS ticks_per_sec R
 *
 * A TOKEN is a string with space, '%', DEL and control bytes written %XX,
 * "-" for an empty one, so every field is one word.  The log is written as
 * NAME.log.part and renamed to NAME.log after its end line.
 *
 * The operation of an event is enum hookit_io_op (include/hookit/
 * profiler.h), by name: ioplog_op_name / ioplog_op_of.
 */
#ifndef HOOKIT_IOPLOG_H
#define HOOKIT_IOPLOG_H

#include <hookit/profiler.h>

#include <stddef.h>
#include <stdint.h>

#include "profile/iostats.h"

#define IOPLOG_MAGIC "# ioprof log"
/* The longest event line the writer makes (a longer path is cut). */
#define IOPLOG_LINE_MAX (16 * 1024)

/* ---- the codec, both sides (ioplog.c) ------------------------------------------------ */

/* "open", "read", ... for a HOOKIT_IO_* value; "?" for any other. */
const char *ioplog_op_name(uint32_t op);
/* The HOOKIT_IO_* value of a name; an unknown name counts as
 * HOOKIT_IO_META (a newer writer's kind of call is still a call). */
uint32_t ioplog_op_of(const char *name);
/* s as a TOKEN into out (NUL-terminated, cut to fit size); NULL or "" is
 * "-".  Returns the token's length. */
size_t ioplog_escape(char *out, size_t size, const char *s);
/* A TOKEN back to its string, in place ("-" becomes ""). */
void ioplog_unescape(char *s);

/* ---- writing (ioplog_write.c) ----------------------------------------------------------
 * Each function formats into the caller's buffer or hands text to put, so
 * the writer (code inside the profiled process) decides how and when the
 * bytes reach the file. */

/* What the header says about the process. */
struct ioplog_start {
    uint64_t wall_ns;           /* CLOCK_REALTIME at start, ns since the epoch */
    uint64_t ticks;             /* the event clock read at the same moment */
    double ticks_per_sec;       /* the event clock's rate */
    const char *exe;            /* the executable's path */
    const char *args;           /* the arguments, each NUL-terminated ... */
    size_t args_len;            /* ... in args_len bytes, then a NUL (/proc/self/cmdline) */
    int pid, ppid;
};
/* The header, through put (called several times). */
void ioplog_write_header(void (*put)(const char *s, size_t n), const struct ioplog_start *s);
/* One event line, path (NULL for none) given as it is: the line's length
 * (at most size - 1, the line cut to fit), or -1. */
int ioplog_event_line(char *line, size_t size, const struct hookit_io *io, long tid,
                      const char *path);
/* "# fork TICKS" and "# end HOW TICKS ticks_per_sec R": the line's length. */
int ioplog_fork_line(char *line, size_t size, uint64_t ticks);
int ioplog_end_line(char *line, size_t size, const char *how, uint64_t ticks, double ticks_per_sec);
/* DIR/ioprof.EXE.PID.log, or DIR/ioprof.EXE.PID.GEN.log for a later log of
 * the same process (gen > 0: after an exec that failed). */
void ioplog_file_name(char *out, size_t size, const char *dir, const char *exe, int pid,
                      unsigned gen);

/* ---- reading (ioplog_read.c) -----------------------------------------------------------
 * A log is counted the way libjprof counts: per file (profile/iostats.h),
 * per wrapped function, and bytes read and written per time slice.  A log
 * still being written may end inside a line: that line is left out. */

struct ioplog_func {
    char *name;                 /* "read", "fwrite", ... */
    uint64_t calls, bytes, time_ns;
};

/* Bytes read and written in time slice idx (since the log's start). */
struct ioplog_point {
    size_t idx;
    uint64_t rd, wr;
};

struct ioplog {
    long pid;
    char *exe;                  /* NULL when the header has none */
    int complete;               /* the end line was read */
    uint64_t events;
    struct iostats_row *files;  /* by file id; times in ns since the start */
    size_t nfiles;
    struct ioplog_func *funcs;  /* in the order met */
    size_t nfuncs;
    struct ioplog_point *points;    /* in the order met, one per run of events in a slice */
    size_t npoints;
};

/* Read and count a log, time slices of interval_ns.  On failure NULL, and
 * err holds one line naming the input (name) and the line that is wrong. */
struct ioplog *ioplog_read_mem(const char *buf, size_t len, const char *name,
                               uint64_t interval_ns, char *err, size_t errlen);
struct ioplog *ioplog_read_file(const char *path, uint64_t interval_ns, char *err, size_t errlen);
void ioplog_free(struct ioplog *log);
/* Whether path is a log: by its name (.log, .log.part: a log just created
 * may not have its first line yet), or by its first line. */
int ioplog_is_log(const char *path);

#endif
