/* What every PMPI wrapper shares: finding the real functions, the
 * per-thread guard, the ENTER/EXIT events, and sizes asked of the MPI
 * library.  See docs/mpi.md for why the wrappers live in libhookit.
 *
 * Nothing here runs unless the program calls an MPI function, and every
 * MPI function is looked up at its first call (an MPI library may be
 * dlopen'ed late, as mpi4py does): libhookit never links MPI.
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
 *                      plugin may use them otherwise, or not at all. */
#include "hookit/mpi_internal.h"
#include "hookit/mpi_api.h"
#include "hookit/io_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

__thread int hk_mpi_depth __attribute__((tls_model("initial-exec")));

#define HK_MPI_NAME(name, kind) "MPI_" #name,
static const char *const names[HK_MPI_NFUNCS] = { HK_MPI_LIST(HK_MPI_NAME) };
#undef HK_MPI_NAME
#define HK_MPI_KIND(name, kind) HOOKIT_MPI_##kind,
static const uint8_t kinds[HK_MPI_NFUNCS] = { HK_MPI_LIST(HK_MPI_KIND) };
#undef HK_MPI_KIND

/* The library that holds each id's real function, by base name. */
static char modules[2 * HK_MPI_NFUNCS][48];

#ifndef HOOKIT_STATIC
HK_NOINSTR static void note_module(uint32_t id, const void *fn)
{
    Dl_info info;
    if (id >= 2 * HK_MPI_NFUNCS || modules[id][0] || !fn || !dladdr(fn, &info) || !info.dli_fname)
        return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    snprintf(modules[id], sizeof modules[id], "%s", base);
}

HK_NOINSTR void *hk_mpi_resolve(const char *name, const char *pname, uint32_t id)
{
    int saved = errno;
    hk_io_guard++;
    void *fn = dlsym(RTLD_NEXT, name);
    void *pfn = dlsym(RTLD_DEFAULT, pname);
    if (!fn)
        fn = pfn;
    note_module(id, pfn ? pfn : fn);
    hk_io_guard--;
    errno = saved;
    return fn;
}

/* Fortran: name, else p+name / P+NAME (the profiling entry) anywhere. */
HK_NOINSTR void *hk_mpi_fresolve(const char *name, uint32_t id)
{
    char pname[64];
    snprintf(pname, sizeof pname, "%c%s", name[0] == 'M' ? 'P' : 'p', name);
    return hk_mpi_resolve(name, pname, id);
}

HK_NOINSTR int hk_mpi_missing(const char *name)
{
    hk_log("%s called but no MPI library provides it", name);
    return 16;
}
#endif

/* ---- events ----------------------------------------------------------------------- */
HK_NOINSTR static int wanted(void)
{
    return hk_hot.initialized && hk_collecting_now() > 0 && !hk_io_guard && hk_plugin.event &&
           (hk_plugin.info.caps & HOOKIT_CAP_MPI);
}

HK_NOINSTR static void deliver(uint32_t type, const struct hookit_mpi *m)
{
    struct hookit_event e = { .type = type, .mpi = m };
    hk_io_guard++;
    hk_plugin.event(&e);
    hk_io_guard--;
}

HK_NOINSTR void hk_mpi_begin(struct hk_mpi_call *c, uint32_t id)
{
    c->reported = 0;
    if (hk_mpi_depth++ || !wanted())
        return;
    int saved = errno;
    uint32_t index = id % HK_MPI_NFUNCS;
    c->ev = (struct hookit_mpi){
        .id = id,
        .kind = kinds[index],
        .func = names[index],
        .module = modules[id],
        .fortran = id >= HK_MPI_NFUNCS,
    };
    deliver(HOOKIT_EV_MPI_ENTER, &c->ev);
    c->reported = 1;
    errno = saved;
}

HK_NOINSTR void hk_mpi_end(struct hk_mpi_call *c, int result)
{
    if (c->reported && hk_plugin.event) {
        int saved = errno;
        c->ev.result = result;
        deliver(HOOKIT_EV_MPI_EXIT, &c->ev);
        errno = saved;
    }
    hk_mpi_depth--;
}

/* ---- MPI_Init, MPI_Init_thread, MPI_Finalize (the lifecycle layer's) --------------- */
/* The job's own events, whether collection is on or not (the plugin's
 * reduction at MPI_Finalize needs MPI, docs/mpi.md): INITIALIZED after the
 * real MPI_Init and the frame's end, FINALIZING before MPI_Finalize's
 * frame begins (the profile then taken has no open MPI_Finalize), and
 * FINALIZED after its end. */
HK_NOINSTR static void job_event(uint32_t type)
{
    if (!hk_hot.initialized)
        return;
    int saved = errno;
    struct hookit_event e = { .type = type };
    hk_plugin_event(&e);
    errno = saved;
}

/* The lifecycle layer wraps these (they give the rank and end the MPI part
 * of the run) and tells libhookit around the real call (lc_client.mpi_call):
 * the same events as the other wrappers, so they are frames too. */
