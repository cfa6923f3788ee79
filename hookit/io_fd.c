/* Wrappers of the descriptor calls: open family (with the fortify
 * __open_2 family), close, dup family, fcntl's F_DUPFD*, read/write and
 * their positioned and vectored forms, lseek, fsync, fdatasync, ftruncate,
 * mmap of files.  Each returns exactly what the real call returned, with
 * its errno (see io_internal.h for the shape). */
#include "hookit/io_internal.h"

#include <fcntl.h>

/* The end of an open: the descriptor gets a description on the path's
 * record.  Shared with stdio (fopen) and sockets. */
HK_NOINSTR void io_end_open(struct io_call *c, const char *func, int fd, int dirfd, const char *path,
                            uint32_t dflags, uint32_t evflags, int64_t result)
{
    uint64_t t1 = c->collecting ? io_clock() : 0;
    int saved = errno;
    IO_ENTER();
    char buf[4096];
    const char *key = path ? io_abs_path(dirfd, path, buf, sizeof buf) : NULL;
    struct io_desc *d = fd >= 0 ? io_fd_opened(fd, key, dflags) : NULL;
    if (c->collecting) {
        struct hookit_io ev = {
            .op = HOOKIT_IO_OPEN,
            .flags = evflags | (fd < 0 ? HOOKIT_IOF_FAILED : 0),
            .func = func,
            .fd = fd,
            .file = d ? d->file : 0,
            .path = d && d->file ? io_file_path(d->file) : key,
            .result = result,
            .err = fd < 0 ? saved : 0,
            .offset = -1,
            .t1 = t1,
        };
        io_deliver(c, &ev);
    }
    IO_LEAVE();
    errno = saved;
}

HK_NOINSTR static int needs_mode(int flags)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define GET_MODE(flags, last)                       \
    mode_t mode = 0;                                \
    if (needs_mode(flags)) {                        \
        va_list ap;                                 \
        va_start(ap, last);                         \
        mode = (mode_t)va_arg(ap, int);             \
        va_end(ap);                                 \
    }

#define APPEND(flags) (((flags) & O_APPEND) ? IO_DESC_APPEND : 0u)

