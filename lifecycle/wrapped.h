/*
 * Every function the static variant (libhookit.a) wraps with ld --wrap:
 * the one list.  A wrapper is __wrap_NAME there (LC_WRAPPER, lifecycle/
 * real.h), defined where each group says; `hookit link` (tools/cmd_link.c)
 * passes -Wl,--wrap=NAME for every name below, and for a group "forced in"
 * also -Wl,--undefined=__wrap_NAME and -Wl,--undefined=NAME, so that the
 * wrapper is in the link even if only a library the driver appends calls
 * NAME, and libc's NAME is extracted to be __real_NAME.  A group "where
 * called" is wrapped only if the program refers to it (forcing MPI_Init in
 * would need an MPI library, __cxa_begin_catch and __gxx_personality_v0 a C++
 * one).
 *
 * The dynamic variant (libhookit.so) defines the functions under their own
 * names instead; the I/O and control-flow groups are also the lists of real
 * functions their wrappers find.  Names only, no prototypes: any file can
 * include it.  tests/lifecycle/test_tools.py checks that libhookit.a
 * defines a wrapper for every name and for no other.
 */
#ifndef HOOKIT_LIFECYCLE_WRAPPED_H
#define HOOKIT_LIFECYCLE_WRAPPED_H

/* ---- the lifecycle layer (lifecycle/) ---------------------------------------------- */

/* main, entered through the layer (main.c): where called. */
#define LC_WRAPPED_MAIN(X) X(main)

/* Process and thread control (exit.c, fork.c, exec.c, pthread.c, signal.c,
 * signal_wait.c, user.c): forced in.  pselect, ppoll, __ppoll_chk,
 * epoll_pwait and epoll_pwait2, whose masks signal_wait.c filters too, are
 * exported by libhookit's wait timing (HK_IO_WAIT_WRAPPED below), which
 * calls the layer's lc_pselect, lc_ppoll, lc_epoll_pwait and
 * lc_epoll_pwait2 as their real functions. */
#define LC_WRAPPED_PROCESS(X) \
    X(exit) X(_exit) X(_Exit) X(quick_exit) \
    X(fork) X(vfork) X(daemon) \
    X(execve) X(execv) X(execvp) X(execvpe) X(execl) X(execlp) X(execle) X(fexecve) \
    X(posix_spawn) X(posix_spawnp) X(system) \
    X(pthread_create) X(pthread_exit) \
    X(sigaction) X(signal) X(bsd_signal) X(ssignal) X(sysv_signal) X(__sysv_signal) X(sigset) \
    X(sigignore) X(siginterrupt) X(sigprocmask) X(pthread_sigmask) \
    X(sigwait) X(sigwaitinfo) X(sigtimedwait) X(sigsuspend) \
    X(setuid) X(seteuid) X(setreuid) X(setresuid)

/* dlopen.c: forced in, and only when the program links dynamically
 * (static dlopen is libc's own special case, and linking it in warns). */
#define LC_WRAPPED_DYNAMIC(X) X(dlopen) X(dlclose)

/* MPI (mpi.c): C and profiling names, the Fortran spellings; where called. */
#define LC_WRAPPED_MPI(X) \
    X(MPI_Init) X(MPI_Init_thread) X(MPI_Finalize) X(MPI_Comm_rank) \
    X(PMPI_Init) X(PMPI_Init_thread) X(PMPI_Finalize) X(PMPI_Comm_rank) \
    X(mpi_init) X(mpi_init_) X(mpi_init__) X(MPI_INIT) \
    X(mpi_init_thread) X(mpi_init_thread_) X(mpi_init_thread__) X(MPI_INIT_THREAD) \
    X(mpi_finalize) X(mpi_finalize_) X(mpi_finalize__) X(MPI_FINALIZE) \
    X(mpi_comm_rank) X(mpi_comm_rank_) X(mpi_comm_rank__) X(MPI_COMM_RANK)

/* ---- the event sources libhookit adds on the layer (hookit/) ----------------------- */

/* I/O (hookit/io_*.c): forced in.  fd calls: */
#define HK_IO_FD_WRAPPED(X) \
    X(open) X(open64) X(openat) X(openat64) X(creat) X(creat64) \
    X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2) \
    X(close) X(dup) X(dup2) X(dup3) X(fcntl) X(fcntl64) \
    X(read) X(write) X(pread) X(pread64) X(pwrite) X(pwrite64) \
    X(readv) X(writev) X(preadv) X(preadv64) X(pwritev) X(pwritev64) \
    X(lseek) X(lseek64) X(fsync) X(fdatasync) X(ftruncate) X(ftruncate64) \
    X(mmap) X(mmap64) X(__read_chk) X(__pread_chk) X(__pread64_chk)

/* stdio */
#define HK_IO_STDIO_WRAPPED(X) \
    X(fopen) X(fopen64) X(fdopen) X(freopen) X(freopen64) X(fclose) \
    X(fread) X(fwrite) X(fgets) X(fputs) X(fgetc) X(getc) X(fputc) X(putc) \
    X(getline) X(getdelim) X(fprintf) X(vfprintf) \
    X(fscanf) X(vfscanf) X(__isoc99_fscanf) X(__isoc99_vfscanf) \
    X(fseek) X(fseeko) X(fseeko64) X(ftell) X(ftello) X(ftello64) X(rewind) \
    X(fflush) X(ungetc) \
    X(__fread_chk) X(__fgets_chk) X(__fprintf_chk) X(__vfprintf_chk) \
    X(printf) X(vprintf) X(puts) X(putchar) X(__printf_chk) X(__vprintf_chk)

/* sockets */
#define HK_IO_SOCKET_WRAPPED(X) \
    X(socket) X(accept) X(accept4) X(connect) \
    X(send) X(sendto) X(sendmsg) X(recv) X(recvfrom) X(recvmsg) \
    X(__recv_chk) X(__recvfrom_chk)

/* metadata */
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

/* The malloc family (hookit/alloc.c): forced in. */
#define HK_ALLOC_WRAPPED(X) \
    X(malloc) X(calloc) X(realloc) X(free) X(posix_memalign) X(aligned_alloc) \
    X(memalign) X(valloc) X(reallocarray)

/* Control flow that leaves frames without their exit hooks (hookit/
 * flow_*.c, docs/exactness.md): where called. */
/* (clang-format would move this list's layout with every name) */
/* clang-format off */
#define HK_FLOW_WRAPPED(X) \
    X(setjmp) X(_setjmp) X(__sigsetjmp) X(getcontext) X(longjmp) X(_longjmp) \
    X(siglongjmp) X(__longjmp_chk) X(__cxa_begin_catch) X(__gxx_personality_v0) \
    X(setcontext) X(swapcontext) X(makecontext)
/* clang-format on */

#endif
