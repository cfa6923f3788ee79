/* hookit top over several processes (top_set.c), on one host or, with
 * --readers, drawn by reader 0 of a job on several hosts (live_readers.c). */
#ifndef HOOKIT_TOOLS_TOP_SET_H
#define HOOKIT_TOOLS_TOP_SET_H

#include <stdio.h>
#include <termios.h>

#include "tools/live_set.h"
#include "tools/top_view.h"

struct top_set_opts {
    struct live_set_sel sel;
    enum live_consistency consistency;
    int interval_ms, once, rows, clear;
    int iterations; /* views shown before it ends (0: until q or the set's end; --once: 1) */
};

/* The view, refreshed until q, the set's end, or the iterations.  EXIT_*. */
int top_set(const struct top_set_opts *o);

/* What the previous view showed, for the rates of the next (a process
 * told by its pid and rank: pids of different hosts may be the same). */
struct top_set_state {
    pid_t *pids;
    int32_t *ranks;
    uint64_t *calls;
    uint32_t n;
    uint64_t mono;
};
void top_set_state_free(struct top_set_state *st);

/* One refresh as shown: the set merged (its inputs in the order of the
 * view's members) and the view (finished: top_view_finish). */
struct top_set_frame {
    const struct profile *merged;
    const struct top_view *view;
    uint32_t threads;
    uint64_t pause_ns;   /* at the process and job levels */
    int readers;         /* 0: read on this host alone */
    uint64_t barrier_ns; /* readers: the slowest barrier */
    const char *notes;   /* lines said above the tables ("" or NULL: none) */
};
/* Print the frame (when show) and remember it for the next one's rates. */
void top_set_draw(const struct top_set_opts *o, struct top_set_state *st, const struct top_set_frame *f,
                  int show);

/* The processes of ls that still run, kept in order (their number); each
 * that ended is detached and said on notes: "  process 1234 (r2) ended:
 * dropped from the view". */
uint32_t top_set_drop_ended(struct live **ls, uint32_t n, FILE *notes);

/* q (or the end of input) read within ms on a terminal, else ms slept: 1
 * when the view should end. */
int top_set_wait(int tty, int ms);
/* The terminal in raw mode when the view is interactive (1), restored. */
int top_set_tty_raw(const struct top_set_opts *o, struct termios *saved);
void top_set_tty_restore(int tty, const struct termios *saved);

#endif
