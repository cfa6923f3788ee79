/* libjprof internals: the per-thread calling-context tree profiler. */
#ifndef JPROF_H
#define JPROF_H

#include <hookit/profiler.h>
#include "common/clock.h"
#include "common/pages.h"
#include "common/spin.h"
#include "profile/arena.h"
#include "metrics_thread.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JP_NOINSTR __attribute__((no_instrument_function))
#define JP_EXPORT  __attribute__((visibility("default")))
#define JP_LIKELY(x)   __builtin_expect(!!(x), 1)
#define JP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- the shared arena (arena.c) ---------------------------------------------
 * Every tree lives in one process-shared mapping; its layout, and the rules
 * for writing it so that other processes can read it, are in
 * profile/arena.h. */
/* Hidden in the declaration too: the hooks then add it to a reference
 * straight from its address, instead of loading that address from the GOT
 * first (one instruction and one register fewer per hook). */
extern char *jp_arena_base __attribute__((visibility("hidden")));
static inline void *jp_at(arena_ref ref) { return jp_arena_base + (size_t)ref * ARENA_SLOT; }
static inline struct arena_node *jp_node(arena_ref ref) { return (struct arena_node *)jp_at(ref); }
int jp_arena_init(void);
/* n contiguous slots; 0 when the arena is full. */
arena_ref jp_arena_alloc(uint32_t nslots);
/* In a forked child: give the child a private arena holding a copy. */
int jp_arena_fork_child(void);
struct arena_header *jp_arena_header(void);
/* The registry files (docs/live.md): removed at the end (after the
 * profile), hidden across an exec (how == HOOKIT_END_EXEC), back after a
 * failed exec; the maps copy refreshed after a dlopen. */
void jp_arena_unregister(int how);
void jp_arena_exec_failed(void);
/* The effective user is about to change (HOOKIT_EV_SET_USER): the registry
 * files move where the new user can remove them. */
void jp_arena_user_change(uid_t euid);
/* After a dlopen (settled: as jp_loaded_refresh's), the maps copy again,
 * unless the objects loaded are those it was taken with. */
void jp_arena_maps_changed(int settled);

/* ---- the loaded objects (loaded.c) ----------------------------------------
 * Work done from /proc/self/maps is done again only when the objects the
 * loader has loaded changed.  *have is the set of loaded objects the last
 * reading reflects, 0 for unknown.  Unless the objects loaded now are
 * *have, runs reread(ctx) (0 ok) and stores in *have the set it reflects:
 * 0 when it failed, when objects were loaded or unloaded meanwhile, or when
 * the caller could not keep dlclose out (settled 0: only under
 * names.c's unload lock can no library be unmapped during the reading,
 * unseen).  Returns whether reread ran.  Callers of one *have take turns
 * (a lock). */
int jp_loaded_refresh(uint64_t *have, int settled, int (*reread)(void *ctx), void *ctx);

/* ---- threads (thread.c) -------------------------------------------------- */
/* Private per-thread state, reached through initial-exec TLS.  The depth
 * and the seqlock live only in the shared record (rec->depth, rec->seq):
 * the hot path stores each once.  The current node is kept here as well as
 * in the top frame: an entry's look-up then starts one load earlier (the
 * chain from one hook to the next is what the sampling mode waits on). */
/* The entry path's memory of where each call went: a direct-mapped table
 * from (parent node, function) to the child node, per thread.  An entry
 * is only a hint: the entry path takes it when the node it names has that
 * function and that parent, which makes it that parent's one child for the
 * function, whatever was stored before.  An interpreter's dispatch loop,
 * which calls a different function each time, then stays on the fast path
 * (one parent's last child alone served half of Lua's calls).  Cleared
 * when a thread's tree starts (thread.c), so its entries only ever name
 * nodes of this thread's tree. */
#define JP_EDGE_BITS 12
static inline uint32_t jp_edge_slot(arena_ref parent, uint64_t fn)
{
    return ((uint32_t)fn ^ (parent << 16) ^ parent) * 0x9e3779b1u >> (32 - JP_EDGE_BITS);
}

/* A blocking call in progress in a thread (wait.c): written by the thread
 * only; read by the profile's builder while the thread is blocked. */
struct jp_wait {
    uint64_t t0;         /* jp_now() when it began */
    uint64_t callbacks;  /* jprof ticks of frames closed at the waiting depth */
    uint64_t cb_samples; /* timer=sample: samples taken above the waiting depth */
    arena_ref node;      /* the waiting context */
    uint32_t depth;      /* open frames when it began */
    uint32_t active;
    /* jp_now() of the last reset or zerobase applied to the thread's tree:
     * a blocking call that spanned it counts only its time after it
     * (jp_wait_cut, jp_blocking_ticks). */
    uint64_t cut;
};

