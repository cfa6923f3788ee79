/*
 * throw: a C++ exception through instrumented frames (tests/core/test_robust.py).
 *
 *   main
 *     thrower_a  x ROUNDS
 *       thrower_b  x ROUNDS
 *         thrower_c  x ROUNDS    throws; caught in main
 *     after_catch x ROUNDS
 */
#include <cstdio>
#include "progs.h"

#define ROUNDS 5
volatile long sink;

KEEP void thrower_c(int i) { if (i >= 0) throw i; sink++; }
KEEP void thrower_b(int i) { thrower_c(i); sink++; }
KEEP void thrower_a(int i) { thrower_b(i); sink++; }
KEEP void after_catch() { sink++; }

int main()
{
    int caught = 0;
    for (int i = 0; i < ROUNDS; i++) {
        try {
            thrower_a(i);
        } catch (int) {
            caught++;
        }
        after_catch();
    }
    std::printf("throw: caught %d\n", caught);
    return 0;
}
