/* How reports write a function: JPROF's "F:module.function()". */
#ifndef HOOKIT_TOOLS_NAMES_H
#define HOOKIT_TOOLS_NAMES_H

#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

/*
 * KIND:module.function() where KIND is "F" (a native function) unless the
 * name already carries a kind prefix of capital letters and a colon
 * ("J:Main.main", "MPI:MPI_Send"; not "NS::f").  The module and its dot are
 * left out when the module is empty, and "()" is not added when the name
 * already ends with ')' (a demangled C++ signature).
 */
void names_print_jprof(FILE *out, const struct prof_func *f);

/* How names_print_jprof writes C++ names (--demangle):
 *   simple  no return type, template arguments or parameters
 *           ("Walker::Iterate"), unless needed to tell two functions of a
 *           module apart (then with parameters, or in full);
 *   full    as demangled ("int Walker::Iterate(int) const");
 *   no      as stored in the profile, nothing added.
 * "_GLOBAL__sub_I_X" reads "global constructors keyed to X" (not with no). */
enum names_demangle { DEMANGLE_SIMPLE, DEMANGLE_FULL, DEMANGLE_NO };
extern enum names_demangle names_demangle;
/* --demangle=MODE: sets names_demangle; 0, or -1 when mode is none of them. */
int names_parse_demangle(const char *mode);
/* The name names_print_jprof writes for f, without its module, kind prefix
 * handling or the "()" it adds: the display name (names_use_profile) or the
 * stored one. */
const char *names_display(const struct prof_func *f);

/* name in the simple form (no return type, template arguments or
 * parameters), whatever --demangle says: for finding a function by a
 * part of its name (tools/find_fn.h).  malloc'd, or NULL. */
char *names_simple(const char *name);

/* "_GLOBAL__sub_I_X" as "global constructors keyed to X" (X demangled),
 * "_GLOBAL__sub_D_X" as "global destructors keyed to X": c++filt's words
 * for the older "_GLOBAL__I_X".  A malloc'd string, or NULL for any other
 * name. */
char *names_static_initializer(const char *name);
/* The exports: p's static initialisers renamed so in p itself, as every
 * format shows them (the profile file keeps the symbol; report and export
 * --demangle=no show it: then this leaves p alone).  0, or -1 when out of
 * memory. */
int names_read_static_initializers(struct profile *p);

/* export --demangle=simple: p's functions renamed to the names the views
 * show (names_use_profile's, for the mode set), in p itself.  0, or -1
 * when out of memory. */
int names_apply_display(struct profile *p);

/* report --lines: names_print_jprof adds " (file:line)" when known. */
extern int names_show_lines;
/* Work out the display names of p's functions for names_print_jprof (the
 * others print as stored).  Call before printing p; NULL forgets. */
void names_use_profile(const struct profile *p);

/* s as text for a terminal: control characters written as \t, \n, \xNN
 * (a profile's strings come from another program and must not drive the
 * terminal). */
void names_print_safe(FILE *out, const char *s, size_t n);

/* The names of a call path joined by sep, a run of the same function
 * written once with its count: "main > down \u00d71000 > leaf" (recursion
 * 1,000 deep reads as one step). */
void names_print_collapsed(FILE *out, const char *const *names, uint32_t n, const char *sep);

#endif
