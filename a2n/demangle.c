/*
 * C++ names.  libiberty's demangler is the one binutils uses (c++filt,
 * nm -C); libbfd exports it, so linking -lbfd is enough and no non-PIC
 * libiberty.a ends up in the plugin.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include <libiberty/demangle.h>

#include "a2n/a2n_internal.h"

A2N_API char *a2n_demangle(const char *name)
{
    /* Itanium C++ ABI names start with _Z (__Z on some systems); anything
     * else (C names, Rust v0 and such) is left as it is. */
    if (!name || !(strncmp(name, "_Z", 2) == 0 || strncmp(name, "__Z", 3) == 0))
        return NULL;
    return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}
