/*
 * The vdso has no file: its ELF image is read from memory.  In this process
 * it is simply there (getauxval(AT_SYSINFO_EHDR) says where); in another
 * process it is copied out of /proc/PID/mem, which needs the same rights
 * as ptrace.  When neither works the vdso gets fallback names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "a2n/a2n_internal.h"

#define MAX_VDSO_SIZE (16u << 20)

void *a2n_vdso_image(struct a2n *a, uint64_t start, uint64_t end, int *owned)
{
    *owned = 0;
    if (end <= start || end - start > MAX_VDSO_SIZE)
        return NULL;
    if (a->pid == 0 || a->pid == getpid()) {
        unsigned long ehdr = getauxval(AT_SYSINFO_EHDR);
        return ehdr == start ? (void *)(uintptr_t)start : NULL;
    }

    char name[64];
    snprintf(name, sizeof name, "/proc/%d/mem", (int)a->pid);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t size = (size_t)(end - start);
    void *image = malloc(size);
    if (image && a2n_read_fd((void *)(intptr_t)fd, image, size, start) != size) {
        free(image);
        image = NULL;
    }
    close(fd);
    *owned = image != NULL;
    return image;
}
