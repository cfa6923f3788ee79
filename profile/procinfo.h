/* The profiled process: its identity and the metadata every profile carries, for the
 * profiler plugins and the live reader (profile/procinfo.c). */
#ifndef HOOKIT_PROCINFO_H
#define HOOKIT_PROCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct profile;

/* What every profile says about how it was taken (docs/profile-format.md). */
struct procinfo_meta {
    const char *profiler;       /* "jprof", "hktrace" */
    const char *clock;          /* what times were read from: "tsc", "monotonic", ... */
    double ticks_per_ns;
    const char *end;            /* "exit", "signal", ... (procinfo_end_name) */
    int signal;                 /* the signal the process died of, 0 if none */
};
/* hostname, hookit_version, profiler, clock, ticks_per_ns, end and (a
 * death by a signal) signal, into p's metadata.  0 or -1 (no memory). */
int procinfo_set_meta(struct profile *p, const struct procinfo_meta *m);
/* One metadata value that is a number.  0 or -1. */
int procinfo_set_meta_u64(struct profile *p, const char *key, uint64_t v);
/* The process this code runs in, as pid and ppid say (a helper process
 * writes for the one it was forked from): p->process's pid, ppid, rank,
 * size, exe (/proc/self/exe) and arguments.  0 or -1 (no memory). */
int procinfo_fill_self(struct profile *p, pid_t pid, pid_t ppid, int rank, int size);

/* p->process.argv and argc from /proc/self/cmdline.  0 or -1 (no memory). */
int procinfo_fill_argv(struct profile *p);
/* The executable's base name, every character outside [A-Za-z0-9._+-]
 * replaced by '_', at most 200 characters. */
void procinfo_exe_name(char *out, size_t size);
/* hookit.<exe>[.r<rank>].<pid>[.<attempt>].<suffix>; rank -1 for none. */
void procinfo_file_name(char *out, size_t size, const char *exe, int rank, int pid,
                        int attempt, const char *suffix);
/* /proc/PID/WHAT ("cmdline", "environ": NUL-separated strings) into buf,
 * NUL-terminated; the bytes read, or -1 (gone, not readable). */
ssize_t procinfo_read(pid_t pid, const char *what, char *buf, size_t size);
/* pid's parent, and its command name into comm (size bytes; comm may be
 * NULL), from /proc/PID/stat; 0 when /proc does not say (gone). */
pid_t procinfo_parent(pid_t pid, char *comm, size_t size);
/* "exit", "signal", "exec" or "flush" for a HOOKIT_END_* value (0: flush). */
const char *procinfo_end_name(int how);

#endif
