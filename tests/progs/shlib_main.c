/*
 * shlib_main: calls into libshlib.so (see shlib.c).
 *
 *   main
 *     shlib_entry(5, back_in_main)   [libshlib.so]
 *       shlib_hidden x5              [libshlib.so]
 *         shlib_leaf x2 each         [libshlib.so]
 *       back_in_main x1              [shlib_main]
 *     shlib_leaf x3                  [libshlib.so], called directly by main
 */
#include <stdio.h>
#include "progs.h"

volatile long sink;

int shlib_entry(int n, int (*cb)(int));
int shlib_leaf(int x);

KEEP int back_in_main(int x) { return x * 2; }

int main(void)
{
    long r = shlib_entry(5, back_in_main);
    for (int i = 0; i < 3; i++)
        r += shlib_leaf(i);
    printf("shlib: %ld\n", r);
    return 0;
}
