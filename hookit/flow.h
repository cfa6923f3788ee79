/* What the control-flow interposers share (hookit/flow*.c,
 * docs/exactness.md). */
#ifndef HOOKIT_FLOW_H
#define HOOKIT_FLOW_H

#include "hookit/internal.h"
#include "lifecycle/real.h"
#include "lifecycle/wrapped.h"

#include <setjmp.h>
#include <stdarg.h>
#include <ucontext.h>
#include <unwind.h>

/* Tell the plugin (struct hookit_flow); 0 without a plugin that listens. */
uint64_t hk_flow_tell(uint32_t kind, uint64_t mark, uintptr_t sp, const void *from, const void *to);
uint64_t hk_flow_send(const struct hookit_flow *f);

/* The call-site ranges whose landing pad is pad, from the LSDA of the
 * function that starts at func (flow_lsda.c): at most max of them into
 * out, and the end of the function's last call-site range into
 * *calls_end.  Returns how many, 0 when none or when the table cannot be
 * read (an encoding not handled, more than max ranges). */
#define HK_LSDA_MAX_RANGES 32
unsigned hk_lsda_pad_ranges(const unsigned char *lsda, uintptr_t func, uintptr_t pad,
                            struct hookit_code_range *out, unsigned max, uintptr_t *calls_end);

/* This thread's marks, by buffer (jmp_buf or ucontext_t). */
void hk_flow_keep_mark(const void *buf, uint64_t mark);
uint64_t hk_flow_find_mark(const void *buf, int *found);
void hk_flow_forget_mark(const void *buf);

/* Marks are taken by the setjmp trampolines (flow_jump.c), which exist on
 * these architectures; elsewhere longjmp relies on the fallback rule. */
#if defined(__x86_64__) || defined(__aarch64__)
#define HK_FLOW_MARKS 1
#else
#define HK_FLOW_MARKS 0
#endif

/*
 * The real functions.  Dynamic: pointers found with dlsym(RTLD_NEXT).
 * Static (`hookit link`, ld --wrap): __real_NAME, a strong reference.  Each
 * interposer file is only linked in when the program calls one of its
 * functions (its reference is then redirected to __wrap_NAME), and --wrap
 * is then in force for every name of HK_FLOW_WRAPPED (lifecycle/
 * wrapped.h), so __real_NAME is libc's (or libstdc++'s) own.  (A weak
 * reference would not pull libc.a's member in, and the plain name would be
 * the wrapper itself.)
 */

typedef void (*hk_flow_longjmp_fn)(struct __jmp_buf_tag *, int);
/* Called by the setjmp-family trampolines (flow_jump.c) on the way to the
 * real function: takes the mark, returns the real function to jump to. */
void *hk_flow_saving(const void *buf, long which);
void __longjmp_chk(struct __jmp_buf_tag __env[1], int __val) __attribute__((noreturn));
void *__cxa_begin_catch(void *);
_Unwind_Reason_Code __gxx_personality_v0(int, _Unwind_Action, _Unwind_Exception_Class,
                                         struct _Unwind_Exception *, struct _Unwind_Context *);

#ifdef HOOKIT_STATIC
#define HK_FLOW_NAME(name) __wrap_##name
#define HK_FLOW_SYM(name) "__wrap_" #name
#define HK_FLOW_DECLARE_REAL(name) extern __typeof__(name) __real_##name;
HK_FLOW_WRAPPED(HK_FLOW_DECLARE_REAL)
#undef HK_FLOW_DECLARE_REAL
#define HK_FLOW_DECLARE_WRAP(name) extern __typeof__(name) __wrap_##name;
HK_FLOW_WRAPPED(HK_FLOW_DECLARE_WRAP)
#undef HK_FLOW_DECLARE_WRAP
#define HK_FLOW_REAL(name) (__real_##name)
#else
#define HK_FLOW_NAME(name) name
#define HK_FLOW_SYM(name) #name
#define HK_FLOW_MEMBER(name) __typeof__(name) *name;
struct hk_flow_reals {
    HK_FLOW_WRAPPED(HK_FLOW_MEMBER)
};
#undef HK_FLOW_MEMBER
extern struct hk_flow_reals hk_flow_real;
void *hk_flow_next(void **slot, const char *name);
#define HK_FLOW_REAL(name) ((__typeof__(name) *)hk_flow_next((void **)&hk_flow_real.name, #name))
#endif

#endif
