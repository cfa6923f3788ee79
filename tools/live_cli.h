/* What the live commands (top, snapshot, ctl, recover) share. */
#ifndef HOOKIT_TOOLS_LIVE_CLI_H
#define HOOKIT_TOOLS_LIVE_CLI_H

#include <sys/types.h>

#include "profile/live.h"

struct a2n;

/* PID from text; -1 (message printed) when it is not a positive number. */
pid_t live_cli_pid(const char *cmd, const char *text);
/* Attach or print why not (returns NULL). */
struct live *live_cli_attach(pid_t pid, int flags);
/* Take a snapshot and make it a named profile (NULL, message printed). */
struct profile *live_cli_profile(struct live *l, enum live_consistency c, const char *end,
                                 struct a2n *a2n, struct live_snapshot *keep);
/* A snapshot taken made a named profile (NULL, message printed). */
struct profile *live_cli_named(struct live *l, const struct live_snapshot *s, const char *end,
                               struct a2n *a2n);
/* Write p to path atomically (replacing it).  EXIT_OK or EXIT_FAIL. */
int live_cli_write(const char *path, const struct profile *p);
/* Seconds as text to milliseconds; -1 when not a positive number. */
int live_cli_ms(const char *text);

/* Where pid writes its profiles: its $HOOKIT_OUTPUT (from
 * /proc/PID/environ, readable while it runs), relative to its working
 * directory, or that directory; "" when /proc does not say. */
void live_cli_outdir(pid_t pid, char *dir, size_t size);
/* The newest profile or trace of pid in dir (hookit.EXE[.rRANK].PID[.N]
 * .prof or .trace, the last written) into name; 1 found, 0 not. */
int live_cli_written(const char *dir, pid_t pid, char *name, size_t size);
/* A process names each profile it writes the first of hookit.E.P.prof,
 * hookit.E.P.1.prof, .2 ... that is free.  The last of its names in dir
 * in that order (1 found, 0 none), and the first after `after` ("" for
 * any): what a flush wrote, read before and after it, even when the
 * process's exit wrote the next one meanwhile. */
int live_cli_last_name(const char *dir, pid_t pid, char *name, size_t size);
int live_cli_next_name(const char *dir, pid_t pid, const char *after, char *name, size_t size);

#endif
