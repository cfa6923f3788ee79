/* hookit report --io/--alloc/--leaks (tools/report_io.c) and the helpers
 * `hookit io` (tools/cmd_io.c) shares with it. */
#ifndef HOOKIT_TOOLS_REPORT_IO_H
#define HOOKIT_TOOLS_REPORT_IO_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

struct report_opts;

/* report_opts.io_view */
enum { REPORT_IO = 1, REPORT_ALLOC = 2, REPORT_LEAKS = 3 };

/* The view o->io_view of one thread.  0, or an exit code (message printed). */
int report_io_view(FILE *out, const struct profile *p, const struct prof_thread *th,
                   const struct report_opts *o);
/* One line of process totals from the profile's metadata (nothing if none). */
void report_io_summary(FILE *out, const struct profile *p, int view);

/* The values of metric column name in th, or NULL. */
const uint64_t *rio_column(const struct prof_thread *th, const char *name);
/* "main -> writer -> write_block": the calling context of node. */
void rio_print_path(FILE *out, const struct profile *p, const struct prof_thread *th, uint32_t node);

#endif
