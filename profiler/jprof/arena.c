/* The shared arena: every thread's tree in one mapping of a memfd, so a
 * reader in another process can map the same pages and follow 32-bit slot
 * references.  The file is sized once to the whole reservation; shmem
 * allocates pages only when touched, so nothing grows on the hot path.
 *
 * When a file-size limit is set (RLIMIT_FSIZE: growing a file past it
 * raises SIGXFSZ) or memfd_create is unavailable, anonymous memory is used
 * instead: the profile is the same, only live reading is lost. */
#include "jprof.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define ARENA_RESERVE (16ull << 30)     /* address space: 256M slots */

char *jp_arena_base;
static int arena_fd = -1;

JP_NOINSTR struct arena_header *jp_arena_header(void)
{
    return (struct arena_header *)jp_arena_base;
}

JP_NOINSTR static int file_size_unlimited(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
           rl.rlim_cur >= ARENA_RESERVE;
}

/* A new memfd of the reservation's size, or -1. */
JP_NOINSTR static int new_backing_file(void)
{
    if (!file_size_unlimited())
        return -1;
    int fd = memfd_create("hookit-jprof", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)ARENA_RESERVE) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

JP_NOINSTR static void *map_backing(void *at, int fd)
{
    int fixed = at ? MAP_FIXED : 0;
    if (fd >= 0)
        return mmap(at, ARENA_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | fixed, fd, 0);
    return mmap(at, ARENA_RESERVE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0);
}

JP_NOINSTR int jp_arena_init(void)
{
    int saved = errno;
    arena_fd = new_backing_file();
    void *base = map_backing(NULL, arena_fd);
    if (base == MAP_FAILED && arena_fd >= 0) {
        close(arena_fd);
        arena_fd = -1;
        base = map_backing(NULL, -1);
    }
    errno = saved;
    if (base == MAP_FAILED)
        return -1;
    jp_arena_base = base;
    struct arena_header *h = jp_arena_header();
    memcpy(h->magic, ARENA_MAGIC, 8);
    h->version = ARENA_VERSION;
    h->slot_size = ARENA_SLOT;
    h->used = ARENA_SLOT;          /* slot 0 is this header */
    h->pid = getpid();
    return 0;
}

JP_NOINSTR arena_ref jp_arena_alloc(uint32_t nslots)
{
    uint64_t bytes = (uint64_t)nslots * ARENA_SLOT;
    uint64_t off = __atomic_fetch_add(&jp_arena_header()->used, bytes, __ATOMIC_RELAXED);
    if (off + bytes > ARENA_RESERVE)
        return 0;
    return (arena_ref)(off / ARENA_SLOT);
}

/* After fork the child shares the parent's pages: give it its own copy at
 * the same address so every reference stays valid. */
JP_NOINSTR int jp_arena_fork_child(void)
{
    int saved = errno;
    uint64_t used = jp_arena_header()->used;
    if (used > ARENA_RESERVE)
        used = ARENA_RESERVE;
    int fd = new_backing_file();
    int ok = 0;
    if (fd >= 0) {
        uint64_t done = 0;
        while (done < used) {
            ssize_t w = pwrite(fd, jp_arena_base + done, used - done, (off_t)done);
            if (w <= 0)
                break;
            done += (uint64_t)w;
        }
        ok = done == used && map_backing(jp_arena_base, fd) != MAP_FAILED;
    }
    if (!ok) {
        /* Private anonymous copy: map fresh pages elsewhere, copy, move. */
        if (fd >= 0)
            close(fd);
        fd = -1;
        void *copy = map_backing(NULL, -1);
        ok = copy != MAP_FAILED;
        if (ok) {
            memcpy(copy, jp_arena_base, used);
            ok = mremap(copy, ARENA_RESERVE, ARENA_RESERVE, MREMAP_MAYMOVE | MREMAP_FIXED,
                        jp_arena_base) != MAP_FAILED;
        }
    }
    if (arena_fd >= 0)
        close(arena_fd);
    arena_fd = fd;
    jp_arena_header()->pid = getpid();
    errno = saved;
    return ok ? 0 : -1;
}
