/*
 * unwind_guards: destructors that run while an exception unwinds, each in
 * the frame that owned its object (tests/core/test_exact.py).  Clang runs
 * no exit hook while it unwinds: the frames it leaves are closed when the
 * unwinder reports the landing pad's frame (HOOKIT_FLOW_UNWIND).
 *
 *   main > run x3 > depth1 > depth2 > depth3 > thrower ; each of thrower,
 *   depth3, depth2, depth1 > Guard::~Guard (on the way out) ; run > handled,
 *   run > Guard::~Guard
 */
#include "progs.h"


volatile long sink;

struct Guard {
    KEEP ~Guard() { sink++; }
};

KEEP void handled() { sink++; }
KEEP void thrower() { Guard g; throw 1; }
KEEP void depth3() { Guard g; thrower(); sink++; }
KEEP void depth2() { Guard g; depth3(); sink++; }
KEEP void depth1() { Guard g; depth2(); sink++; }

KEEP void run()
{
    Guard g;
    try {
        depth1();
    } catch (int) {
        handled();
    }
}

int main()
{
    for (int i = 0; i < 3; i++)
        run();
    return 0;
}
