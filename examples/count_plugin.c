/*
 * count_plugin.c: an example hookit profiler plugin, a flat call counter.
 *
 * Copy this file to start your own profiler.  It counts how many times each
 * instrumented function is entered, in all threads together, and at process
 * end writes
 *
 *     $HOOKIT_OUTPUT/count.<exe>.<pid>.txt
 *
 * with one line per function, most called first:
 *
 *     <calls> <address> <name>
 *
 * Build and use (see examples/README.md):
 *
 *     gcc -O2 -fPIC -shared -Iinclude -o libcount.so examples/count_plugin.c
 *     HOOKIT_PROFILER=$PWD/libcount.so ./my_instrumented_program
 *
 * The plugin ABI is documented in include/hookit/profiler.h.  In short:
 * libhookit loads us, checks HookitAbiVersion, calls HookitStart once, then
 * our fast `enter` hook on every function entry of every thread, and
 * HookitFinish once at process end.
 *
 * Build plugins WITHOUT -finstrument-functions: the hooks must not call
 * themselves.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hookit/profiler.h"

/* Exported data symbol libhookit reads before running any of our code. */
HOOKIT_PLUGIN_ABI;

#define EXPORT __attribute__((visibility("default")))
#define NOINSTR __attribute__((no_instrument_function))

/*
 * The counts: a fixed-size open-addressing hash table keyed by function
 * address.  The hook runs in every thread at once and must not lock or
 * allocate, so slots are claimed with a compare-and-swap and counts are
 * atomic increments.  A slot, once claimed, keeps its key forever, which is
 * what makes the lock-free lookup safe.
 */
#define TABLE_SIZE 16384                  /* a power of two: index with a mask */

struct slot {
    _Atomic(uintptr_t) fn;                /* 0 = free */
    _Atomic(uint64_t) calls;
};

static struct slot table[TABLE_SIZE];
static _Atomic(uint64_t) lost;            /* entries that found the table full */
static const struct hookit_host *host;

NOINSTR static size_t hash(uintptr_t fn)
{
    /* Functions are aligned: mix the high bits into the low ones. */
    uint64_t h = (uint64_t)fn * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (TABLE_SIZE - 1);
}

/* The hot path: find or claim fn's slot, then add one.  Relaxed ordering is
 * enough: nobody reads the counts until HookitFinish, after every other
 * thread has ended. */
NOINSTR static void count_enter(void *fn, void *call_site)
{
    (void)call_site;
    uintptr_t key = (uintptr_t)fn;
    size_t i = hash(key);
    for (size_t probes = 0; probes < TABLE_SIZE; probes++, i = (i + 1) & (TABLE_SIZE - 1)) {
        uintptr_t seen = atomic_load_explicit(&table[i].fn, memory_order_relaxed);
        if (seen == 0) {
            /* Free: try to claim it.  If another thread got there first,
             * `seen` tells us with which function. */
            if (atomic_compare_exchange_strong_explicit(&table[i].fn, &seen, key,
                                                        memory_order_relaxed,
                                                        memory_order_relaxed))
                seen = key;
        }
        if (seen == key) {
            atomic_fetch_add_explicit(&table[i].calls, 1, memory_order_relaxed);
            return;
        }
    }
    atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
}

/* We only count entries; exits need no work. */
NOINSTR static void count_exit(void *fn, void *call_site)
{
    (void)fn;
    (void)call_site;
}

EXPORT NOINSTR int HookitStart(const struct hookit_host *h, struct hookit_plugin *plugin)
{
    host = h;
    plugin->abi_version = HOOKIT_ABI_VERSION;
    plugin->caps = HOOKIT_CAP_CALLS;     /* entries and exits, nothing else */
    plugin->name = "count";
    plugin->enter = count_enter;         /* called directly: the fast path */
    plugin->exit = count_exit;
    return 0;
}

/* Every event we did not take through the fast path.  With fast enter/exit
 * given and only HOOKIT_CAP_CALLS asked for, nothing of interest comes here,
 * but a plugin must export it. */
EXPORT NOINSTR void HookitEvent(const struct hookit_event *ev)
{
    if (ev->type == HOOKIT_EV_ENTER)
        count_enter(ev->fn, ev->call_site);
}

/* ---- at process end: sort and write -------------------------------------- */

struct row {
    uint64_t calls;
    uintptr_t fn;
};

NOINSTR static int most_calls_first(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return (x->fn > y->fn) - (x->fn < y->fn);
}

/* A name for an address: the dynamic symbol dladdr finds, or module+offset
 * (resolve that with addr2line -f -e MODULE OFFSET).  dladdr only sees
 * exported symbols: link executables with -rdynamic for nicer names; a real
 * profiler reads .symtab (hookit's A2N does). */
NOINSTR static void name_of(uintptr_t fn, char *buf, size_t size)
{
    Dl_info info = { 0 };
    int found = dladdr((void *)fn, &info);
    if (found && info.dli_sname && (uintptr_t)info.dli_saddr == fn) {
        snprintf(buf, size, "%s", info.dli_sname);
    } else if (found && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(buf, size, "%s+0x%lx", base ? base + 1 : info.dli_fname,
                 (unsigned long)(fn - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(buf, size, "?");
    }
}

NOINSTR static void write_counts(FILE *out, struct row *rows, size_t n)
{
    char name[512];
    for (size_t i = 0; i < n; i++) {
        name_of(rows[i].fn, name, sizeof name);
        fprintf(out, "%llu 0x%lx %s\n", (unsigned long long)rows[i].calls,
                (unsigned long)rows[i].fn, name);
    }
}

EXPORT NOINSTR void HookitFinish(int how)
{
    (void)how;
    int saved_errno = errno;              /* never disturb the program */
    static struct row rows[TABLE_SIZE];   /* static: no allocation at exit */
    size_t n = 0;
    for (size_t i = 0; i < TABLE_SIZE; i++) {
        uintptr_t fn = atomic_load(&table[i].fn);
        if (fn)
            rows[n++] = (struct row){ atomic_load(&table[i].calls), fn };
    }
    qsort(rows, n, sizeof rows[0], most_calls_first);

    /* Write to a temporary name and rename, so a reader never sees half a file. */
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/count.%s.%d.txt", host->output_dir,
             program_invocation_short_name, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        host->log("count: cannot write %s: %s", tmp, strerror(errno));
    } else {
        write_counts(out, rows, n);
        if (fclose(out) != 0 || rename(tmp, path) != 0) {
            host->log("count: cannot write %s: %s", path, strerror(errno));
            unlink(tmp);
        } else {
            host->debug_log("count: %zu functions written to %s", n, path);
        }
    }
    if (atomic_load(&lost))
        host->log("count: table full, %llu calls not counted",
                  (unsigned long long)atomic_load(&lost));
    errno = saved_errno;
}
