/* report --collapse-recursion: direct recursion folded; --fold-frames:
 * wrapper frames folded into their callers (tools/fold.c). */
#ifndef HOOKIT_TOOLS_FOLD_H
#define HOOKIT_TOOLS_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Fold every thread of p in place (its node arrays replaced by ones from
 * p's arena): a node whose function is its caller's merges into the
 * caller.  0, or -1 when out of memory. */
int fold_recursion(struct profile *p);

/* --fold-frames PATTERN: frames of the functions PATTERN names are folded
 * into their callers, besides the default list (std::thread's and
 * std::__invoke's wrappers, fold.c).  PATTERN names functions as
 * --callers FN does (tools/find_fn.h): a name, a glob, or a suffix at a
 * "::".  pattern must outlive the calls.  0, or -1 when there are too
 * many. */
int fold_frames_add(const char *pattern);
/* --no-fold-frames: none, not even the defaults (and none added before). */
void fold_frames_off(void);
/* Each PATTERN given against the profiles ps[0 .. n) (find_fn_check):
 * 0, or -1 with a line on stderr (it names no function: the closest
 * names; an ambiguous suffix: the candidates). */
int fold_frames_check(const struct profile *const *ps, size_t n, const char *where);
/* --as-compiled: the contexts of inlined copies (the profile's "inlined"
 * column, libjprof's ARENA_NODE_INLINED) folded into their hosts, as the
 * machine code has them: their time and metrics are the host's own, their
 * calls are gone.  How many contexts were folded, UINT32_MAX when out of
 * memory. */
uint32_t fold_inlined(struct profile *p);
/* --as-compiled: fold_frames folds the inlined copies first. */
void fold_frames_as_compiled(void);
/* Fold p's threads in place as set above.  0, or -1 when out of memory. */
int fold_frames(struct profile *p);

#endif
