/* The entry hook's calls of an inlined callee in its host (entry_calls.h). */
#include "common/entry_calls.h"

#include "common/code.h"
#include "common/pages.h"

#include <dlfcn.h>
#include <string.h>

#define NOINSTR __attribute__((no_instrument_function))

#if defined(__x86_64__)
static uintptr_t enter_hook, exit_hook;

/* A static link (`hookit link -- cc -static`) has no symbol table for dlsym
 * to ask: there the hooks are linked in, and these weak references are
 * them (hookit/hooks.c's hidden aliases of the hooks).  Not the hooks'
 * own names: a shared object that refers to those looks instrumented to
 * hookit/rebind.c, and unconnected when libhookit is not loaded.  In a
 * shared object these stay null (hidden in libhookit.so). */
extern void hk_func_enter(void *, void *) __attribute__((weak));
extern void hk_func_exit(void *, void *) __attribute__((weak));

NOINSTR void hk_entry_calls_start(void)
{
    enter_hook = (uintptr_t)dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
    exit_hook = (uintptr_t)dlsym(RTLD_DEFAULT, "__cyg_profile_func_exit");
    if (!enter_hook || !exit_hook) {
        enter_hook = (uintptr_t)&hk_func_enter;
        exit_hook = (uintptr_t)&hk_func_exit;
    }
}

/* How far after the first argument's set-up its call may come (the call
 * site's load in between). */
#define ARG_TO_CALL 48
#define MAX_CALLS HK_ENTRY_CALLS_MAX

/* The return address of the first hook call in [from, from + ARG_TO_CALL)
 * when it is the entry hook's, 0 when it is the exit hook's or none. */
NOINSTR static uintptr_t entry_call_after(const struct hk_code_object *q, uintptr_t from)
{
    for (uintptr_t p = from; p < from + ARG_TO_CALL && p + 6 <= q->text_hi; p++) {
        const unsigned char *b = (const unsigned char *)p;
        if (b[0] == HK_CALL_REL32 || b[0] == HK_CMP_EAX_IMM32) {
            if (hk_rel32_reaches(q, p + 5, enter_hook))
                return p + 5;
            if (hk_rel32_reaches(q, p + 5, exit_hook))
                return 0;
        } else if (b[0] == 0xff && b[1] == 0x15) { /* call *slot(%rip) */
            int32_t disp;
            memcpy(&disp, b + 2, 4);
            uintptr_t slot = p + 6 + (intptr_t)disp, hook;
            if (!hk_code_mapped(q, slot, sizeof hook))
                continue;
            hook = __atomic_load_n((const uintptr_t *)slot, __ATOMIC_RELAXED);
            if (hook == enter_hook)
                return p + 6;
            if (hook == exit_hook)
                return 0;
        }
    }
    return 0;
}

#define RDI 7

/* The register a `lea rel32(%rip),%reg` at p loads (0..15) and the address
 * into *to; -1 when p holds no such instruction. */
NOINSTR static int lea_rip(uintptr_t p, uintptr_t *to)
{
    const unsigned char *b = (const unsigned char *)p;
    if ((b[0] != 0x48 && b[0] != 0x4c) || b[1] != 0x8d || (b[2] & 0xc7) != 0x05)
        return -1;
    int32_t rel;
    memcpy(&rel, b + 3, 4);
    *to = p + 7 + (intptr_t)rel;
    return ((b[2] >> 3) & 7) | (b[0] == 0x4c ? 8 : 0);
}

/* The register a `mov %reg,%rdi` at p copies (0..15), -1 when it is no
 * such instruction (both encodings: 89 /r and 8b /r). */
NOINSTR static int mov_to_rdi(uintptr_t p)
{
    const unsigned char *b = (const unsigned char *)p;
    if ((b[0] == 0x48 || b[0] == 0x4c) && b[1] == 0x89 && (b[2] & 0xc7) == (0xc0 | RDI))
        return ((b[2] >> 3) & 7) | (b[0] == 0x4c ? 8 : 0);
    if ((b[0] == 0x48 || b[0] == 0x49) && b[1] == 0x8b && (b[2] & 0xf8) == (0xc0 | RDI << 3))
        return (b[2] & 7) | (b[0] == 0x49 ? 8 : 0);
    return -1;
}

