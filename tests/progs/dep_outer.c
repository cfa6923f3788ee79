/* dep_outer: the library dlclose_deps.c opens; it needs libdep_inner.so. */
#include "progs.h"

long inner_fn(long x);

KEEP long outer_fn(long x) { return inner_fn(x) + 1; }
