/* The per-process file table: one record per path (or socket address), and
 * for each descriptor the open file description it refers to, so that dup'ed
 * descriptors, fileno() and fdopen() share a record and an offset.
 *
 * Everything lives in private anonymous mappings reserved once (pages are
 * touched only as they are used), never in malloc'ed memory: a wrapper may
 * run inside an allocator (jemalloc's start-up opening a file) and must not
 * call back into it.  Changes are made under one spinlock taken only by
 * the calls that change the table (open, close, dup, first sight of a
 * descriptor), always with the per-thread guard held, so a signal handler
 * doing I/O in the same thread passes through instead of spinning.  Reads
 * and writes look their descriptor up without a lock. */
#include "hookit/io_internal.h"
#include "common/spin.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#define MAX_FDS     (1u << 20)
#define MAX_FILES   (1u << 20)
#define MAX_DESCS   (1u << 20)
#define HASH_SIZE   (1u << 21)
#define POOL_BYTES  (256ull << 20)

struct file_rec {
    const char *path;
    uint32_t hash;
    uint32_t next;              /* next record id in the bucket */
};

static struct io_desc **fds;            /* fd -> description */
static struct io_desc *descs;           /* the descriptions; free ones linked by pos */
static uint32_t ndescs, free_desc;      /* free_desc: index + 1 */
static struct file_rec *files;          /* id -> record (index 0 unused) */
static volatile uint32_t nfiles;
static uint32_t *buckets;               /* hash -> first record id */
static char *pool;
static uint64_t pool_used;
static int table_ok = -1;               /* -1 not tried, 0 no memory, 1 ready */
static volatile int lock;

HK_NOINSTR static void *reserve(size_t bytes)
{
    void *p = IO_REAL(mmap)(NULL, bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* In a forked child only the forking thread lives: a lock another thread
 * held is free. */
HK_NOINSTR static void after_fork_child(void)
{
    lock = 0;
}

/* Under the lock. */
HK_NOINSTR static int table_ready(void)
{
    if (table_ok >= 0)
        return table_ok;
    fds = reserve(MAX_FDS * sizeof *fds);
    descs = reserve(MAX_DESCS * sizeof *descs);
    files = reserve(MAX_FILES * sizeof *files);
    buckets = reserve(HASH_SIZE * sizeof *buckets);
    pool = reserve(POOL_BYTES);
    table_ok = fds && descs && files && buckets && pool;
    if (table_ok)
        pthread_atfork(NULL, NULL, after_fork_child);
    nfiles = 1;
    return table_ok;
}

HK_NOINSTR static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Under the lock. */
HK_NOINSTR static uint32_t file_id_locked(const char *key)
{
    uint32_t h = hash_str(key);
    uint32_t *head = &buckets[h & (HASH_SIZE - 1)];
    for (uint32_t id = *head; id; id = files[id].next)
        if (files[id].hash == h && !strcmp(files[id].path, key))
            return id;
    size_t len = strlen(key) + 1;
    if (nfiles >= MAX_FILES || pool_used + len > POOL_BYTES)
        return 0;
    char *copy = pool + pool_used;
    memcpy(copy, key, len);
    pool_used += (len + 7) & ~7ull;
    uint32_t id = nfiles;
    files[id] = (struct file_rec){ .path = copy, .hash = h, .next = *head };
    *head = id;
    __atomic_store_n(&nfiles, id + 1, __ATOMIC_RELEASE);
    return id;
}

HK_NOINSTR uint32_t io_file_id(const char *key)
{
    hk_spin_lock(&lock);
    uint32_t id = table_ready() ? file_id_locked(key) : 0;
    hk_spin_unlock(&lock);
    return id;
}

HK_NOINSTR const char *io_file_path(uint32_t id)
{
    if (!id || id >= __atomic_load_n(&nfiles, __ATOMIC_ACQUIRE))
        return NULL;
    return files[id].path;
}

/* ---- descriptions ------------------------------------------------------------------ */
HK_NOINSTR static struct io_desc *desc_new(void)
{
    struct io_desc *d;
    if (free_desc) {
        d = &descs[free_desc - 1];
        free_desc = (uint32_t)d->pos;
    } else if (ndescs < MAX_DESCS) {
        d = &descs[ndescs++];
    } else {
        return NULL;
    }
    memset(d, 0, sizeof *d);
    d->pos = d->spos = -1;
    d->refs = 1;
    return d;
}

HK_NOINSTR static void desc_release(struct io_desc *d)
{
    if (--d->refs > 0)
        return;
    d->pos = free_desc;
    free_desc = (uint32_t)(d - descs) + 1;
}

/* Under the lock: fd now refers to d (or to nothing). */
HK_NOINSTR static void fd_assign(int fd, struct io_desc *d)
{
    struct io_desc *old = fds[fd];
    fds[fd] = d;
    if (old)
        desc_release(old);
}

HK_NOINSTR struct io_desc *io_fd_opened(int fd, const char *key, uint32_t flags)
{
    if (fd < 0 || (unsigned)fd >= MAX_FDS)
        return NULL;
    hk_spin_lock(&lock);
    struct io_desc *d = NULL;
    if (table_ready() && (d = desc_new())) {
        d->file = key ? file_id_locked(key) : 0;
        d->flags = flags;
        if (!(flags & HOOKIT_IOF_SOCKET))
            d->pos = (flags & IO_DESC_APPEND) ? -1 : 0;
        d->spos = d->pos;
        fd_assign(fd, d);
    }
    hk_spin_unlock(&lock);
    return d;
}

HK_NOINSTR void io_fd_dup(int oldfd, int newfd)
{
    if (oldfd < 0 || newfd < 0 || (unsigned)oldfd >= MAX_FDS || (unsigned)newfd >= MAX_FDS ||
        oldfd == newfd)
        return;
    struct io_desc *d = io_fd_desc(oldfd);
    hk_spin_lock(&lock);
    if (table_ok == 1) {
        if (d)
            d->refs++;
        fd_assign(newfd, d);
    }
    hk_spin_unlock(&lock);
}

HK_NOINSTR void io_fd_closed(int fd)
{
    if (fd < 0 || (unsigned)fd >= MAX_FDS)
        return;
    hk_spin_lock(&lock);
    if (table_ok == 1)
        fd_assign(fd, NULL);
    hk_spin_unlock(&lock);
}

/* First sight of a descriptor opened behind our back (inherited, the
 * standard streams, opened by a library with a raw system call): its key
 * is what the kernel says it is. */
HK_NOINSTR static struct io_desc *discover(int fd)
{
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return NULL;
    target[n] = 0;
    uint32_t flags = 0;
    int fl = IO_REAL(fcntl)(fd, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND))
        flags |= IO_DESC_APPEND;
    if (!strncmp(target, "socket:", 7))
        flags |= HOOKIT_IOF_SOCKET;
    struct io_desc *d = io_fd_opened(fd, target, flags);
    if (d && target[0] == '/') {
        off_t pos = IO_REAL(lseek)(fd, 0, SEEK_CUR);
        d->pos = d->spos = pos;
    } else if (d) {
        d->pos = d->spos = -1;
    }
    return d;
}

HK_NOINSTR struct io_desc *io_fd_desc(int fd)
{
    if (fd < 0 || (unsigned)fd >= MAX_FDS)
        return NULL;
    if (HK_LIKELY(table_ok == 1)) {
        struct io_desc *d = __atomic_load_n(&fds[fd], __ATOMIC_ACQUIRE);
        if (HK_LIKELY(d))
            return d;
    }
    int saved = errno;
    struct io_desc *d = discover(fd);
    errno = saved;
    return d;
}

/* ---- keys ------------------------------------------------------------------------------ */
/* Append path's components to buf (holding an absolute path of len bytes),
 * folding "." and "..". */
HK_NOINSTR static size_t append_components(char *buf, size_t len, size_t size, const char *path)
{
    while (*path) {
        while (*path == '/')
            path++;
        const char *end = strchrnul(path, '/');
        size_t n = (size_t)(end - path);
        if (n == 0)
            break;
        if (n == 1 && path[0] == '.') {
            /* nothing */
        } else if (n == 2 && path[0] == '.' && path[1] == '.') {
            while (len > 1 && buf[len - 1] != '/')
                len--;
            if (len > 1)
                len--;
        } else if (len + n + 2 < size) {
            if (len > 1)
                buf[len++] = '/';
            memcpy(buf + len, path, n);
            len += n;
        }
        buf[len] = 0;
        path = end;
    }
    return len;
}

HK_NOINSTR const char *io_abs_path(int dirfd, const char *path, char *buf, size_t size)
{
    size_t len = 1;
    buf[0] = '/';
    buf[1] = 0;
    if (!path)
        return NULL;
    if (path[0] != '/') {
        char base[4096];
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof base))
                return path;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t n = readlink(link, base, sizeof base - 1);
            if (n <= 0)
                return path;
            base[n] = 0;
        }
        len = append_components(buf, len, size, base);
    }
    append_components(buf, len, size, path);
    return buf;
}

