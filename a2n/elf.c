/*
 * The PT_LOAD program headers of an ELF image, read directly (no libbfd):
 * they are all the module layer needs to compute a load bias, and reading
 * them costs two small reads per object file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2n/a2n_internal.h"

#define MAX_PHDRS 4096

size_t a2n_read_fd(void *fd_as_ptr, void *buf, size_t n, uint64_t off)
{
    int fd = (int)(intptr_t)fd_as_ptr;
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    return done;
}

size_t a2n_read_mem(void *mem, void *buf, size_t n, uint64_t off)
{
    const struct a2n_mem *m = mem;
    if (off >= m->size)
        return 0;
    if (n > m->size - off)
        n = m->size - off;
    memcpy(buf, m->data + off, n);
    return n;
}

static int add_segment(struct a2n_segment **segs, int *n, const struct a2n_segment *s)
{
    struct a2n_segment *p = realloc(*segs, (size_t)(*n + 1) * sizeof *p);
    if (!p)
        return -1;
    p[*n] = *s;
    *segs = p;
    (*n)++;
    return 0;
}

static int segments64(a2n_read_fn read, void *ctx, const Elf64_Ehdr *eh,
                      struct a2n_segment **segs)
{
    int n = 0;
    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > MAX_PHDRS)
        return -1;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph;
        if (read(ctx, &ph, sizeof ph, eh->e_phoff + (uint64_t)i * sizeof ph) != sizeof ph)
            break;
        if (ph.p_type != PT_LOAD)
            continue;
        struct a2n_segment s = { ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, ph.p_align };
        if (add_segment(segs, &n, &s))
            break;
    }
    return n;
}

static int segments32(a2n_read_fn read, void *ctx, const Elf32_Ehdr *eh,
                      struct a2n_segment **segs)
{
    int n = 0;
    if (eh->e_phentsize != sizeof(Elf32_Phdr) || eh->e_phnum > MAX_PHDRS)
        return -1;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf32_Phdr ph;
        if (read(ctx, &ph, sizeof ph, eh->e_phoff + (uint64_t)i * sizeof ph) != sizeof ph)
            break;
        if (ph.p_type != PT_LOAD)
            continue;
        struct a2n_segment s = { ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, ph.p_align };
        if (add_segment(segs, &n, &s))
            break;
    }
    return n;
}

int a2n_elf_segments(a2n_read_fn read, void *ctx, struct a2n_segment **segs)
{
    union { unsigned char ident[EI_NIDENT]; Elf64_Ehdr e64; Elf32_Ehdr e32; } h;
    *segs = NULL;
    memset(&h, 0, sizeof h);
    size_t got = read(ctx, &h, sizeof h, 0);
    if (got < sizeof h.e32 || memcmp(h.ident, ELFMAG, SELFMAG) != 0)
        return -1;
    /* Only images of our own byte order are read: the fields are used raw. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (h.ident[EI_DATA] != ELFDATA2LSB)
        return -1;
#else
    if (h.ident[EI_DATA] != ELFDATA2MSB)
        return -1;
#endif
    int n = -1;
    if (h.ident[EI_CLASS] == ELFCLASS64 && got >= sizeof h.e64)
        n = segments64(read, ctx, &h.e64, segs);
    else if (h.ident[EI_CLASS] == ELFCLASS32)
        n = segments32(read, ctx, &h.e32, segs);
    if (n <= 0) {
        free(*segs);
        *segs = NULL;
        return -1;
    }
    return n;
}
