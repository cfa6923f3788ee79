/* libhookit internals: shared by the files of hookit/, never installed. */
#ifndef HOOKIT_INTERNAL_H
#define HOOKIT_INTERNAL_H

#include <hookit/profiler.h>
#include <stdarg.h>

#define HK_NOINSTR __attribute__((no_instrument_function))
#define HK_EXPORT  __attribute__((visibility("default")))
#define HK_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HK_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Configuration read once from the environment (config.c). */
struct hk_config {
    char output_dir[4096];      /* HOOKIT_OUTPUT or "." */
    char profiler[4096];        /* HOOKIT_PROFILER or "libjprof.so" */
    char plugin_dir[4096];      /* <dir of libhookit>/hookit */
    char fallback_dir[4096];    /* $TMPDIR, else the cwd at start, else /tmp */
    int output_fallback;        /* HOOKIT_OUTPUT unusable: output_dir is fallback_dir */
    int start_on;               /* HOOKIT_PROFILING */
    int debug;                  /* HOOKIT_DEBUG */
};
extern struct hk_config hk_config;
void hk_config_read(void);

/* The hot-path state (hooks.c), in one cache line: every hook reads the
 * switch and one entry point.  collecting is the switch the plugin receives;
 * enter/exit are the plugin's fast entry points or the adapters that wrap
 * HookitEvent; attention is the plugin's (see profiler.h). */
struct hk_hot {
    volatile int collecting;
    volatile int initialized;
    hookit_fast_fn enter, exit;
    volatile uint32_t *attention;
};
extern struct hk_hot hk_hot;
/* Read and written from any thread (hookit_start/stop, the end): one
 * load or store, never torn or cached. */
static inline int hk_collecting_now(void) { return __atomic_load_n(&hk_hot.collecting, __ATOMIC_RELAXED); }
static inline void hk_set_collecting(int on) { __atomic_store_n(&hk_hot.collecting, on, __ATOMIC_RELAXED); }

/* From now on only the calling thread's hooks reach the plugin (hooks.c):
 * the end of the process, after which its atexit handlers and destructors
 * still run. */
void hk_hooks_only_this_thread(void);

/* The loaded plugin (plugin.c). */
struct hk_plugin {
    struct hookit_plugin info;
    hookit_event_fn event;
    hookit_finish_fn finish;
    void *handle;
};
extern struct hk_plugin hk_plugin;
extern struct hookit_host hk_host;
/* Load the configured plugin.  0 on success; -1 after one line on stderr. */
int hk_plugin_load(void);
/* Deliver a lifecycle event to the plugin if it wants it. */
void hk_plugin_event(const struct hookit_event *ev);

/* Start-up and shut-down (init.c). */
void hk_init(void);             /* idempotent, thread-safe */
void hk_finish(int how);        /* idempotent */

/* Diagnostics (log.c): one line on stderr, "hookit[PID]: ...", errno kept. */
void hk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hk_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hk_vlog(const char *fmt, va_list ap);

/* Control flow the hooks do not show (flow.c): the real functions found
 * at start; a thread's marks released at its end. */
void hk_flow_resolve(void);
void hk_flow_thread_end(void);

/* Instrumented modules whose hooks bound to glibc's no-ops (rebind.c):
 * connect them to ours, or name them once on stderr (HOOKIT_CONNECT). */
void hk_rebind_scan(void);

/* The hooks under hidden names (hooks.c's aliases): our own callers reach
 * libhookit's, never glibc's no-op ones through the PLT. */
void hk_func_enter(void *fn, void *site) __attribute__((visibility("hidden")));
void hk_func_exit(void *fn, void *site) __attribute__((visibility("hidden")));

#endif
