/*
 * What libhookit's I/O and memory wrappers share (hookit/io_*.c, alloc.c).
 *
 * A wrapper is defined with lc's LC_WRAPPER(name) (lifecycle/real.h): the
 * libc name itself in libhookit.so, __wrap_name in libhookit.a.  The real
 * function is IO_REAL(name): in the dynamic variant a pointer of the table
 * below, resolved once with dlsym(RTLD_NEXT) by hk_io_resolve() (at start,
 * or at the first wrapped call if that comes earlier); in the static
 * variant __real_name from `ld --wrap` (weak: without --wrap the plain libc
 * function is the real one), exactly like lc's REAL().
 *
 * Every wrapper has the same shape:
 *
 *     if (!io_tracking())                 -> the real call, nothing else
 *     struct io_call c; io_begin(&c);     -> timestamp (when collecting)
 *     result = IO_REAL(name)(...);
 *     io_end(&c, ...);                    -> errno saved, bookkeeping under
 *                                            the per-thread guard, event,
 *                                            errno restored
 *
 * The per-thread guard (hk_io_guard) is non-zero while libhookit or the
 * plugin runs: calls they make (a profile written with write(), a plugin's
 * malloc) are passed through uncounted and cannot recurse.
 */
#ifndef HOOKIT_IO_INTERNAL_H
#define HOOKIT_IO_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common/clock.h"
#include "hookit/internal.h"
#include "hookit/io_api.h"
#include "lifecycle/wrapped.h"
#include "lifecycle/real.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Names some headers declare only under _FORTIFY_SOURCE or redirect. */
int __open_2(const char *, int);
int __open64_2(const char *, int);
int __openat_2(int, const char *, int);
int __openat64_2(int, const char *, int);
ssize_t __read_chk(int, void *, size_t, size_t);
ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);
size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);
char *__fgets_chk(char *, size_t, int, FILE *);
int __fprintf_chk(FILE *, int, const char *, ...);
int __vfprintf_chk(FILE *, int, const char *, va_list);
int __printf_chk(int, const char *, ...);
int __vprintf_chk(int, const char *, va_list);
int __isoc99_fscanf(FILE *, const char *, ...);
int __isoc99_vfscanf(FILE *, const char *, va_list);
ssize_t __recv_chk(int, void *, size_t, size_t, int);
ssize_t __recvfrom_chk(int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *);
int fcntl64(int, int, ...);
int __poll_chk(struct pollfd *, nfds_t, int, size_t);
int __ppoll_chk(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *, size_t);
/* The plain (pre-C99) scanf entry points: the headers rename fscanf and
 * vfscanf to __isoc99_*, so they are declared here under other names. */
typedef int hk_fscanf_fn(FILE *, const char *, ...);
typedef int hk_vfscanf_fn(FILE *, const char *, va_list);

#define HK_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- the real functions ---------------------------------------------------- */
#ifdef HOOKIT_STATIC
#define IO_REAL(name) (__real_##name ? __real_##name : name)
#define HK_IO_DECLARE_REAL(name) extern __typeof__(name) __real_##name __attribute__((weak));
HK_IO_FD_WRAPPED(HK_IO_DECLARE_REAL)
HK_IO_STDIO_WRAPPED(HK_IO_DECLARE_REAL)
HK_IO_SOCKET_WRAPPED(HK_IO_DECLARE_REAL)
HK_IO_META_WRAPPED(HK_IO_DECLARE_REAL)
HK_IO_WAIT_WRAPPED(HK_IO_DECLARE_REAL)
/* The wrappers themselves, which only ld --wrap refers to: declared from
 * the real function's type, so each definition is checked against it. */
#define HK_IO_DECLARE_WRAP(name) extern __typeof__(name) __wrap_##name;
HK_IO_WRAPPED(HK_IO_DECLARE_WRAP)
HK_ALLOC_WRAPPED(HK_IO_DECLARE_WRAP)
#else
#define HK_IO_REAL_MEMBER(name) __typeof__(name) *name;
struct hk_io_real_table {
    HK_IO_WRAPPED(HK_IO_REAL_MEMBER)
};
#undef HK_IO_REAL_MEMBER
extern struct hk_io_real_table hk_io_real;
extern volatile int hk_io_resolved;
#define IO_REAL(name) \
    (*(HK_LIKELY(hk_io_resolved) ? hk_io_real.name : (hk_io_resolve(), hk_io_real.name)))
#endif
/* Resolve the real malloc family (dynamic; a no-op when static). */
void hk_alloc_resolve(void);
/* The plugin is started: find its direct entry points HookitAlloc and
 * HookitFree (alloc.c), if it has them. */
void hk_alloc_configure(void);

/* ---- switches ------------------------------------------------------------------ */
/* Set after the plugin started: it asked for I/O (HOOKIT_CAP_IO) or memory
 * (HOOKIT_CAP_ALLOC) events.  Zero: the wrappers only pass through. */
