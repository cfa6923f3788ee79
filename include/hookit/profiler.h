/*
 * hookit profiler plugin ABI.
 *
 * A profiler plugin is a shared object that libhookit loads at start-up
 * (HOOKIT_PROFILER=name-or-path, default libjprof.so).  libhookit owns the
 * compiler hooks (__cyg_profile_func_enter/exit) and the process lifecycle;
 * the plugin owns the data.  The plugin exports, with C linkage:
 *
 *   int  HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin);
 *        Called once, before any other entry point.  Fill in *plugin and
 *        return 0 to accept, non-zero to refuse (libhookit then runs the
 *        program unprofiled).  plugin->abi_version must be HOOKIT_ABI_VERSION.
 *
 *   void HookitEvent(const struct hookit_event *event);
 *        Every event: function entry/exit (unless fast entry points were
 *        given) and the lifecycle events listed in enum hookit_event_type.
 *
 *   void HookitFinish(int how);
 *        Called once at process end (how is a HOOKIT_END_* value), from the
 *        thread that ends the process, after every thread's THREAD_END.
 *
 * and, so that libhookit can check compatibility before running any of the
 * plugin's code, the data symbol
 *
 *   HOOKIT_PLUGIN_ABI;   (expands to: const uint32_t HookitAbiVersion = HOOKIT_ABI_VERSION)
 *
 * Optionally plugin->enter / plugin->exit: direct entry points that libhookit
 * calls instead of HookitEvent for function entry and exit (the hot path).
 * They must not take locks, allocate, or call into libc (except a clock),
 * and must be marked no_instrument_function.
 *
 * The switch: host->collecting points to libhookit's on/off flag.  While it
 * is zero, libhookit delivers no ENTER/EXIT events.  The plugin may store to
 * it (hookit_start()/hookit_stop() and `hookit ctl` do the same).
 *
 * Plugins must be built without -finstrument-functions.
 *
 * I/O and memory events (added without an ABI bump: new enum values, new
 * fields at the end of the structures; check host->size before using the
 * new host fields).  A plugin that sets HOOKIT_CAP_IO receives
 * HOOKIT_EV_IO after every completed call of libhookit's I/O wrappers
 * (open, read, fwrite, send, stat, ... see docs/io.md) with event->io
 * filled in; HOOKIT_CAP_ALLOC gives HOOKIT_EV_ALLOC / HOOKIT_EV_FREE for
 * the malloc family with event->mem.  Both are delivered only while
 * collection is on, in the thread that made the call, never for calls made
 * by libhookit or the plugin itself (a per-thread guard: anything the
 * plugin does inside HookitEvent/HookitFinish, write() or malloc()
 * included, is passed through uncounted).  Without either capability the
 * wrappers are pure pass-through.  Timestamps (hookit_io.t0/t1) are in
 * host->io_clock units: read the same clock with host->io_now(), convert
 * with host->io_ticks_per_ns().  An ALLOC event must not allocate through
 * the malloc family in a way that can block (the guard makes it safe to
 * call malloc, which then goes straight to the real allocator).
 *
 * Optional direct entry points for the malloc family (the hot path of
 * HOOKIT_CAP_ALLOC): a plugin that exports both
 *
 *   void HookitAlloc(void *ptr, uint64_t size, void *old_ptr);
 *   void HookitFree(void *ptr);
 *
 * gets these calls instead of HOOKIT_EV_ALLOC / HOOKIT_EV_FREE events, with
 * the same arguments and rules as hookit_mem (ALLOC after the real call,
 * only for a block that was returned; FREE before the real release; old_ptr
 * set by realloc/reallocarray), with the guard held and only while
 * collection is on.  Unlike HookitEvent they are called without errno
 * being saved: they must leave errno as they found it.
 */
#ifndef HOOKIT_PROFILER_H
#define HOOKIT_PROFILER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structures below. */
#define HOOKIT_ABI_VERSION 1

