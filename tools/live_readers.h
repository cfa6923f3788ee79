/* The readers of a job on several hosts (docs/live.md "Several hosts"):
 * one reader per host, started by the job's launcher, synchronised over
 * MPI (live_readers.c); `hookit snapshot --readers` takes one synchronised
 * snapshot of their shares, `hookit top --readers` one every refresh
 * (top_readers.c). */
#ifndef HOOKIT_TOOLS_LIVE_READERS_H
#define HOOKIT_TOOLS_LIVE_READERS_H

#include "tools/live_set.h"
#include "tools/top_set.h"
#include "tools/top_view.h"

/* Every reader's share snapshot at consistency c, reduced into one job
 * snapshot that reader 0 writes to out.  EXIT_*. */
int live_readers_snapshot(const struct live_set_sel *sel, enum live_consistency c, const char *out);

/* hookit top --readers: every refresh one synchronised snapshot of every
 * reader's share, reduced; reader 0 draws the view, the others serve.
 * EXIT_*. */
int live_readers_top(const struct top_set_opts *o);

/* ---- the pieces both are made of ---------------------------------------------- */

struct readers;

/* MPI started through the launcher's library (cmd names the command in
 * messages); NULL with the message printed. */
struct readers *readers_start(const char *cmd);
/* MPI_Finalize; r freed.  When a reader was lost, this one ends at once
 * instead (_exit, status 1: MPI_Finalize and exit handlers would wait for
 * the lost one). */
void readers_end(struct readers *r);
int readers_rank(const struct readers *r);
int readers_size(const struct readers *r);

/* This reader's share of the set: the set's processes on its host, split
 * in blocks (in rank order) among the readers sharing it.  EXIT_*. */
int readers_open_share(struct readers *r, const struct live_set_sel *sel, struct live ***ls, uint32_t *n);

/* What the readers' shares add up to (the job's pause: the longest a
 * reader held its share; clocks of different hosts are not compared). */
struct readers_stats {
    uint64_t processes, threads, pause_max, pause_max_pid, pause_sum, set_pause, copy, barrier_max;
};

/* One round: every reader's share snapshot at consistency c (at the job
 * level: every share paused, a barrier, every share copied, a barrier,
 * every share released), folded and reduced along the binomial tree over
 * the readers.  At reader 0, the whole: */
struct readers_round {
    struct merge *m; /* the merge of every process, in the readers' order */
    char *rows;      /* live_pauses rows of every process */
    char *notes;     /* text every reader passes up (top: processes dropped) */
    struct readers_stats st;
    struct top_view *view; /* when not NULL, top's tables of every process too */
};
/* notes: this reader's own (or NULL).  EXIT_*, with the message printed;
 * out's pieces are the caller's to free (readers_round_free). */
int readers_round(struct readers *r, struct live **ls, uint32_t n, enum live_consistency c, const char *notes,
                  struct readers_round *out);
void readers_round_free(struct readers_round *out);

/* Reader 0 tells every reader down the tree whether to go on (*go 1) or
 * to end (*go 0); the others learn it, waiting at most wait_ns.  Each
 * reader below is given 2 s to take it (wait_ns the first time: it may
 * still be attaching to its share).  EXIT_*, with the message printed (a
 * reader lost, or told that one was). */
int readers_word(struct readers *r, int *go, uint64_t wait_ns, int first);
/* After a failed round or word: the readers below are told to end (each
 * waited for at most 200 ms), and MPI_Finalize will be skipped. */
void readers_abort(struct readers *r);
/* How long a reader waits for a share from below (HOOKIT_MPI_TIMEOUT). */
uint64_t readers_partial_wait_ns(void);

#endif
