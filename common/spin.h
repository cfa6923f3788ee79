/* The spinlock every hookit library uses (as musl keeps a_spin in
 * src/internal/atomic.h): a test-and-set word, spun on with plain loads so
 * that waiting CPUs do not keep taking the cache line from the holder.
 *
 * For short sections that never block, never allocate and never call the
 * program's code.  A lock a signal handler may also take must be held with
 * signals blocked (lifecycle's lc_lock does that around this one). */
#ifndef HOOKIT_COMMON_SPIN_H
#define HOOKIT_COMMON_SPIN_H

/* Tell the CPU we are spinning: x86's pause and arm64's yield let the other
 * hardware thread run and save power; elsewhere a compiler barrier only. */
__attribute__((no_instrument_function, always_inline))
static inline void hk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* A lock is an int, 0 when free: zeroed memory is an unlocked lock. */
__attribute__((no_instrument_function, always_inline))
static inline void hk_spin_lock(volatile int *lock)
{
    while (__builtin_expect(__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE), 0))
        while (__atomic_load_n(lock, __ATOMIC_RELAXED))
            hk_cpu_relax();
}

__attribute__((no_instrument_function, always_inline))
static inline void hk_spin_unlock(volatile int *lock)
{
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

#endif