/* open(path, flags[, mode]) and its variants: CALL is the real call. */
#define OPEN_BODY(name, dirfd, path, flags, CALL)                              \
    if (!io_tracking())                                                        \
        return CALL;                                                           \
    struct io_call c;                                                          \
    io_begin(&c);                                                              \
    int fd = CALL;                                                             \
    io_end_open(&c, #name, fd, dirfd, path, APPEND(flags), 0, fd);             \
    return fd;

HK_EXPORT HK_NOINSTR int LC_WRAPPER(open)(const char *path, int flags, ...)
{
    GET_MODE(flags, flags)
    OPEN_BODY(open, AT_FDCWD, path, flags, IO_REAL(open)(path, flags, mode))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(open64)(const char *path, int flags, ...)
{
    GET_MODE(flags, flags)
    OPEN_BODY(open64, AT_FDCWD, path, flags, IO_REAL(open64)(path, flags, mode))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(openat)(int dirfd, const char *path, int flags, ...)
{
    GET_MODE(flags, flags)
    OPEN_BODY(openat, dirfd, path, flags, IO_REAL(openat)(dirfd, path, flags, mode))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(openat64)(int dirfd, const char *path, int flags, ...)
{
    GET_MODE(flags, flags)
    OPEN_BODY(openat64, dirfd, path, flags, IO_REAL(openat64)(dirfd, path, flags, mode))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(creat)(const char *path, mode_t mode)
{
    OPEN_BODY(creat, AT_FDCWD, path, 0, IO_REAL(creat)(path, mode))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(creat64)(const char *path, mode_t mode)
{
    OPEN_BODY(creat64, AT_FDCWD, path, 0, IO_REAL(creat64)(path, mode))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__open_2)(const char *path, int flags)
{
    OPEN_BODY(open, AT_FDCWD, path, flags, IO_REAL(__open_2)(path, flags))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__open64_2)(const char *path, int flags)
{
    OPEN_BODY(open64, AT_FDCWD, path, flags, IO_REAL(__open64_2)(path, flags))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__openat_2)(int dirfd, const char *path, int flags)
{
    OPEN_BODY(openat, dirfd, path, flags, IO_REAL(__openat_2)(dirfd, path, flags))
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(__openat64_2)(int dirfd, const char *path, int flags)
{
    OPEN_BODY(openat64, dirfd, path, flags, IO_REAL(__openat64_2)(dirfd, path, flags))
}

/* ---- close and duplicates ------------------------------------------------------------ */
HK_EXPORT HK_NOINSTR int LC_WRAPPER(close)(int fd)
{
    if (!io_tracking())
        return IO_REAL(close)(fd);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(close)(fd);
    io_end_fd(&c, HOOKIT_IO_CLOSE, "close", fd, r, 0, IO_NO_POS, 0);
    IO_ENTER();
    io_fd_closed(fd);
    IO_LEAVE();
    return r;
}

/* newfd (the result) now shares oldfd's description. */
HK_NOINSTR static void end_dup(struct io_call *c, const char *func, int oldfd, int newfd)
{
    if (newfd >= 0) {
        int saved = errno;
        IO_ENTER();
        io_fd_dup(oldfd, newfd);
        IO_LEAVE();
        errno = saved;
    }
    io_end_fd(c, HOOKIT_IO_DUP, func, newfd >= 0 ? newfd : oldfd, newfd, 0, IO_NO_POS, 0);
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(dup)(int fd)
{
    if (!io_tracking())
        return IO_REAL(dup)(fd);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(dup)(fd);
    end_dup(&c, "dup", fd, r);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(dup2)(int fd, int fd2)
{
    if (!io_tracking())
        return IO_REAL(dup2)(fd, fd2);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(dup2)(fd, fd2);
    end_dup(&c, "dup2", fd, r);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(dup3)(int fd, int fd2, int flags)
{
    if (!io_tracking())
        return IO_REAL(dup3)(fd, fd2, flags);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(dup3)(fd, fd2, flags);
    end_dup(&c, "dup3", fd, r);
    return r;
}

/* fcntl's argument is an int or a pointer: passed on as the pointer-sized
 * value it arrived as, as glibc itself does. */
#define FCNTL_BODY(name)                                                       \
    va_list ap;                                                                \
    va_start(ap, cmd);                                                         \
    void *arg = va_arg(ap, void *);                                            \
    va_end(ap);                                                                \
    if (!io_tracking() || (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC && cmd != F_SETFL)) \
        return IO_REAL(name)(fd, cmd, arg);                                    \
    struct io_call c;                                                          \
    io_begin(&c);                                                              \
    int r = IO_REAL(name)(fd, cmd, arg);                                       \
    if (cmd == F_SETFL) {                                                      \
        int saved = errno;                                                     \
        IO_ENTER();                                                            \
        struct io_desc *d = r == 0 ? io_fd_desc(fd) : NULL;                    \
        if (d)                                                                 \
            d->flags = ((int)(intptr_t)arg & O_APPEND) ? (d->flags | IO_DESC_APPEND) \
                                                       : (d->flags & ~IO_DESC_APPEND); \
        IO_LEAVE();                                                            \
        errno = saved;                                                         \
        io_end_fd(&c, HOOKIT_IO_META, #name, fd, r, 0, IO_NO_POS, 0);          \
    } else {                                                                   \
        end_dup(&c, #name, fd, r);                                             \
    }                                                                          \
    return r;

HK_EXPORT HK_NOINSTR int LC_WRAPPER(fcntl)(int fd, int cmd, ...)
{
    FCNTL_BODY(fcntl)
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(fcntl64)(int fd, int cmd, ...)
{
    FCNTL_BODY(fcntl64)
}

/* ---- reads and writes ------------------------------------------------------------------ */
/* A transfer returning ssize_t: bytes = the result. */
#define XFER(name, op, params, args, offset)                                   \
    HK_EXPORT HK_NOINSTR ssize_t LC_WRAPPER(name) params                       \
    {                                                                          \
        if (!io_tracking())                                                    \
            return IO_REAL(name) args;                                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        ssize_t r = IO_REAL(name) args;                                        \
        io_end_fd(&c, op, #name, fd, r, r, offset, 0);                         \
        return r;                                                              \
    }

XFER(read, HOOKIT_IO_READ, (int fd, void *buf, size_t n), (fd, buf, n), IO_AT_POS)
XFER(write, HOOKIT_IO_WRITE, (int fd, const void *buf, size_t n), (fd, buf, n), IO_AT_POS)
XFER(pread, HOOKIT_IO_READ, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off), off)
XFER(pread64, HOOKIT_IO_READ, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off), off)
XFER(pwrite, HOOKIT_IO_WRITE, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off), off)
XFER(pwrite64, HOOKIT_IO_WRITE, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off), off)
XFER(readv, HOOKIT_IO_READ, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), IO_AT_POS)
XFER(writev, HOOKIT_IO_WRITE, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), IO_AT_POS)
XFER(preadv, HOOKIT_IO_READ, (int fd, const struct iovec *iov, int cnt, off_t off),
     (fd, iov, cnt, off), off)
XFER(preadv64, HOOKIT_IO_READ, (int fd, const struct iovec *iov, int cnt, off64_t off),
     (fd, iov, cnt, off), off)
XFER(pwritev, HOOKIT_IO_WRITE, (int fd, const struct iovec *iov, int cnt, off_t off),
     (fd, iov, cnt, off), off)
XFER(pwritev64, HOOKIT_IO_WRITE, (int fd, const struct iovec *iov, int cnt, off64_t off),
     (fd, iov, cnt, off), off)
XFER(__read_chk, HOOKIT_IO_READ, (int fd, void *buf, size_t n, size_t buflen),
     (fd, buf, n, buflen), IO_AT_POS)
XFER(__pread_chk, HOOKIT_IO_READ, (int fd, void *buf, size_t n, off_t off, size_t buflen),
     (fd, buf, n, off, buflen), off)
XFER(__pread64_chk, HOOKIT_IO_READ, (int fd, void *buf, size_t n, off64_t off, size_t buflen),
     (fd, buf, n, off, buflen), off)

/* ---- positions, syncs, sizes, mappings ------------------------------------------------------ */
#define SEEK_BODY(name)                                                        \
    if (!io_tracking())                                                        \
        return IO_REAL(name)(fd, off, whence);                                 \
    struct io_call c;                                                          \
    io_begin(&c);                                                              \
    off64_t r = IO_REAL(name)(fd, off, whence);                                \
    if (r >= 0) {                                                              \
        int saved = errno;                                                     \
        IO_ENTER();                                                            \
        struct io_desc *d = io_fd_desc(fd);                                    \
        if (d)                                                                 \
            d->pos = r;                                                        \
        IO_LEAVE();                                                            \
        errno = saved;                                                         \
    }                                                                          \
    io_end_fd(&c, HOOKIT_IO_SEEK, #name, fd, r, 0, r >= 0 ? r : IO_NO_POS, 0); \
    return r;

HK_EXPORT HK_NOINSTR off_t LC_WRAPPER(lseek)(int fd, off_t off, int whence)
{
    SEEK_BODY(lseek)
}

HK_EXPORT HK_NOINSTR off64_t LC_WRAPPER(lseek64)(int fd, off64_t off, int whence)
{
    SEEK_BODY(lseek64)
}

#define SIMPLE(ret, name, op, params, args)                                    \
    HK_EXPORT HK_NOINSTR ret LC_WRAPPER(name) params                           \
    {                                                                          \
        if (!io_tracking())                                                    \
            return IO_REAL(name) args;                                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        ret r = IO_REAL(name) args;                                            \
        io_end_fd(&c, op, #name, fd, r, 0, IO_NO_POS, 0);                      \
        return r;                                                              \
    }

SIMPLE(int, fsync, HOOKIT_IO_SYNC, (int fd), (fd))
SIMPLE(int, fdatasync, HOOKIT_IO_SYNC, (int fd), (fd))
SIMPLE(int, ftruncate, HOOKIT_IO_META, (int fd, off_t len), (fd, len))
SIMPLE(int, ftruncate64, HOOKIT_IO_META, (int fd, off64_t len), (fd, len))

/* Only mappings of files are I/O; anonymous memory passes straight on. */
#define MMAP_BODY(name)                                                        \
    if (fd < 0 || (flags & MAP_ANONYMOUS) || !io_tracking())                   \
        return IO_REAL(name)(addr, len, prot, flags, fd, off);                 \
    struct io_call c;                                                          \
    io_begin(&c);                                                              \
    void *r = IO_REAL(name)(addr, len, prot, flags, fd, off);                  \
    io_end_fd(&c, HOOKIT_IO_MMAP, #name, fd, r == MAP_FAILED ? -1 : 0,         \
              r == MAP_FAILED ? 0 : (int64_t)len, off, 0);                     \
    return r;

HK_EXPORT HK_NOINSTR void *LC_WRAPPER(mmap)(void *addr, size_t len, int prot, int flags, int fd,
                                            off_t off)
{
    MMAP_BODY(mmap)
}

HK_EXPORT HK_NOINSTR void *LC_WRAPPER(mmap64)(void *addr, size_t len, int prot, int flags, int fd,
                                              off64_t off)
{
    MMAP_BODY(mmap64)
}
