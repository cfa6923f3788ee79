/* A shared object that declares the ABI but lacks the entry points:
 * libhookit must refuse it. */
#include "hookit/profiler.h"

HOOKIT_PLUGIN_ABI;

int not_a_profiler(void) { return 1; }
