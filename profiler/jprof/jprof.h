/* libjprof's base header: what every part reads.  The parts are one folder
 * each, and each has a header of its own for what the parts above it call
 * (docs/design.md, "Inside libjprof"):
 *
 *   live/     requests from live readers and `hookit ctl`; the control thread
 *   output/   the profile: built from the trees, named, written
 *   frames/   frames that are not machine code: synthetic names, MPI, JVMTI
 *   tree/     the hot path, thread states, control flow, the node
 *             allocator, retiring, the profiler's own cost
 *   metrics/  what is counted beside calls: I/O and memory, wait time,
 *             timer=sample's samples
 *   base/     what this header declares: the arena, the clock, the loaded
 *             objects, the globals
 *
 * A part includes this header and the headers of the folders below its
 * own; jprof.c (the plugin ABI) and options.c (JPROFOPTS) sit on top and
 * see every folder.  One include runs up: live/attend.h, the requests a
 * thread carries out at its next hook or event (tree/ and metrics/ call
 * it, docs/design.md says why).  tests/core/test_layout.py holds to it.
 *
 * Here: the arena's access, the per-thread state and its busy/quiet
 * protocol, the clock, the options and the host. */
#ifndef JPROF_H
#define JPROF_H

#include <hookit/profiler.h>
#include "common/clock.h"
#include "common/inlined_pad.h"
#include "common/pages.h"
#include "common/spin.h"
#include "profile/arena.h"
#include "profiler/jprof/base/metrics_thread.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JP_NOINSTR __attribute__((no_instrument_function))
#define JP_EXPORT  __attribute__((visibility("default")))
#define JP_LIKELY(x)   __builtin_expect(!!(x), 1)
#define JP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- the shared arena (base/arena.c) ------------------------------------------
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
/* Whether the arena is a registry file a reader can open. */
int jp_arena_live(void);

/* ---- the loaded objects (base/loaded.c) -------------------------------------
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

/* ---- the per-thread state (kept by tree/thread.c) -------------------------- */
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
    struct node_ext *shown; /* the block whose wait_since shows it to readers, or NULL */
    /* jp_now() of the last reset or zerobase applied to the thread's tree:
     * a blocking call that spanned it counts only its time after it
     * (jp_wait_cut, jp_blocking_ticks). */
    uint64_t cut;
};

/* The thread's open frames when collection started again after a stop
 * (`hookit ctl start`; unexact.c): frozen while it was off, they may have
 * returned unseen meanwhile.  An exit that then pairs with nothing, or
 * closes one of them, is the stop's doing, not an unmatched exit.  Written
 * by the thread that carries out the start while every thread's tree
 * stands still (collection off), read by the thread. */
#define JP_RESTART_NODES 16
struct jp_restart {
    uint32_t depth;                       /* frames open then; 0: no restart, or none open */
    uint32_t since;                       /* 1 once collection started again */
    uint64_t stopped_at;                  /* jp_now() at the stop: when those that returned had */
    arena_ref node[JP_RESTART_NODES + 1]; /* stack[1 .. JP_RESTART_NODES]'s nodes then */
};