extern volatile int hk_io_want, hk_alloc_want;

/* The wrapper keeps its bookkeeping (file table, offsets) current. */
static inline int io_tracking(void)
{
    return HK_UNLIKELY(hk_io_want) && !hk_io_guard;
}

/* ---- callbacks during a blocking call ----------------------------------------- */
/* Set by io_wait.c from the plugin (HOOKIT_CAP_WAIT): hk_wait_want, and its
 * hookit_plugin.wait_begin or NULL. */
extern volatile int hk_wait_want;
extern uint64_t (*hk_wait_begin_fn)(void);

/* Just before a real call that may block (a wait, or an I/O call): the
 * plugin's token, with which it tells the time instrumented code (a signal
 * handler) ran during the call from the call's own (hookit_wait.token,
 * hookit_io.token).  0 when the plugin wants no wait time. */
static inline uint64_t io_wait_token(void)
{
    uint64_t (*begin)(void) = hk_wait_begin_fn;
    return HK_UNLIKELY(hk_wait_want) && begin ? begin() : 0;
}

/* ---- the clock ------------------------------------------------------------------ */

extern struct hk_clock hk_io_clk;

static inline uint64_t io_clock(void)
{
    return hk_clock_now(&hk_io_clk);
}

/* ---- the file table (io_files.c) ------------------------------------------------- */
/* An open file description as we know it: shared by dup'ed descriptors. */
struct io_desc {
    uint32_t file;              /* file record id, 0 = none */
    uint32_t flags;             /* HOOKIT_IOF_SOCKET, IO_DESC_APPEND */
    int64_t pos;                /* descriptor offset, -1 unknown */
    int64_t spos;               /* stdio stream offset, -1 unknown */
    int refs;                   /* descriptors sharing it */
};
#define IO_DESC_APPEND 0x100u

/* The description of fd, or NULL (created on first sight of an fd opened
 * behind our back, from /proc/self/fd). */
struct io_desc *io_fd_desc(int fd);
/* fd was opened on path (an absolute key, see io_abs_path); returns its
 * new description (NULL when the table is full). */
struct io_desc *io_fd_opened(int fd, const char *key, uint32_t flags);
/* newfd is a duplicate of oldfd (dup, dup2, dup3, F_DUPFD). */
void io_fd_dup(int oldfd, int newfd);
void io_fd_closed(int fd);
/* The record id for key (created when new), 0 if the table is full. */
uint32_t io_file_id(const char *key);
const char *io_file_path(uint32_t id);
/* path as an absolute key: relative paths get the working directory (or
 * dirfd's path) in front, "." and ".." components are folded.  Returns buf. */
const char *io_abs_path(int dirfd, const char *path, char *buf, size_t size);
/* A socket's key from its address: "tcp:1.2.3.4:80", "tcp6:[::1]:80",
 * "udp:...", "unix:/path", "unix:@abstract".  peer: the remote end. */
const char *io_socket_key(int fd, int peer, char *buf, size_t size);
const char *io_addr_key(const struct sockaddr *sa, socklen_t len, int type, char *buf, size_t size);
/* fd's description now belongs to the record of key. */
void io_fd_rekey(int fd, const char *key);

/* ---- one call ----------------------------------------------------------------------- */
struct io_call {
    uint64_t t0;
    int collecting;             /* deliver an event */
    uint32_t token;             /* io_wait_token's, for hookit_io.token */
};

/* The end of an open (io_fd.c): the descriptor gets a description on the
 * path's record.  Shared with stdio (fopen) and sockets. */
void io_end_open(struct io_call *c, const char *func, int fd, int dirfd, const char *path, uint32_t dflags,
                 uint32_t evflags, int64_t result);

static inline void io_begin(struct io_call *c)
{
    c->collecting = hk_collecting_now();
    c->token = c->collecting ? (uint32_t)io_wait_token() : 0;
    c->t0 = c->collecting ? io_clock() : 0;
}

/* Deliver ev (its t0 from c, t1 now) to the plugin: guard held by caller. */
void io_deliver(struct io_call *c, struct hookit_io *ev);

/* The common ending of a wrapper on a descriptor: account result of op on
 * fd (bytes moved when result >= 0 for READ/WRITE), offset: where the access
 * started if known (pread), or IO_AT_POS (the descriptor's position,
 * advanced by the bytes), IO_AT_SPOS (the stream's). */
#define IO_AT_POS  (-2)
#define IO_AT_SPOS (-3)
#define IO_NO_POS  (-1)
void io_end_fd(struct io_call *c, uint32_t op, const char *func, int fd, int64_t result,
               int64_t bytes, int64_t offset, uint32_t flags);

/* Short names for the guard around bookkeeping. */
#define IO_ENTER() (hk_io_guard++)
#define IO_LEAVE() (hk_io_guard--)

#endif
