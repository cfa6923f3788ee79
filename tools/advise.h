/*
 * hookit advise: which functions' hooks cost a run most, and the compile
 * flags that stop instrumenting them (docs/cost.md).
 *
 * advise_pick.c   one entry per function name, with its calls and cost
 *                 (calls x the run's per-call cost, profile/cost.h); the
 *                 names on the paths to the run's top calling contexts by
 *                 inclusive time, which are never dropped; the choice of
 *                 what to drop, most costly first, until the cost left is
 *                 under the target
 * advise_gcc.c    how GCC can be told to leave each chosen one out: its
 *                 exclude lists match substrings, so a name or file is only
 *                 used when it matches nothing that stays instrumented
 */
#ifndef HOOKIT_TOOLS_ADVISE_H
#define HOOKIT_TOOLS_ADVISE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/cost.h"
#include "profile/profile.h"

/* How a dropped function is left out of the instrumentation. */
enum advise_how {
    ADVISE_KEEP,    /* not dropped */
    ADVISE_BY_NAME, /* -finstrument-functions-exclude-function-list=KEY */
    ADVISE_BY_FILE, /* -finstrument-functions-exclude-file-list=TOKEN (its file's) */
};

struct advise_fn {
    const char *name; /* as the profile names it (the group's first) */
    char *key;        /* the name GCC matches: a C identifier without a clone
                       * suffix (.part.0), a C++ function's unqualified name */
    const char *file; /* its source file, or NULL */
    int files_differ; /* its functions are in several files */
    uint64_t calls;   /* every context's, every thread's */
    double cost_ns;   /* calls x the per-call cost */
    int on_top_path;  /* on the path to one of the top contexts: kept */
    enum advise_how how;
    const char *token;   /* what the flag names (key, or its file's token) */
    const char *why_not; /* chosen by cost but not droppable by a flag: why */
    const char *clash;   /* the name or file that stays instrumented and would match */
};

struct advise {
    struct run_cost run;
    struct advise_fn *fns; /* by cost, most first */
    size_t nfns;
    double target_ns;    /* the cost to get under */
    double left_ns;      /* the cost left once the dropped ones are gone */
    uint64_t calls_left; /* and the calls: what the rebuilt run's profile will count */
    size_t ndropped;
    uint32_t top_contexts; /* how many contexts were protected */
};

struct advise_opts {
    double target_pct;     /* the cost to aim for, % of the program's own time */
    uint32_t top_contexts; /* the top contexts by inclusive time to keep */
};

/* advise_pick.c: a's functions, costs and top paths for profile p.  0, -1
 * when p has no measured cost (profile/cost.h), -2 out of memory. */
int advise_collect(const struct profile *p, const struct advise_opts *o, struct advise *a);
/* Choose what to drop (a->fns[].how, ->token, ->why_not; a->left_ns,
 * ->calls_left, ->ndropped).  0. */
int advise_choose(struct advise *a);
void advise_free(struct advise *a);

/* advise_gcc.c: whether a header file (GCC's file list is preferred for
 * those: their functions are inlined everywhere, under short names). */
int advise_is_header(const char *file);
/* The token of file for GCC's file list: its base name. */
const char *advise_file_token(const char *file);
/* Whether s can stand in GCC's comma-separated list on a make command line. */
int advise_listable(const char *s);
/* Try to drop fns[i] (and, by its file, every function of that file): sets
 * how, token and, when it cannot be done, why_not.  1 dropped, 0 not. */
int advise_try_drop(struct advise *a, size_t i);
/* The flags line: GCC's two exclude lists (or nothing: returns 0). */
int advise_gcc_flags(FILE *out, const struct advise *a);

#endif
