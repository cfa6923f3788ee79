/* Control flow that leaves or resumes frames without their hooks: setjmp
 * and longjmp, the C++ runtime's catch, and the ucontext functions.  Each
 * is interposed (dynamic: the libc name; static: ld --wrap, `hookit link`),
 * tells the plugin what happens (struct hookit_flow in
 * include/hookit/profiler.h, docs/exactness.md), then does the real call.
 *
 * setjmp and getcontext return twice, so their wrappers cannot be C
 * functions that call the real one: the real one would save the wrapper's
 * frame.  They are a few instructions of assembly that ask hk_flow_saving()
 * for the real function (taking the mark on the way) and jump to it with
 * the caller's stack untouched.
 *
 * A mark is kept per thread with the buffer it was taken for, in a page of
 * our own (no malloc, which may be the program's own instrumented one):
 * longjmp(env) and setcontext(ucp) look it up there. */
#include "hookit/internal.h"
#include "lifecycle/real.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

/* ---- the real functions -------------------------------------------------------- */

/* What we call for real.  setjmp's family is reached by index from the
 * assembly. */
enum saving_fn { SAVE_SETJMP, SAVE__SETJMP, SAVE___SIGSETJMP, SAVE_GETCONTEXT, SAVE_COUNT };

typedef void (*flow_longjmp_fn)(struct __jmp_buf_tag *, int);
typedef void *(*flow_catch_fn)(void *);
typedef int (*flow_setcontext_fn)(const ucontext_t *);
typedef int (*flow_swapcontext_fn)(ucontext_t *, const ucontext_t *);
typedef void (*flow_makecontext_fn)(ucontext_t *, void (*)(void), int, ...);

#ifdef HOOKIT_STATIC
#define FLOW_NAME(name) __wrap_##name
#define FLOW_SYM(name) "__wrap_" #name
extern int __real_setjmp(jmp_buf) __attribute__((weak));
extern int __real__setjmp(struct __jmp_buf_tag *) __attribute__((weak));
extern int __real___sigsetjmp(struct __jmp_buf_tag *, int) __attribute__((weak));
extern int __real_getcontext(ucontext_t *) __attribute__((weak));
extern void __real_longjmp(struct __jmp_buf_tag *, int) __attribute__((weak, noreturn));
extern void __real__longjmp(struct __jmp_buf_tag *, int) __attribute__((weak, noreturn));
extern void __real_siglongjmp(struct __jmp_buf_tag *, int) __attribute__((weak, noreturn));
extern void __real___longjmp_chk(struct __jmp_buf_tag *, int) __attribute__((weak, noreturn));
extern void __longjmp_chk(struct __jmp_buf_tag *, int) __attribute__((weak, noreturn));
extern void *__real___cxa_begin_catch(void *) __attribute__((weak));
extern void *__cxa_begin_catch(void *) __attribute__((weak));
extern int __real_setcontext(const ucontext_t *) __attribute__((weak));
extern int __real_swapcontext(ucontext_t *, const ucontext_t *) __attribute__((weak));
extern void __real_makecontext(ucontext_t *, void (*)(void), int, ...) __attribute__((weak));
#define STATIC_REAL(name) (__real_##name ? (void *)__real_##name : (void *)name)

HK_NOINSTR static void *saving_real(enum saving_fn which)
{
    switch (which) {
    case SAVE_SETJMP: return STATIC_REAL(setjmp);
    case SAVE__SETJMP: return STATIC_REAL(_setjmp);
    case SAVE___SIGSETJMP: return STATIC_REAL(__sigsetjmp);
    default: return STATIC_REAL(getcontext);
    }
}
#define REAL_LONGJMP(name) ((flow_longjmp_fn)STATIC_REAL(name))
#define REAL_CATCH() ((flow_catch_fn)STATIC_REAL(__cxa_begin_catch))
#define REAL_SETCONTEXT() ((flow_setcontext_fn)STATIC_REAL(setcontext))
#define REAL_SWAPCONTEXT() ((flow_swapcontext_fn)STATIC_REAL(swapcontext))
#define REAL_MAKECONTEXT() ((flow_makecontext_fn)STATIC_REAL(makecontext))
HK_NOINSTR void hk_flow_resolve(void) {}
#else
#define FLOW_NAME(name) name
#define FLOW_SYM(name) #name
static const char *const saving_names[SAVE_COUNT] = { "setjmp", "_setjmp", "__sigsetjmp", "getcontext" };
static struct {
    void *saving[SAVE_COUNT];
    flow_longjmp_fn longjmp_, _longjmp_, siglongjmp_, longjmp_chk;
    flow_catch_fn begin_catch;
    flow_setcontext_fn setcontext_;
    flow_swapcontext_fn swapcontext_;
    flow_makecontext_fn makecontext_;
} flow_real;

