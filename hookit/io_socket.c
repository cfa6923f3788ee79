/* Wrappers of the socket calls.  A socket's record is keyed by address:
 * connect by the remote end ("tcp:10.0.0.1:80"), accept by the local
 * address the client reached (so every connection to one server port
 * shares a record); anything else (socketpair, an unconnected socket) by
 * the kernel's name, "socket:[inode]".  Non-blocking calls, EAGAIN, EINTR
 * and partial transfers come back exactly as the real call made them. */
#include "hookit/io_internal.h"

#include <fcntl.h>

HK_EXPORT HK_NOINSTR int LC_WRAPPER(socket)(int domain, int type, int protocol)
{
    if (!io_tracking())
        return IO_REAL(socket)(domain, type, protocol);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(socket)(domain, type, protocol);
    if (r >= 0) {
        IO_ENTER();
        io_fd_closed(r);            /* forget a stale entry: rediscovered below */
        IO_LEAVE();
    }
    io_end_fd(&c, HOOKIT_IO_OPEN, "socket", r, r, 0, IO_NO_POS, HOOKIT_IOF_SOCKET);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(connect)(int fd, const struct sockaddr *addr, socklen_t len)
{
    if (!io_tracking())
        return IO_REAL(connect)(fd, addr, len);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(connect)(fd, addr, len);
    int saved = errno;
    if (r == 0 || saved == EINPROGRESS || saved == EINTR) {
        IO_ENTER();
        char buf[256];
        int type = 0;
        socklen_t tlen = sizeof type;
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen);
        io_fd_rekey(fd, io_addr_key(addr, len, type, buf, sizeof buf));
        IO_LEAVE();
        errno = saved;
    }
    io_end_fd(&c, HOOKIT_IO_OPEN, "connect", fd, r, 0, IO_NO_POS, HOOKIT_IOF_SOCKET);
    return r;
}

/* The accepted socket gets the record of the local address it was reached at. */
HK_NOINSTR static void end_accept(struct io_call *c, const char *func, int lfd, int r)
{
    if (r >= 0) {
        int saved = errno;
        IO_ENTER();
        char buf[256];
        const char *key = io_socket_key(r, 0, buf, sizeof buf);
        if (!key) {
            io_fd_closed(r);        /* rediscovered as socket:[inode] */
        } else {
            io_fd_opened(r, key, HOOKIT_IOF_SOCKET);
        }
        IO_LEAVE();
        errno = saved;
    }
    io_end_fd(c, HOOKIT_IO_OPEN, func, r >= 0 ? r : lfd, r, 0, IO_NO_POS, HOOKIT_IOF_SOCKET);
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(accept)(int fd, struct sockaddr *addr, socklen_t *len)
{
    if (!io_tracking())
        return IO_REAL(accept)(fd, addr, len);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(accept)(fd, addr, len);
    end_accept(&c, "accept", fd, r);
    return r;
}

HK_EXPORT HK_NOINSTR int LC_WRAPPER(accept4)(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    if (!io_tracking())
        return IO_REAL(accept4)(fd, addr, len, flags);
    struct io_call c;
    io_begin(&c);
    int r = IO_REAL(accept4)(fd, addr, len, flags);
    end_accept(&c, "accept4", fd, r);
    return r;
}

#define SOCK_XFER(name, op, params, args)                                      \
    HK_EXPORT HK_NOINSTR ssize_t LC_WRAPPER(name) params                       \
    {                                                                          \
        if (!io_tracking())                                                    \
            return IO_REAL(name) args;                                         \
        struct io_call c;                                                      \
        io_begin(&c);                                                          \
        ssize_t r = IO_REAL(name) args;                                        \
        io_end_fd(&c, op, #name, fd, r, r, IO_AT_POS, HOOKIT_IOF_SOCKET);      \
        return r;                                                              \
    }

SOCK_XFER(send, HOOKIT_IO_WRITE, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
SOCK_XFER(sendto, HOOKIT_IO_WRITE,
          (int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen),
          (fd, buf, n, flags, to, tolen))
SOCK_XFER(sendmsg, HOOKIT_IO_WRITE, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
SOCK_XFER(recv, HOOKIT_IO_READ, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
SOCK_XFER(recvfrom, HOOKIT_IO_READ,
          (int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fromlen),
          (fd, buf, n, flags, from, fromlen))
SOCK_XFER(recvmsg, HOOKIT_IO_READ, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))
SOCK_XFER(__recv_chk, HOOKIT_IO_READ, (int fd, void *buf, size_t n, size_t buflen, int flags),
          (fd, buf, n, buflen, flags))
SOCK_XFER(__recvfrom_chk, HOOKIT_IO_READ,
          (int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *from,
           socklen_t *fromlen),
          (fd, buf, n, buflen, flags, from, fromlen))
