/* report --collapse-recursion: direct recursion folded (tools/fold.c). */
#ifndef HOOKIT_TOOLS_FOLD_H
#define HOOKIT_TOOLS_FOLD_H

#include "profile/profile.h"

/* Fold every thread of p in place (its node arrays replaced by ones from
 * p's arena): a node whose function is its caller's merges into the
 * caller.  0, or -1 when out of memory. */
int fold_recursion(struct profile *p);

#endif
