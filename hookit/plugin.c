/* Loading the profiler plugin (HOOKIT_PROFILER) and delivering events to it.
 *
 * Dynamic builds dlopen the plugin: a bare name is looked up in hookit's
 * plugin directory first, then by the loader's usual search.  The static
 * variant (libhookit.a, `hookit link`) uses the plugin linked into the
 * program when there is one. */
#include "hookit/internal.h"
#include "hookit/io_api.h"
#include "hookit/profiler.h"
#include "lifecycle/lifecycle.h"
#include "monitor.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct hk_plugin hk_plugin;
struct hookit_host hk_host;

HK_NOINSTR static void event_enter(void *fn, void *site)
{
    struct hookit_event ev = { .type = HOOKIT_EV_ENTER, .fn = fn, .call_site = site };
    hk_plugin.event(&ev);
}

HK_NOINSTR static void event_exit(void *fn, void *site)
{
    struct hookit_event ev = { .type = HOOKIT_EV_EXIT, .fn = fn, .call_site = site };
    hk_plugin.event(&ev);
}

#ifndef HOOKIT_STATIC
HK_NOINSTR static void resolve_path(char *path, size_t size)
{
    const char *name = hk_config.profiler;
    if (!strchr(name, '/')) {
        snprintf(path, size, "%s/%s", hk_config.plugin_dir, name);
        if (access(path, F_OK) == 0)
            return;
    }
    snprintf(path, size, "%s", name);
}

/* Refuse a plugin built for another ABI before running any of its code. */
HK_NOINSTR static int abi_matches(void *handle, const char *path)
{
    const uint32_t *abi = dlsym(handle, "HookitAbiVersion");
    if (!abi) {
        hk_log("%s is not a hookit profiler (no HookitAbiVersion); running unprofiled", path);
        return 0;
    }
    if (*abi != HOOKIT_ABI_VERSION) {
        hk_log("%s was built for profiler ABI %u, this libhookit speaks %u; running unprofiled",
               path, *abi, HOOKIT_ABI_VERSION);
        return 0;
    }
    return 1;
}

/* hookit's own dlopen of its plugin is not the application's: load it with
 * the lifecycle layer's real dlopen so no client sees a dlopen callback. */
#pragma weak monitor_real_dlopen

HK_NOINSTR static void *load_library(const char *path)
{
    int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
    return monitor_real_dlopen ? monitor_real_dlopen(path, flags) : dlopen(path, flags);
}
#endif

/* First access to a signal for the plugin: the lifecycle layer's, or (no
 * layer linked) a plain handler that passes on what it does not consume. */
#pragma weak lifecycle_signal_first

HK_NOINSTR static int signal_first(int sig, int (*handler)(int, siginfo_t *, void *))
{
    if (lifecycle_signal_first)
        return lifecycle_signal_first(sig, handler);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))(void *)handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

/* The plugin's own threads: the lifecycle layer's, else plain ones. */
#pragma weak lifecycle_own_thread

HK_NOINSTR static int own_thread(void *(*fn)(void *), void *arg, void (*stop)(void))
{
    if (lifecycle_own_thread)
        return lifecycle_own_thread(fn, arg, stop);
    return ENOSYS;
}

#ifdef HOOKIT_STATIC
#pragma weak HookitStart
#pragma weak HookitEvent
#pragma weak HookitFinish
#endif

#ifdef HOOKIT_STATIC
/* The static variant never loads a plugin: `hookit link` links one in (a
 * dlopen reference would also make every -static link warn). */
HK_NOINSTR static hookit_start_fn find_entry_points(char *path, size_t size)
{
    snprintf(path, size, "(linked in)");
    if (!HookitStart || !HookitEvent || !HookitFinish) {
        hk_log("no profiler is linked into this program (hookit link links one); running unprofiled");
        return NULL;
    }
    hk_plugin.event = HookitEvent;
    hk_plugin.finish = HookitFinish;
    return HookitStart;
}
#else
HK_NOINSTR static hookit_start_fn find_entry_points(char *path, size_t size)
{
    resolve_path(path, size);
    void *handle = load_library(path);
    if (!handle) {
        hk_log("cannot load profiler %s: %s; running unprofiled", path, dlerror());
        return NULL;
    }
    if (!abi_matches(handle, path))
        return NULL;
    hookit_start_fn start = (hookit_start_fn)dlsym(handle, "HookitStart");
    hk_plugin.event = (hookit_event_fn)dlsym(handle, "HookitEvent");
    hk_plugin.finish = (hookit_finish_fn)dlsym(handle, "HookitFinish");
    if (!start || !hk_plugin.event || !hk_plugin.finish) {
        hk_log("%s is not a hookit profiler (needs HookitStart, HookitEvent and HookitFinish); "
               "running unprofiled", path);
        return NULL;
    }
    hk_plugin.handle = handle;
    return start;
}
#endif

/* A plugin that was refused gets no further call of any kind. */
HK_NOINSTR static int refuse(void)
{
    hk_plugin.event = NULL;
    hk_plugin.finish = NULL;
    return -1;
}

HK_NOINSTR int hk_plugin_load(void)
{
    char path[8300];
    hookit_start_fn start = find_entry_points(path, sizeof path);
    if (!start)
        return refuse();
    hk_host = (struct hookit_host){
        .abi_version = HOOKIT_ABI_VERSION,
        .size = sizeof hk_host,
        .collecting = &hk_hot.collecting,
        .output_dir = hk_config.output_dir,
        .plugin_dir = hk_config.plugin_dir,
        .debug = hk_config.debug,
        .log = hk_log,
        .debug_log = hk_debug,
        .signal_first = signal_first,
        .io_clock = hk_io_clock_is_counter() ? 0 : 1,
        .io_now = hk_io_now,
        .io_ticks_per_ns = hk_io_ticks_per_ns,
        .io_quiet = hk_io_quiet,
        .fallback_dir = hk_config.fallback_dir,
        .output_fallback = hk_config.output_fallback,
        .own_thread = own_thread,
    };
    struct hookit_plugin info = { 0 };
    if (start(&hk_host, &info) != 0) {
        hk_log("profiler %s refused to start; running unprofiled", path);
        return refuse();
    }
    if (info.abi_version != HOOKIT_ABI_VERSION) {
        hk_log("profiler %s answered with ABI %u, expected %u; running unprofiled",
               path, info.abi_version, HOOKIT_ABI_VERSION);
        return refuse();
    }
    hk_plugin.info = info;
    hk_hot.attention = info.attention;
    hk_io_configure(info.caps);
    hk_wait_configure(info.caps, info.wait_begin);
    if (info.caps & HOOKIT_CAP_CALLS) {
        hk_hot.enter = info.enter ? info.enter : event_enter;
        hk_hot.exit = info.exit ? info.exit : event_exit;
    }
    hk_debug("profiler %s loaded (%s)", path, info.name ? info.name : "unnamed");
    return 0;
}

HK_NOINSTR void hk_plugin_event(const struct hookit_event *ev)
{
    if (hk_plugin.event) {
        hk_io_guard++;          /* the plugin's own I/O and malloc are not the program's */
        hk_plugin.event(ev);
        hk_io_guard--;
    }
}
