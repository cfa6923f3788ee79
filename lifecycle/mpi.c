/*
 * MPI, for any MPI library and without its headers: MPI_Init,
 * MPI_Init_thread, MPI_Finalize and MPI_Comm_rank, their PMPI_ entry
 * points and the Fortran manglings (name, name_, name__, NAME).
 *
 *   MPI_Init:      monitor_mpi_pre_init, the real init, monitor_init_mpi
 *   MPI_Comm_rank: the application's first call after init gives the rank
 *                  (and the size of that communicator), as libmonitor does
 *                  without mpi.h: monitor_mpi_comm_rank/size, mpi_rank event;
 *                  unless the launcher's environment already gave the rank
 *                  in MPI_COMM_WORLD when MPI_Init returned
 *   MPI_Finalize:  monitor_fini_mpi, the real finalize, monitor_mpi_post_fini
 *
 * Handles (MPI_Comm) are passed through untouched as a register-sized
 * value, which is what both the int (MPICH) and pointer (Open MPI) kinds
 * are in the calling convention.  A recursion guard keeps an MPI library
 * whose MPI_Init calls PMPI_Init from giving the callbacks twice.
 *
 * MPI has three doors, one per layer, kept apart because a layer only
 * calls the one below it (docs/design.md, docs/mpi.md):
 *   lifecycle/mpi.c    MPI_Init, MPI_Init_thread, MPI_Finalize and
 *                      MPI_Comm_rank: when the process becomes a rank and
 *                      stops being one, and which rank it is (libmonitor's
 *                      callbacks, for any client).  The lifecycle layer
 *                      depends on libc only: it knows no plugin, no event.
 *   hookit/mpi_*.c     the PMPI wrappers of the other MPI calls (mpi_c.c,
 *                      mpi_fortran.c; what they share in mpi_core.c), each
 *                      reported to the plugin as HOOKIT_EV_MPI_ENTER and
 *                      _EXIT.  In libhookit so that they interpose with
 *                      nothing more to link; they decide nothing about
 *                      the profile.
 *   profiler/jprof/frames/mpi.c
 *                      libjprof's use of those events: a frame
 *                      "MPI:MPI_Send" and the mpi_bytes column.  Another
 *                      plugin may use them otherwise, or not at all.
 */
#include "lifecycle/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef void *lc_mpi_handle;
typedef int lc_mpi_init_fn(int *, char ***);
typedef int lc_mpi_init_thread_fn(int *, char ***, int, int *);
typedef int lc_mpi_finalize_fn(void);
typedef int lc_mpi_comm_fn(lc_mpi_handle, int *);
typedef void lc_fmpi_init_fn(int *);
typedef void lc_fmpi_init_thread_fn(int *, int *, int *);
typedef void lc_fmpi_comm_fn(int *, int *, int *);

static int lc_mpi_rank = -1, lc_mpi_size = -1;
static atomic_int lc_mpi_initialized;
static LC_TLS int lc_mpi_depth;

LC_API int monitor_mpi_comm_rank(void) { return lc_mpi_rank; }
LC_API int monitor_mpi_comm_size(void) { return lc_mpi_size; }

LC_API void monitor_set_size_rank(int size, int rank)
{
    lc_mpi_size = size;
    lc_mpi_rank = rank;
    LC_CLIENTS(mpi_rank, rank, size);
}

/* ---- the real functions ------------------------------------------------------------- */
#ifdef HOOKIT_STATIC
#define LC_MPI_REAL(type, name) \
    extern type __real_##name __attribute__((weak)); \
    static type *lc_mpi_real_##name(void) { return __real_##name; }