enum hookit_event_type {
    HOOKIT_EV_ENTER = 1,    /* fn, call_site */
    HOOKIT_EV_EXIT,         /* fn, call_site */
    HOOKIT_EV_THREAD_START, /* in the new thread */
    HOOKIT_EV_THREAD_END,   /* in the ending thread */
    HOOKIT_EV_FORK_PREPARE, /* in the parent, before fork */
    HOOKIT_EV_FORK_PARENT,  /* in the parent, after fork */
    HOOKIT_EV_FORK_CHILD,   /* in the child, after fork (only this thread survives) */
    HOOKIT_EV_EXEC,         /* before an exec replaces the image: write now */
    HOOKIT_EV_EXEC_FAILED,  /* the exec returned: collection resumes */
    HOOKIT_EV_DLOPEN,       /* path (may be NULL), handle */
    HOOKIT_EV_DLCLOSE,      /* handle, after the library was closed */
    HOOKIT_EV_FLUSH,        /* write a profile now and keep collecting */
    HOOKIT_EV_RESET,        /* discard everything collected so far */
    HOOKIT_EV_ZEROBASE,     /* zero the numbers, keep the trees */
    HOOKIT_EV_MPI_RANK,     /* rank, size known (MPI_Init / MPI_Comm_rank) */
    HOOKIT_EV_SIGNAL_DEATH, /* signo: the process is about to die by a signal */
    HOOKIT_EV_CONTROL,      /* *plugin->attention became non-zero while collection was off */
    HOOKIT_EV_IO,           /* an I/O call completed: io (HOOKIT_CAP_IO) */
    HOOKIT_EV_ALLOC,        /* malloc family: mem (HOOKIT_CAP_ALLOC) */
    HOOKIT_EV_FREE,         /* free: mem (HOOKIT_CAP_ALLOC) */
    HOOKIT_EV_MPI_ENTER,    /* an MPI call starts: mpi (HOOKIT_CAP_MPI) */
    HOOKIT_EV_MPI_EXIT,     /* the same MPI call returned: mpi (HOOKIT_CAP_MPI) */
    HOOKIT_EV_PRE_DLCLOSE,  /* handle, before dlclose: the library is still mapped */
    HOOKIT_EV_EXITING,      /* exit() began (HOOKIT_CAP_LATE_EXIT): see below */
    HOOKIT_EV_WAIT,         /* a blocking call returned: wait (HOOKIT_CAP_WAIT) */
    HOOKIT_EV_SET_USER,     /* uid: the effective user is about to change (setuid, seteuid,
                                 * setreuid, setresuid), the old rights still held */
    /* An MPI job's start and end, in the thread that called MPI_Init(_thread)
     * or MPI_Finalize (C or Fortran), delivered whether collection is on or
     * not, with libhookit's guard held (the plugin may call MPI itself,
     * through the PMPI_ names: docs/mpi.md, "One profile per job"):
     * INITIALIZED once the real MPI_Init returned, FINALIZING when
     * MPI_Finalize was called (MPI still works), FINALIZED once the real
     * MPI_Finalize returned. */
    HOOKIT_EV_MPI_INITIALIZED,
    HOOKIT_EV_MPI_FINALIZING,
    HOOKIT_EV_MPI_FINALIZED,
};

/* What an I/O call did (hookit_io.op). */
enum hookit_io_op {
    HOOKIT_IO_OPEN = 1,         /* open*, creat*, fopen*, fdopen, freopen, socket, accept, connect */
    HOOKIT_IO_CLOSE,            /* close, fclose */
    HOOKIT_IO_READ,             /* read, pread, readv, fread, fgets, fgetc, getline, fscanf, recv* */
    HOOKIT_IO_WRITE,            /* write, pwrite, writev, fwrite, fputs, fputc, fprintf, send* */
    HOOKIT_IO_SEEK,             /* lseek, fseek, fseeko, rewind (offset: where it landed) */
    HOOKIT_IO_SYNC,             /* fsync, fdatasync, fflush */
    HOOKIT_IO_META,             /* stat family, unlink, rename, ftruncate, ftell, ungetc, fcntl */
    HOOKIT_IO_DUP,              /* dup, dup2, dup3, fcntl F_DUPFD*: fd is the new descriptor */
    HOOKIT_IO_MMAP,             /* mmap of a file: bytes = length, offset = file offset */
};

/* hookit_io.flags */
#define HOOKIT_IOF_STDIO  0x1u  /* through a FILE* (fread, fprintf, ...) */
#define HOOKIT_IOF_SOCKET 0x2u  /* on a socket */
#define HOOKIT_IOF_FAILED 0x4u  /* the call failed (err holds errno) */

