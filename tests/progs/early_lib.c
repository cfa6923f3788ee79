/*
 * libearly.so: its instrumented constructor runs before libhookit's own
 * constructor when the program lists -lhookit BEFORE -learly (the loader
 * initialises later dependencies first), so the very first hook has to
 * initialise hookit itself (tests/core/test_lifetime.py).
 *
 *   early_init            root of thread 0, before main
 *     early_helper x3
 */
#include "progs.h"

KEEP int early_helper(int x) { return x + 1; }

int early_value;

__attribute__((constructor)) KEEP void early_init(void)
{
    for (int i = 0; i < 3; i++)
        early_value += early_helper(i);
}
