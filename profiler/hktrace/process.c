/* The trace's embedded profile: the process's metadata (pid, parent,
 * executable, arguments, MPI rank, times, how the run ended) and a function
 * table of every id in use, named through A2N. */
#include "hktrace.h"
#include "profile/procinfo.h"
#include "profile/profile.h"
#include "profile/trace.h"
#include <hookit/a2n.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int ht_rank = -1, ht_size = -1, ht_death_signal;
uint64_t ht_tick0, ht_start_wall_ns, ht_start_mono_ns;
static struct a2n *a2n;

HT_NOINSTR void ht_process_start(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ht_start_wall_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    ht_start_mono_ns = hk_mono_ns();
    ht_tick0 = ht_now();
}

HT_NOINSTR void ht_names_start(void)
{
    a2n = a2n_open(0);
}

HT_NOINSTR void ht_names_reload(void)
{
    if (a2n)
        a2n_reload(a2n);
}

HT_NOINSTR static int fill_process(struct profile *p, int how)
{
    int rc = procinfo_fill_self(p, getpid(), getppid(), ht_rank, ht_size);
    p->process.start_ns = ht_start_wall_ns;
    p->process.duration_ns = hk_mono_ns() - ht_start_mono_ns;
    struct procinfo_meta m = {
        .profiler = "hktrace",
        .clock = ht_clock_is_tsc() ? HK_COUNTER_NAME : "monotonic",
        .ticks_per_ns = ht_ticks_per_ns(),
        .end = procinfo_end_name(how),
        .signal = how == HOOKIT_END_SIGNAL ? ht_death_signal : 0,
    };
    if (rc == 0)
        rc = procinfo_set_meta(p, &m);
    rc |= procinfo_set_meta_u64(p, "trace_threshold_ns", ht_opt.threshold_ns);
    rc |= procinfo_set_meta_u64(p, "trace_depth", ht_opt.max_depth);
    rc |= procinfo_set_meta_u64(p, "trace_size_cap_bytes", ht_opt.size_bytes);
    uint64_t undecided = 0; /* the trace names no context: the count alone */
    for (struct ht_thread *t = ht_threads; t; t = t->next)
        undecided += t->undecided_pads;
    if (undecided)
        rc |= procinfo_set_meta_u64(p, "undecided_landing_pads", undecided);
    return rc ? -1 : 0;
}

HT_NOINSTR static int fill_funcs(struct profile *p, uint32_t **ids_out)
{
    uint32_t n = ht_funcs_used();
    uint32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
    p->funcs = profile_alloc(p, ((size_t)n + 1) * sizeof *p->funcs);
    if (!ids || !p->funcs) {
        free(ids);
        return -1;
    }
    uint32_t k = 0;
    if (!a2n)
        a2n = a2n_open(0);
    for (uint32_t id = 0; id < HT_FUNC_SLOTS && k < n; id++) {
        uint64_t addr = ht_func_addr(id);
        if (!addr)
            continue;
        struct prof_func *f = &p->funcs[k];
        struct a2n_result r;
        char fallback[32];
        if (a2n) {
            a2n_lookup(a2n, addr, ht_opt.lines, &r);
        } else {
            snprintf(fallback, sizeof fallback, "0x%llx", (unsigned long long)addr);
            r = (struct a2n_result){ .module = "[unknown]", .function = fallback };
        }
        f->addr = addr;
        if (profile_name_func(p, f, r.function, r.module, r.file, r.line) != 0) {
            free(ids);
            return -1;
        }
        ids[k++] = id;
    }
    p->nfuncs = k;
    *ids_out = ids;
    return 0;
}

HT_NOINSTR struct profile *ht_build_meta(int how, uint32_t **ids)
{
    struct profile *p = profile_new();
    *ids = NULL;
    if (!p)
        return NULL;
    if (fill_process(p, how) != 0 || fill_funcs(p, ids) != 0) {
        profile_free(p);
        free(*ids);
        *ids = NULL;
        return NULL;
    }
    return p;
}