#else
/* Looked up at first use: the MPI library may be dlopen'ed after start. */
#define LC_MPI_REAL(type, name) \
    static type *lc_mpi_real_##name(void) \
    { \
        static type *fn; \
        if (!fn) \
            fn = (type *)dlsym(RTLD_NEXT, #name); \
        return fn; \
    }
#endif

static void lc_mpi_missing(const char *name)
{
    lc_diag("%s called but no MPI library provides it", name);
}

/* ---- the events ------------------------------------------------------------------------- */
/* Internal clients get mpi_call(name, 0) just before the real MPI_Init,
 * MPI_Init_thread or MPI_Finalize (name: the entry point called) and
 * mpi_call(name, 1) just after it, inside the monitor_* callbacks. */
static void lc_mpi_before_init(const char *name)
{
    lc_ensure_init();
    int saved = errno;
    monitor_mpi_pre_init();
    LC_CLIENTS(mpi_call, name, 0);
    errno = saved;
}

static void lc_mpi_got_rank(int rank, int size);

static int lc_mpi_env_int(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    char *end;
    if (!v || !*v)
        return -1;
    errno = 0;
    long x = strtol(v, &end, 10);
    return *end || errno || x < 0 || x > INT_MAX ? -1 : (int)x;
}

/* The rank in MPI_COMM_WORLD as the launcher tells it (Open MPI, MPICH's
 * Hydra and PMI, MVAPICH, PMIx, Slurm's srun), read once MPI_Init is done:
 * the program's first MPI_Comm_rank may be on another communicator
 * (MPI_COMM_SELF, a split), which would give every rank the same number. */
static void lc_mpi_world_from_env(void)
{
    static const char *const names[][2] = {
        { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
        { "PMI_RANK", "PMI_SIZE" },
        { "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE" },
        { "PMIX_RANK", NULL },
        { "SLURM_PROCID", "SLURM_NTASKS" },
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int rank = lc_mpi_env_int(names[i][0]);
        if (rank >= 0) {
            lc_mpi_got_rank(rank, lc_mpi_env_int(names[i][1]));
            return;
        }
    }
}

static void lc_mpi_after_init(const char *name, int *argc, char ***argv)
{
    int saved = errno;
    LC_CLIENTS(mpi_call, name, 1);
    atomic_store(&lc_mpi_initialized, 1);
    lc_mpi_world_from_env();
    char **lc_argv_copy = lc_argv;
    monitor_init_mpi(argc ? argc : &lc_argc, argv ? argv : &lc_argv_copy);
    errno = saved;
}

static void lc_mpi_got_rank(int rank, int size)
{
    if (lc_mpi_rank >= 0 || !atomic_load(&lc_mpi_initialized))
        return;
    int saved = errno;
    monitor_set_size_rank(size, rank);
    errno = saved;
}

static void lc_mpi_before_finalize(const char *name)
{
    int saved = errno;
    monitor_fini_mpi();
    LC_CLIENTS(mpi_call, name, 0);
    errno = saved;
}

static void lc_mpi_after_finalize(const char *name)
{
    int saved = errno;
    LC_CLIENTS(mpi_call, name, 1);
    atomic_store(&lc_mpi_initialized, 0);
    monitor_mpi_post_fini();
    errno = saved;
}

/* A function that is not wrapped (Comm_size, in every binding), looked up
 * as itself, also when static: PREFIX##name() returns it or NULL. */
#ifdef HOOKIT_STATIC
#define LC_MPI_UNWRAPPED(type, prefix, name) \
    extern type name __attribute__((weak)); \
    static type *prefix##name(void) { return name; }
#else
#define LC_MPI_UNWRAPPED(type, prefix, name) \
    static type *prefix##name(void) \
    { \
        static type *fn; \
        if (!fn) \
            fn = (type *)dlsym(RTLD_NEXT, #name); \
        return fn; \
    }
#endif
LC_MPI_UNWRAPPED(lc_mpi_comm_fn, lc_mpi_size_, MPI_Comm_size)
LC_MPI_UNWRAPPED(lc_mpi_comm_fn, lc_mpi_size_, PMPI_Comm_size)

/* ---- C bindings ---------------------------------------------------------------------------- */
#define LC_MPI_C_WRAPPERS(P)                                                        \
    LC_MPI_REAL(lc_mpi_init_fn, P##_Init)                                           \
    LC_MPI_REAL(lc_mpi_init_thread_fn, P##_Init_thread)                             \
    LC_MPI_REAL(lc_mpi_finalize_fn, P##_Finalize)                                   \
    LC_MPI_REAL(lc_mpi_comm_fn, P##_Comm_rank)                                      \
    LC_API lc_mpi_init_fn LC_WRAPPER(P##_Init);                                     \
    LC_API lc_mpi_init_thread_fn LC_WRAPPER(P##_Init_thread);                       \
    LC_API lc_mpi_finalize_fn LC_WRAPPER(P##_Finalize);                             \
    LC_API lc_mpi_comm_fn LC_WRAPPER(P##_Comm_rank);                                \
                                                                                    \
    LC_API int LC_WRAPPER(P##_Init)(int *argc, char ***argv)                        \
    {                                                                               \
        lc_mpi_init_fn *real = lc_mpi_real_##P##_Init();                            \
        if (!real) {                                                                \
            lc_mpi_missing(#P "_Init");                                             \
            return 1;                                                               \
        }                                                                           \
        if (lc_mpi_depth++)                                                         \
            return lc_mpi_depth--, real(argc, argv);                                \
        lc_mpi_before_init(#P "_Init");                                             \
        int r = real(argc, argv);                                                   \
        lc_mpi_after_init(#P "_Init", argc, argv);                                  \
        lc_mpi_depth--;                                                             \
        return r;                                                                   \
    }                                                                               \
                                                                                    \
    LC_API int LC_WRAPPER(P##_Init_thread)(int *argc, char ***argv, int req, int *prov) \
    {                                                                               \
        lc_mpi_init_thread_fn *real = lc_mpi_real_##P##_Init_thread();              \
        if (!real) {                                                                \
            lc_mpi_missing(#P "_Init_thread");                                      \
            return 1;                                                               \
        }                                                                           \
        if (lc_mpi_depth++)                                                         \
            return lc_mpi_depth--, real(argc, argv, req, prov);                     \
        lc_mpi_before_init(#P "_Init_thread");                                      \
        int r = real(argc, argv, req, prov);                                        \
        lc_mpi_after_init(#P "_Init_thread", argc, argv);                           \
        lc_mpi_depth--;                                                             \
        return r;                                                                   \
    }                                                                               \
                                                                                    \
    LC_API int LC_WRAPPER(P##_Finalize)(void)                                       \
    {                                                                               \
        lc_mpi_finalize_fn *real = lc_mpi_real_##P##_Finalize();                    \
        if (!real) {                                                                \
            lc_mpi_missing(#P "_Finalize");                                         \
            return 1;                                                               \
        }                                                                           \
        if (lc_mpi_depth++)                                                         \
            return lc_mpi_depth--, real();                                          \
        lc_mpi_before_finalize(#P "_Finalize");                                     \
        int r = real();                                                             \
        lc_mpi_after_finalize(#P "_Finalize");                                      \
        lc_mpi_depth--;                                                             \
        return r;                                                                   \
    }                                                                               \
                                                                                    \
    LC_API int LC_WRAPPER(P##_Comm_rank)(lc_mpi_handle comm, int *rank)             \
    {                                                                               \
        lc_mpi_comm_fn *real = lc_mpi_real_##P##_Comm_rank();                       \
        if (!real) {                                                                \
            lc_mpi_missing(#P "_Comm_rank");                                        \
            return 1;                                                               \
        }                                                                           \
        int r = real(comm, rank);                                                   \
        if (r == 0 && lc_mpi_rank < 0 && !lc_mpi_depth) {                           \
            lc_mpi_comm_fn *size_fn = lc_mpi_size_##P##_Comm_size();                \
            int size = -1;                                                          \
            lc_mpi_depth++;                                                         \
            if (size_fn && size_fn(comm, &size) != 0)                               \
                size = -1;                                                          \
            lc_mpi_depth--;                                                         \
            lc_mpi_got_rank(*rank, size);                                           \
        }                                                                           \
        return r;                                                                   \
    }

LC_MPI_C_WRAPPERS(MPI)
LC_MPI_C_WRAPPERS(PMPI)

/* ---- Fortran bindings: every handle and result by reference ------------------------------- */
#define LC_FMPI_WRAPPERS(init, init_thread, finalize, comm_rank, comm_size)        \
    LC_MPI_REAL(lc_fmpi_init_fn, init)                                              \
    LC_MPI_REAL(lc_fmpi_init_thread_fn, init_thread)                                \
    LC_MPI_REAL(lc_fmpi_init_fn, finalize)                                          \
    LC_MPI_REAL(lc_fmpi_comm_fn, comm_rank)                                         \
    LC_API lc_fmpi_init_fn LC_WRAPPER(init);                                        \
    LC_API lc_fmpi_init_thread_fn LC_WRAPPER(init_thread);                          \
    LC_API lc_fmpi_init_fn LC_WRAPPER(finalize);                                    \
    LC_API lc_fmpi_comm_fn LC_WRAPPER(comm_rank);                                   \
                                                                                    \
    LC_API void LC_WRAPPER(init)(int *ierr)                                         \
    {                                                                               \
        lc_fmpi_init_fn *real = lc_mpi_real_##init();                               \
        if (!real) {                                                                \
            lc_mpi_missing(#init);                                                  \
            *ierr = 1;                                                              \
            return;                                                                 \
        }                                                                           \
        if (lc_mpi_depth++) {                                                       \
            real(ierr);                                                             \
            lc_mpi_depth--;                                                         \
            return;                                                                 \
        }                                                                           \
        lc_mpi_before_init(#init);                                                  \
        real(ierr);                                                                 \
        lc_mpi_after_init(#init, NULL, NULL);                                       \
        lc_mpi_depth--;                                                             \
    }                                                                               \
                                                                                    \
    LC_API void LC_WRAPPER(init_thread)(int *req, int *prov, int *ierr)             \
    {                                                                               \
        lc_fmpi_init_thread_fn *real = lc_mpi_real_##init_thread();                 \
        if (!real) {                                                                \
            lc_mpi_missing(#init_thread);                                           \
            *ierr = 1;                                                              \
            return;                                                                 \
        }                                                                           \
        if (lc_mpi_depth++) {                                                       \
            real(req, prov, ierr);                                                  \
            lc_mpi_depth--;                                                         \
            return;                                                                 \
        }                                                                           \
        lc_mpi_before_init(#init_thread);                                           \
        real(req, prov, ierr);                                                      \
        lc_mpi_after_init(#init_thread, NULL, NULL);                                \
        lc_mpi_depth--;                                                             \
    }                                                                               \
                                                                                    \
    LC_API void LC_WRAPPER(finalize)(int *ierr)                                     \
    {                                                                               \
        lc_fmpi_init_fn *real = lc_mpi_real_##finalize();                           \
        if (!real) {                                                                \
            lc_mpi_missing(#finalize);                                              \
            *ierr = 1;                                                              \
            return;                                                                 \
        }                                                                           \
        if (lc_mpi_depth++) {                                                       \
            real(ierr);                                                             \
            lc_mpi_depth--;                                                         \
            return;                                                                 \
        }                                                                           \
        lc_mpi_before_finalize(#finalize);                                          \
        real(ierr);                                                                 \
        lc_mpi_after_finalize(#finalize);                                           \
        lc_mpi_depth--;                                                             \
    }                                                                               \
                                                                                    \
    LC_API void LC_WRAPPER(comm_rank)(int *comm, int *rank, int *ierr)              \
    {                                                                               \
        lc_fmpi_comm_fn *real = lc_mpi_real_##comm_rank();                          \
        if (!real) {                                                                \
            lc_mpi_missing(#comm_rank);                                             \
            *ierr = 1;                                                              \
            return;                                                                 \
        }                                                                           \
        real(comm, rank, ierr);                                                     \
        if (*ierr == 0 && lc_mpi_rank < 0 && !lc_mpi_depth) {                       \
            lc_fmpi_comm_fn *size_fn = lc_mpi_fsize_##comm_size();                  \
            int size = -1, e = 0;                                                   \
            lc_mpi_depth++;                                                         \
            if (size_fn)                                                            \
                size_fn(comm, &size, &e);                                           \
            lc_mpi_depth--;                                                         \
            lc_mpi_got_rank(*rank, e == 0 ? size : -1);                             \
        }                                                                           \
    }

/* The size function of the same mangling (not wrapped). */
LC_MPI_UNWRAPPED(lc_fmpi_comm_fn, lc_mpi_fsize_, mpi_comm_size)
LC_MPI_UNWRAPPED(lc_fmpi_comm_fn, lc_mpi_fsize_, mpi_comm_size_)
LC_MPI_UNWRAPPED(lc_fmpi_comm_fn, lc_mpi_fsize_, mpi_comm_size__)
LC_MPI_UNWRAPPED(lc_fmpi_comm_fn, lc_mpi_fsize_, MPI_COMM_SIZE)
LC_FMPI_WRAPPERS(mpi_init, mpi_init_thread, mpi_finalize, mpi_comm_rank, mpi_comm_size)
LC_FMPI_WRAPPERS(mpi_init_, mpi_init_thread_, mpi_finalize_, mpi_comm_rank_, mpi_comm_size_)
LC_FMPI_WRAPPERS(mpi_init__, mpi_init_thread__, mpi_finalize__, mpi_comm_rank__, mpi_comm_size__)
LC_FMPI_WRAPPERS(MPI_INIT, MPI_INIT_THREAD, MPI_FINALIZE, MPI_COMM_RANK, MPI_COMM_SIZE)
