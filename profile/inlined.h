/* Functions of uninstrumented modules seen through copies inlined into
 * instrumented ones (std::string's members, instantiated in libstdc++):
 * each node takes the module of the code it was inlined into (its
 * caller's).  Used by libjprof at the end of the run and by the live
 * commands (hookit top, snapshot); profile/inlined.c. */
#ifndef HOOKIT_PROFILE_INLINED_H
#define HOOKIT_PROFILE_INLINED_H

#include "profile/profile.h"

/* foreign[f] (for f < p->nfuncs) says function f's module is not
 * instrumented (its module does not name __cyg_profile_func_enter:
 * a2n_module_names).  Such a node takes its parent's module; a function
 * seen in several modules becomes one function per module, with the same
 * name and address 0, added to p->funcs.  0, or -1 when out of memory. */
int profile_attribute_inlined(struct profile *p, const unsigned char *foreign);

/* The symbol an instrumented module names. */
#define PROFILE_HOOK_SYMBOL "__cyg_profile_func_enter"

#endif
