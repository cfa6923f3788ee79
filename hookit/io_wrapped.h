/*
 * Every libc function that libhookit's I/O and memory wrappers replace: the
 * one list.  The dynamic variant defines a function of each name (it
 * interposes) and finds the real one with dlsym(RTLD_NEXT) at start; the
 * static variant defines __wrap_NAME, and `hookit link` passes
 * -Wl,--wrap=NAME for each name below (tools/cmd_link.c includes this file:
 *
 *     #define X(name) "--wrap=" #name,
 *     static const char *const io_wraps[] = { HK_IO_WRAPPED(X) HK_ALLOC_WRAPPED(X) };
 *
 * ).  Names only, no prototypes, so any file can include it.
 */
#ifndef HOOKIT_IO_WRAPPED_H
#define HOOKIT_IO_WRAPPED_H

/* fd calls (hookit/io_fd.c) */
#define HK_IO_FD_WRAPPED(X) \
    X(open) X(open64) X(openat) X(openat64) X(creat) X(creat64) \
    X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2) \
    X(close) X(dup) X(dup2) X(dup3) X(fcntl) X(fcntl64) \
    X(read) X(write) X(pread) X(pread64) X(pwrite) X(pwrite64) \
    X(readv) X(writev) X(preadv) X(preadv64) X(pwritev) X(pwritev64) \
    X(lseek) X(lseek64) X(fsync) X(fdatasync) X(ftruncate) X(ftruncate64) \
    X(mmap) X(mmap64) X(__read_chk) X(__pread_chk) X(__pread64_chk)

/* stdio (hookit/io_stdio.c) */
#define HK_IO_STDIO_WRAPPED(X) \
    X(fopen) X(fopen64) X(fdopen) X(freopen) X(freopen64) X(fclose) \
    X(fread) X(fwrite) X(fgets) X(fputs) X(fgetc) X(getc) X(fputc) X(putc) \
    X(getline) X(getdelim) X(fprintf) X(vfprintf) \
    X(fscanf) X(vfscanf) X(__isoc99_fscanf) X(__isoc99_vfscanf) \
    X(fseek) X(fseeko) X(fseeko64) X(ftell) X(ftello) X(ftello64) X(rewind) \
    X(fflush) X(ungetc) \
    X(__fread_chk) X(__fgets_chk) X(__fprintf_chk) X(__vfprintf_chk) \
    X(printf) X(vprintf) X(puts) X(putchar) X(__printf_chk) X(__vprintf_chk)

/* sockets (hookit/io_socket.c) */
#define HK_IO_SOCKET_WRAPPED(X) \
    X(socket) X(accept) X(accept4) X(connect) \
    X(send) X(sendto) X(sendmsg) X(recv) X(recvfrom) X(recvmsg) \
    X(__recv_chk) X(__recvfrom_chk)

/* metadata (hookit/io_meta.c) */
#define HK_IO_META_WRAPPED(X) \
    X(stat) X(stat64) X(lstat) X(lstat64) X(fstat) X(fstat64) \
    X(fstatat) X(fstatat64) X(unlink) X(unlinkat) X(rename) X(renameat)

/* blocking calls that are not I/O: time spent waiting (hookit/io_wait.c) */
#define HK_IO_WAIT_WRAPPED(X) \
    X(pthread_cond_wait) X(pthread_cond_timedwait) X(pthread_cond_clockwait) \
    X(pthread_mutex_lock) X(pthread_mutex_timedlock) X(pthread_mutex_clocklock) \
    X(pthread_rwlock_rdlock) X(pthread_rwlock_wrlock) \
    X(pthread_rwlock_timedrdlock) X(pthread_rwlock_timedwrlock) \
    X(sem_wait) X(sem_timedwait) X(sem_clockwait) \
    X(nanosleep) X(clock_nanosleep) X(usleep) X(sleep) \
    X(poll) X(ppoll) X(__poll_chk) X(__ppoll_chk) X(select) X(pselect) \
    X(epoll_wait) X(epoll_pwait) X(epoll_pwait2) \
    X(wait) X(waitpid) X(waitid) X(wait3) X(wait4) \
    X(pthread_join) X(pthread_timedjoin_np) X(pthread_clockjoin_np)

#define HK_IO_WRAPPED(X) \
    HK_IO_FD_WRAPPED(X) HK_IO_STDIO_WRAPPED(X) HK_IO_SOCKET_WRAPPED(X) HK_IO_META_WRAPPED(X) \
    HK_IO_WAIT_WRAPPED(X)

/* the malloc family (hookit/alloc.c) */
#define HK_ALLOC_WRAPPED(X) \
    X(malloc) X(calloc) X(realloc) X(free) X(posix_memalign) X(aligned_alloc) \
    X(memalign) X(valloc) X(reallocarray)

#endif
