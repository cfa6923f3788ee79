/* Whose code a sample interrupted: hookit's or the program's.
 *
 * A CPU-time sample that lands in the hooks, the profiler, or the PLT stub
 * an instrumented function calls them through is hookit's cost, not the
 * program's time (docs/performance.md, "Time that matches the program").
 * The sampler asks here with the interrupted program counter and counts
 * such samples apart, so no node is charged with them and the profile says
 * how much there was.
 *
 * hookit's code is the executable segments of the two objects that hold
 * the hooks (libhookit) and this profiler (libjprof), found once at start;
 * a PLT stub is recognised by its instruction, `jmp *slot(%rip)` (with an
 * endbr64 and a bnd prefix in the IBT layout), whose slot points into that
 * code.  When the hooks are linked into the program itself (`hookit link`,
 * a static program) the segments would be the program's too: then only the
 * stubs are told apart, and the profile says so (own_code_filter). */
#include "profiler/jprof/jprof.h"
#include "sampler.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <ucontext.h>

enum { OWN_MAX_RANGES = 8 };

static struct own_range {
    uintptr_t lo, hi;
} own_ranges[OWN_MAX_RANGES];
static int own_nranges;
static int own_segments_known;

struct own_search {
    uintptr_t addr; /* an address inside the object whose segments we want */
    int found;      /* it lies in the main program */
    int in_main;
};

JP_NOINSTR static int segment_has(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

JP_NOINSTR static int add_object_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct own_search *s = arg;
    if (!segment_has(info, s->addr))
        return 0;
    s->found = 1;
    s->in_main = !info->dlpi_name || !info->dlpi_name[0];
    if (s->in_main)
        return 1;
    for (int i = 0; i < info->dlpi_phnum && own_nranges < OWN_MAX_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        own_ranges[own_nranges++] = (struct own_range){ lo, lo + ph->p_memsz };
    }
    return 1;
}

/* The executable segments of the object holding addr; 0 when that object
 * is the main program (its segments are the program's code as well). */
JP_NOINSTR static int add_object_of(uintptr_t addr)
{
    struct own_search s = { .addr = addr };
    dl_iterate_phdr(add_object_segments, &s);
    return s.found && !s.in_main;
}

JP_NOINSTR void jp_own_code_init(void)
{
    own_nranges = 0;
    int profiler = add_object_of((uintptr_t)jp_own_code_init); /* any function of libjprof */
    /* Every function of the host table is libhookit's. */
    int hooks = add_object_of((uintptr_t)jp_host->log);
    own_segments_known = profiler && hooks;
}

JP_NOINSTR int jp_own_code_segments_known(void)
{
    return own_segments_known;
}

JP_NOINSTR static int in_own_ranges(uintptr_t pc)
{
    for (int i = 0; i < own_nranges; i++)
        if (pc >= own_ranges[i].lo && pc < own_ranges[i].hi)
            return 1;
    return 0;
}

#if defined(__x86_64__) /* only the x86-64 code reads it */
JP_NOINSTR static uint32_t read_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#endif

/* pc is a PLT stub's indirect jump into hookit: `[endbr64] [bnd] jmp
 * *disp32(%rip)` whose slot holds an address of ours.  The bytes at pc are
 * the instruction the thread runs next, so they and its slot are mapped;
 * the few bytes read never cross into the next page. */
JP_NOINSTR static int plt_stub_to_us(uintptr_t pc)
{
#if defined(__x86_64__)
    enum { LONGEST = 4 + 1 + 2 + 4 };
    if ((pc & 4095) > 4096 - LONGEST)
        return 0;
    const unsigned char *c = (const unsigned char *)pc;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
        c += 4; /* endbr64 */
    if (c[0] == 0xf2)
        c++; /* bnd */
    if (c[0] != 0xff || c[1] != 0x25)
        return 0;
    uintptr_t slot = (uintptr_t)(c + 6) + (intptr_t)(int32_t)read_u32(c + 2);
    uintptr_t target = *(const volatile uintptr_t *)slot;
    return in_own_ranges(target);
#else
    (void)pc;
    return 0;
#endif
}

JP_NOINSTR uintptr_t jp_interrupted_pc(const void *uc)
{
    const ucontext_t *u = uc;
    if (!u)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)u->uc_mcontext.pc;
#else
    return 0;
#endif
}

JP_NOINSTR int jp_own_code(uintptr_t pc)
{
    return pc && (in_own_ranges(pc) || plt_stub_to_us(pc));
}