/* The next definition after ours; never NULL for libc's own functions. */
HK_NOINSTR static void *next_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* At start, from hk_init (and from a first call that comes earlier).
 * __cxa_begin_catch may only appear with a C++ library loaded later: it
 * is looked up again at its first call if it was not there. */
HK_NOINSTR void hk_flow_resolve(void)
{
    for (int i = 0; i < SAVE_COUNT; i++)
        if (!flow_real.saving[i])
            flow_real.saving[i] = next_symbol(saving_names[i]);
    flow_real.longjmp_ = (flow_longjmp_fn)next_symbol("longjmp");
    flow_real._longjmp_ = (flow_longjmp_fn)next_symbol("_longjmp");
    flow_real.siglongjmp_ = (flow_longjmp_fn)next_symbol("siglongjmp");
    flow_real.longjmp_chk = (flow_longjmp_fn)next_symbol("__longjmp_chk");
    flow_real.begin_catch = (flow_catch_fn)next_symbol("__cxa_begin_catch");
    flow_real.setcontext_ = (flow_setcontext_fn)next_symbol("setcontext");
    flow_real.swapcontext_ = (flow_swapcontext_fn)next_symbol("swapcontext");
    flow_real.makecontext_ = (flow_makecontext_fn)next_symbol("makecontext");
}

HK_NOINSTR static void *saving_real(enum saving_fn which)
{
    if (HK_UNLIKELY(!flow_real.saving[which]))
        hk_flow_resolve();
    return flow_real.saving[which];
}

HK_NOINSTR static void *resolved(void **slot, const char *name)
{
    if (HK_UNLIKELY(!*slot))
        *slot = next_symbol(name);
    return *slot;
}
#define REAL_LONGJMP(name) ((flow_longjmp_fn)resolved((void **)&flow_real.name##_, #name))
#define REAL_CATCH() ((flow_catch_fn)resolved((void **)&flow_real.begin_catch, "__cxa_begin_catch"))
#define REAL_SETCONTEXT() ((flow_setcontext_fn)resolved((void **)&flow_real.setcontext_, "setcontext"))
#define REAL_SWAPCONTEXT() ((flow_swapcontext_fn)resolved((void **)&flow_real.swapcontext_, "swapcontext"))
#define REAL_MAKECONTEXT() ((flow_makecontext_fn)resolved((void **)&flow_real.makecontext_, "makecontext"))
#endif

/* ---- telling the plugin --------------------------------------------------------- */

HK_NOINSTR static uint64_t tell(uint32_t kind, uint64_t mark, uintptr_t sp, const void *from, const void *to)
{
    hookit_flow_fn flow = hk_plugin.info.flow;
    if (!flow)
        return 0;
    struct hookit_flow f = { .kind = kind, .mark = mark, .sp = sp, .from = from, .to = to };
    return flow(&f);
}

/* ---- the marks of this thread ---------------------------------------------------- */

struct kept_mark {
    const void *buf;            /* jmp_buf or ucontext_t; NULL: free */
    uint64_t mark;
};

#define MARKS_PAGE 4096u
#define MARKS (MARKS_PAGE / sizeof(struct kept_mark))

static __thread struct kept_mark *marks __attribute__((tls_model("initial-exec")));
static __thread uint32_t marks_next __attribute__((tls_model("initial-exec")));

/* A mark says in which context (high half) and at which depth (low half)
 * it was taken.  One taken deeper than mark in the same context belongs to
 * a frame that has returned since: its buffer is dead. */
HK_NOINSTR static int dead_by(uint64_t old, uint64_t now)
{
    return (old >> 32) == (now >> 32) && (uint32_t)old > (uint32_t)now;
}

