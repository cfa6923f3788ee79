/* The objects the dynamic loader has loaded, as one number, so that work
 * done from /proc/self/maps (the maps copy `hookit recover` reads, A2N's
 * module table) is done again only when they changed.
 *
 * A dlopen used to read /proc/self/maps twice and a dlclose once: 400
 * dlopen/dlclose pairs took 0.3-0.7 s instead of 0.03-0.09 s natively, and
 * 105 s under qemu-user, whose maps take 0.12 s a read
 * (docs/performance.md).  Most dlopens in a loop load a library that was
 * loaded before, at the same place: the set is one the last reading saw.
 * dl_iterate_phdr gives the set from the loader's own list, with no system
 * call. */
#include "profiler/jprof/jprof.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
/* Note bytes hashed per PT_NOTE segment: the build-id comes first in the
 * notes of a GNU link, and tells a rebuilt library from the old one. */
#define NOTE_BYTES 256u

struct set_walk {
    uint64_t hash;
    unsigned long long changes; /* loads + unloads so far (dlpi_adds + dlpi_subs) */
};

JP_NOINSTR static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * FNV_PRIME;
    return h;
}

/* A number at a time: the segments are most of what is hashed. */
JP_NOINSTR static uint64_t mix_u64(uint64_t h, uint64_t v)
{
    return (h ^ v ^ (v >> 29)) * FNV_PRIME;
}

/* Whether the note segment lies in one of the object's loaded segments
 * (it always does in a GNU link; a note outside would not be mapped). */
JP_NOINSTR static int note_mapped(const struct dl_phdr_info *info, const ElfW(Phdr) * note, size_t len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && note->p_vaddr >= ph->p_vaddr
            && note->p_vaddr - ph->p_vaddr <= ph->p_filesz
            && len <= ph->p_filesz - (note->p_vaddr - ph->p_vaddr))
            return 1;
    }
    return 0;
}

/* One object: its name, load address and segments, and its notes. */
JP_NOINSTR static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct set_walk *w = data;
    uint64_t h = w->hash;
    h = mix_u64(h, info->dlpi_addr);
    if (info->dlpi_name)
        h = mix(h, info->dlpi_name, strlen(info->dlpi_name) + 1);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        h = mix_u64(mix_u64(mix_u64(h, (uint64_t)ph->p_type << 32 | ph->p_flags), ph->p_vaddr), ph->p_memsz);
        size_t len = ph->p_memsz < NOTE_BYTES ? ph->p_memsz : NOTE_BYTES;
        if (ph->p_type == PT_NOTE && note_mapped(info, ph, len))
            h = mix(h, (const void *)(info->dlpi_addr + ph->p_vaddr), len);
    }
    w->hash = h;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        w->changes = info->dlpi_adds + info->dlpi_subs;
    return 0;
}

/* The set of loaded objects now (never 0), and *changes. */
JP_NOINSTR static uint64_t loaded_set(unsigned long long *changes)
{
    struct set_walk w = { FNV_OFFSET, 0 };
    dl_iterate_phdr(add_object, &w);
    *changes = w.changes;
    return w.hash ? w.hash : 1;
}

JP_NOINSTR int jp_loaded_refresh(uint64_t *have, int settled, int (*reread)(void *ctx), void *ctx)
{
    unsigned long long before, after;
    uint64_t set = loaded_set(&before);
    if (set == __atomic_load_n(have, __ATOMIC_ACQUIRE))
        return 0;
    int ok = reread(ctx) == 0;
    loaded_set(&after);
    __atomic_store_n(have, ok && settled && after == before ? set : 0, __ATOMIC_RELEASE);
    return 1;
}
