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

/* Apply text's options (each complaint one line through log); 1 when it
 * asked for help (after the other options' lines), else 0.  The parser
 * never ends the program itself: the fuzz targets parse help too. */
int optlist_parse(const struct optlist *spec, const char *text, void (*log)(const char *, ...));

/* `help`: the table, and the program ends before it runs (exit status 0).
 * Asked for the options, the user wants them, not a run (as glibc's
 * LD_DEBUG=help): a program that went on would bury the list under its
 * own output, or run for hours.  _exit: nothing of the program has run
 * (the plugin's start, before main), and no profile is due. */
void optlist_help_and_end(const struct optlist *spec, void (*log)(const char *, ...))
    __attribute__((noreturn));

#endif