HK_NOINSTR void hk_mpi_lifecycle(const char *name, int done)
{
    static __thread struct hk_mpi_call call __attribute__((tls_model("initial-exec")));
    const char *n = (name[0] == 'P' || name[0] == 'p') ? name + 1 : name;
    int finalize = !strncasecmp(n, "MPI_Finalize", 12);
    if (done) {
        hk_mpi_end(&call, 0);
        job_event(finalize ? HOOKIT_EV_MPI_FINALIZED : HOOKIT_EV_MPI_INITIALIZED);
        return;
    }
    if (finalize)
        job_event(HOOKIT_EV_MPI_FINALIZING);
    uint32_t id = !strncasecmp(n, "MPI_Init_thread", 15) ? HK_MPI_ID_Init_thread :
                  !strncasecmp(n, "MPI_Init", 8) ? HK_MPI_ID_Init : HK_MPI_ID_Finalize;
    int c_binding = !strcmp(n, "MPI_Init") || !strcmp(n, "MPI_Init_thread") ||
                    !strcmp(n, "MPI_Finalize");
    if (!c_binding)
        id += HK_MPI_NFUNCS;
#ifndef HOOKIT_STATIC
    if (!modules[id][0]) {     /* the library's definition, after libhookit's wrapper */
        hk_io_guard++;
        note_module(id, dlsym(RTLD_NEXT, name));
        hk_io_guard--;
    }
#endif
    hk_mpi_begin(&call, id);
}

#ifndef HOOKIT_STATIC
/* ---- sizes ----------------------------------------------------------------------- */
typedef int type_size_fn(hk_mpi_h, int *);
typedef int comm_size_fn(hk_mpi_h, int *);
typedef void ftype_size_fn(const int *, int *, int *);

HK_NOINSTR static void *lookup(const char *name)
{
    hk_io_guard++;
    void *fn = dlsym(RTLD_DEFAULT, name);
    hk_io_guard--;
    return fn;
}

/* *slot, looked up once (threads racing store the same value); a name
 * that is not there is remembered as such. */
#define NOT_FOUND ((void *)&lookup)
HK_NOINSTR static void *cached(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (!fn) {
        fn = lookup(name);
        if (!fn)
            fn = NOT_FOUND;
        __atomic_store_n(slot, fn, __ATOMIC_RELAXED);
    }
    return fn == NOT_FOUND ? NULL : fn;
}

HK_NOINSTR uint64_t hk_mpi_type_bytes(int64_t count, hk_mpi_h type)
{
    static void *slot;
    if (count <= 0)
        return 0;
    type_size_fn *size_of = (type_size_fn *)cached(&slot, "PMPI_Type_size");
    int size = 0;
    if (!size_of || size_of(type, &size) != 0 || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

HK_NOINSTR int hk_mpi_comm_size(hk_mpi_h comm)
{
    static void *slot;
    comm_size_fn *size_of = (comm_size_fn *)cached(&slot, "PMPI_Comm_size");
    int size = 0;
    if (!size_of || size_of(comm, &size) != 0 || size < 0)
        return 0;
    return size;
}

HK_NOINSTR int hk_mpi_in_place(const void *buf)
{
    return buf == (const void *)1 || buf == (const void *)-1;
}

static const char *const manglings[4][2] = {
    { "pmpi_type_size", "pmpi_comm_size" },
    { "pmpi_type_size_", "pmpi_comm_size_" },
    { "pmpi_type_size__", "pmpi_comm_size__" },
    { "PMPI_TYPE_SIZE", "PMPI_COMM_SIZE" },
};

HK_NOINSTR static int fsize(const int *handle, int mangling, int which)
{
    static void *slots[4][2];
    if (mangling < 0 || mangling > 3)
        return 0;
    ftype_size_fn *fn = (ftype_size_fn *)cached(&slots[mangling][which], manglings[mangling][which]);
    int size = 0, ierr = 0;
    if (!fn)
        return 0;
    fn(handle, &size, &ierr);
    return ierr == 0 && size > 0 ? size : 0;
}

HK_NOINSTR uint64_t hk_mpi_ftype_bytes(const int *count, const int *type, int mangling)
{
    if (!count || !type || *count <= 0)
        return 0;
    return (uint64_t)*count * (uint64_t)fsize(type, mangling, 0);
}

HK_NOINSTR int hk_mpi_fcomm_size(const int *comm, int mangling)
{
    return comm ? fsize(comm, mangling, 1) : 0;
}

/* Open MPI's Fortran MPI_IN_PLACE is the address of a common block (one
 * name whatever the mangling of the calls). */
HK_NOINSTR int hk_mpi_fin_place(const void *buf, int mangling)
{
    static const char *const blocks[] = { "mpi_fortran_in_place_", "mpi_fortran_in_place",
                                          "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE" };
    static void *slots[sizeof blocks / sizeof *blocks];
    (void)mangling;
    for (unsigned i = 0; i < sizeof blocks / sizeof *blocks; i++) {
        const void *in_place = cached(&slots[i], blocks[i]);
        if (in_place)
            return buf == in_place;
    }
    return 0;
}
#endif