struct jp_thread {
    struct arena_frame *stack;  /* shadow stack (in the arena); stack[0] is the root frame */
    struct arena_thread *rec;   /* its depth: frames in use above the root */
    uint32_t capacity;
    arena_ref cur;              /* = stack[rec->depth].node */
    arena_ref chunk_next, chunk_end; /* this thread's free slots */
    uint32_t chunk_slots;       /* size of the next chunk */
    arena_ref rec_ref;
    uintptr_t stack_lo, stack_hi;/* this thread's stack, for the fallback's same-stack test */
    uint32_t floor;             /* frames at or below it are another context's (flow.c): no
                                 * fallback, catch or jump closes them */
    uint32_t ctx_serial;        /* the running context's number (0: the thread's own stack) */
    const void *native_ctx;     /* where the thread's own context was last saved (swapcontext) */
    int quiet;                  /* inside jp_quiet_begin: refused hooks are not drops */
    uint32_t arena_full;
    struct jp_thread *next_free;/* the free list's link while recycled (thread.c) */
    int rec_reused;             /* rec was a retired thread's (retire.c) */
    uint32_t named;             /* rec->name was given (a Java thread's name): kept at the end */
    struct jp_wait wait;        /* the blocking call in progress (wait.c) */
    arena_ref edges[1u << JP_EDGE_BITS]; /* see jp_edge_slot */
    /* Kept when the state is recycled (reuse_thread clears what is above):
     * the list of every state made, and the I/O and memory numbers, which
     * are process totals summed over that list (metrics_thread.h). */
    struct jp_thread *all_next;
    struct metrics_thread metrics;
};
#define JP_THREAD_RECYCLED_BYTES offsetof(struct jp_thread, all_next)

extern __thread struct jp_thread *jp_self __attribute__((tls_model("initial-exec")));
/* jp_self once the thread has ended: its later hooks (TLS destructors, say)
 * are ignored.  Not a shared "ended" state: every ended thread would write
 * its seq at once, and seq is only safe with one writer. */
#define JP_ENDED ((struct jp_thread *)1)
/* jp_self while the thread is being set up (jp_thread_attach): hooks
 * that arrive meanwhile come from libc calling the program's own code
 * (its malloc, say) on our behalf, and are ignored. */
#define JP_QUIET ((struct jp_thread *)2)
/* jp_self of the forking thread from FORK_PREPARE to FORK_PARENT or
 * FORK_CHILD: its tree is in memory the parent and the child share until
 * the child has its own copy, so the hooks that run in between (the
 * program's pthread_atfork handlers) stay out of it and are counted as
 * dropped (jp_fork_window_hook). */
#define JP_FORKING ((struct jp_thread *)3)
#define JP_SENTINEL JP_FORKING
/* jp_self when it is a running thread's state, else NULL. */
static inline struct jp_thread *jp_self_live(void)
{
    struct jp_thread *t = jp_self;
    return (uintptr_t)t > (uintptr_t)JP_SENTINEL ? t : NULL;
}
void jp_fork_window_hook(void);
static inline uint32_t jp_depth(const struct jp_thread *t) { return t->rec->depth; }
/* sp lies on the thread's own stack (not a sigaltstack or a coroutine's). */
static inline int jp_on_stack(const struct jp_thread *t, uintptr_t sp)
{
    return sp >= t->stack_lo && sp < t->stack_hi;
}
/* The node of the innermost open frame (the root's when none is open). */
static inline arena_ref jp_cur(const struct jp_thread *t) { return t->cur; }

/* Busy: the thread's seq is odd while profiler code changes its tree, for
 * live readers (a torn copy is retried) and for signal handlers that
 * interrupt it (their hooks are dropped and counted).  jp_busy_take makes
 * it odd and returns what it was, in one instruction on x86 (not atomic
 * between CPUs, and need not be: only the thread writes it; atomic against
 * a signal handler interrupting the thread, which is what matters).  When
 * it was odd already the caller is inside a handler and must put it back
 * (jp_busy_refused) and go. */
static inline uint32_t jp_busy_take(struct arena_thread *rec)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t old = 1;
    __asm__ volatile("xaddl %0, %1" : "+r"(old), "+m"(rec->seq) : : "memory");
#else
    uint32_t old = __atomic_fetch_add(&rec->seq, 1, __ATOMIC_RELAXED);
