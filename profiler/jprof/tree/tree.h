/* The calling-context trees: the hot path (tree.c), the thread states
 * (thread.c), control flow the hooks do not show (flow.c), the node
 * allocator (chunk.c), retiring ended threads (retire.c) and the
 * profiler's own cost (calibrate.c). */
#ifndef JPROF_TREE_H
#define JPROF_TREE_H

#include "profiler/jprof/jprof.h"

/* ---- threads (thread.c) -------------------------------------------------- */
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
/* A hook in the fork window (JP_FORKING): dropped and counted. */
void jp_fork_window_hook(void);

/* ---- the node allocator (chunk.c) ----------------------------------------- */
arena_ref jp_chunk_alloc(struct jp_thread *t, uint32_t slots);
void jp_chunks_give_back(struct arena_thread *rec);
void jp_chunk_fork_child(void);

/* ---- retiring ended threads (retire.c) ------------------------------------ */
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
/* Frames that are not machine code, by jp_synthetic_key (Java methods):
 * no stack-pointer check, ended by key. */
void jp_enter_synthetic(uint64_t key);
void jp_exit_synthetic(uint64_t key);

/* ---- control flow the hooks do not show (flow.c) --------------------------
 * libhookit's interposers of setjmp/longjmp, __cxa_begin_catch and the
 * ucontext functions report here (include/hookit/profiler.h); the
 * personality routine tells of the frame a landing pad is about to run in
 * (HOOKIT_FLOW_UNWIND). */
uint64_t jp_flow(const struct hookit_flow *flow);
void jp_flow_fork_child(void);

/* ---- frames across `ctl stop` and `start` (restart.c) ------------------------
 * `ctl start` with collection off (control.c): the threads' open frames
 * now, so that exits pairing with nothing because of the stop are told
 * from unmatched ones (counted apart: jp_unmatched_restart_exits). */
void jp_unmatched_restart(void);
/* `ctl stop` with collection on: its moment. */
void jp_unmatched_stop(void);
/* Busy held, by the thread, at the start of its first hook after the
 * start (ARENA_REQ_RESYNC): the frames of then that returned meanwhile
 * (their return address is no longer where it was) are closed, as of the
 * stop, and counted apart. */
void jp_unmatched_resync(struct jp_thread *t);
uint64_t jp_unmatched_restart_exits(void);
/* The fallbacks' unmatched exits (busy held): counted on node
 * (jp_unmatched_at), or apart when the stop caused them. */
void jp_tree_unmatched(arena_ref node, uint64_t exits);

#endif
