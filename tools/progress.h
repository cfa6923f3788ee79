/* Progress of a long `hookit export` on a terminal (tools/progress.c). */
#ifndef HOOKIT_TOOLS_PROGRESS_H
#define HOOKIT_TOOLS_PROGRESS_H

#include <stdio.h>

struct progress;

/* When stderr is a terminal: a stream that writes through to out and
 * counts, and a thread that, once the export has run a second, shows on
 * stderr what was written and for how long, refreshed in place, whatever
 * phase the format is in (building, compressing, writing).  NULL when
 * stderr is not a terminal or on failure: then write to out itself. */
struct progress *progress_start(FILE *out, const char *what);
FILE *progress_stream(struct progress *pg);
/* Flush the stream into out, stop the thread and, when progress was
 * shown, end it with the total.  0, or -1 when a write to out failed. */
int progress_end(struct progress *pg);

#endif
