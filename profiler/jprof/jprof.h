/* libjprof internals: the per-thread calling-context tree profiler. */
#ifndef JPROF_H
#define JPROF_H

#include <hookit/profiler.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JP_NOINSTR __attribute__((no_instrument_function))
#define JP_EXPORT  __attribute__((visibility("default")))
#define JP_LIKELY(x)   __builtin_expect(!!(x), 1)
#define JP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- the shared arena (arena.c) ---------------------------------------------
 * Every tree lives in one process-shared mapping (a memfd), addressed by
 * 32-bit indexes of 64-byte slots, so another process can map it and follow
 * the links.  Slot 0 holds the arena header; index 0 means "none". */
typedef uint32_t jp_ref;
#define JP_SLOT 64u

struct jp_arena_header {
    char magic[8];              /* "HKARENA1" */
    uint32_t version;
    uint32_t slot_size;
    volatile uint64_t used;     /* bytes handed out (bump pointer) */
    volatile jp_ref first_thread;/* list of jp_thread_rec, newest first */
    uint32_t pad;
    int32_t pid;
    uint32_t pad2;
    uint64_t tsc_hz_hint;
    char reserved[16];
};

extern char *jp_arena_base;
static inline void *jp_at(jp_ref ref) { return jp_arena_base + (size_t)ref * JP_SLOT; }
int jp_arena_init(void);
/* n contiguous slots; 0 when the arena is full (never on the hot path's
 * common case: threads take slots from their own chunk). */
jp_ref jp_arena_alloc(uint32_t nslots);
/* In a forked child: give the child a private arena holding a copy. */
int jp_arena_fork_child(void);
struct jp_arena_header *jp_arena_header(void);

/* ---- tree nodes ---------------------------------------------------------- */
struct jp_node {
    uint64_t fn;                /* function address */
    jp_ref parent;
    jp_ref first_child;
    jp_ref next_sibling;
    jp_ref ext;                 /* extension slot (I/O, memory metrics) or 0 */
    uint64_t calls;
    uint64_t incl;              /* inclusive ticks of closed activations */
    uint64_t reserved[3];
};
_Static_assert(sizeof(struct jp_node) == JP_SLOT, "a node is one slot");
static inline struct jp_node *jp_node(jp_ref ref) { return (struct jp_node *)jp_at(ref); }

/* ---- threads (thread.c) -------------------------------------------------- */
struct jp_frame {
    uint64_t t0;                /* ticks at entry */
    uintptr_t sp;               /* stack pointer at entry, to detect longjmp */
    jp_ref node;
    uint32_t pad;
};

/* The part of a thread another process may read: in the arena. */
struct jp_thread_rec {
    jp_ref next;                /* next thread record */
    jp_ref root;                /* a synthetic root node: its children are the roots */
    int32_t tid;
    uint32_t index;             /* 0 = main thread */
    volatile uint32_t state;    /* JP_THREAD_* */
    volatile uint32_t seq;      /* odd while the tree's shape changes */
    char name[16];
    uint64_t dropped;           /* events dropped by the re-entrancy guard */
    uint64_t unmatched;         /* exits that matched no open frame */
    uint64_t priv;              /* in-process only: the struct jp_thread */
};
#define JP_THREAD_REC_SLOTS 2
_Static_assert(sizeof(struct jp_thread_rec) <= JP_THREAD_REC_SLOTS * JP_SLOT, "thread record size");

enum { JP_THREAD_RUNNING = 1, JP_THREAD_ENDED = 2 };

/* Private per-thread state, reached through initial-exec TLS. */
struct jp_thread {
    struct jp_frame *stack;     /* shadow stack; stack[0] is the root frame */
    uint32_t depth;             /* frames in use above the root */
    uint32_t capacity;
    jp_ref cur;                 /* node of the innermost open frame */
    int busy;                   /* re-entrancy guard (signal handlers) */
    jp_ref chunk_next, chunk_end; /* this thread's free slots */
    uint32_t chunk_slots;       /* size of the next chunk */
    struct jp_thread_rec *rec;
    jp_ref rec_ref;
    uintptr_t stack_lo, stack_hi;/* this thread's stack, for the longjmp check */
    uint32_t arena_full;
};

extern __thread struct jp_thread *jp_self __attribute__((tls_model("initial-exec")));
struct jp_thread *jp_thread_attach(void);
void jp_thread_end(void);
void jp_thread_fork_child(void);
jp_ref jp_node_new(struct jp_thread *t, jp_ref parent, uint64_t fn);
void jp_threads_init(void);
/* Name of the calling thread into rec (from the kernel's comm). */
void jp_thread_name(struct jp_thread_rec *rec);
int jp_grow_stack(struct jp_thread *t);

/* ---- clock (clock.c) ----------------------------------------------------- */
void jp_clock_init(int use_tsc);
int jp_clock_is_tsc(void);
uint64_t jp_ticks_to_ns(uint64_t ticks);
uint64_t jp_now_mono(void);
double jp_ticks_per_ns(void);
void jp_clock_calibrate(void);

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t jp_tsc(void) { return __builtin_ia32_rdtsc(); }
#else
static inline uint64_t jp_tsc(void) { return jp_now_mono(); }
#endif

/* ---- the hot path (tree.c) ----------------------------------------------- */
void jp_enter_tsc(void *fn, void *site);
void jp_exit_tsc(void *fn, void *site);
void jp_enter_mono(void *fn, void *site);
void jp_exit_mono(void *fn, void *site);
uint64_t jp_now(void);

/* ---- options (options.c) ------------------------------------------------- */
struct jp_options {
    int use_tsc;                /* clock=tsc|monotonic */
    int lines;                  /* resolve file:line */
    int start_on;               /* nostart */
};
extern struct jp_options jp_opt;
/* Parse JPROFOPTS; complains once per bad option and keeps defaults. */
void jp_options_parse(const char *text, void (*log)(const char *, ...));

/* ---- writing (build.c, output.c) ----------------------------------------- */
struct profile;
/* A profile of the current state; open frames count up to now.  NULL on OOM. */
struct profile *jp_build_profile(int how);
/* Write the process's profile now.  Returns 0 or -1 (message already given). */
int jp_write_profile(int how);

extern const struct hookit_host *jp_host;
extern int jp_rank, jp_size;
extern uint64_t jp_start_wall_ns;

#endif