/* Where the host's code keeps a function's address before it passes it:
 * clang keeps the address of a callee inlined more than once in a
 * callee-saved register (std::sort's comparator) and copies it into %rdi
 * for each call; clang -O0 spills it to a frame slot and loads it back.
 * Registers and %rbp-relative slots loaded from `lea fn(%rip),%reg`. */
#define MAX_SLOTS 8
struct holders {
    unsigned regs;
    unsigned nslots;
    int8_t slot[MAX_SLOTS];
};

/* The register a `mov %reg,disp8(%rbp)` at p stores (0..15) and the
 * displacement into *disp; -1 when p holds no such instruction. */
NOINSTR static int store_to_frame(uintptr_t p, int8_t *disp)
{
    const unsigned char *b = (const unsigned char *)p;
    if ((b[0] != 0x48 && b[0] != 0x4c) || b[1] != 0x89 || (b[2] & 0xc7) != 0x45)
        return -1;
    *disp = (int8_t)b[3];
    return ((b[2] >> 3) & 7) | (b[0] == 0x4c ? 8 : 0);
}

/* Whether p holds `mov disp8(%rbp),%rdi` from one of h's slots. */
NOINSTR static int load_from_slot(uintptr_t p, const struct holders *h)
{
    const unsigned char *b = (const unsigned char *)p;
    if (b[0] != 0x48 || b[1] != 0x8b || b[2] != (0x45 | RDI << 3))
        return 0;
    for (unsigned i = 0; i < h->nslots; i++)
        if (h->slot[i] == (int8_t)b[3])
            return 1;
    return 0;
}

/* The registers and slots the host's code [host, end) loads with callee's
 * address (with any function's when callee is 0). */
NOINSTR static void holders_of(uintptr_t host, uintptr_t end, uintptr_t callee, struct holders *h)
{
    *h = (struct holders){ 0 };
    for (uintptr_t p = host, to; p + 11 <= end; p++) {
        int r = lea_rip(p, &to);
        if (r < 0 || (callee && to != callee))
            continue;
        if (r != RDI)
            h->regs |= 1u << r;
        int8_t disp;
        if (store_to_frame(p + 7, &disp) == r && h->nslots < MAX_SLOTS)
            h->slot[h->nslots++] = disp;
    }
}

/* Whether the instruction at p puts callee (any function's address when
 * callee is 0) in the first argument's register (%rdi), and its length
 * into *len: `lea callee(%rip),%rdi`, `mov $callee,%edi`, `mov %reg,%rdi`
 * or `mov disp8(%rbp),%rdi` from a holder of h. */
NOINSTR static int sets_first_argument(uintptr_t p, uintptr_t callee, const struct holders *h, unsigned *len)
{
    const unsigned char *b = (const unsigned char *)p;
    uintptr_t to;
    int r;
    if (lea_rip(p, &to) == RDI) {
        *len = 7;
        return !callee || to == callee;
    }
    if (b[0] == 0xbf) { /* mov $imm32,%edi */
        uint32_t imm;
        memcpy(&imm, b + 1, 4);
        *len = 5;
        return !callee || imm == callee;
    }
    if ((r = mov_to_rdi(p)) >= 0 && r != RDI) {
        *len = 3;
        return (h->regs >> r) & 1;
    }
    *len = 4;
    return load_from_slot(p, h);
}

/* The entry hook's calls whose set-up the scan knows, for callee (for any
 * function when callee is 0) in [host, end): each one's return address
 * into at[] (offsets from host, ascending), up to max; -1 past max. */
NOINSTR static int32_t calls_set_up(const struct hk_code_object *q, uintptr_t host, uintptr_t end,
                                    uintptr_t callee, uint32_t *at, int32_t max)
{
    struct holders h;
    holders_of(host, end, callee, &h);
    int32_t n = 0;
    for (uintptr_t p = host; p + 7 <= end; p++) {
        unsigned len = 0;
        if (!sets_first_argument(p, callee, &h, &len))
            continue;
        uintptr_t ret = entry_call_after(q, p + len);
        if (!ret || (n && at[n - 1] == (uint32_t)(ret - 1 - host)))
            continue; /* not one, or one found twice (two set-ups before it) */
        if (n == max)
            return -1;
        at[n++] = (uint32_t)(ret - 1 - host);
    }
    return n;
}