/* A completed I/O call (HOOKIT_EV_IO). */
struct hookit_io {
    uint32_t op;                /* enum hookit_io_op */
    uint32_t flags;             /* HOOKIT_IOF_* */
    const char *func;           /* the wrapped function: "read", "fwrite", ... */
    int32_t fd;                 /* descriptor (the stream's for stdio), -1 if none */
    uint32_t file;              /* file record id (1, 2, ...), 0 if none: a record per
                                 * path; dup, fileno, fdopen share it; sockets are
                                 * keyed by address ("tcp:10.0.0.1:80", "unix:/run/x") */
    const char *path;           /* the record's key, or the path argument of a call
                                 * without record; NULL if neither (valid during the call) */
    int64_t result;             /* the return value (pointers: 0 = NULL, 1 = non-NULL) */
    int32_t err;                /* errno after a failed call, else 0 */
    uint32_t token;             /* what plugin->wait_begin returned before the call (its low
                                 * 32 bits; with HOOKIT_CAP_WAIT), 0 without one: as
                                 * hookit_wait.token, so signal-handler time during
                                 * the call can be told from the call's (was reserved, 0) */
    uint64_t bytes;             /* bytes read or written (mmap: length) */
    int64_t offset;             /* file offset where the access started, -1 unknown */
    uint64_t t0, t1;            /* before and after the real call, host->io_clock units */
};

/* An allocation or a release (HOOKIT_EV_ALLOC, HOOKIT_EV_FREE). */
struct hookit_mem {
    const char *func;           /* "malloc", "calloc", "realloc", "free", ... */
    void *ptr;                  /* ALLOC: the new block (never NULL); FREE: the released block */
    uint64_t size;              /* ALLOC: bytes asked for */
    void *old_ptr;              /* ALLOC by realloc/reallocarray: the block it replaced, or NULL */
};
/* realloc(p, n) is a FREE of p (func "realloc", delivered before the real
 * call, since the address may be reused at once) and, when it returns a
 * block, an ALLOC of n bytes with old_ptr = p.  FREE never carries a size:
 * a plugin that wants bytes freed remembers the sizes it saw. */

/* An MPI call seen by libhookit's PMPI wrappers (HOOKIT_EV_MPI_ENTER and
 * _EXIT, docs/mpi.md), in the thread that made it.  ENTER comes before the
 * real call, EXIT after it with the same id; calls made from inside an MPI
 * call (a Fortran binding calling the C one) are not reported.  Like the I/O
 * events, they come only while collection is on (an EXIT always follows an
 * ENTER that was delivered), with libhookit's per-thread guard held. */
struct hookit_mpi {
    uint32_t id;                /* small integer per MPI function and binding, stable
                                 * for the process's life (cache per-id data on it) */
    uint32_t kind;              /* HOOKIT_MPI_* */
    const char *func;           /* "MPI_Send", "MPI_Allreduce", ... (the C name also
                                 * for a Fortran call) */
    const char *module;         /* base name of the library with the real function
                                 * ("libmpi.so.40"), "" if unknown */
    uint64_t bytes;             /* EXIT: bytes of the call's data on this rank, 0 if none */
    int32_t fortran;            /* 1 when called through a Fortran binding */
    int32_t result;             /* EXIT: the call's return value (ierr for Fortran) */
};

/* hookit_mpi.kind */
enum hookit_mpi_kind {
    HOOKIT_MPI_P2P = 1,         /* send and receive, blocking or not, probe */
    HOOKIT_MPI_COLL,            /* collectives, blocking or not */
    HOOKIT_MPI_WAIT,            /* wait and test */
    HOOKIT_MPI_IO,              /* MPI-IO (MPI_File_*) */
    HOOKIT_MPI_RMA,             /* one-sided */
    HOOKIT_MPI_ENV,             /* MPI_Init, MPI_Init_thread, MPI_Finalize */
};

/* A blocking call that is not I/O (HOOKIT_EV_WAIT, docs/io.md "Wait time"):
 * condition variables, contended mutexes and rwlocks, semaphores, sleeps,
 * poll/select/epoll, wait/waitpid, pthread_join.  Delivered after the real
 * call returned, in the thread that made it, with the guard held, only for
 * calls that could block (a mutex taken at the first try, poll with a zero
 * timeout and waitpid(WNOHANG) are not reported).  A call left by a
 * longjmp or a thread's cancellation delivers nothing.  A plugin that
 * exports HookitWait(const struct hookit_wait *) gets the calls there
 * instead of HOOKIT_EV_WAIT events (the same rules; guard held, errno
 * saved around it). */
