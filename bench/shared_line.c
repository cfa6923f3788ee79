/*
 * shared_line: compiler hooks with the one defect the thread table is there
 * to catch, a cache line every thread writes on the hot path.
 *
 * make bench preloads this into the no-op build for the row "control: one
 * shared line": each entry increments one global counter (a plain
 * increment, as a careless profiler's call count would be).  One thread
 * pays about a nanosecond for it; two threads on two CPUs pass the line
 * back and forth on every call.  Two separate processes share nothing, so
 * the control's "2 threads / 2 processes" ratio shows what a shared line
 * does to the figure hookit's row is judged by.
 */
#include <stdint.h>

#define NOINSTR __attribute__((no_instrument_function))

uint64_t calls_seen;            /* not static: the compiler keeps every store */

NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn;
    (void)site;
    calls_seen++;
    __asm__ volatile("" ::: "memory");
}

NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
}
