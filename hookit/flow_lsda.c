/* The landing pad's call-site ranges, read from its function's LSDA
 * (flow_unwind.c, docs/exactness.md).
 *
 * A function with cleanups or catch clauses has a language-specific data
 * area (Itanium C++ ABI, LSDA; the layout GCC's libsupc++ and LLVM's
 * libc++abi read with the encodings of GCC's unwind-pe.h): a header (the
 * landing pads' base, the type table's offset, the call-site encoding and
 * the call-site table's length), then the call-site table, one record a
 * range of code: start and length from the function's start, landing pad
 * from the landing pads' base (0: none), action.  The ranges whose
 * landing pad is the one installed are the code from which a throw goes
 * there: inside that landing pad's try, or its cleanup's scope.
 *
 * LLVM may give one try several landing pads that only jump to the same
 * code (one per inlined copy of a call, with the same action): on x86-64
 * those count as the installed one when they lead where it leads with the
 * same action. */
#include "hookit/flow.h"

#include <string.h>

/* DW_EH_PE_* (the pointer encodings of .eh_frame and the LSDA). */
enum {
    PE_ABSPTR = 0x00,
    PE_ULEB128 = 0x01,
    PE_UDATA2 = 0x02,
    PE_UDATA4 = 0x03,
    PE_UDATA8 = 0x04,
    PE_SLEB128 = 0x09,
    PE_SDATA2 = 0x0a,
    PE_SDATA4 = 0x0b,
    PE_SDATA8 = 0x0c,
    PE_PCREL = 0x10,
    PE_FUNCREL = 0x40,
    PE_INDIRECT = 0x80,
    PE_OMIT = 0xff,
};

