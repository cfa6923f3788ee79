/* Pages of hookit's own: private, zeroed, never from malloc (the program's
 * malloc, perhaps instrumented, must not run on hookit's behalf, nor inside
 * its locks).  One home for the mapping every library makes.
 *
 * NULL on failure, and errno is kept either way: this runs inside the
 * program, whose errno is its own.  HK_PAGES_RESERVE asks for address space
 * only, backed page by page as it is touched (MAP_NORESERVE: a large table
 * used sparsely). */
#ifndef HOOKIT_COMMON_PAGES_H
#define HOOKIT_COMMON_PAGES_H

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#define HK_PAGES_RESERVE MAP_NORESERVE

__attribute__((no_instrument_function))
static inline void *hk_pages_map(size_t bytes, int flags)
{
    int saved = errno;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
    errno = saved;
    return p == MAP_FAILED ? NULL : p;
}

__attribute__((no_instrument_function))
static inline void hk_pages_unmap(void *p, size_t bytes)
{
    int saved = errno;
    if (p)
        munmap(p, bytes);
    errno = saved;
}

#endif
