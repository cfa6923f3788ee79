/* Source lines read from the binaries after the run (tools/srclines.c), so
 * the profiled process never pays for them: `hookit export` (callgrind,
 * pprof) and `hookit report --lines`. */
#ifndef HOOKIT_TOOLS_SRCLINES_H
#define HOOKIT_TOOLS_SRCLINES_H

#include "profile/profile.h"

/* Fill in file and line of every function of p that has none, from its
 * module's object file when it is still the one that ran: the program
 * (the profile's exe), and libraries found next to it or on
 * LD_LIBRARY_PATH.  A program that is gone or was rebuilt since the run
 * gets one line on stderr (cmd and path name it) and its functions keep no
 * lines.  0, or -1 when out of memory. */
int srclines_fill(struct profile *p, const char *cmd, const char *path);

#endif
