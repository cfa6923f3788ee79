/* `hookit report` with no file: the newest profile in the current
 * directory, or its fork family (tools/newest.c). */
#ifndef HOOKIT_TOOLS_NEWEST_H
#define HOOKIT_TOOLS_NEWEST_H

#include <stddef.h>

/* The paths (malloc'ed array of malloc'ed strings, *n of them, the newest
 * first) of the newest hookit.*.prof or hookit.*.trace in dir and of the
 * profiles of its fork family there: processes linked to it by parent
 * pid (or the same pid, an exec), each started while its parent ran.
 * Prints one line on stderr saying which.  0, or -1 with a message. */
int newest_profiles(const char *dir, char ***paths, size_t *n);
void newest_free(char **paths, size_t n);

/* Whether any instrumented function ran in the profile (a node with calls). */
struct profile;
int profile_ran_code(const struct profile *p);

#endif