/* A LEB128 number at p (sign-extended when is_signed); the byte after it. */
HK_NOINSTR static const unsigned char *read_leb128(const unsigned char *p, uint64_t *v, int is_signed)
{
    uint64_t r = 0;
    unsigned shift = 0;
    unsigned char b;
    do {
        b = *p++;
        if (shift < 64)
            r |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (is_signed && shift < 64 && (b & 0x40))
        r |= ~(uint64_t)0 << shift;
    *v = r;
    return p;
}

HK_NOINSTR static const unsigned char *read_uleb128(const unsigned char *p, uint64_t *v)
{
    return read_leb128(p, v, 0);
}

/* One value in encoding enc at p, its application (pc-relative, from
 * func) applied; NULL for an encoding not handled (text-, data-relative,
 * aligned: not met in C++ LSDAs on Linux). */
HK_NOINSTR static const unsigned char *read_encoded(const unsigned char *p, unsigned enc, uintptr_t func,
                                                    uintptr_t *v)
{
    const unsigned char *at = p;
    uint64_t u = 0;
/* A fixed-size field of type t, sign- or zero-extended as t is. */
#define FIXED(t)                                                                                             \
    {                                                                                                        \
        t x;                                                                                                 \
        memcpy(&x, p, sizeof x);                                                                             \
        u = (uint64_t)(int64_t)x;                                                                            \
        p += sizeof x;                                                                                       \
        break;                                                                                               \
    }
    switch (enc & 0x0f) {
    case PE_ABSPTR:
        FIXED(uintptr_t)
    case PE_ULEB128:
        p = read_leb128(p, &u, 0);
        break;
    case PE_SLEB128:
        p = read_leb128(p, &u, 1);
        break;
    case PE_UDATA2:
        FIXED(uint16_t)
    case PE_SDATA2:
        FIXED(int16_t)
    case PE_UDATA4:
        FIXED(uint32_t)
    case PE_SDATA4:
        FIXED(int32_t)
    case PE_UDATA8:
    case PE_SDATA8:
        FIXED(uint64_t)
    default:
        return NULL;
    }
#undef FIXED
    if (u) {
        switch (enc & 0x70) {
        case 0:
            break;
        case PE_PCREL:
            u += (uintptr_t)at;
            break;
        case PE_FUNCREL:
            u += func;
            break;
        default:
            return NULL;
        }
        if (enc & PE_INDIRECT)
            memcpy(&u, (const void *)(uintptr_t)u, sizeof(uintptr_t));
    }
    *v = (uintptr_t)u;
    return p;
}

/* Where the code at a landing pad leads through unconditional jumps (a
 * few at most): itself elsewhere than on x86-64. */
HK_NOINSTR static uintptr_t pad_target(uintptr_t pad)
{
#if defined(__x86_64__)
    for (int hops = 0; hops < 4; hops++) {
        const unsigned char *b = (const unsigned char *)pad;
        if (b[0] == 0xeb) { /* jmp rel8 */
            pad += 2 + (intptr_t)(int8_t)b[1];
        } else if (b[0] == 0xe9) { /* jmp rel32 */
            int32_t rel;
            memcpy(&rel, b + 1, 4);
            pad += 5 + (intptr_t)rel;
        } else {
            break;
        }
    }
#endif
    return pad;
}

/* A call-site record: its range (from the function's start), landing pad
 * (absolute, 0 for none) and action. */
struct call_site {
    uintptr_t start, size, lp;
    uint64_t action;
};

/* One call-site field: clang writes them as uleb128, GCC as udata4 (read
 * here directly: the unwinder's loop runs this for every throw); other
 * encodings through read_encoded. */
__attribute__((always_inline)) static inline const unsigned char *read_field(const unsigned char *p,
                                                                             unsigned enc, uintptr_t *v)
{
    if (enc == PE_ULEB128 && !(*p & 0x80)) {
        *v = *p;
        return p + 1;
    }
    if (enc == PE_UDATA4) {
        uint32_t x;
        memcpy(&x, p, 4);
        *v = x;
        return p + 4;
    }
    return read_encoded(p, enc, 0, v);
}

/* The call-site record at p into *cs; the record after it, NULL when an
 * encoding is not handled.  The fields are offsets: their encoding's
 * format only (GCC's personality reads them with base 0). */
HK_NOINSTR static const unsigned char *read_call_site(const unsigned char *p, unsigned enc, uintptr_t lpstart,
                                                      struct call_site *cs)
{
    enc &= 0x0fu;
    if (!(p = read_field(p, enc, &cs->start)) || !(p = read_field(p, enc, &cs->size))
        || !(p = read_field(p, enc, &cs->lp)))
        return NULL;
    if (cs->lp)
        cs->lp += lpstart;
    if (!(*p & 0x80)) {
        cs->action = *p;
        return p + 1;
    }
    return read_uleb128(p, &cs->action);
}

HK_NOINSTR unsigned hk_lsda_pad_ranges(const unsigned char *lsda, uintptr_t func, uintptr_t pad,
                                       struct hookit_code_range *out, unsigned max, uintptr_t *calls_end)
{
    const unsigned char *p = lsda;
    uintptr_t lpstart = func;
    uint64_t len;
    *calls_end = func;
    if (!p || !pad)
        return 0;
    unsigned enc = *p++;
    if (enc != PE_OMIT && !(p = read_encoded(p, enc, func, &lpstart)))
        return 0;
    if (*p++ != PE_OMIT)
        p = read_uleb128(p, &len); /* the type table's offset */
    unsigned cs_enc = *p++;
    p = read_uleb128(p, &len);
    const unsigned char *end = p + len;
    /* One pass: the installed landing pad's own ranges, and the records of
     * other landing pads kept aside until its action is known (more than
     * max of them: the rest are not looked at, which can only keep a frame
     * open). */
    struct call_site cs, other[HK_LSDA_MAX_RANGES];
    unsigned n = 0, others = 0;
    uint64_t pad_action = UINT64_MAX;
    while (p < end) {
        if (!(p = read_call_site(p, cs_enc, lpstart, &cs)))
            return 0;
        if (func + cs.start + cs.size > *calls_end)
            *calls_end = func + cs.start + cs.size;
        if (!cs.lp)
            continue;
        if (cs.lp != pad) {
            if (others < HK_LSDA_MAX_RANGES)
                other[others++] = cs;
            continue;
        }
        pad_action = cs.action;
        if (n == max)
            return 0;
        out[n++] = (struct hookit_code_range){ func + cs.start, func + cs.start + cs.size };
    }
    uintptr_t target = others && n ? pad_target(pad) : 0;
    for (unsigned i = 0; i < others && n; i++) {
        if (other[i].action != pad_action || pad_target(other[i].lp) != target)
            continue;
        if (n == max)
            return 0;
        out[n++] = (struct hookit_code_range){ func + other[i].start, func + other[i].start + other[i].size };
    }
    return n;
}
