/*
 * Shared by the test programs: keep the call structure the source shows.
 *
 * KEEP marks a function the optimiser must leave alone: not inlined, not
 * cloned (no fib.constprop.0), not merged with an identical twin, so the
 * profile names exactly the functions the test expects.  GCC has noipa for
 * all of that; Clang does not clone or merge at -O1/-O2 without LTO, so
 * noinline is enough there.
 */
#ifndef HOOKIT_TEST_PROGS_H
#define HOOKIT_TEST_PROGS_H

#if defined(__clang__)
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

/* Results go here so no computation is dead. */
extern volatile long sink;

#endif