HK_NOINSTR static void keep_mark(const void *buf, uint64_t mark)
{
    if (!marks) {
        void *p = mmap(NULL, MARKS_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return;
        marks = p;
    }
    struct kept_mark *spare = NULL;
    for (uint32_t i = 0; i < MARKS; i++) {
        if (marks[i].buf == buf) {
            marks[i].mark = mark;
            return;
        }
        if (!spare && (!marks[i].buf || dead_by(marks[i].mark, mark)))
            spare = &marks[i];
    }
    if (!spare)                 /* all live: the oldest slot goes */
        spare = &marks[marks_next++ % MARKS];
    *spare = (struct kept_mark){ buf, mark };
}

/* The mark kept for buf, or 0 with *found = 0. */
HK_NOINSTR static uint64_t find_mark(const void *buf, int *found)
{
    for (uint32_t i = 0; marks && i < MARKS; i++)
        if (marks[i].buf == buf) {
            *found = 1;
            return marks[i].mark;
        }
    *found = 0;
    return 0;
}

HK_NOINSTR static void forget_mark(const void *buf)
{
    for (uint32_t i = 0; marks && i < MARKS; i++)
        if (marks[i].buf == buf)
            marks[i].buf = NULL;
}

/* The thread ends: its marks go with it. */
HK_NOINSTR void hk_flow_thread_end(void)
{
    if (marks) {
        munmap(marks, MARKS_PAGE);
        marks = NULL;
    }
}

/* ---- setjmp, sigsetjmp, getcontext ------------------------------------------------ */

/* Called by the assembly below with the buffer: keep a mark for it and
 * return the real function to jump to. */
HK_NOINSTR __attribute__((used)) void *hk_flow_saving(const void *buf, long which)
{
    if (hk_plugin.info.flow)
        keep_mark(buf, tell(HOOKIT_FLOW_MARK, 0, 0, NULL, NULL));
    return saving_real((enum saving_fn)which);
}

/* Each wrapper: the arguments kept, hk_flow_saving(buf, which) called with
 * the stack aligned, the arguments put back and a jump to what it
 * returned, so the real function sees our caller's frame as its own. */
#if defined(__x86_64__)
#define SAVING_WRAPPER(name, which)                                                     \
    __asm__(".text\n"                                                                   \
            ".globl " FLOW_SYM(name) "\n"                                               \
            ".type " FLOW_SYM(name) ", @function\n"                                     \
            FLOW_SYM(name) ":\n"                                                        \
            "    push %rdi\n"                                                           \
            "    push %rsi\n"                                                           \
            "    sub $8, %rsp\n"                                                        \
            "    mov $" #which ", %esi\n"                                               \
            "    call hk_flow_saving\n"                                                 \
            "    add $8, %rsp\n"                                                        \
            "    pop %rsi\n"                                                            \
            "    pop %rdi\n"                                                            \
            "    jmp *%rax\n"                                                           \
            ".size " FLOW_SYM(name) ", .-" FLOW_SYM(name) "\n");
#elif defined(__aarch64__)
#define SAVING_WRAPPER(name, which)                                                     \
    __asm__(".text\n"                                                                   \
            ".globl " FLOW_SYM(name) "\n"                                               \
            ".type " FLOW_SYM(name) ", %function\n"                                     \
            FLOW_SYM(name) ":\n"                                                        \
            "    stp x0, x1, [sp, #-32]!\n"                                             \
            "    str x30, [sp, #16]\n"                                                  \
            "    mov x1, #" #which "\n"                                                 \
            "    bl hk_flow_saving\n"                                                   \
            "    mov x16, x0\n"                                                         \
            "    ldr x30, [sp, #16]\n"                                                  \
            "    ldp x0, x1, [sp], #32\n"                                               \
            "    br x16\n"                                                              \
            ".size " FLOW_SYM(name) ", .-" FLOW_SYM(name) "\n");
#endif

#ifdef SAVING_WRAPPER
/* hk_flow_saving is hidden: the assembly calls it directly, never through
 * the PLT. */
SAVING_WRAPPER(setjmp, 0)
SAVING_WRAPPER(_setjmp, 1)
SAVING_WRAPPER(__sigsetjmp, 2)
SAVING_WRAPPER(getcontext, 3)
_Static_assert(SAVE_SETJMP == 0 && SAVE__SETJMP == 1 && SAVE___SIGSETJMP == 2 && SAVE_GETCONTEXT == 3,
               "the assembly passes these numbers");
#define FLOW_MARKS_KEPT 1
#else
#define FLOW_MARKS_KEPT 0       /* other architectures: the fallback rule only */
#endif

/* ---- longjmp ---------------------------------------------------------------------- */

HK_NOINSTR static void jumping_to(const void *buf)
{
    int found;
    uint64_t mark = find_mark(buf, &found);
    if (found)
        tell(HOOKIT_FLOW_JUMP, mark, 0, NULL, NULL);
}

#define LONGJMP_WRAPPER(name)                                                            \
    HK_EXPORT HK_NOINSTR __attribute__((noreturn)) void FLOW_NAME(name)(struct __jmp_buf_tag env[1], int val) \
    {                                                                                    \
        if (FLOW_MARKS_KEPT)                                                             \
            jumping_to(env);                                                             \
        REAL_LONGJMP(name)(env, val);                                                    \
        __builtin_unreachable();                                                         \
    }

LONGJMP_WRAPPER(longjmp)
LONGJMP_WRAPPER(_longjmp)
LONGJMP_WRAPPER(siglongjmp)

#ifdef HOOKIT_STATIC
HK_EXPORT HK_NOINSTR __attribute__((noreturn)) void __wrap___longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
    jumping_to(env);
    REAL_LONGJMP(__longjmp_chk)(env, val);
    __builtin_unreachable();
}
#else
HK_EXPORT HK_NOINSTR __attribute__((noreturn)) void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
    if (FLOW_MARKS_KEPT)
        jumping_to(env);
    ((flow_longjmp_fn)resolved((void **)&flow_real.longjmp_chk, "__longjmp_chk"))(env, val);
    __builtin_unreachable();
}
#endif

