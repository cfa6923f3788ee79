/*
 * Finding the functions a user names (`--callers FN`, `--callees FN`):
 * as the profile stores or the views show them ("foo", "foo(int)",
 * "module:name"), else by a glob ("*::Match", "leveldb::*Key*"), else by a
 * suffix at a "::" ("ExtractUserKey" for "leveldb::ExtractUserKey",
 * "Version::Get" for "leveldb::Version::Get").  C++ names are compared in
 * their simple form (no return type, template arguments or parameters).
 * A suffix that fits functions of different names is ambiguous: the
 * caller lists the candidates.  A name that fits nothing gets the closest
 * names as suggestions.
 */
#ifndef HOOKIT_TOOLS_FIND_FN_H
#define HOOKIT_TOOLS_FIND_FN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

enum find_fn_how { FIND_NONE, FIND_EXACT, FIND_GLOB, FIND_SUFFIX };

/* target[f] = 1 for every function of p that fn names (target has
 * p->nfuncs entries, zeroed here).  How they were found, FIND_NONE when
 * none. */
enum find_fn_how find_fn(const struct profile *p, const char *fn, uint8_t *target);

/* The distinct simple names of the functions fn names by suffix in p,
 * when more than one: written to out joined by ", " (at most max, then
 * "and N more").  Returns how many there are (0 or 1: not ambiguous). */
uint32_t find_fn_candidates(FILE *out, const struct profile *p, const char *fn, uint32_t max);

/* Up to max names of p closest to fn (edit distance on the simple name
 * and its last "::" component; a name that contains fn, ignoring case, is
 * close), written to out joined by ", ".  Returns how many were written. */
uint32_t find_fn_closest(FILE *out, const struct profile *p, const char *fn, uint32_t max);

/* An option's FN against the profiles ps[0 .. n) (where: how the message
 * names them): 0 when a profile has a function FN names and FN is not an
 * ambiguous suffix in any; else one line on stderr, prefixed by option
 * ("" or "--fold-frames: "), listing the candidates or the closest names,
 * and EXIT_FAIL. */
int find_fn_check(const struct profile *const *ps, size_t n, const char *fn, const char *option,
                  const char *where);
/* That line for a FN that names nothing (with the closest names); EXIT_FAIL. */
int find_fn_missing(const struct profile *const *ps, size_t n, const char *fn, const char *option,
                    const char *where);

/* --thread T: T is a kernel thread id (a number), or a thread name or a
 * glob of names ("worker*").  Parsed into *tid (-1 for a name) and
 * *name (T itself, or NULL for a number). */
void find_thread_parse(const char *t, long *tid, const char **name);
/* Whether a thread of that tid and name is the one --thread selected. */
int find_thread_matches(int32_t tid, const char *thread_name, long want_tid, const char *want_name);

#endif
