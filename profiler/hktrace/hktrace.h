/* libhktrace internals: the call-flow trace profiler.  Every entry and exit
 * becomes an 8-byte record in a per-thread stream (profile/trace.h). */
#ifndef HKTRACE_H
#define HKTRACE_H

#include <hookit/profiler.h>
#include "common/clock.h"
#include "common/inlined_pad.h"
#include "common/pages.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HT_NOINSTR __attribute__((no_instrument_function))
#define HT_EXPORT  __attribute__((visibility("default")))
#define HT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HT_UNLIKELY(x) __builtin_expect(!!(x), 0)

extern const struct hookit_host *ht_host;

/* ---- options (options.c) -------------------------------------------------- */
struct ht_options {
    uint64_t threshold_ns;      /* threshold=T: calls shorter than T are not written */
    uint32_t max_depth;         /* depth=N: calls deeper than N are not written (0 = no limit) */
    uint64_t size_bytes;        /* size=MB: cap on the records of all threads */
    int use_tsc;                /* clock=tsc|monotonic */
    int lines;                  /* resolve file:line */
};
extern struct ht_options ht_opt;
/* 1 when HKTRACEOPTS asked for help: then ht_options_help_and_end. */
int ht_options_parse(const char *text, void (*log)(const char *, ...));
void ht_options_help_and_end(void (*log)(const char *, ...)) __attribute__((noreturn));

/* ---- clock (clock.c, over common/clock.h) -----------------------------------
 * Ticks are hk_counter() when ht_clock_is_tsc(), else hk_mono_ns(). */
void ht_clock_init(int want_tsc);
int ht_clock_is_tsc(void);
void ht_clock_calibrate(void);
double ht_ticks_per_ns(void);
extern uint64_t ht_threshold_ticks;     /* threshold_ns in ticks (estimate until calibrated) */
uint64_t ht_now(void);

/* ---- record buffers (buffer.c) ------------------------------------------------
 * One reserved mapping of size_bytes, cut into chunks that threads take with
 * an atomic bump; no syscall and no lock on the hot path. */
/* Small enough that thousands of short threads fit in the cap, large
 * enough that taking a chunk (one atomic add) is rare. */
#define HT_CHUNK_BYTES (16u * 1024u)
struct ht_chunk {
    uint32_t next;              /* next chunk of the same thread, number + 1; 0 = none */
    uint32_t nrec;              /* records in use */
    uint64_t pad;
    uint64_t rec[];
};
#define HT_CHUNK_RECS ((HT_CHUNK_BYTES - sizeof(struct ht_chunk)) / sizeof(uint64_t))
int ht_buffer_init(void);
/* A fresh chunk's number + 1, or 0 when the cap is reached. */
uint32_t ht_chunk_take(void);
struct ht_chunk *ht_chunk_at(uint32_t number_plus_1);
void ht_buffer_reset(void);             /* forked child: start empty */
extern volatile int ht_cap_reached;

/* ---- function ids (funcs.c) ------------------------------------------------------
 * A lock-free open-addressing table; a function's id is its slot, so an id
 * is known the moment its slot is claimed. */
#define HT_FUNC_BITS 20
#define HT_FUNC_SLOTS (1u << HT_FUNC_BITS)
int ht_funcs_init(void);
/* The id of fn (claimed if new), or UINT32_MAX when the table is full. */
uint32_t ht_func_id(uint64_t fn);
/* The address in slot id, 0 if unused. */
uint64_t ht_func_addr(uint32_t id);
uint32_t ht_funcs_used(void);

/* ---- threads (thread.c) ------------------------------------------------------ */
enum { HT_PENDING = 0, HT_WRITTEN = 1, HT_SKIPPED = 2 };

struct ht_frame {
    uint32_t id;
    uint32_t state;             /* HT_PENDING (threshold not yet known), WRITTEN, SKIPPED */
    uint64_t t0;
    /* The function's stack pointer at its entry hook and its return
     * address: what the unwinder left (common/unwind.h). */
    uintptr_t sp, site;
};

struct ht_thread {
    uint64_t *pos, *end;        /* free records of the current chunk */
    struct ht_chunk *chunk;
    uint64_t last;              /* clock of the last written record */
    struct ht_frame *stack;     /* stack[1..depth] are the open calls */
    uint32_t depth, capacity;
    uint32_t flushed;           /* stack[1..flushed] hold no PENDING frame */
    uint32_t overflow;          /* calls open beyond a stack that could not grow */
    uintptr_t stack_lo, stack_hi; /* the thread's own stack (hk_stack_bounds) */
    int busy;                   /* re-entrancy guard (signal handlers) */
    uint32_t first_chunk;       /* number + 1 */
    int32_t tid;
    uint32_t index;
    char name[16];
    volatile int ended;
    uint64_t short_dropped, lost, unmatched;
    /* landing pads whose owner was not decided, once the frame they kept
     * open closed otherwise than at its exit (record.c, the doubt) */
    uint64_t undecided_pads;
    struct hk_pad_doubt pad_doubt;
    uint32_t flags;
    struct ht_thread *next;     /* all threads, newest first */
};

extern __thread struct ht_thread *ht_self __attribute__((tls_model("initial-exec")));
extern struct ht_thread *volatile ht_threads;
void ht_threads_init(void);
struct ht_thread *ht_thread_attach(void);
void ht_thread_end(void);
void ht_thread_fork_child(void);
int ht_grow_stack(struct ht_thread *t);

/* ---- the hot path (record.c) --------------------------------------------------- */
void ht_enter_tsc(void *fn, void *site);
void ht_exit_tsc(void *fn, void *site);
void ht_enter_mono(void *fn, void *site);
void ht_exit_mono(void *fn, void *site);
/* An entry delivered as an event (HookitEvent): no frame position. */
void ht_enter_event(void *fn, void *site);
/* setjmp/longjmp and C++ unwinding as libhookit reports them (record.c). */
uint64_t ht_flow(const struct hookit_flow *flow);
/* A TIME record (the start of a thread's stream). */
void ht_mark_time(struct ht_thread *t, uint64_t now);
/* Write the open calls' exits at now (thread end). */
void ht_close_all(struct ht_thread *t, uint64_t now);
/* Write an ENTER for every open call at now (the forked child's new stream). */
void ht_reopen_all(struct ht_thread *t, uint64_t now);

/* ---- process, names and output (process.c, output.c) -------------------------- */
extern int ht_rank, ht_size, ht_death_signal;
extern uint64_t ht_tick0, ht_start_wall_ns, ht_start_mono_ns;
void ht_process_start(void);
void ht_names_start(void);
void ht_names_reload(void);
struct profile;
/* The embedded profile: process metadata and the function table of every
 * id in use (ids[] receives the id of each function, in table order). */
struct profile *ht_build_meta(int how, uint32_t **ids);
int ht_write_trace(int how);

#endif