/* ---- C++ catch -------------------------------------------------------------------- */

/* The catching frame calls this from its handler, so our own frame address
 * is its stack pointer: whatever is open deeper on that stack is gone. */
HK_EXPORT HK_NOINSTR void *FLOW_NAME(__cxa_begin_catch)(void *exception)
{
    tell(HOOKIT_FLOW_CATCH, 0, (uintptr_t)__builtin_dwarf_cfa(), NULL, NULL);
    return REAL_CATCH()(exception);
}

/* ---- ucontext ---------------------------------------------------------------------- */

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
static volatile int started_lock;

HK_NOINSTR static void started_lock_take(void)
{
    while (__atomic_exchange_n(&started_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&started_lock, __ATOMIC_RELAXED))
            ;
}

HK_NOINSTR static void started_lock_give(void)
{
    __atomic_store_n(&started_lock, 0, __ATOMIC_RELEASE);
}

HK_NOINSTR static uint32_t started_slot(const void *ucp)
{
    return (uint32_t)(((uintptr_t)ucp * 0x9e3779b97f4a7c15ull) >> 52) & (STARTED_SLOTS - 1);
}

/* 0, or -1 when the table is full (the context then starts untracked). */
HK_NOINSTR static int started_put(const ucontext_t *ucp, void (*fn)(void), const ucontext_t *link)
{
    int rc = -1;
    started_lock_take();
    for (uint32_t n = 0, i = started_slot(ucp); n < STARTED_SLOTS; n++, i = (i + 1) & (STARTED_SLOTS - 1))
        if (!started[i].ucp || started[i].ucp == ucp) {
            started[i] = (struct started){ ucp, fn, link };
            rc = 0;
            break;
        }
    started_lock_give();
    return rc;
}

HK_NOINSTR static struct started started_get(const ucontext_t *ucp)
{
    struct started s = { 0 };
    started_lock_take();
    for (uint32_t n = 0, i = started_slot(ucp); n < STARTED_SLOTS && started[i].ucp;
         n++, i = (i + 1) & (STARTED_SLOTS - 1))
        if (started[i].ucp == ucp) {
            s = started[i];
            break;
        }
    started_lock_give();
    return s;
}

#define ARGS_PASSED 4           /* up to this many: started through context_start */

HK_NOINSTR static void context_start(unsigned hi, unsigned lo, long a0, long a1, long a2, long a3)
{
    const ucontext_t *ucp = (const ucontext_t *)((uintptr_t)hi << 32 | lo);
    struct started s = started_get(ucp);
    ((void (*)(long, long, long, long))s.fn)(a0, a1, a2, a3);
    tell(HOOKIT_FLOW_ENDED, 0, 0, ucp, s.link);
}

#define MAX_ARGS 16

HK_EXPORT HK_NOINSTR void FLOW_NAME(makecontext)(ucontext_t *ucp, void (*fn)(void), int argc, ...)
{
    long a[MAX_ARGS] = { 0 };
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc && i < MAX_ARGS; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    forget_mark(ucp);           /* getcontext'ed first, as is usual: no longer a jump target */
    flow_makecontext_fn real = REAL_MAKECONTEXT();
    if (argc <= ARGS_PASSED && started_put(ucp, fn, ucp->uc_link) == 0) {
        uintptr_t u = (uintptr_t)ucp;
        tell(HOOKIT_FLOW_MADE, 0, 0, NULL, ucp);
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
    uint64_t mark = FLOW_MARKS_KEPT ? find_mark(to, &found) : 0;
    if (found)
        tell(HOOKIT_FLOW_JUMP, mark, 0, NULL, NULL);
    else
        tell(HOOKIT_FLOW_SWITCH, 0, 0, from, to);
}

HK_EXPORT HK_NOINSTR int FLOW_NAME(setcontext)(const ucontext_t *ucp)
{
    resuming(NULL, ucp);
    return REAL_SETCONTEXT()(ucp);
}

HK_EXPORT HK_NOINSTR int FLOW_NAME(swapcontext)(ucontext_t *oucp, const ucontext_t *ucp)
{
    forget_mark(oucp);          /* saved anew: resumed by a switch, not a jump */
    resuming(oucp, ucp);
    return REAL_SWAPCONTEXT()(oucp, ucp);
}
