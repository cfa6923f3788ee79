/* The profiled process's identity, for profiler plugins (profile/procinfo.c). */
#ifndef HOOKIT_PROCINFO_H
#define HOOKIT_PROCINFO_H

#include <stddef.h>

struct profile;

/* p->process.argv and argc from /proc/self/cmdline.  0 or -1 (no memory). */
int procinfo_fill_argv(struct profile *p);
/* The executable's base name, every character outside [A-Za-z0-9._+-]
 * replaced by '_', at most 200 characters. */
void procinfo_exe_name(char *out, size_t size);
/* hookit.<exe>[.r<rank>].<pid>[.<attempt>].<suffix>; rank -1 for none. */
void procinfo_file_name(char *out, size_t size, const char *exe, int rank, int pid,
                        int attempt, const char *suffix);
/* "exit", "signal", "exec" or "flush" for a HOOKIT_END_* value (0: flush). */
const char *procinfo_end_name(int how);

#endif