#endif
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return old;
}
static inline void jp_busy_refused(const struct jp_thread *t, struct arena_thread *rec, uint32_t old)
{
    rec->seq = old;
    if (!t->quiet)
        rec->dropped++;
}
/* Busy ends: seq moves on to the next even value.  Only the thread
 * writes its seq, so it is still what jp_busy_take left. */
static inline void jp_busy_done(struct arena_thread *rec)
{
    __atomic_store_n(&rec->seq, rec->seq + 1, __ATOMIC_RELEASE);
}
static inline int jp_busy(const struct jp_thread *t) { return t->rec->seq & 1; }
/* Busy for code outside the hooks; 0 when already busy (then do nothing). */
static inline int jp_busy_begin(struct jp_thread *t)
{
    uint32_t old = jp_busy_take(t->rec);
    if (old & 1) {
        t->rec->seq = old;
        return 0;
    }
    return 1;
}
/* Quiet: profiler code that calls libc, which may run the program's own
 * instrumented functions (its malloc, say), holds busy with t->quiet set:
 * those hooks are the profiler's calls, not the program's, and are
 * ignored without counting a drop.  0 when t was busy already. */
static inline int jp_quiet_begin(struct jp_thread *t)
{
    if (!jp_busy_begin(t))
        return 0;
    t->quiet = 1;
    return 1;
}
static inline void jp_quiet_end(struct jp_thread *t)
{
    t->quiet = 0;
    jp_busy_done(t->rec);
}
/* Zeroed private pages of our own (thread.c): never malloc, which may be the
 * program's own instrumented one.  NULL when none can be had. */
void *jp_map_pages(size_t size);
struct jp_thread *jp_thread_attach(void);
struct jp_thread *jp_thread_attach_numbered(int number);
void jp_thread_end(void);
void jp_thread_fork_prepare(void);
void jp_thread_fork_parent(void);
void jp_thread_fork_child_begin(void);
void jp_thread_fork_child(void);
arena_ref jp_node_new(struct jp_thread *t, arena_ref parent, uint64_t fn);
void jp_threads_init(void);
/* Name of the calling thread into rec (from the kernel's comm). */
void jp_thread_name(struct arena_thread *rec);
int jp_grow_stack(struct jp_thread *t);
struct jp_thread *jp_thread_scratch(void);
void jp_thread_publish(struct jp_thread *t);
/* Every thread state ever made (running, ended and waiting for reuse,
 * scratch; in a fork child also the parent's other threads'), newest
 * first, linked by all_next: the metrics are summed over it.  States are
 * never unmapped once listed. */
struct jp_thread *jp_thread_all(void);

/* ---- retiring ended threads (retire.c) ------------------------------------ */
arena_ref jp_chunk_alloc(struct jp_thread *t, uint32_t slots);
arena_ref jp_retired_record(void);
void jp_retire(struct arena_thread *rec, arena_ref ref);
void jp_retire_init(void);
void jp_retire_fork_child(void);
void jp_thread_scratch_free(struct jp_thread *t);
/* reset or zerobase (ARENA_CMD_*) on every ended thread's tree. */
void jp_retired_control(uint32_t cmd);

/* ---- the profiler's own cost (calibrate.c) -------------------------------- */
/* Measure the pair's cost; the lowest measurement so far is kept. */
void jp_calibrate(hookit_fast_fn enter, hookit_fast_fn exit);
uint64_t jp_overhead_full_ticks(void);
uint64_t jp_overhead_inner_ticks(void);

/* ---- clock (clock.c, over common/clock.h) ------------------------------------
 * Ticks are hk_counter() when jp_clock_is_tsc(), else hk_mono_ns(). */
void jp_clock_init(int use_tsc);
int jp_clock_is_tsc(void);
uint64_t jp_ticks_to_ns(uint64_t ticks);
double jp_ticks_per_ns(void);
void jp_clock_calibrate(void);

/* ---- the hot path (tree.c) ----------------------------------------------- */
void jp_enter_tsc(void *fn, void *site);
void jp_exit_tsc(void *fn, void *site);
void jp_enter_mono(void *fn, void *site);
void jp_exit_mono(void *fn, void *site);
/* Close the top frame (its time added, no call counted), and open a frame
 * for fn below the top without counting a call: a context frame (a fork
 * child's inherited path, a coroutine resumed elsewhere).  0 or -1. */
void jp_close_top(struct jp_thread *t, uint64_t now);
/* A frame's canonical frame address (tree.c; on the thread's own stack). */
uintptr_t jp_frame_cfa(const struct jp_thread *t, const struct arena_frame *f);
int jp_open_context(struct jp_thread *t, uint64_t fn, uintptr_t sp, uint64_t now);
/* Sampling mode: exact counts, no clock; time comes from samples. */
void jp_enter_counted(void *fn, void *site);
void jp_exit_counted(void *fn, void *site);
uint64_t jp_now(void);
/* Frames that are not machine code, by jp_synthetic_key (Java methods):
 * no stack-pointer check, ended by key. */
