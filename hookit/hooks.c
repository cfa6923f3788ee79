/* The compiler hooks: the hot path.  Called on every function entry and exit
 * of instrumented code; a load of the switch, then a direct jump into the
 * profiler's entry point.  No locks, no libc, errno untouched. */
#include "hookit/internal.h"

HK_NOINSTR static void ignore_call(void *fn, void *site)
{
    (void)fn;
    (void)site;
}

struct hk_hot hk_hot __attribute__((aligned(64))) = { .enter = ignore_call, .exit = ignore_call };

/* The first hook may run before our constructor (an instrumented constructor
 * of a library loaded earlier, or preinit code): initialise here, then
 * deliver the event if collection is on. */
HK_NOINSTR __attribute__((noinline, cold)) static void init_from_hook(void *fn, void *site)
{
    hk_init();
    if (hk_collecting_now())
        hk_hot.enter(fn, site);
}

/* Collection is off: someone outside may be asking to turn it on. */
HK_NOINSTR __attribute__((noinline, cold)) static void attend(void)
{
    struct hookit_event ev = { .type = HOOKIT_EV_CONTROL };
    hk_plugin_event(&ev);
}

HK_EXPORT HK_NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
    if (HK_LIKELY(hk_collecting_now())) {
        hk_hot.enter(fn, site);
        return;
    }
    if (HK_UNLIKELY(!hk_hot.initialized))
        init_from_hook(fn, site);
    else if (HK_UNLIKELY(hk_hot.attention && *hk_hot.attention))
        attend();
}

HK_EXPORT HK_NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
    if (HK_LIKELY(hk_collecting_now()))
        hk_hot.exit(fn, site);
    else if (HK_UNLIKELY(hk_hot.attention && *hk_hot.attention))
        attend();
}

/* After exit() began (a plugin with HOOKIT_CAP_LATE_EXIT), only the exiting
 * thread's hooks still reach the plugin: its atexit handlers and
 * destructors are the program's last code, while threads that outlived
 * the shoot-down must not change their trees under the final profile.
 * The plugin's entry points are reached by a tail jump as before, so the
 * frame address they see is the instrumented function's. */
static __thread int exiting_thread __attribute__((tls_model("initial-exec")));
static hookit_fast_fn plugin_enter, plugin_exit;

HK_NOINSTR static void exiting_enter(void *fn, void *site)
{
    if (exiting_thread)
        plugin_enter(fn, site);
}

HK_NOINSTR static void exiting_exit(void *fn, void *site)
{
    if (exiting_thread)
        plugin_exit(fn, site);
}

HK_NOINSTR void hk_hooks_only_this_thread(void)
{
    exiting_thread = 1;
    if (hk_hot.enter == exiting_enter)
        return;
    plugin_enter = hk_hot.enter;
    plugin_exit = hk_hot.exit;
    __atomic_store_n(&hk_hot.enter, exiting_enter, __ATOMIC_RELEASE);
    __atomic_store_n(&hk_hot.exit, exiting_exit, __ATOMIC_RELEASE);
}

/* Hidden aliases for our own callers (MPI frames, wrappers): a call to the
 * exported name could bind through the PLT to glibc's no-op hooks. */
extern void hk_func_enter(void *fn, void *site)
    __attribute__((alias("__cyg_profile_func_enter"), visibility("hidden")));
extern void hk_func_exit(void *fn, void *site)
    __attribute__((alias("__cyg_profile_func_exit"), visibility("hidden")));
