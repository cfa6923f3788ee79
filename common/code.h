/* Reading the program's x86-64 machine code for its hook calls: jprof's
 * call-site patching (profiler/jprof/tree/patch.c) and the owner of an
 * inlined frame's landing pad (common/inlined_pad.h).
 *
 * GCC and Clang call the hooks with `call rel32`, to the hook or to its
 * PLT stub (`jmp *slot(%rip)`, with or without endbr64 and a bnd prefix:
 * .plt.sec); with -fno-plt, `call *slot(%rip)`.  A search that reads
 * bytes that may not be instructions at all reads only what the object's
 * loaded segments map: a displacement read off random bytes may point
 * anywhere. */
#ifndef HOOKIT_COMMON_CODE_H
#define HOOKIT_COMMON_CODE_H

#include <stddef.h>
#include <stdint.h>

#define HK_CALL_REL32 0xe8
/* What jprof's patching makes of a skipped function's hook call: `cmp
 * $imm32, %eax`, the call's rel32 kept (profiler/jprof/tree/patch.c). */
#define HK_CMP_EAX_IMM32 0x3d

/* The loaded segments of the object that holds an address. */
#define HK_MAX_SEGMENTS 8
struct hk_code_object {
    uintptr_t addr;
    uintptr_t lo[HK_MAX_SEGMENTS], hi[HK_MAX_SEGMENTS];
    unsigned n;
    uintptr_t text_lo, text_hi; /* the executable segment holding addr */
};

/* Fill q for the object holding addr; 0 when no loaded object's
 * executable segment holds it. */
int hk_code_object(struct hk_code_object *q, uintptr_t addr);

/* Whether [at, at + len) lies in one of q's segments. */
int hk_code_mapped(const struct hk_code_object *q, uintptr_t at, size_t len);

/* The GOT slot a PLT stub at target jumps through, or 0 when target is no
 * such stub.  Reads up to 11 bytes at target. */
uintptr_t hk_plt_slot(uintptr_t target);

/* Whether the rel32 that ends at next (a call's or a jump's) reaches
 * hook, directly or through one PLT stub, for bytes that may not be an
 * instruction at all: the target, the stub and its GOT slot are read only
 * where q maps them. */
int hk_rel32_reaches(const struct hk_code_object *q, uintptr_t next, uintptr_t hook);

#endif
