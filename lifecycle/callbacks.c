/*
 * The monitor_* callbacks' weak defaults (a client overrides any of them),
 * the support functions of include/monitor.h that belong to no single
 * concern, and the registry of internal lc_clients (libhookit's profiler).
 */
#include "lifecycle/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- weak defaults: do nothing ---------------------------------------------- */
#define LC_WEAK __attribute__((weak, visibility("default")))

LC_WEAK void monitor_init_library(void) {}
LC_WEAK void monitor_fini_library(void) {}
LC_WEAK void *monitor_init_process(int *argc, char **argv, void *data) { return NULL; }
LC_WEAK void monitor_fini_process(int how, void *data) {}
LC_WEAK void monitor_begin_process_exit(int how) {}
LC_WEAK void monitor_start_main_init(void) {}
LC_WEAK void monitor_at_main(void) {}
/* Static builds call it before main (main.c); a program may define it. */
LC_WEAK int monitor_wrap_main(int argc, char **argv, char **envp) { return 0; }
LC_WEAK void *monitor_pre_fork(void) { return NULL; }
LC_WEAK void monitor_post_fork(pid_t child, void *data) {}
LC_WEAK void monitor_init_thread_support(void) {}
LC_WEAK void *monitor_thread_pre_create(void) { return NULL; }
LC_WEAK void monitor_thread_post_create(void *data) {}
LC_WEAK void *monitor_init_thread(int tid, void *data) { return NULL; }
LC_WEAK void monitor_fini_thread(void *data) {}
LC_WEAK size_t monitor_reset_stacksize(size_t old_size) { return old_size; }
LC_WEAK void monitor_pre_dlopen(const char *path, int flags) {}
LC_WEAK void monitor_dlopen(const char *path, int flags, void *handle) {}
LC_WEAK void monitor_dlclose(void *handle) {}
LC_WEAK void monitor_post_dlclose(void *handle, int ret) {}
LC_WEAK void monitor_mpi_pre_init(void) {}
LC_WEAK void monitor_init_mpi(int *argc, char ***argv) {}
LC_WEAK void monitor_fini_mpi(void) {}
LC_WEAK void monitor_mpi_post_fini(void) {}

/* ---- internal clients -------------------------------------------------------- */
const struct lc_client *lc_clients[LC_MAX_CLIENTS];
atomic_int lc_nclients;

/* Several clients may register (libhookit's bridge, a test's own client);
 * each gets every event.  A client registering after the process started
 * gets init_process at once, so it never misses the start. */
void lifecycle_register(const struct lc_client *client)
{
    if (!client)
        return;
    int n = atomic_load(&lc_nclients);
    for (int i = 0; i < n; i++)
        if (lc_clients[i] == client)
            return;
    if (n >= LC_MAX_CLIENTS) {
        lc_diag("lifecycle: too many clients, one ignored");
        return;
    }
    lc_clients[n] = client;
    atomic_store(&lc_nclients, n + 1);
    if (atomic_load(&lc_proc_state) == LC_PROC_RUNNING && client->init_process)
        client->init_process();
}

/* ---- support functions ---------------------------------------------------------- */
LC_API int monitor_is_threaded(void)
{
    return atomic_load(&lc_threaded);
}

LC_API int monitor_get_thread_num(void)
{
    struct lc_thread *t = lc_thread_self();
    return t && t->monitored ? t->num : -1;
}

LC_API void *monitor_get_user_data(void)
{
    struct lc_thread *t = lc_thread_self();
    if (!t)
        return NULL;
    return t == &lc_main_thread ? lc_process_data : t->user_data;
}

LC_API void *monitor_get_addr_main(void)
{
    return lc_main_addr;
}

/* As libmonitor: abort without any callback.  abort() itself is not
 * wrapped, but SIGABRT's default disposition is the layer's handler (for
 * the fini at a death by a signal): the kernel gets the default back. */
LC_API void monitor_real_abort(void)
{
    lc_ensure_init();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    REAL(sigaction)(SIGABRT, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGABRT);
    lc_raw_sigmask(SIG_UNBLOCK, &one, NULL);
    abort();
}