struct jp_thread {
    struct arena_frame *stack;  /* shadow stack (in the arena); stack[0] is the root frame */
    struct arena_thread *rec;   /* its depth: frames in use above the root */
    uint32_t capacity;
    arena_ref cur;              /* = stack[rec->depth].node */
    uint32_t over;              /* open frames past maxdepth=, pushed nowhere (tree/tree.c) */
    uint32_t exit_floor;        /* exits at this depth or below take the slow path: 0, or
                                 * maxdepth= while frames past it are open */
    uint32_t fast_depth;        /* entries at this depth or deeper take the slow path:
                                 * capacity - 1, or maxdepth= (jp_set_capacity) */
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
    struct jp_thread *next_free;         /* the free list's link while recycled (thread.c) */
    int rec_reused;                      /* rec was a retired thread's (retire.c) */
    uint32_t named;                      /* rec->name was given (a Java thread's name): kept at the end */
    struct jp_wait wait;                 /* the blocking call in progress (wait.c) */
    struct jp_restart restart;           /* frames open across a stop (unexact.c) */
    struct hk_pad_doubt pad_doubt;       /* a frame an undecided landing pad kept open (flow.c) */
    arena_ref edges[1u << JP_EDGE_BITS]; /* see jp_edge_slot */
    /* Kept when the state is recycled (reuse_thread clears what is above):
     * the list of every state made, and the I/O and memory numbers, which
     * are process totals summed over that list (metrics_thread.h). */
    struct jp_thread *all_next;
    struct metrics_thread metrics;
    uint64_t own_samples;         /* CPU-time samples that landed in hookit's code (own_code.c) */
    struct jp_pc_table *pc_table; /* samples by program counter (pc_samples.c), or NULL */
    uint64_t pc_unplaced;         /* samples that found no room in it */
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
/* Every thread state ever made (running, ended and waiting for reuse,
 * scratch; in a fork child also the parent's other threads'), newest
 * first, linked by all_next: the metrics are summed over it.  States are
 * never unmapped once listed. */
struct jp_thread *jp_thread_all(void);
/* Add a new state to that list (thread.c, once per state). */
void jp_thread_list(struct jp_thread *t);
/* A reset or zerobase pending for the thread (ARENA_REQ_PENDING, set by
 * another thread with its moment in pending_at; profile/arena.h): tested
 * at the start of every hook, before the tree changes (live/attend.h
 * applies it). */
/* ... or the frames a stop left open to check (ARENA_REQ_RESYNC). */
#define JP_REQ_APPLY (ARENA_REQ_PENDING | ARENA_REQ_RESYNC)
static inline uint32_t jp_pending(const struct arena_thread *rec)
{
    return rec->request & JP_REQ_APPLY;
}

/* ---- clock (base/clock.c, over common/clock.h) ---------------------------------
 * Ticks are hk_counter() when jp_clock_is_tsc(), else hk_mono_ns(). */
void jp_clock_init(int use_tsc);
int jp_clock_is_tsc(void);
uint64_t jp_ticks_to_ns(uint64_t ticks);
double jp_ticks_per_ns(void);
void jp_clock_calibrate(void);
/* The time now, in ticks (outside the hot path, which reads its clock
 * inline). */
uint64_t jp_now(void);

/* ---- options (defaults in globals.c, JPROFOPTS parsed by options.c) ------ */
/* When the control thread (live/agent.c) starts: never (nocontrol), with
 * the program's first thread (the default), at start (control). */
enum { JP_CONTROL_NEVER, JP_CONTROL_THREADED, JP_CONTROL_ALWAYS };

struct jp_options {
    int use_tsc;                /* clock=tsc|monotonic */
    int lines;                  /* resolve file:line */
    int start_on;               /* nostart */
    int control_thread;         /* JP_CONTROL_*: when the control thread starts (agent.c) */
    int sample;                 /* timer=sample */
    uint32_t sample_us;         /* sample_us=N: sampling period */
    int sampler_timer;          /* sampler=timer: the CPU-time timer even where perf events work */
    int compensate;             /* subtract the measured overhead */
    uint32_t death_timeout_ms;  /* bound on writing when dying by a signal */
    uint32_t threads_kept;      /* ended threads kept apart before merging */
    int cpu;                    /* cpu: CPU-time samples under exact timing (wait.c) */
    char *exclude, *include;    /* exclude=, include=: filter patterns, '@' separated (tree/filter.c) */
    uint32_t throttle_calls;    /* throttle, throttle_calls=N: 0 for no throttling (tree/skip.c) */
    uint32_t throttle_ns;       /* throttle_ns=N: a throttled context's calls are shorter */
    int patch;                  /* nopatch: skipped functions' hook calls are not patched out */
    uint32_t maxdepth;          /* maxdepth=N: frames deeper than N are not recorded (0: no limit) */
};
extern struct jp_options jp_opt;
/* The shadow stack's size, and with it the entry fast path's depth bound. */
static inline void jp_set_capacity(struct jp_thread *t, uint32_t capacity)
{
    t->capacity = capacity;
    t->fast_depth = jp_opt.maxdepth && jp_opt.maxdepth < capacity - 1 ? jp_opt.maxdepth : capacity - 1;
}
/* Parse JPROFOPTS; complains once per bad option and keeps defaults.  1
 * when it asked for help: the caller then ends the program with
 * jp_options_help_and_end (profile/optlist.h). */
int jp_options_parse(const char *text, void (*log)(const char *, ...));
void jp_options_help_and_end(void (*log)(const char *, ...)) __attribute__((noreturn));

/* ---- the host (globals.c) ---------------------------------------------------
 * What libhookit gave at start (include/hookit/profiler.h): its log, its
 * capabilities, its calls back. */
extern const struct hookit_host *jp_host;

#endif
