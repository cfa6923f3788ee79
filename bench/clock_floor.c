/*
 * clock_floor: compiler hooks that read the clock and nothing else, the
 * floor under any profiler that times every call exactly.
 *
 * make bench preloads this into the no-op build (LD_PRELOAD takes the hooks
 * from glibc's no-ops): the row "TSC floor" then costs one call, two hook
 * calls and two TSC reads per call, what hookit's default mode cannot go
 * below.  The readings go to a per-thread variable, so threads share
 * nothing and the thread table shows how the clock itself scales.
 */
#include <stdint.h>
#include <time.h>

#define NOINSTR __attribute__((no_instrument_function))

static __thread uint64_t last_reading __attribute__((tls_model("initial-exec")));

NOINSTR static inline uint64_t read_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)fn;
    (void)site;
    last_reading = read_tsc();
}

NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
    last_reading = read_tsc();
}