void jp_enter_synthetic(uint64_t key);
void jp_exit_synthetic(uint64_t key);

/* ---- control flow the hooks do not show (flow.c) --------------------------
 * libhookit's interposers of setjmp/longjmp, __cxa_begin_catch,
 * __gxx_personality_v0 and the ucontext functions report here
 * (include/hookit/profiler.h). */
uint64_t jp_flow(const struct hookit_flow *flow);
void jp_flow_fork_child(void);

/* ---- where the tree may be wrong (unexact.c) --------------------------------
 * tree.c's fallbacks count each unmatched exit on the context it concerns;
 * build.c writes the per-node column "unmatched_exits". */
void jp_unmatched_at(arena_ref node, uint64_t exits);
struct profile;
struct prof_thread;
int jp_unmatched_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                        uint32_t n);

/* ---- frames that are not machine code (synthetic.c) ----------------------
 * jp_synthetic_key("MPI:MPI_Send", "libmpi.so.40") gives a key (same name,
 * same key) to pass as fn to the entry/exit points; names.c names it. */
uint64_t jp_synthetic_key(const char *name, const char *module);
int jp_is_synthetic(uint64_t key);
int jp_synthetic_name(uint64_t key, const char **name, const char **module);

/* ---- MPI calls as frames (mpi.c, docs/mpi.md) ------------------------------ */
void jp_mpi_event(const struct hookit_event *ev);
struct profile;
struct prof_thread;
/* build.c: the mpi_bytes column, once an MPI call was seen. */
int jp_mpi_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                  uint32_t n);

/* ---- wait time (wait.c, docs/io.md) -----------------------------------------
 * JPROFOPTS wait, nowait, cpu; HOOKIT_CAP_WAIT when wanted; the plugin's
 * wait_begin and HOOKIT_EV_WAIT; jp_attend's ARENA_REQ_WAIT; build.c's
 * wait_ns, wait_calls and cpu_ns columns. */
int jp_opt_wait(const char *value);
int jp_opt_nowait(const char *value);
int jp_opt_cpu(const char *value);
uint32_t jp_wait_start(const struct hookit_host *host);
uint64_t jp_wait_begin(void);
void jp_wait_event(const struct hookit_wait *w);
uint64_t jp_wait_net(struct jp_thread *t, uint64_t token, uint64_t t0, uint64_t t1);
void jp_wait_exit(struct jp_thread *t);
void jp_wait_jump(struct jp_thread *t, uint32_t depth, uint64_t now);
void jp_wait_thread_end(struct jp_thread *t, uint64_t now);
/* Busy held, by t's own thread: a reset or zerobase as of `at` was applied
 * to its tree; the wait in progress, if any, now starts there. */
void jp_wait_cut(struct jp_thread *t, uint64_t at);
/* dt (I/O clock ticks) of a blocking call that began at t0 (I/O clock),
 * less its part before the last reset or zerobase of t's tree. */
uint64_t jp_wait_cut_part(const struct jp_thread *t, uint64_t t0, uint64_t dt);
/* A blocking call (a wait, or an I/O call) that just returned, t0 to t1
 * (I/O clock), token from jp_wait_begin: its time in I/O clock ticks, the
 * one rule for both (jprof.h, below jp_pending, which it needs). */
static inline uint64_t jp_blocking_ticks(struct jp_thread *t, uint64_t token, uint64_t t0, uint64_t t1);
/* th's wait columns; t: the thread's live state when it still runs (its
 * wait in progress is counted up to now), else NULL. */
int jp_wait_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes, uint32_t n,
                   const struct jp_thread *t, uint64_t now);

/* ---- timer=sample (sampler.c) --------------------------------------------- */
int jp_sampler_start(void);
/* Times come from samples (timer=sample). */
int jp_sampling(void);
/* The CPU-time timers run (timer=sample, or cpu under exact timing). */
int jp_sampler_running(void);
uint64_t jp_sample_period_ns(void);
void jp_sampler_thread_start(void);
void jp_sampler_thread_end(void);
void jp_sampler_fork_child(void);

/* ---- requests from live readers (control.c) -------------------------------
 * Called at a hook exit, outside the busy section, when rec->request is set
 * (ARENA_REQ_* in profile/arena.h), and for HOOKIT_EV_CONTROL. */
