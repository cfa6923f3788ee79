/* report --collapse-recursion: direct recursion folded; --fold-frames:
 * wrapper frames folded into their callers (tools/fold.c). */
#ifndef HOOKIT_TOOLS_FOLD_H
#define HOOKIT_TOOLS_FOLD_H

#include "profile/profile.h"

/* Fold every thread of p in place (its node arrays replaced by ones from
 * p's arena): a node whose function is its caller's merges into the
 * caller.  0, or -1 when out of memory. */
int fold_recursion(struct profile *p);

/* --fold-frames PATTERN: frames of functions whose simple name (or stored
 * name) matches the glob are folded into their callers, besides the
 * default list (std::thread's and std::__invoke's wrappers, fold.c);
 * pattern must outlive the calls.  0, or -1 when there are too many. */
int fold_frames_add(const char *pattern);
/* --no-fold-frames: none, not even the defaults (and none added before). */
void fold_frames_off(void);
/* Fold p's threads in place as set above.  0, or -1 when out of memory. */
int fold_frames(struct profile *p);

#endif
