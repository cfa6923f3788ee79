/*
 * C++ names, with the demangler binutils uses (c++filt, nm -C), through
 * libbfd's bfd_demangle: linking -lbfd is enough, and no non-PIC
 * libiberty.a ends up in the plugin.  The DMGL_* options come from
 * libiberty's header (libiberty-dev).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include <bfd.h>
#include <libiberty/demangle.h>

#include "a2n/a2n_internal.h"

A2N_API char *a2n_demangle(const char *name)
{
    /* Itanium C++ ABI names start with _Z; anything else (C names,
     * "_GLOBAL__sub_I_..." and such) is left as it is. */
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    return bfd_demangle(NULL, name, DMGL_PARAMS | DMGL_ANSI);
}
