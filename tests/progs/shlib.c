/*
 * libshlib.so: a shared library built by the test with -finstrument-functions
 * and linked by shlib_main (tests/core/test_shlib.py).
 *
 *   shlib_entry(n, cb)        exported
 *     shlib_hidden   x n      static: named only through .symtab
 *       shlib_leaf   x 2      exported, called from inside the library
 *     cb             x 1      a callback back into the executable
 */
#include "progs.h"

KEEP int shlib_leaf(int x) { return x + 1; }

KEEP static int shlib_hidden(int x)
{
    return shlib_leaf(x) + shlib_leaf(x + 1);
}

KEEP int shlib_entry(int n, int (*cb)(int))
{
    int acc = 0;
    for (int i = 0; i < n; i++)
        acc += shlib_hidden(i);
    return acc + cb(acc);
}
