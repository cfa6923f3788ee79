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
/* Write p to path atomically (replacing it).  EXIT_OK or EXIT_FAIL. */
int live_cli_write(const char *path, const struct profile *p);
/* Seconds as text to milliseconds; -1 when not a positive number. */
int live_cli_ms(const char *text);

#endif
