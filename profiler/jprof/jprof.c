/* libjprof: hookit's default profiler, a per-thread calling-context tree
 * with exact call counts and inclusive/exclusive times.  This file is the
 * plugin ABI (include/hookit/profiler.h): start, events, finish. */
#include "jprof.h"
#include "common/entry_calls.h"
#include "profiler/jprof/metrics/metrics.h"
#include "profiler/jprof/frames/frames.h"
#include "profiler/jprof/live/attend.h"
#include "profiler/jprof/live/live.h"
#include "profiler/jprof/metrics/sampler.h"
#include "profiler/jprof/metrics/wait.h"
#include "profiler/jprof/output/output.h"
#include "profiler/jprof/tree/skip.h"
#include "profiler/jprof/tree/tree.h"
#include "profiler/jprof/output/mpi_job.h"

#include <stdlib.h>

HOOKIT_PLUGIN_ABI;

static hookit_fast_fn fast_enter, fast_exit;

/* The hook pair's own cost (calibrate.c): at start, and again before the
 * final profile (the lower figure is kept); sampling times no call. */
JP_NOINSTR static void calibrate(void)
{
    if (!jp_opt.sample)
        jp_calibrate(fast_enter, fast_exit);
}

JP_EXPORT JP_NOINSTR int HookitStart(const struct hookit_host *host, struct hookit_plugin *plugin)
{
    if (host->abi_version != HOOKIT_ABI_VERSION)
        return -1;
    if (jp_host)                /* one jprof per process: a second libhookit is refused */
        return -1;
    jp_host = host;
    if (jp_options_parse(getenv("JPROFOPTS"), host->log))
        jp_options_help_and_end(host->log);
    if (jp_arena_init() != 0) {
        host->log("jprof: cannot map memory for the call trees; running unprofiled");
        return -1;
    }
    jp_clock_init(jp_opt.use_tsc);
    if (jp_opt.sample && jp_sampler_start() != 0) {
        host->log("jprof: cannot install the sampling signal handler; using timer=exact");
        jp_opt.sample = 0;
    } else if (jp_opt.cpu && !jp_opt.sample && jp_sampler_start() != 0) {
        host->log("jprof: cannot install the sampling signal handler; no cpu_ns");
        jp_opt.cpu = 0;
    }
    jp_process_start();
    jp_threads_init();
    jp_retire_init();
    jp_names_start();
    jp_skip_start(host->log);
    hk_entry_calls_start(); /* for the landing pads' owners (common/inlined_pad.h) */
    if (!jp_opt.start_on)
        *host->collecting = 0;
    plugin->abi_version = HOOKIT_ABI_VERSION;
    plugin->caps = HOOKIT_CAP_CALLS | HOOKIT_CAP_THREADS | HOOKIT_CAP_FORK | HOOKIT_CAP_DLOPEN |
                   HOOKIT_CAP_CONTROL | HOOKIT_CAP_MPI | HOOKIT_CAP_LATE_EXIT | jp_metrics_start(host) |
                   jp_wait_start(host);
    plugin->name = "jprof";
    plugin->enter = jp_opt.sample ? jp_enter_counted : jp_clock_is_tsc() ? jp_enter_tsc : jp_enter_mono;
    plugin->exit = jp_opt.sample ? jp_exit_counted : jp_clock_is_tsc() ? jp_exit_tsc : jp_exit_mono;
    fast_enter = plugin->enter;
    fast_exit = plugin->exit;
    calibrate();
    plugin->attention = &jp_arena_header()->attention;
    plugin->flow = jp_flow;
    plugin->wait_begin = jp_wait_begin;
    jp_agent_start();
    return 0;
}

/* exit() began: the profile as it stands is written now, under the name
 * the final one will replace (the process may yet leave by _exit or die
 * before our destructor).  The exiting thread goes on collecting the
 * atexit handlers and destructors; how far it had got is kept, so that a
 * HookitFinish with nothing new writes nothing again. */
static uint32_t exiting_seq;
static int exited;

JP_NOINSTR static uint32_t every_thread_seq(void)
{
    uint32_t seq = 0;
    for (arena_ref r = jp_arena_header()->first_thread; r; r = ((struct arena_thread *)jp_at(r))->next)
        seq += ((struct arena_thread *)jp_at(r))->seq;
    return seq;
}

JP_NOINSTR static void exiting(void)
{
    calibrate();
    jp_write_profile(JP_END_EXITING);
    exited = 1;
    exiting_seq = every_thread_seq();
}

JP_NOINSTR static int changed_since_exiting(void)
{
    return every_thread_seq() != exiting_seq;
}

/* Events whose handling calls libc (reading symbols, writing files), which
 * may run the program's own instrumented functions (its malloc): those
 * hooks are the profiler's calls, ignored while the thread is JP_QUIET. */
JP_NOINSTR static struct jp_thread *quiet_begin(void)
{
    struct jp_thread *t = jp_self;
    if (!t || jp_self_live())
        jp_self = JP_QUIET;
    return t;
}

JP_NOINSTR static void quiet_end(struct jp_thread *t)
{
    if (jp_self == JP_QUIET)
        jp_self = t;
}