HK_NOINSTR const char *io_addr_key(const struct sockaddr *sa, socklen_t len, int type,
                                   char *buf, size_t size)
{
    const char *proto = type == SOCK_DGRAM ? "udp" : "tcp";
    char addr[INET6_ADDRSTRLEN];
    if (!sa || len < sizeof(sa_family_t))
        return NULL;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, addr, sizeof addr);
        snprintf(buf, size, "%s:%s:%u", proto, addr, ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof addr);
        snprintf(buf, size, "%s6:[%s]:%u", proto, addr, ntohs(in6->sin6_port));
    } else if (sa->sa_family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
        size_t n = len > offsetof(struct sockaddr_un, sun_path) ?
                   len - offsetof(struct sockaddr_un, sun_path) : 0;
        if (n > sizeof un->sun_path)
            n = sizeof un->sun_path;
        if (n == 0 || (un->sun_path[0] == 0 && n == 1))
            return NULL;                /* unnamed: keep the socket:[inode] key */
        if (un->sun_path[0] == 0)
            snprintf(buf, size, "unix:@%.*s", (int)(n - 1), un->sun_path + 1);
        else
            snprintf(buf, size, "unix:%.*s", (int)strnlen(un->sun_path, n), un->sun_path);
    } else {
        return NULL;
    }
    return buf;
}

HK_NOINSTR const char *io_socket_key(int fd, int peer, char *buf, size_t size)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int type = 0;
    socklen_t tlen = sizeof type;
    int rc = peer ? getpeername(fd, (struct sockaddr *)&ss, &len)
                  : getsockname(fd, (struct sockaddr *)&ss, &len);
    if (rc != 0)
        return NULL;
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen);
    return io_addr_key((struct sockaddr *)&ss, len, type, buf, size);
}

HK_NOINSTR void io_fd_rekey(int fd, const char *key)
{
    struct io_desc *d = io_fd_desc(fd);
    uint32_t id = key ? io_file_id(key) : 0;
    if (d && id)
        d->file = id;
}
