/*
 * preinit: instrumented code in .preinit_array and in a constructor, both
 * before hookit's own constructor (tests/core/test_exact.py).
 *
 *   preinit > early
 *   ctor > early
 *   main > early
 */
#include <stdio.h>
#include "progs.h"

volatile long sink;
KEEP void early(void) { sink++; }
KEEP void preinit(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    early();
}
__attribute__((section(".preinit_array"), used)) static void (*preinit_entry)(int, char **, char **) = preinit;
__attribute__((constructor(101))) KEEP void ctor(void) { early(); }

int main(void)
{
    early();
    printf("preinit: %ld\n", (long)sink);
    return 0;
}