JP_NOINSTR static int calls_libc(uint32_t type)
{
    switch (type) {
    case HOOKIT_EV_EXITING:
    case HOOKIT_EV_EXEC:
    case HOOKIT_EV_FLUSH:
    case HOOKIT_EV_DLOPEN:
    case HOOKIT_EV_PRE_DLCLOSE:
    case HOOKIT_EV_DLCLOSE:
    case HOOKIT_EV_EXEC_FAILED:
    case HOOKIT_EV_SET_USER:
        return 1;
    default:
        return 0;
    }
}

JP_NOINSTR static void handle_event(const struct hookit_event *ev);

JP_EXPORT JP_NOINSTR void HookitEvent(const struct hookit_event *ev)
{
    if (!calls_libc(ev->type)) {
        handle_event(ev);
        return;
    }
    struct jp_thread *t = quiet_begin();
    handle_event(ev);
    quiet_end(t);
}

JP_NOINSTR static void handle_event(const struct hookit_event *ev)
{
    switch (ev->type) {
    case HOOKIT_EV_ENTER:
        fast_enter(ev->fn, ev->call_site);
        break;
    case HOOKIT_EV_EXIT:
        fast_exit(ev->fn, ev->call_site);
        break;
    case HOOKIT_EV_THREAD_START:
        if (!jp_self)
            jp_thread_attach_numbered(ev->thread_num);
        jp_agent_program_thread();
        break;
    case HOOKIT_EV_THREAD_END:
        jp_thread_end();
        break;
    case HOOKIT_EV_FORK_PREPARE:
        jp_output_fork_prepare();
        jp_thread_fork_prepare();
        break;
    case HOOKIT_EV_FORK_PARENT:
        jp_thread_fork_parent();
        jp_output_forked();
        break;
    case HOOKIT_EV_FORK_CHILD:
        jp_thread_fork_child_begin();
        if (jp_arena_fork_child() != 0)
            jp_host->log("jprof: cannot copy the call trees in the forked child");
        exited = 0;                 /* a fork from an atexit handler: the child is its own */
        jp_retire_fork_child();     /* before any node is made: its lock */
        jp_flow_fork_child();
        jp_thread_fork_child();
        jp_process_start();
        jp_output_fork_child();
        jp_sampler_fork_child();
        jp_metrics_fork_child();
        jp_names_fork_child();
        jp_skip_fork_child();
        jp_agent_fork_child();
        jp_mpi_job_fork_child();
        break;
    case HOOKIT_EV_WAIT:
        jp_wait_event(ev->wait);
        break;
    case HOOKIT_EV_IO:
    case HOOKIT_EV_ALLOC:
    case HOOKIT_EV_FREE:
        jp_metrics_event(ev);
        break;
    case HOOKIT_EV_MPI_ENTER:
    case HOOKIT_EV_MPI_EXIT:
        jp_mpi_event(ev);
        break;
    case HOOKIT_EV_EXEC:
        jp_sampler_thread_end();
        calibrate();
        jp_write_profile(HOOKIT_END_EXEC);
        break;
    case HOOKIT_EV_EXITING:
        exiting();
        break;
    case HOOKIT_EV_FLUSH:
        jp_write_profile(0);
        break;
    case HOOKIT_EV_DLOPEN:
        jp_names_reload(); /* the maps copy too (names.c) */
        break;
    case HOOKIT_EV_PRE_DLCLOSE:
        jp_names_pre_dlclose(ev->handle);
        break;
    case HOOKIT_EV_DLCLOSE:
        /* No maps read: names.c reads them again when they are needed. */
        jp_names_post_dlclose();
        break;
    case HOOKIT_EV_EXEC_FAILED:
        jp_arena_exec_failed();
        jp_sampler_thread_start();
        break;
    case HOOKIT_EV_SET_USER:
        jp_arena_user_change(ev->uid);
        break;
    case HOOKIT_EV_RESET:
        jp_control_local(ARENA_CMD_RESET);
        break;
    case HOOKIT_EV_ZEROBASE:
        jp_control_local(ARENA_CMD_ZEROBASE);
        break;
    case HOOKIT_EV_MPI_INITIALIZED:
        jp_mpi_job_initialized();
        break;
    case HOOKIT_EV_MPI_FINALIZING:
        jp_mpi_job_finalizing();
        break;
    case HOOKIT_EV_MPI_FINALIZED:
        jp_mpi_job_finalized();
        break;
    case HOOKIT_EV_MPI_RANK:
        jp_rank = ev->rank;
        jp_size = ev->size;
        jp_job_mark(ev->rank, ev->size);
        break;
    case HOOKIT_EV_SIGNAL_DEATH:
        jp_death_signal = ev->signo;
        break;
    case HOOKIT_EV_CONTROL:
        jp_attend(jp_self ? jp_self_live() : jp_thread_attach());
        break;
    default:
        break;
    }
}

JP_EXPORT JP_NOINSTR void HookitFinish(int how)
{
    jp_agent_stop(how != HOOKIT_END_SIGNAL);
    if (exited && how == HOOKIT_END_EXIT && !changed_since_exiting()) {
        jp_arena_unregister(how);
        return;
    }
    jp_thread_end();            /* the finishing thread's open frames */
    if (how == HOOKIT_END_SIGNAL) {
        jp_write_profile_isolated(how);     /* bounded in time: no calibration */
    } else {
        calibrate();
        jp_write_profile(how);
    }
    jp_arena_unregister(how);   /* the live view ends with the profile written */
}