struct hookit_wait {
    const char *func;           /* "pthread_cond_wait", "poll", "nanosleep", ... */
    uint64_t t0, t1;            /* before and after the real call, host->io_clock units */
    uint64_t token;             /* what plugin->wait_begin returned before the call, 0
                                 * without one */
    int64_t result;             /* the return value (pthread calls: the error number) */
};

/* How the process ended, passed to HookitFinish. */
enum hookit_end_how {
    HOOKIT_END_EXIT = 1,        /* exit, return from main, _exit ... */
    HOOKIT_END_SIGNAL = 2,      /* death by a signal */
    HOOKIT_END_EXEC = 3,        /* exec replaced the image */
};

struct hookit_event {
    uint32_t type;              /* enum hookit_event_type */
    int32_t  signo;             /* SIGNAL_DEATH */
    void    *fn;                /* ENTER/EXIT: the function's address */
    void    *call_site;         /* ENTER/EXIT: the caller's address */
    const char *path;           /* DLOPEN */
    void    *handle;            /* DLOPEN, DLCLOSE */
    pid_t    tid;               /* THREAD_START/END: kernel tid */
    int32_t  rank, size;        /* MPI_RANK */
    const struct hookit_io *io; /* IO */
    const struct hookit_mem *mem; /* ALLOC, FREE */
    const struct hookit_mpi *mpi; /* MPI_ENTER, MPI_EXIT */
    int32_t  thread_num;        /* THREAD_START: number in order of creation (main = 0), -1 unknown */
    const struct hookit_wait *wait; /* WAIT (added later: read it only for that type) */
    uid_t    uid;               /* SET_USER: the new effective user */
};

