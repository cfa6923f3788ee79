"""The exact call tree of tests/progs/calls.c, built by a Python mirror of
its code (shared by the tests in tests/core and tests/examples)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import hk  # noqa: E402

STDOUT = "calls: fib=144 fact=7257600 even=0 ptr=-53 static=35\n"
EXIT_STDOUT = "calls: leaving through exit(3)\n"
STATUS = 3
BUSY_MS = 50


def expected(leave_through_exit=False):
    t = hk.CallTree()
    c = t.call

    def level_b():
        with c("level_b"):
            for _ in range(4):
                with c("level_c"):
                    pass

    def nested():
        with c("nested"):
            for _ in range(2):
                with c("level_a"):
                    for _ in range(3):
                        level_b()

    def fib(n):
        with c("fib"):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

    def fact(n):
        with c("fact"):
            return 1 if n <= 1 else n * fact(n - 1)

    def is_even(n):
        with c("is_even"):
            return True if n == 0 else is_odd(n - 1)

    def is_odd(n):
        with c("is_odd"):
            return False if n == 0 else is_even(n - 1)

    def via_pointers():
        with c("via_pointers"):
            for i in range(10):
                with c(("op_add", "op_sub", "op_mul")[i % 3]):
                    pass

    def static_outer():
        with c("static_outer"):
            for _ in range(5):
                with c("static_inner"):
                    pass

    with c("main"):
        nested()
        assert fib(12) == 144
        fact(10)
        fact(10)
        is_even(9)
        via_pointers()
        static_outer()
        with c("busy_wait_ms"):
            pass
        with c("nap_ms"):
            pass
        if leave_through_exit:
            with c("die_here"):
                pass
    return t.calls


def flat_counts(leave_through_exit=False):
    """{function: total calls} over the whole tree."""
    out = {}
    for path, calls in expected(leave_through_exit).items():
        out[path[-1]] = out.get(path[-1], 0) + calls
    return out
