/* setjmp and longjmp (docs/exactness.md): a mark is taken when a buffer
 * is filled, and a longjmp to it tells the plugin which frames it leaves.
 *
 * setjmp and getcontext return twice, so their wrappers cannot be C
 * functions that call the real one: the real one would save the wrapper's
 * frame.  They are a few instructions of assembly that ask
 * hk_flow_saving() for the real function (taking the mark on the way) and
 * jump to it with the caller's stack untouched.  getcontext is here too:
 * a context it fills is, to a later setcontext, what a jmp_buf is to a
 * longjmp. */
#include "hookit/flow.h"

enum saving_fn { SAVE_SETJMP, SAVE__SETJMP, SAVE___SIGSETJMP, SAVE_GETCONTEXT };

HK_NOINSTR static void *saving_real(enum saving_fn which)
{
    switch (which) {
    case SAVE_SETJMP: return (void *)HK_FLOW_REAL(setjmp);
    case SAVE__SETJMP: return (void *)HK_FLOW_REAL(_setjmp);
    case SAVE___SIGSETJMP: return (void *)HK_FLOW_REAL(__sigsetjmp);
    default: return (void *)HK_FLOW_REAL(getcontext);
    }
}

/* Called by the assembly below with the buffer: keep a mark for it and
 * return the real function to jump to.  Hidden: the assembly calls it
 * directly, never through the PLT. */
HK_NOINSTR __attribute__((used)) void *hk_flow_saving(const void *buf, long which)
{
    if (hk_plugin.info.flow)
        hk_flow_keep_mark(buf, hk_flow_tell(HOOKIT_FLOW_MARK, 0, 0, NULL, NULL));
    return saving_real((enum saving_fn)which);
}

/* Each wrapper: the arguments kept, hk_flow_saving(buf, which) called with
 * the stack aligned, the arguments put back and a jump to what it
 * returned, so the real function sees our caller's frame as its own. */
#if defined(__x86_64__)
#define SAVING_WRAPPER(name, which)                                                     \
    __asm__(".text\n"                                                                  \
            ".globl " HK_FLOW_SYM(name) "\n"                                           \
            ".type " HK_FLOW_SYM(name) ", @function\n"                                 \
            HK_FLOW_SYM(name) ":\n"                                                    \
            "    push %rdi\n"                                                          \
            "    push %rsi\n"                                                          \
            "    sub $8, %rsp\n"                                                       \
            "    mov $" #which ", %esi\n"                                              \
            "    call hk_flow_saving\n"                                                \
            "    add $8, %rsp\n"                                                       \
            "    pop %rsi\n"                                                           \
            "    pop %rdi\n"                                                           \
            "    jmp *%rax\n"                                                          \
            ".size " HK_FLOW_SYM(name) ", .-" HK_FLOW_SYM(name) "\n");
#elif defined(__aarch64__)
#define SAVING_WRAPPER(name, which)                                                     \
    __asm__(".text\n"                                                                  \
            ".globl " HK_FLOW_SYM(name) "\n"                                           \
            ".type " HK_FLOW_SYM(name) ", %function\n"                                 \
            HK_FLOW_SYM(name) ":\n"                                                    \
            "    stp x0, x1, [sp, #-32]!\n"                                            \
            "    str x30, [sp, #16]\n"                                                 \
            "    mov x1, #" #which "\n"                                                \
            "    bl hk_flow_saving\n"                                                  \
            "    mov x16, x0\n"                                                        \
            "    ldr x30, [sp, #16]\n"                                                 \
            "    ldp x0, x1, [sp], #32\n"                                              \
            "    br x16\n"                                                             \
            ".size " HK_FLOW_SYM(name) ", .-" HK_FLOW_SYM(name) "\n");
#endif

#ifdef SAVING_WRAPPER
SAVING_WRAPPER(setjmp, 0)
SAVING_WRAPPER(_setjmp, 1)
SAVING_WRAPPER(__sigsetjmp, 2)
SAVING_WRAPPER(getcontext, 3)
_Static_assert(SAVE_SETJMP == 0 && SAVE__SETJMP == 1 && SAVE___SIGSETJMP == 2 && SAVE_GETCONTEXT == 3,
               "the assembly passes these numbers");
#endif

HK_NOINSTR static void jumping_to(const void *buf)
{
    int found;
    uint64_t mark = hk_flow_find_mark(buf, &found);
    if (found)
        hk_flow_tell(HOOKIT_FLOW_JUMP, mark, 0, NULL, NULL);
}

#define LONGJMP_WRAPPER(name)                                                            \
    HK_EXPORT HK_NOINSTR __attribute__((noreturn)) void HK_FLOW_NAME(name)(struct __jmp_buf_tag env[1], int val) \
    {                                                                                    \
        if (HK_FLOW_MARKS)                                                               \
            jumping_to(env);                                                             \
        ((hk_flow_longjmp_fn)HK_FLOW_REAL(name))(env, val);                              \
        __builtin_unreachable();                                                         \
    }

LONGJMP_WRAPPER(longjmp)
LONGJMP_WRAPPER(_longjmp)
LONGJMP_WRAPPER(siglongjmp)
LONGJMP_WRAPPER(__longjmp_chk)
