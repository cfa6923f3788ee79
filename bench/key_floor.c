/*
 * key_floor: compiler hooks that count calls per calling context without a
 * tree, by an arithmetic context key: the other known way to count per
 * context (probabilistic calling context, Bond and McKinley, OOPSLA 2007),
 * reduced to what it costs on every call.
 *
 * make bench preloads this into the no-op build for the row "key floor".
 * The key of a callee's context is (the caller's key + the function) * K,
 * an odd K: the exit gets the caller's key back by multiplying with K's
 * inverse, so the key itself needs no memory at all between hooks.  Each
 * call counts in a per-thread direct-mapped table of 4,096 (key, count)
 * slots, checked by the full key.  A per-thread stack holds every caller's
 * key, and the exit checks its result against it (what makes an exit that
 * does not match, after a longjmp, harmless).
 *
 * It does less than any working profiler could: a slot that another key
 * takes is overwritten (its count is lost), two contexts with the same
 * 64-bit key are one, and there is no tree to write out.  So it is a floor
 * for this design too, not a design: what it costs on a workload is less
 * than an exact profiler built this way would.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define NOINSTR __attribute__((no_instrument_function))

#define K 0x9E3779B97F4A7C15ull
#define K_INVERSE 0xF1DE83E19937733Dull /* K * K_INVERSE = 1 mod 2^64 */
#define STACK_DEPTH (1u << 16)          /* deeper calls share slots: a floor needs no more */
#define TABLE_SLOTS (1u << 12)

struct key_count {
    uint64_t key, calls;
};

struct thread_keys {
    uint64_t key, depth;
    uint64_t callers[STACK_DEPTH];
    struct key_count table[TABLE_SLOTS];
};

static __thread struct thread_keys *self __attribute__((tls_model("initial-exec")));

NOINSTR static struct thread_keys *attach(void)
{
    struct thread_keys *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED)
        return NULL;
    self = t;
    return t;
}

NOINSTR __attribute__((noinline)) static void take_slot(struct key_count *slot, uint64_t key)
{
    slot->key = key;
    slot->calls = 1;
}

NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    struct thread_keys *t = self;
    if (__builtin_expect(!t, 0) && !(t = attach()))
        return;
    uint64_t caller = t->key, key = (caller + (uintptr_t)fn) * K, depth = t->depth;
    t->key = key;
    t->callers[depth % STACK_DEPTH] = caller;
    t->depth = depth + 1;
    struct key_count *slot = &t->table[key >> 52];
    if (__builtin_expect(slot->key == key, 1))
        slot->calls++;
    else
        take_slot(slot, key);
}

NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    struct thread_keys *t = self;
    if (__builtin_expect(!t, 0))
        return;
    uint64_t caller = t->key * K_INVERSE - (uintptr_t)fn, depth = t->depth - 1;
    uint64_t pushed = t->callers[depth % STACK_DEPTH];
    t->key = __builtin_expect(pushed == caller, 1) ? caller : pushed;
    t->depth = depth;
}
