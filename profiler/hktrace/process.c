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
#include <sys/utsname.h>
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

HT_NOINSTR static int set_u64(struct profile *p, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return profile_set_meta(p, key, buf);
}

HT_NOINSTR static int fill_process(struct profile *p, int how)
{
    char exe[4096], buf[256];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    p->process.pid = getpid();
    p->process.ppid = getppid();
    p->process.rank = ht_rank;
    p->process.size = ht_size;
    p->process.exe = profile_intern(p, exe);
    p->process.start_ns = ht_start_wall_ns;
    p->process.duration_ns = hk_mono_ns() - ht_start_mono_ns;
    int rc = p->process.exe ? procinfo_fill_argv(p) : -1;
    struct utsname u;
    if (rc == 0 && uname(&u) == 0)
        rc = profile_set_meta(p, "hostname", u.nodename);
    rc |= profile_set_meta(p, "hookit_version", HOOKIT_VERSION);
    rc |= profile_set_meta(p, "profiler", "hktrace");
    rc |= profile_set_meta(p, "clock", ht_clock_is_tsc() ? HK_COUNTER_NAME : "monotonic");
    snprintf(buf, sizeof buf, "%.6f", ht_ticks_per_ns());
    rc |= profile_set_meta(p, "ticks_per_ns", buf);
    rc |= profile_set_meta(p, "end", procinfo_end_name(how));
    if (how == HOOKIT_END_SIGNAL && ht_death_signal > 0) {
        snprintf(buf, sizeof buf, "%d (%s)", ht_death_signal, strsignal(ht_death_signal));
        rc |= profile_set_meta(p, "signal", buf);
    }
    rc |= set_u64(p, "trace_threshold_ns", ht_opt.threshold_ns);
    rc |= set_u64(p, "trace_depth", ht_opt.max_depth);
    rc |= set_u64(p, "trace_size_cap_bytes", ht_opt.size_bytes);
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
