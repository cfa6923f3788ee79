/* hookit top over several processes (top_set.c). */
#ifndef HOOKIT_TOOLS_TOP_SET_H
#define HOOKIT_TOOLS_TOP_SET_H

#include "tools/live_set.h"

struct top_set_opts {
    struct live_set_sel sel;
    enum live_consistency consistency;
    int interval_ms, once, rows, clear;
};

/* The view, refreshed until q, the set's end, or once.  EXIT_*. */
int top_set(const struct top_set_opts *o);

#endif
