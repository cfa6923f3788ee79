/* Shared library for the A2N tests: a static and an exported function. */
#include <stdio.h>

static int __attribute__((noinline)) lib_static(int x) { return x + 7; }

int __attribute__((noinline)) lib_exported(int x)
{
    return lib_static(x) * 2;
}

void lib_report(void)
{
    printf("lib_static %p\n", (void *)lib_static);
    printf("lib_exported %p\n", (void *)lib_exported);
}

void *lib_static_address(void)
{
    return (void *)lib_static;
}
