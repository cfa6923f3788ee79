/*
 * hookit report's options and the views beyond the tree and flat profile
 * (tools/view_*.c), and the terminal side: colour and the pager.
 */
#ifndef HOOKIT_TOOLS_REPORT_H
#define HOOKIT_TOOLS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

/* SORT_CPU, SORT_WAIT: time on the CPU and waiting (tools/waittime.h); in
 * the tree a subtree's, in --flat and --callers a function's own. */
enum report_sort { SORT_DEFAULT, SORT_CALLS, SORT_INCL, SORT_EXCL, SORT_NAME, SORT_CPU, SORT_WAIT };

struct report_opts {
    int flat;
    int tree;                   /* --tree: the tree of a trace instead of its listing */
    int interleave;             /* --interleave: a trace's threads merged in time order */
    int has_tid;
    long tid;
    const char *thread_name;    /* --thread NAME (a glob), or NULL: by tid */
    const char *callers;        /* --callers FN */
    const char *callees;        /* --callees FN */
    int merge_threads;          /* --merge-threads */
    int merge;                  /* --merge: all profiles into one */
    double min_pct;             /* --min-pct P (0 = show all) */
    uint32_t depth;             /* --depth N (0 = no limit) */
    enum report_sort sort;
    int color;                  /* colour escapes (decided from --color/--no-color/NO_COLOR/tty) */
    int io_view;                /* --io, --alloc, --leaks: REPORT_IO... (tools/report_io.h) */
    int collapse;               /* --collapse-recursion: 1, --no-collapse-recursion: 0,
                                 * -1: the default (on in --callers/--callees) */
};

/* ---- colour (report_style.c) ---------------------------------------------------
 * Escapes when o->color, else "".  Times are coloured by their share of
 * the thread: red from 20%, yellow from 5%. */
const char *style_bold(const struct report_opts *o);
const char *style_dim(const struct report_opts *o);
const char *style_reset(const struct report_opts *o);
const char *style_heat(const struct report_opts *o, double pct);
/* Whether to colour: --color / --no-color decide (force 1 / 0); otherwise
 * not when NO_COLOR is set and not empty, else when stdout is a terminal. */
int style_want_color(int forced);

/* ---- the pager (report_style.c), as git does it ---------------------------------
 * When enabled and stdout is a terminal: $HOOKIT_PAGER, else $PAGER, else
 * "less -FRX" (LESS=FRX is set when LESS is unset); an empty value or "cat"
 * means none.  Standard output then goes to the pager until pager_end. */
void pager_start(int enabled);
void pager_end(void);

/* ---- views ---------------------------------------------------------------------- */
/* --callers FN / --callees FN for one thread: returns 0, 1 when FN is not
 * in this thread (nothing printed), -1 on error (message printed). */
int view_callers(FILE *out, const struct profile *p, const struct prof_thread *th,
                 const struct report_opts *o, int callees);

/* The call-flow listing of a trace file (every thread, or --thread). */
int view_listing(FILE *out, const char *path, const struct report_opts *o, int *threads_shown);

/* A function name matches FN: equal, or FN followed by a C++ parameter list
 * ("foo" matches "foo(int)"), or "module:name". */
int report_name_matches(const struct prof_func *f, const char *fn);

/* A thread's total: the sum of its roots' inclusive times. */
uint64_t report_thread_total(const struct prof_thread *th);

/* ---- a profile merged across ranks (report_ranks.c, docs/mpi.md) ----------------- */
/* It carries hookit merge's "ranks" and "functions" tables. */
int report_ranks_is(const struct profile *p);
/* The tree with SUM, MIN @rank, MEAN, MAX @rank, IMB (max / mean) columns. */
int report_ranks_tree(FILE *out, const struct profile *p, const struct prof_thread *th,
                      const struct report_opts *o);
/* Per rank: time, MPI time and share; then the functions over ranks. */
void report_ranks_summary(FILE *out, const struct profile *p, const struct report_opts *o);

#endif
