/* Functions and contexts the hooks stop keeping books for (docs/filters.md):
 * run-time filters (filter.c), throttling (skip.c) and patching the hook
 * calls of what is skipped out of the code (patch.c).
 *
 * A skipped entry pushes no frame: the function's time, and its callees,
 * go to its caller.  Its exit finds another function's frame on top, and
 * is recognised on the exit's slow path (jp_skipped_exit) before it could
 * be taken for an unmatched exit. */
#ifndef JPROF_TREE_SKIP_H
#define JPROF_TREE_SKIP_H

#include "profiler/jprof/jprof.h"

/* Whether any function can be skipped at all (filters given, or throttling
 * on): the exit's slow path looks no further when not. */
extern int jp_skipping __attribute__((visibility("hidden")));

/* The entry fast path's test for throttling's checkpoints: an entry whose
 * node's call count would become a multiple of mask + 1 takes the slow
 * path (jp_throttle_check).  All ones (no checkpoint ever) when throttling
 * is off.  A throttled node's count is left one short of a checkpoint, so
 * each later entry of its context takes the slow path. */
extern uint64_t jp_throttle_mask __attribute__((visibility("hidden")));

/* Parse the options' filters and set throttling up (options.c gave the
 * text); at start, before any hook.  Complaints go to log. */
void jp_skip_start(void (*log)(const char *, ...));

/* ---- per function (skip.c) ------------------------------------------------
 * A table of the functions decided so far, read without a lock. */
enum {
    JP_FN_DECIDED = 1,       /* the filters were asked */
    JP_FN_EXCLUDED = 2,      /* by a filter: never a node */
    JP_FN_PATCHED = 4,       /* a hook call of its entry was patched out: its
                         * frames may miss their exits, its nodes' counts
                         * may be incomplete */
    JP_FN_TAIL_SEARCHED = 8, /* its code was searched for tail jumps to the exit hook */
};
/* The state of fn (JP_FN_*), 0 when nothing is known. */
uint32_t jp_fn_state(uint64_t fn);
/* fn is to be skipped by the filters: decided on its first entry, then
 * read from the table.  Busy held (a hook). */
int jp_fn_excluded(struct jp_thread *t, uint64_t fn);
/* 1, or 0 when the table is full (nothing new is remembered). */
int jp_fn_mark(uint64_t fn, uint32_t state);
/* A library unloaded (names.c): what was known of [lo, hi) forgotten. */
void jp_skip_forget(uintptr_t lo, uintptr_t hi);
/* In a fork child: the locks free. */
void jp_skip_fork_child(void);

/* ---- throttling (skip.c) --------------------------------------------------- */
/* At a checkpoint of node (its count about to be a multiple of mask + 1):
 * 1 when its context is throttled (the entry is then skipped, its count
 * left as it is), else 0 (the entry counts as usual).  Busy held. */
int jp_throttle_check(arena_ref node);
/* node's context is throttled. */
int jp_throttled(arena_ref node);
/* The child of parent for fn if there is one (no node made). */
arena_ref jp_child_of(struct jp_thread *t, arena_ref parent, uint64_t fn);
/* An exit that did not match the top frame (busy held): 1 when it is a
 * skipped function's, which then has nothing to do (its site is patched
 * out when it can be); 0 when it is to be handled as unmatched. */
int jp_skipped_exit(struct jp_thread *t, uint64_t fn, uintptr_t ret);
/* A frame closed without its exit: 1 when that is expected (its function's
 * exit call was patched out), so it is not an unmatched exit. */
int jp_exit_patched(uint64_t fn);

/* ---- in the profile (skip.c) ------------------------------------------------ */
struct profile;
struct prof_thread;
/* build.c: the column count_incomplete for th, whose node i came from nodes[i]. */
int jp_skip_thread(struct profile *p, struct prof_thread *th, const struct arena_copy_node *nodes,
                   uint32_t n);
/* process.c: the filters, throttling's settings and the patching's counts. */
int jp_skip_meta(struct profile *p);

/* ---- filters (filter.c) ------------------------------------------------------ */
int jp_filter_parse(const char *exclude, const char *include, void (*log)(const char *, ...));
int jp_filter_active(void);
/* Whether the filters skip fn: resolves its name (and module, source file)
 * through A2N.  Called once per function, under skip.c's lock. */
int jp_filter_excludes(uint64_t fn);
/* The objects loaded changed under the filters' names: read again. */
void jp_filter_forget(void);
void jp_filter_fork_child(void);
/* The filters as given ("exclude=... include=..."), for the profile's
 * metadata: 1, or 0 when there are none. */
int jp_filter_describe(char *out, size_t size);

/* ---- patching the hook calls out (patch.c) ------------------------------------
 * ret: the return address of a hook call (the instruction after it).  The
 * 5-byte call before it stops calling when it is a direct call of the hook
 * (or of its PLT stub); otherwise nothing changes.  1 when the call is
 * (now) patched out.  An entry's: fn is marked JP_FN_PATCHED before the
 * call goes, so that no exit can come without a frame before that is
 * known.  An exit's: when ret follows no hook call, the hook was reached by
 * a tail jump in fn, which is looked for once (JP_FN_TAIL_SEARCHED). */
int jp_patch_entry(uintptr_t ret, uint64_t fn);
int jp_patch_exit(uintptr_t ret, uint64_t fn);
void jp_patch_start(void);
void jp_patch_fork_child(void);
/* For the profile's metadata. */
struct jp_patch_counts {
    uint64_t enter_sites, exit_sites, refused;
    int possible; /* this machine's code can be patched (x86-64, hookit's hooks found) */
};
void jp_patch_counts(struct jp_patch_counts *out);

#endif