void jp_attend(struct jp_thread *t);
/* A reset or zerobase pending for the thread (ARENA_REQ_PENDING, set by
 * another thread with its moment in pending_at; profile/arena.h): tested
 * at the start of every hook, before the tree changes. */
static inline uint32_t jp_pending(const struct arena_thread *rec)
{
    return rec->request & ARENA_REQ_PENDING;
}
/* Apply it, busy held, as of its moment (control.c). */
void jp_pending_apply(struct jp_thread *t);
/* The same outside a hook (an I/O, wait or flow event before the thread's
 * next hook): takes busy, does nothing when the thread is inside one. */
void jp_pending_settle(struct jp_thread *t);
/* A reset or zerobase given while the call blocked is applied first (the
 * call goes to the tree after it), and the call counts only its time from
 * that moment on; a signal handler's time during it is the handler's
 * frames' own (jp_wait_net).  Inline for the I/O path: nearly every call
 * began after the last reset, and has nothing pending. */
static inline uint64_t jp_blocking_ticks(struct jp_thread *t, uint64_t token, uint64_t t0, uint64_t t1)
{
    if (t && JP_UNLIKELY(jp_pending(t->rec)))
        jp_pending_settle(t);
    uint64_t dt = jp_wait_net(t, token, t0, t1);
    if (JP_LIKELY(!t || (t->wait.cut <= t0 && !jp_pending(t->rec))))
        return dt;
    return jp_wait_cut_part(t, t0, dt);
}
/* Claim the command waiting in the arena header, if any, carry it out and
 * acknowledge it; t is the calling thread's state, NULL for the control
 * thread (control.c). */
void jp_control_take(struct jp_thread *t);
/* The control thread (agent.c): serves commands while every program thread
 * is blocked.  Started with the process, again in a fork child that has a
 * live view; stopped before the final profile. */
void jp_agent_start(void);
void jp_agent_fork_child(void);
void jp_agent_stop(int wait);
/* Whether the arena is a registry file a reader can open. */
int jp_arena_live(void);
/* An ARENA_CMD_* carried out by the calling thread (HOOKIT_EV_RESET/ZEROBASE). */
void jp_control_local(uint32_t cmd);

/* ---- options (options.c) ------------------------------------------------- */
struct jp_options {
    int use_tsc;                /* clock=tsc|monotonic */
    int lines;                  /* resolve file:line */
    int start_on;               /* nostart */
    int control_thread;         /* nocontrol: no control thread (agent.c) */
    int sample;                 /* timer=sample */
    uint32_t sample_us;         /* sample_us=N: sampling period */
    int compensate;             /* subtract the measured overhead */
    uint32_t death_timeout_ms;  /* bound on writing when dying by a signal */
    uint32_t threads_kept;      /* ended threads kept apart before merging */
    int cpu;                    /* cpu: CPU-time samples under exact timing (wait.c) */
};
extern struct jp_options jp_opt;
/* Parse JPROFOPTS; complains once per bad option and keeps defaults. */
void jp_options_parse(const char *text, void (*log)(const char *, ...));

/* ---- writing (build.c, output.c) ----------------------------------------- */
/* How a profile written when exit() began is made (HOOKIT_EV_EXITING): as
 * the final one, under a name the final one then replaces. */
#define JP_END_EXITING (-HOOKIT_END_EXIT)
struct profile;
/* A profile of the current state; open frames count up to now.  NULL on OOM. */
struct profile *jp_build_profile(int how);
/* Write the process's profile now.  Returns 0 or -1 (message already given). */
int jp_write_profile(int how);

/* Death by a signal: write from a helper process, bounded in time. */
int jp_write_profile_isolated(int how);

extern const struct hookit_host *jp_host;
extern pid_t jp_profiled_pid, jp_profiled_ppid;
extern int jp_rank, jp_size;
extern uint64_t jp_start_wall_ns;

/* The process (process.c): its start, the signal it died of, and the
 * profile's pid, exe, argv, times and metadata. */
struct profile;
void jp_process_start(void);
extern int jp_death_signal;
int jp_fill_process(struct profile *p, int how);

/* Names (names.c): the modules and symbols the profile's addresses are
 * resolved against, kept up to date across dlopen, dlclose and fork.
 * jp_names_reload: after a dlopen (the maps copy too). */
void jp_names_start(void);
void jp_names_reload(void);
void jp_names_pre_dlclose(void *handle);
void jp_names_post_dlclose(void);
void jp_names_fork_child(void);
int jp_resolve_names(struct profile *p);

/* The profile's file name across fork, and one writer at a time (output.c). */
void jp_output_fork_prepare(void);
void jp_output_fork_child(void);
void jp_output_forked(void);

#endif
