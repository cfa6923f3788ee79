/* A profiler plugin's options: NAME=value,flag,... in one environment
 * variable (JPROFOPTS, HKTRACEOPTS), parsed against a table.  `help` lists
 * the table and ends the program before it runs, status 0; an unknown
 * option or a bad value gets one line and the default stays
 * (profile/optlist.c). */
#ifndef HOOKIT_OPTLIST_H
#define HOOKIT_OPTLIST_H

#include <stddef.h>

struct optlist_entry {
    const char *name;           /* "clock=" for an option with a value, "nolines" for a flag */
    const char *help;           /* one line, starting with the option's form */
    int (*apply)(const char *value);   /* 0, or -1 for a bad value */
};

struct optlist {
    const char *plugin;         /* "jprof": prefix of every message */
    const char *variable;       /* "JPROFOPTS" */
    const struct optlist_entry *entries;
    size_t n;
};

void optlist_parse(const struct optlist *spec, const char *text, void (*log)(const char *, ...));

#endif