/* Every call of the entry hook in [host, end), whatever its set-up:
 * `call rel32` or `call *slot(%rip)` that reaches it. */
NOINSTR static int32_t entry_hook_calls(const struct hk_code_object *q, uintptr_t host, uintptr_t end)
{
    int32_t n = 0;
    for (uintptr_t p = host; p + 6 <= end; p++) {
        const unsigned char *b = (const unsigned char *)p;
        if ((b[0] == HK_CALL_REL32 || b[0] == HK_CMP_EAX_IMM32) && hk_rel32_reaches(q, p + 5, enter_hook)) {
            n++;
        } else if (b[0] == 0xff && b[1] == 0x15) {
            int32_t disp;
            memcpy(&disp, b + 2, 4);
            uintptr_t slot = p + 6 + (intptr_t)disp;
            n += hk_code_mapped(q, slot, sizeof slot)
                && __atomic_load_n((const uintptr_t *)slot, __ATOMIC_RELAXED) == enter_hook;
        }
    }
    return n;
}

/* The entry hook's calls for callee in the host's code [host, end).  A
 * register or slot that holds the callee's address in one part of the
 * host may hold another value elsewhere: a call found through it that is
 * not the callee's can only make a decision mixed (the frame kept open),
 * unless none of the callee's own calls is found.  The host's entry hook
 * calls whose function no known set-up names make the search unsure. */
NOINSTR static void find_entry_calls(struct hk_entry_calls *e, uintptr_t end)
{
    struct hk_code_object q;
    uint32_t any[4 * MAX_CALLS];
    e->n = -1;
    if (!enter_hook || !e->callee || !hk_code_object(&q, e->host) || end <= e->host || end > q.text_hi)
        return;
    e->n = calls_set_up(&q, e->host, end, e->callee, e->at, MAX_CALLS);
    int32_t known = calls_set_up(&q, e->host, end, 0, any, 4 * MAX_CALLS);
    e->unsure = known < 0 || entry_hook_calls(&q, e->host, end) > known;
}

/* Kept per (host, callee) in pages of our own, found once: a program that
 * throws a lot through the same frames reads its code once.  Another
 * thread holding the table (or a signal handler that interrupted this
 * thread in it) leaves this search uncached; so does, for good, a fork
 * child whose parent had it held (an entry may be half written there). */
#define SLOTS 512u
static struct hk_entry_calls *table;
static int table_lock;

NOINSTR static uint32_t slot_of(uintptr_t host, uintptr_t callee)
{
    return (uint32_t)(((host ^ (callee * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull) >> 54)
        & (SLOTS - 1);
}

NOINSTR void hk_entry_calls_of(struct hk_entry_calls *out, uintptr_t host, uintptr_t callee, uintptr_t end)
{
    *out = (struct hk_entry_calls){ .host = host, .callee = callee };
    if (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE)) {
        find_entry_calls(out, end);
        return;
    }
    if (!table)
        table = hk_pages_map(SLOTS * sizeof *table, 0);
    struct hk_entry_calls *slot = NULL;
    for (uint32_t i = 0, s = slot_of(host, callee); table && i < SLOTS; i++, s = (s + 1) & (SLOTS - 1)) {
        if (table[s].host == host && table[s].callee == callee) {
            *out = table[s];
            __atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
            return;
        }
        if (!table[s].host) {
            slot = &table[s];
            break;
        }
    }
    find_entry_calls(out, end);
    if (slot)
        *slot = *out;
    __atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
}

NOINSTR int hk_entry_calls_known(void)
{
    return enter_hook != 0;
}
#else
NOINSTR void hk_entry_calls_start(void) {}

NOINSTR int hk_entry_calls_known(void)
{
    return 0;
}

NOINSTR void hk_entry_calls_of(struct hk_entry_calls *out, uintptr_t host, uintptr_t callee, uintptr_t end)
{
    (void)end;
    *out = (struct hk_entry_calls){ .host = host, .callee = callee, .n = -1 };
}
#endif
