/* Reading the program's machine code for its hook calls (code.h). */
#include "common/code.h"

#include <link.h>
#include <string.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static int find_segments(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct hk_code_object *q = ctx;
    q->n = 0;
    q->text_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_filesz;
        if ((ph->p_flags & PF_X) && q->addr >= lo && q->addr < hi) {
            q->text_lo = lo;
            q->text_hi = hi;
        }
        if ((ph->p_flags & PF_R) && q->n < HK_MAX_SEGMENTS) {
            q->lo[q->n] = lo;
            q->hi[q->n++] = hi;
        }
    }
    return q->text_hi != 0;
}

NOINSTR int hk_code_object(struct hk_code_object *q, uintptr_t addr)
{
    memset(q, 0, sizeof *q);
    q->addr = addr;
    return dl_iterate_phdr(find_segments, q) == 1;
}

NOINSTR int hk_code_mapped(const struct hk_code_object *q, uintptr_t at, size_t len)
{
    for (unsigned i = 0; i < q->n; i++)
        if (at >= q->lo[i] && at + len <= q->hi[i])
            return 1;
    return 0;
}

NOINSTR uintptr_t hk_plt_slot(uintptr_t target)
{
    const unsigned char *p = (const unsigned char *)target;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4;
    if (p[0] == 0xf2)
        p++;
    if (p[0] != 0xff || p[1] != 0x25)
        return 0;
    int32_t disp;
    memcpy(&disp, p + 2, 4);
    return (uintptr_t)(p + 6) + (intptr_t)disp;
}

NOINSTR int hk_rel32_reaches(const struct hk_code_object *q, uintptr_t next, uintptr_t hook)
{
    int32_t rel;
    memcpy(&rel, (const void *)(next - 4), 4);
    uintptr_t target = next + (intptr_t)rel;
    if (target == hook)
        return 1;
    if (target < q->text_lo || target + 16 > q->text_hi)
        return 0;
    uintptr_t slot = hk_plt_slot(target);
    return slot && hk_code_mapped(q, slot, sizeof(uintptr_t))
        && __atomic_load_n((const uintptr_t *)slot, __ATOMIC_RELAXED) == hook;
}
