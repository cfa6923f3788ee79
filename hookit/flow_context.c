/* The ucontext functions (docs/exactness.md): makecontext, setcontext,
 * swapcontext; getcontext is with setjmp in flow_jump.c. */
#include "hookit/flow.h"
#include "lifecycle/internal.h"

/* A context's function is started through context_start, which tells the
 * plugin when it returns (glibc then resumes uc_link without a call we
 * could see).  The function is found by the ucontext_t's address, passed
 * in two int arguments (makecontext's arguments are ints). */
struct started {
    const ucontext_t *ucp;
    void (*fn)(void);
    const ucontext_t *link;
};

#define STARTED_SLOTS 4096u
static struct started started[STARTED_SLOTS];
static lc_spinlock started_lock = LC_SPINLOCK_INIT;     /* the lifecycle layer's: signals held off */

HK_NOINSTR static uint32_t started_slot(const void *ucp)
{
    return (uint32_t)(((uintptr_t)ucp * 0x9e3779b97f4a7c15ull) >> 52) & (STARTED_SLOTS - 1);
}

/* 0, or -1 when the table is full (the context then starts untracked). */
HK_NOINSTR static int started_put(const ucontext_t *ucp, void (*fn)(void), const ucontext_t *link)
{
    int rc = -1;
    sigset_t mask;
    lc_lock(&started_lock, &mask);
    for (uint32_t n = 0, i = started_slot(ucp); n < STARTED_SLOTS; n++, i = (i + 1) & (STARTED_SLOTS - 1))
        if (!started[i].ucp || started[i].ucp == ucp) {
            started[i] = (struct started){ ucp, fn, link };
            rc = 0;
            break;
        }
    lc_unlock(&started_lock, &mask);
    return rc;
}

/* The entry made for ucp.  Entries stay: a context whose function
 * returned can be resumed again from its start, and then runs through
 * context_start again.  A ucontext_t made again replaces its entry; when
 * 4096 different ones are in the table, the next ones start without
 * context_start (the fallback rule then covers their end). */
HK_NOINSTR static struct started started_get(const ucontext_t *ucp)
{
    struct started s = { 0 };
    sigset_t mask;
    lc_lock(&started_lock, &mask);
    uint32_t i = started_slot(ucp);
    for (uint32_t n = 0; n < STARTED_SLOTS && started[i].ucp; n++, i = (i + 1) & (STARTED_SLOTS - 1))
        if (started[i].ucp == ucp) {
            s = started[i];
            break;
        }
    lc_unlock(&started_lock, &mask);
    return s;
}

#define ARGS_PASSED 4           /* up to this many: started through context_start */

HK_NOINSTR static void context_start(unsigned hi, unsigned lo, long a0, long a1, long a2, long a3)
{
    const ucontext_t *ucp = (const ucontext_t *)((uintptr_t)hi << 32 | lo);
    struct started s = started_get(ucp);
    if (!s.fn)
        return;                 /* cannot be: only a context with an entry starts here */
    ((void (*)(long, long, long, long))s.fn)(a0, a1, a2, a3);
    hk_flow_tell(HOOKIT_FLOW_ENDED, 0, 0, ucp, s.link);
}

#define MAX_ARGS 16

HK_EXPORT HK_NOINSTR void HK_FLOW_NAME(makecontext)(ucontext_t *ucp, void (*fn)(void), int argc, ...)
{
    long a[MAX_ARGS] = { 0 };
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc && i < MAX_ARGS; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    hk_flow_forget_mark(ucp);           /* getcontext'ed first, as is usual: no longer a jump target */
    __typeof__(makecontext) *real = HK_FLOW_REAL(makecontext);
    if (argc <= ARGS_PASSED && started_put(ucp, fn, ucp->uc_link) == 0) {
        uintptr_t u = (uintptr_t)ucp;
        hk_flow_tell(HOOKIT_FLOW_MADE, 0, 0, NULL, ucp);
        real(ucp, (void (*)(void))context_start, argc + 2, (unsigned)(u >> 32), (unsigned)u, a[0], a[1],
             a[2], a[3]);
        return;
    }
    real(ucp, fn, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
         a[12], a[13], a[14], a[15]);
}

/* To a getcontext'ed context: a jump back to where it was taken.  To one
 * saved by swapcontext or made by makecontext: a switch. */
HK_NOINSTR static void resuming(const ucontext_t *from, const ucontext_t *to)
{
    int found = 0;
    uint64_t mark = HK_FLOW_MARKS ? hk_flow_find_mark(to, &found) : 0;
    if (found)
        hk_flow_tell(HOOKIT_FLOW_JUMP, mark, 0, NULL, NULL);
    else
        hk_flow_tell(HOOKIT_FLOW_SWITCH, 0, 0, from, to);
}

HK_EXPORT HK_NOINSTR int HK_FLOW_NAME(setcontext)(const ucontext_t *ucp)
{
    resuming(NULL, ucp);
    return HK_FLOW_REAL(setcontext)(ucp);
}

HK_EXPORT HK_NOINSTR int HK_FLOW_NAME(swapcontext)(ucontext_t *oucp, const ucontext_t *ucp)
{
    hk_flow_forget_mark(oucp);          /* saved anew: resumed by a switch, not a jump */
    resuming(oucp, ucp);
    return HK_FLOW_REAL(swapcontext)(oucp, ucp);
}
