/*
 * dep_inner: a library that libdep_outer.so needs (DT_NEEDED) and nothing
 * else loads, so closing libdep_outer.so unloads it too (dlclose_deps.c).
 * Built again with -DFN=other_fn as the libraries loaded afterwards.
 */
#include "progs.h"

#ifndef FN
#define FN inner_fn
#endif

KEEP long FN(long x) { return x * 3 + 1; }
