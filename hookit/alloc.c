/* Wrappers of the malloc family: malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign, valloc, reallocarray (C++ new
 * and delete arrive through them).  With a plugin that asked for
 * HOOKIT_CAP_ALLOC and collection on, each call becomes an ALLOC or FREE
 * event; otherwise a wrapper is one test and a jump to the real function.
 *
 * Early start (dynamic variant): the real functions are found with dlsym,
 * and dlsym itself may allocate.  Until they are known, blocks come from a
 * small static arena (never reused, so calloc's blocks are zero); free()
 * of such a block does nothing, realloc() copies it out.
 *
 * No deadlock with an allocator that replaces malloc (jemalloc, tcmalloc
 * preloaded): the real functions are looked up once, before the program's
 * first allocation or from the first one, never under the allocator's lock;
 * the per-thread guard is held across the real call, so whatever the
 * allocator does inside (open a file, allocate) passes through uncounted
 * and the plugin never runs inside the allocator.
 *
 * A block is released to the plugin (FREE) before the real free(): once
 * freed, another thread may get the same address back from malloc, and its
 * ALLOC must find the old block gone. */
#include "hookit/io_internal.h"
#include "hookit/profiler.h"

#include <string.h>

#ifdef HOOKIT_STATIC
#define AREAL(name) (__real_##name ? __real_##name : name)
#define HK_ALLOC_DECLARE_REAL(name) extern __typeof__(name) __real_##name __attribute__((weak));
HK_ALLOC_WRAPPED(HK_ALLOC_DECLARE_REAL)
#define READY() 1
HK_NOINSTR void hk_alloc_resolve(void) {}
#else
#define HK_ALLOC_REAL_MEMBER(name) __typeof__(name) *name;
struct alloc_real_table {
    HK_ALLOC_WRAPPED(HK_ALLOC_REAL_MEMBER)
};
static struct alloc_real_table areal;
static volatile int resolve_state;      /* 0 not started, 1 under way, 2 done */
#define AREAL(name) (areal.name)
#define READY() HK_LIKELY(resolve_state == 2)

/* ---- the early arena ---------------------------------------------------------------- */
#define EARLY_SIZE (256u << 10)
static char early[EARLY_SIZE] __attribute__((aligned(4096)));
static size_t early_used;

HK_NOINSTR static int is_early(const void *p)
{
    return (const char *)p >= early && (const char *)p < early + EARLY_SIZE;
}

/* A zeroed block; its size is kept in the 8 bytes before it. */
HK_NOINSTR static void *early_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t need = size + align + 16;
    size_t at = __atomic_fetch_add(&early_used, (need + 15) & ~(size_t)15, __ATOMIC_RELAXED);
    if (at + need > EARLY_SIZE || size > EARLY_SIZE) {
        errno = ENOMEM;
        return NULL;
    }
    uintptr_t p = ((uintptr_t)early + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-1] = size;
    return (void *)p;
}

HK_NOINSTR static size_t early_size(const void *p)
{
    return ((const size_t *)p)[-1];
}

