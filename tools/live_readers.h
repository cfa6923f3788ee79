/* hookit snapshot --readers: a job on several hosts, one reader per host
 * started by the job's launcher, synchronised over MPI (live_readers.c). */
#ifndef HOOKIT_TOOLS_LIVE_READERS_H
#define HOOKIT_TOOLS_LIVE_READERS_H

#include "tools/live_set.h"

/* Every reader's share snapshot at consistency c, reduced into one job
 * snapshot that reader 0 writes to out.  EXIT_*. */
int live_readers_snapshot(const struct live_set_sel *sel, enum live_consistency c, const char *out);

#endif
