/* libhktrace: the call-flow trace profiler (JPROF's CALLTRACE, uftrace's
 * record).  This file is the plugin ABI of include/hookit/profiler.h. */
#include "hktrace.h"

#include "common/entry_calls.h"

#include <stdlib.h>

HOOKIT_PLUGIN_ABI;

const struct hookit_host *ht_host;

HT_EXPORT HT_NOINSTR int HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin)
{
    if (host->abi_version != HOOKIT_ABI_VERSION)
        return -1;
    ht_host = host;
    if (ht_options_parse(getenv("HKTRACEOPTS"), host->log))
        ht_options_help_and_end(host->log);
    if (ht_buffer_init() != 0 || ht_funcs_init() != 0) {
        host->log("hktrace: cannot map memory for the trace buffers; running unprofiled");
        return -1;
    }
    ht_clock_init(ht_opt.use_tsc);
    ht_process_start();
    ht_threads_init();
    ht_names_start();
    hk_entry_calls_start(); /* for the landing pads' owners (common/inlined_pad.h) */
    plugin->abi_version = HOOKIT_ABI_VERSION;
    plugin->caps = HOOKIT_CAP_CALLS | HOOKIT_CAP_THREADS | HOOKIT_CAP_FORK |
                   HOOKIT_CAP_DLOPEN | HOOKIT_CAP_CONTROL;
    plugin->name = "hktrace";
    plugin->enter = ht_clock_is_tsc() ? ht_enter_tsc : ht_enter_mono;
    plugin->exit = ht_clock_is_tsc() ? ht_exit_tsc : ht_exit_mono;
    plugin->flow = ht_flow;
    return 0;
}

HT_EXPORT HT_NOINSTR void HookitEvent(const struct hookit_event *ev)
{
    switch (ev->type) {
    case HOOKIT_EV_ENTER:
        ht_enter_event(ev->fn, ev->call_site);
        break;
    case HOOKIT_EV_EXIT:
        (ht_clock_is_tsc() ? ht_exit_tsc : ht_exit_mono)(ev->fn, ev->call_site);
        break;
    case HOOKIT_EV_THREAD_START:
        if (!ht_self)
            ht_thread_attach();
        break;
    case HOOKIT_EV_THREAD_END:
        ht_thread_end();
        break;
    case HOOKIT_EV_FORK_CHILD:
        ht_process_start();
        ht_thread_fork_child();
        break;
    case HOOKIT_EV_EXEC:
        ht_write_trace(HOOKIT_END_EXEC);
        break;
    case HOOKIT_EV_FLUSH:
        ht_write_trace(0);
        break;
    case HOOKIT_EV_DLOPEN:
    case HOOKIT_EV_DLCLOSE:
        ht_names_reload();
        break;
    case HOOKIT_EV_MPI_RANK:
        ht_rank = ev->rank;
        ht_size = ev->size;
        break;
    case HOOKIT_EV_SIGNAL_DEATH:
        ht_death_signal = ev->signo;
        break;
    default:                    /* RESET/ZEROBASE: a trace is history, nothing to zero */
        break;
    }
}

HT_EXPORT HT_NOINSTR void HookitFinish(int how)
{
    ht_thread_end();            /* the finishing thread's open calls */
    ht_write_trace(how);
}
