/*
 * GNU build-ids (the NT_GNU_BUILD_ID note the linker writes with
 * --build-id, on by default on Debian and Ubuntu): the identity of a linked
 * object.  The profiler records the build-id of every loaded module it
 * names, read from the module's program headers in memory (no file is
 * opened, and only at the end of the run); `hookit export` and `report
 * --lines` read the binary's own from its program headers on disk and give
 * no lines when they differ, which catches a rebuilt binary that a date
 * (an older mtime) or the functions' places (same layout) do not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "a2n/a2n_internal.h"

#define NOTE_ALIGN(n) (((n) + 3u) & ~(size_t)3u)
#define MAX_NOTES (64u * 1024u) /* note bytes read from a file */

/* The build-id in a block of notes, as lowercase hex in hex (size bytes,
 * NUL-terminated).  0, or -1 when there is none or it does not fit. */
static int notes_build_id(const unsigned char *p, size_t len, char *hex, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    size_t at = 0;
    while (len - at >= sizeof(ElfW(Nhdr))) {
        ElfW(Nhdr) nh;
        memcpy(&nh, p + at, sizeof nh);
        size_t name = at + sizeof nh, desc = name + NOTE_ALIGN(nh.n_namesz);
        if (nh.n_namesz > len || nh.n_descsz > len || desc > len || nh.n_descsz > len - desc)
            return -1;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(p + name, "GNU", 4)) {
            if (nh.n_descsz == 0 || 2 * (size_t)nh.n_descsz + 1 > size)
                return -1;
            for (size_t i = 0; i < nh.n_descsz; i++) {
                hex[2 * i] = digits[p[desc + i] >> 4];
                hex[2 * i + 1] = digits[p[desc + i] & 15];
            }
            hex[2 * (size_t)nh.n_descsz] = '\0';
            return 0;
        }
        at = desc + NOTE_ALIGN(nh.n_descsz);
    }
    return -1;
}

struct loaded_query {
    uint64_t addr;
    char *hex;
    size_t size;
    int rc;
};

static int contains(const struct dl_phdr_info *info, uint64_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
            return 1;
    }
    return 0;
}

/* The loaded object holding q->addr: its PT_NOTE segments, in memory. */
static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct loaded_query *q = data;
    if (!contains(info, q->addr))
        return 0;
    for (int i = 0; i < info->dlpi_phnum && q->rc != 0; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            q->rc = notes_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
                                   q->hex, q->size);
    }
    return 1;
}

A2N_API int a2n_build_id_loaded(uint64_t addr, char *hex, size_t size)
{
    struct loaded_query q = { addr, hex, size, -1 };
    dl_iterate_phdr(on_object, &q);
    return q.rc;
}

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
    ssize_t n = pread(fd, buf, len, (off_t)off);
    return n == (ssize_t)len ? 0 : -1;
}

/* The PT_NOTE segments of an ELF file of this machine's class. */
static int file_build_id(int fd, char *hex, size_t size)
{
    ElfW(Ehdr) eh;
    if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0
        || eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)
        || eh.e_phentsize != sizeof(ElfW(Phdr)))
        return -1;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        unsigned char notes[4096];
        if (read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph) != 0)
            return -1;
        if (ph.p_type != PT_NOTE || ph.p_filesz > MAX_NOTES)
            continue;
        size_t len = ph.p_filesz < sizeof notes ? ph.p_filesz : sizeof notes;
        if (read_at(fd, notes, len, ph.p_offset) == 0 && notes_build_id(notes, len, hex, size) == 0)
            return 0;
    }
    return -1;
}

A2N_API int a2n_build_id_file(const char *path, char *hex, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = file_build_id(fd, hex, size);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}