HK_NOINSTR void hk_alloc_resolve(void)
{
    int expected = 0;
    if (!__atomic_compare_exchange_n(&resolve_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;                 /* done, or under way: the caller uses the early arena */
    int saved = errno;
    struct alloc_real_table t;
#define HK_ALLOC_RESOLVE(name) t.name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);
    HK_ALLOC_WRAPPED(HK_ALLOC_RESOLVE)
#undef HK_ALLOC_RESOLVE
    areal = t;
    __atomic_store_n(&resolve_state, 2, __ATOMIC_RELEASE);
    errno = saved;
}

/* Before the real functions are known (or if one is missing). */
HK_NOINSTR __attribute__((cold, noinline)) static int not_ready(void)
{
    hk_alloc_resolve();
    return resolve_state != 2;
}
#endif

/* ---- events ------------------------------------------------------------------------------- */
HK_NOINSTR static inline int counting(void)
{
    return HK_UNLIKELY(hk_alloc_want) && !hk_io_guard;
}

/* The plugin's direct entry points (HookitAlloc, HookitFree in
 * include/hookit/profiler.h), when it has both: called instead of building
 * an ALLOC/FREE event, without saving errno (they keep it themselves). */
static void (*alloc_hook)(void *ptr, uint64_t size, void *old_ptr);
static void (*free_hook)(void *ptr);

#ifdef HOOKIT_STATIC
#pragma weak HookitAlloc
#pragma weak HookitFree
#endif

HK_NOINSTR void hk_alloc_configure(void)
{
    void (*a)(void *, uint64_t, void *) = NULL;
    void (*f)(void *) = NULL;
#ifdef HOOKIT_STATIC
    a = HookitAlloc;
    f = HookitFree;
#else
    if (hk_plugin.handle) {
        a = (void (*)(void *, uint64_t, void *))dlsym(hk_plugin.handle, "HookitAlloc");
        f = (void (*)(void *))dlsym(hk_plugin.handle, "HookitFree");
    }
#endif
    if (!a || !f)
        a = NULL, f = NULL;
    alloc_hook = a;
    free_hook = f;
    hk_debug("memory: %s", a ? "the plugin's HookitAlloc/HookitFree" : "ALLOC/FREE events");
}

HK_NOINSTR __attribute__((noinline)) static void deliver(uint32_t type, const char *func, void *p,
                                                         size_t n, void *old)
{
    int saved = errno;
    if (hk_plugin.event) {
        struct hookit_mem m = { .func = func, .ptr = p, .size = n, .old_ptr = old };
        struct hookit_event e = { .type = type, .mem = &m };
        hk_plugin.event(&e);
    }
    errno = saved;
}

/* A new block p of n bytes from func (real call made under the guard). */
#define ALLOCATED(func, p, n, old)                                             \
    do {                                                                       \
        if (HK_LIKELY(p != NULL) && HK_LIKELY(hk_collecting_now())) {          \
            if (HK_LIKELY(alloc_hook != NULL))                                 \
                alloc_hook(p, n, old);                                         \
            else                                                               \
                deliver(HOOKIT_EV_ALLOC, func, p, n, old);                     \
        }                                                                      \
    } while (0)

/* Block p is released by func (before the real call). */
#define FREED(func, p)                                                         \
    do {                                                                       \
        if (HK_LIKELY(hk_collecting_now())) {                                  \
            if (HK_LIKELY(free_hook != NULL))                                  \
                free_hook(p);                                                  \
            else                                                               \
                deliver(HOOKIT_EV_FREE, func, p, 0, NULL);                     \
        }                                                                      \
    } while (0)

HK_EXPORT HK_NOINSTR void *LC_WRAPPER(malloc)(size_t n)
{
#ifndef HOOKIT_STATIC
    if (!READY() && not_ready())
        return early_alloc(n, 16);
#endif
    if (!counting())
        return AREAL(malloc)(n);
    hk_io_guard++;
    void *p = AREAL(malloc)(n);
    ALLOCATED("malloc", p, n, NULL);
    hk_io_guard--;
    return p;
}

HK_EXPORT HK_NOINSTR void *LC_WRAPPER(calloc)(size_t k, size_t n)
{
#ifndef HOOKIT_STATIC
    if (!READY() && not_ready()) {
        if (n && k > SIZE_MAX / n) {
            errno = ENOMEM;
            return NULL;
        }
        return early_alloc(k * n, 16);
    }
#endif
    if (!counting())
        return AREAL(calloc)(k, n);
    hk_io_guard++;
    void *p = AREAL(calloc)(k, n);
    ALLOCATED("calloc", p, k * n, NULL);
    hk_io_guard--;
    return p;
}

HK_EXPORT HK_NOINSTR void LC_WRAPPER(free)(void *p)
{
    if (!p)
        return;
#ifndef HOOKIT_STATIC
    if (HK_UNLIKELY(is_early(p)))
        return;
    if (!READY() && not_ready())
        return;                 /* cannot happen: nothing real was handed out yet */
#endif
    if (!counting()) {
        AREAL(free)(p);
        return;
    }
    hk_io_guard++;
    FREED("free", p);
    AREAL(free)(p);
    hk_io_guard--;
}

#ifndef HOOKIT_STATIC
/* realloc of an early block: a real block and a copy. */
HK_NOINSTR static void *early_realloc(void *p, size_t n)
{
    void *q = LC_WRAPPER(malloc)(n);
    if (q) {
        size_t old = early_size(p);
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}
#endif

#define REALLOC_BODY(name, p, size, CALL)                                      \
    if (!counting())                                                           \
        return CALL;                                                           \
    hk_io_guard++;                                                             \
    if (p)                                                                     \
        FREED(#name, p);                                                       \
    void *q = CALL;                                                            \
    ALLOCATED(#name, q, size, p);                                              \
    hk_io_guard--;                                                             \
    return q;

HK_EXPORT HK_NOINSTR void *LC_WRAPPER(realloc)(void *p, size_t n)
{
#ifndef HOOKIT_STATIC
    if (HK_UNLIKELY(is_early(p)))
        return early_realloc(p, n);
    if (!READY() && not_ready())
        return p ? NULL : early_alloc(n, 16);
#endif
    REALLOC_BODY(realloc, p, n, AREAL(realloc)(p, n))
}

HK_EXPORT HK_NOINSTR void *LC_WRAPPER(reallocarray)(void *p, size_t k, size_t n)
{
#ifndef HOOKIT_STATIC
    if (HK_UNLIKELY(is_early(p)) || (!READY() && not_ready())) {
        if (n && k > SIZE_MAX / n) {
            errno = ENOMEM;
            return NULL;
        }
        return is_early(p) ? early_realloc(p, k * n) : p ? NULL : early_alloc(k * n, 16);
    }
#endif
    REALLOC_BODY(reallocarray, p, k * n, AREAL(reallocarray)(p, k, n))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(posix_memalign)(void **out, size_t align, size_t n)
{
#ifndef HOOKIT_STATIC
    if (!READY() && not_ready()) {
        if (!align || (align & (align - 1)) || align % sizeof(void *))
            return EINVAL;
        void *p = early_alloc(n, align);
        if (!p)
            return ENOMEM;
        *out = p;
        return 0;
    }
#endif
    if (!counting())
        return AREAL(posix_memalign)(out, align, n);
    hk_io_guard++;
    int rc = AREAL(posix_memalign)(out, align, n);
    if (rc == 0)
        ALLOCATED("posix_memalign", *out, n, NULL);
    hk_io_guard--;
    return rc;
}

#define ALIGNED(name, align_expr, params, args)                                \
    HK_EXPORT HK_NOINSTR void *LC_WRAPPER(name) params                         \
    {                                                                          \
        EARLY_ALIGNED(align_expr)                                              \
        if (!counting())                                                       \
            return AREAL(name) args;                                           \
        hk_io_guard++;                                                         \
        void *p = AREAL(name) args;                                            \
        ALLOCATED(#name, p, n, NULL);                                          \
        hk_io_guard--;                                                         \
        return p;                                                              \
    }
#ifndef HOOKIT_STATIC
#define EARLY_ALIGNED(align_expr)                                              \
    if (!READY() && not_ready())                                               \
        return early_alloc(n, align_expr);
#else
#define EARLY_ALIGNED(align_expr)
#endif

ALIGNED(aligned_alloc, align, (size_t align, size_t n), (align, n))
ALIGNED(memalign, align, (size_t align, size_t n), (align, n))
ALIGNED(valloc, 4096, (size_t n), (n))
