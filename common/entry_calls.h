/* Where an inlined callee's entry hook is called in its host's machine
 * code (common/inlined_pad.h decides a landing pad's owner from it;
 * docs/exactness.md).
 *
 * An inlined callee's entry hook is called in the host's code where the
 * callee was entered: x86-64 only, a set-up of the first argument (`lea
 * callee(%rip),%rdi`, `mov $callee,%edi`, or `mov %reg,%rdi` / `mov
 * disp8(%rbp),%rdi` from a register or frame slot the host loads with
 * `lea callee(%rip)`), then within 48 bytes the call that reaches
 * `__cyg_profile_func_enter`.  Found once per (host, callee) and kept in
 * a table of 512 entries in pages of our own. */
#ifndef HOOKIT_COMMON_ENTRY_CALLS_H
#define HOOKIT_COMMON_ENTRY_CALLS_H

#include <stdint.h>

/* The most calls kept for one (host, callee): more, and none is used. */
#define HK_ENTRY_CALLS_MAX 32

struct hk_entry_calls {
    uintptr_t host, callee;
    /* calls found; -1: more than HK_ENTRY_CALLS_MAX, or none looked for */
    int32_t n;
    /* the host has entry hook calls whose function the scan could not
     * tell: some may be callee's */
    int32_t unsure;
    /* each call's last byte, from host: where a throw out of it is looked
     * up in the LSDA */
    uint32_t at[HK_ENTRY_CALLS_MAX];
};

/* Find the entry hook the program's calls reach; at the plugin's start. */
void hk_entry_calls_start(void);

/* Whether the entry hook's calls can be looked for (x86-64, the hook
 * found). */
int hk_entry_calls_known(void);

/* The entry hook's calls for callee in the host's code [host, end) (end:
 * the end of the host's last call-site range) into *out. */
void hk_entry_calls_of(struct hk_entry_calls *out, uintptr_t host, uintptr_t callee, uintptr_t end);

#endif
