/* Metadata calls by path or descriptor: the stat family, unlink, rename.
 * A call by path is charged to the record of that path (made absolute the
 * way opens are), so a file's stat and unlink appear next to its reads. */
#include "hookit/io_internal.h"

#include <fcntl.h>

HK_NOINSTR static void end_path(struct io_call *c, const char *func, int dirfd, const char *path,
                                int64_t result)
{
    uint64_t t1 = c->collecting ? io_clock() : 0;
    int saved = errno;
    IO_ENTER();
    if (c->collecting) {
        char buf[4096];
        const char *key = path ? io_abs_path(dirfd, path, buf, sizeof buf) : NULL;
        uint32_t id = key ? io_file_id(key) : 0;
        struct hookit_io ev = {
            .op = HOOKIT_IO_META,
            .flags = result < 0 ? HOOKIT_IOF_FAILED : 0,
            .func = func,
            .fd = -1,
            .file = id,
            .path = id ? io_file_path(id) : key,
            .result = result,
            .err = result < 0 ? saved : 0,
            .offset = -1,
            .t1 = t1,
        };
        io_deliver(c, &ev);
    }
    IO_LEAVE();
    errno = saved;
}

/* An fstatat of the descriptor itself (kept out of line: path is declared
 * nonnull, yet the kernel accepts NULL with AT_EMPTY_PATH). */
HK_NOINSTR __attribute__((noinline)) static int empty_path(const char *path)
{
    return !path || !*path;
}

#define BY_PATH(name, params, args, dirfd, path)                               \
    HK_EXPORT HK_NOINSTR int LC_WRAPPER(name) params                           \
    {                                                                          \
        if (!io_tracking() || !hk_collecting_now())                            \
            return IO_REAL(name) args;                                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        int r = IO_REAL(name) args;                                            \
        end_path(&c, #name, dirfd, path, r);                                   \
        return r;                                                              \
    }

#define BY_FD(name, params, args)                                              \
    HK_EXPORT HK_NOINSTR int LC_WRAPPER(name) params                           \
    {                                                                          \
        if (!io_tracking() || !hk_collecting_now())                            \
            return IO_REAL(name) args;                                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        int r = IO_REAL(name) args;                                            \
        io_end_fd(&c, HOOKIT_IO_META, #name, fd, r, 0, IO_NO_POS, 0);          \
        return r;                                                              \
    }

BY_PATH(stat, (const char *path, struct stat *st), (path, st), AT_FDCWD, path)
BY_PATH(stat64, (const char *path, struct stat64 *st), (path, st), AT_FDCWD, path)
BY_PATH(lstat, (const char *path, struct stat *st), (path, st), AT_FDCWD, path)
BY_PATH(lstat64, (const char *path, struct stat64 *st), (path, st), AT_FDCWD, path)
BY_FD(fstat, (int fd, struct stat *st), (fd, st))
BY_FD(fstat64, (int fd, struct stat64 *st), (fd, st))
BY_PATH(unlink, (const char *path), (path), AT_FDCWD, path)
BY_PATH(unlinkat, (int fd, const char *path, int flags), (fd, path, flags), fd, path)
BY_PATH(rename, (const char *from, const char *to), (from, to), AT_FDCWD, from)
BY_PATH(renameat, (int fromfd, const char *from, int tofd, const char *to),
        (fromfd, from, tofd, to), fromfd, from)

/* fstatat with AT_EMPTY_PATH and "" is an fstat of the descriptor. */
#define STATAT(name, type)                                                     \
    HK_EXPORT HK_NOINSTR int LC_WRAPPER(name)(int fd, const char *path, type *st, int flags) \
    {                                                                          \
        if (!io_tracking() || !hk_collecting_now())                            \
            return IO_REAL(name)(fd, path, st, flags);                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        int r = IO_REAL(name)(fd, path, st, flags);                            \
        if ((flags & AT_EMPTY_PATH) && empty_path(path))                         \
            io_end_fd(&c, HOOKIT_IO_META, #name, fd, r, 0, IO_NO_POS, 0);      \
        else                                                                   \
            end_path(&c, #name, fd, path, r);                                  \
        return r;                                                              \
    }
STATAT(fstatat, struct stat)
STATAT(fstatat64, struct stat64)