/* What libhookit offers the plugin. */
struct hookit_host {
    uint32_t abi_version;       /* HOOKIT_ABI_VERSION of libhookit */
    uint32_t size;              /* sizeof(struct hookit_host) */
    volatile int *collecting;   /* the on/off switch, see above */
    const char *output_dir;     /* HOOKIT_OUTPUT or "." */
    const char *plugin_dir;     /* where hookit's plugins live */
    int debug;                  /* HOOKIT_DEBUG=1 */
    /* One line to stderr, prefixed "hookit[PID]: ".  printf-style. */
    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
    /* Same, but only when HOOKIT_DEBUG=1. */
    void (*debug_log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
    /* The clock of I/O timestamps: 0 = TSC ticks, 1 = CLOCK_MONOTONIC ns. */
    uint32_t io_clock;
    uint64_t (*io_now)(void);
    /* Ticks per ns of io_clock, measured since libhookit started (waits
     * until 2 ms have passed since then on the first call). */
    double (*io_ticks_per_ns)(void);
    /* Not the program's I/O: io_quiet(1) ... io_quiet(0) around plugin code
     * that runs outside HookitEvent/HookitFinish (work done from the fast
     * enter/exit hooks, a thread of the plugin's own), so the calls it makes
     * are passed through uncounted (per thread; nests). */
    void (*io_quiet)(int on);
    /* First access to a signal, ahead of the application and of a libmonitor
     * client, without changing what the application sees of it (through the
     * lifecycle layer).  handler returns 0 when it consumed the signal,
     * non-zero to pass it on to the application's disposition.  0 or -1. */
    int (*signal_first)(int sig, int (*handler)(int sig, siginfo_t *info, void *context));
    /* Added later: read only when size covers them.  The directory to write
     * to when output_dir fails at the end ($TMPDIR, else the current
     * directory at start, else /tmp), and whether output_dir already is
     * that fallback because HOOKIT_OUTPUT could not be used (reported at
     * start): then the plugin names the file it wrote. */
    const char *fallback_dir;
    int output_fallback;
    /* Added later: start a thread of the plugin's own (a control thread
     * serving requests from outside while the program's threads are all
     * blocked; at most one), with every signal blocked in it.  The
     * lifecycle layer does not show it: no THREAD_START/THREAD_END, no
     * libmonitor callbacks, no thread number; the plugin keeps it out of
     * its data itself (its hooks, if libc runs the program's code in it,
     * arrive as usual).  When the program's last thread ends (main called
     * pthread_exit), libhookit calls stop(), which must make fn return,
     * and joins the thread: the process then ends with the program's
     * last thread as it would have.  Not inherited by a fork child.  0 or
     * an error number. */
    int (*own_thread)(void *(*fn)(void *), void *arg, void (*stop)(void));
};
/* Whether host h has field f (a field added after the first version). */
#define HOOKIT_HOST_HAS(h, f) \
    ((h)->size >= __builtin_offsetof(struct hookit_host, f) + sizeof((h)->f))

/* Capabilities a plugin declares in hookit_plugin.caps. */
#define HOOKIT_CAP_CALLS   0x1u /* wants ENTER/EXIT */
#define HOOKIT_CAP_THREADS 0x2u /* wants THREAD_START/END */
#define HOOKIT_CAP_FORK    0x4u /* wants FORK_* and EXEC* */
#define HOOKIT_CAP_DLOPEN  0x8u /* wants DLOPEN/DLCLOSE */
#define HOOKIT_CAP_CONTROL 0x10u /* handles FLUSH/RESET/ZEROBASE */
#define HOOKIT_CAP_IO      0x20u /* wants IO events (the I/O wrappers time and report calls) */
#define HOOKIT_CAP_ALLOC   0x40u /* wants ALLOC/FREE events */
#define HOOKIT_CAP_MPI     0x80u /* wants MPI_ENTER/EXIT events (the PMPI wrappers) */
/* Calls after exit() began: atexit handlers and destructors still run the
 * program's code after the lifecycle's end of the process.  A plugin with
 * this capability gets HOOKIT_EV_EXITING there instead of HookitFinish: it
 * writes what it has (the process may yet leave by _exit or a signal, and
 * then nothing more comes) and keeps collecting in the exiting thread (the
 * other threads have ended).  HookitFinish(HOOKIT_END_EXIT) follows from
 * libhookit's destructor, after the program's destructors, when the
 * process gets that far. */
#define HOOKIT_CAP_LATE_EXIT 0x100u
/* Wants WAIT events: libhookit times the blocking calls listed at struct
 * hookit_wait (else it passes them straight through). */
#define HOOKIT_CAP_WAIT    0x200u

typedef void (*hookit_fast_fn)(void *fn, void *call_site);

/*
 * Control flow the hooks do not show (docs/exactness.md).  A longjmp, a
 * C++ exception caught after clang-built frames (clang emits no exit hook
 * on unwind) and a swapcontext leave or resume frames without running their
 * exit or entry hooks.  Stack addresses alone cannot tell these apart from
 * an inlined call (GCC instruments inlined copies with their host's frame),
 * so libhookit interposes the functions that do it and tells the plugin
 * what happened, in the thread concerned, before the real call:
 *
 *   MARK    setjmp, sigsetjmp, getcontext: return a mark of the thread's
 *           open frames; libhookit keeps it with the buffer.
 *   JUMP    longjmp, siglongjmp (and setcontext to a getcontext'ed
 *           context): execution resumes where `mark` was taken, every frame
 *           opened since is gone.
 *   CATCH   __cxa_begin_catch: the frame whose stack pointer is `sp` caught
 *           an exception; open frames deeper on that stack are gone.
 *   UNWIND  __gxx_personality_v0: the C++ unwinder is about to run a
 *           landing pad (a cleanup or a catch clause) in the frame whose
 *           stack pointer, at the call the exception came out of, is `sp`;
 *           every open frame that keeps its return address below `sp` is
 *           gone (the landing pad's frame keeps its own at or above it).
 *           When `nranges` > 0, `pad` says which landing pad it is:
 *           whose it is among the functions inlined into that machine
 *           frame can be told from where their entry hooks are called
 *           (docs/exactness.md).
 *   SWITCH  swapcontext, setcontext: the running context is saved in `from`
 *           (NULL: it is abandoned) and the context `to` resumes.
 *   MADE    makecontext: `to` will start a function on a stack of its own.
 *   ENDED   the function started in `from` returned; `to` (its uc_link)
 *           resumes, NULL when the thread then exits.
 *
 * The flow entry point may take the thread's own state but no lock that a
 * hook could wait for, and must not call the program's code.  Only MARK's
 * return value is used.
 */
enum hookit_flow_kind {
    HOOKIT_FLOW_MARK = 1,
    HOOKIT_FLOW_JUMP,
    HOOKIT_FLOW_CATCH,
    HOOKIT_FLOW_SWITCH,
    HOOKIT_FLOW_MADE,
    HOOKIT_FLOW_ENDED,
    HOOKIT_FLOW_UNWIND,
};

/* A range of machine code, [start, end). */
struct hookit_code_range {
    uintptr_t start, end;
};

struct hookit_flow {
    uint32_t kind;              /* enum hookit_flow_kind */
    /* UNWIND: how many entries `ranges` holds; 0 when the landing pad's
     * call-site table was not read (none, an encoding not handled, more
     * ranges than libhookit keeps).  The fields after `to` are only set,
     * and may only be read, when it is not 0: a libhookit older than them
     * passed a shorter struct with this word (then `reserved`) at 0. */
    uint32_t nranges;
    uint64_t mark;              /* JUMP: what MARK returned */
    uintptr_t sp;               /* CATCH: the catching frame's stack pointer;
                                 * UNWIND: the landing pad's frame's stack pointer */
    const void *from, *to;      /* SWITCH, MADE, ENDED: ucontext_t addresses */
    /* UNWIND with nranges > 0 (added without an ABI bump), from the
     * landing pad's function's LSDA (its call-site table, Itanium C++
     * ABI).  pad: the landing pad about to run.  func: its function's
     * start (_Unwind_GetRegionStart).  func_calls_end: the end of the
     * function's last call-site range (every call in [func,
     * func_calls_end) that may throw is in one).  ranges: the call-site
     * ranges whose landing pad is pad, the code from which a throw goes
     * there (valid during the flow call only). */
    uintptr_t pad, func, func_calls_end;
    const struct hookit_code_range *ranges;
};

typedef uint64_t (*hookit_flow_fn)(const struct hookit_flow *flow);

/* Called by a wrapper of a blocking call (HOOKIT_CAP_WAIT) just before the
 * real call, in the calling thread; what it returns comes back in that
 * call's hookit_wait.token.  It lets a plugin tell apart the time the
 * thread spent in instrumented code during the call (a signal handler,
 * a cancellation cleanup) from the wait itself.  Same rules as the flow
 * entry point: the thread's own state only, no lock, no libc call, errno
 * kept. */
typedef uint64_t (*hookit_wait_begin_fn)(void);

/* What the plugin tells libhookit, filled in by HookitStart. */
struct hookit_plugin {
    uint32_t abi_version;       /* must be HOOKIT_ABI_VERSION */
    uint32_t caps;              /* HOOKIT_CAP_* */
    const char *name;           /* short name for messages */
    hookit_fast_fn enter;       /* optional direct entry hook */
    hookit_fast_fn exit;        /* optional direct exit hook */
    /* Optional: a word that someone outside the process may set to get the
     * plugin's attention.  While collection is off, libhookit checks it on
     * every hook and delivers HOOKIT_EV_CONTROL when it is non-zero (while
     * collection is on, the plugin checks it itself). */
    volatile uint32_t *attention;
    /* Optional (added without an ABI bump; libhookit zeroes the struct
     * before HookitStart): control flow that leaves frames without their
     * exit hooks, see struct hookit_flow.  NULL: libhookit still passes
     * these calls through, and the plugin sees only enters and exits. */
    hookit_flow_fn flow;
    /* Optional (added later, zeroed by libhookit): see hookit_wait_begin_fn. */
    hookit_wait_begin_fn wait_begin;
};

/* Put this once in a plugin's source, at file scope. */
#define HOOKIT_PLUGIN_ABI \
    __attribute__((visibility("default"))) const uint32_t HookitAbiVersion = HOOKIT_ABI_VERSION

typedef int  (*hookit_start_fn)(const struct hookit_host *, struct hookit_plugin *);
typedef void (*hookit_event_fn)(const struct hookit_event *);
typedef void (*hookit_finish_fn)(int how);

int  HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin);
void HookitEvent(const struct hookit_event *event);
void HookitFinish(int how);
void HookitAlloc(void *ptr, uint64_t size, void *old_ptr);
void HookitFree(void *ptr);
void HookitWait(const struct hookit_wait *wait);

#ifdef __cplusplus
}
#endif
#endif
