"""Instrumented code before and after main: a library constructor that runs
before libhookit's own (so the first hook initialises hookit), the
program's constructor, an atexit handler and a destructor, linked and
under `hookit run` (tests/progs/lifetime.c, early_lib.c).

The process ends for the lifecycle layer at exit (or main's return),
before atexit handlers and destructors, as with libmonitor; the profiler
goes on collecting them (HOOKIT_CAP_LATE_EXIT) and completes the profile
from libhookit's destructor."""
import os
import hk


def expected():
    t = hk.CallTree()
    with t.call("early_init"):
        for _ in range(3):
            with t.call("early_helper"):
                pass
    with t.call("prog_init"):
        pass
    with t.call("main"):
        for _ in range(2):
            with t.call("work"):
                pass
    with t.call("at_exit_handler"):
        for _ in range(2):
            with t.call("late_helper"):
                pass
    with t.call("prog_fini"):
        with t.call("late_helper"):
            pass
    return t.calls


STDOUT = ("lifetime: early=6 sink=104\n"
          "lifetime: atexit handler ran\n"
          "lifetime: destructor ran\n")


MODULES = {"early_init": "libearly.so", "early_helper": "libearly.so"}


def check(tmp, doc):
    t = hk.thread_of(doc, 0)
    hk.assert_tree(t, expected())
    hk.check_tree_consistent(t)
    for p, n in hk.walk(t["roots"]):
        assert n["module"] == MODULES.get(n["name"], "lifetime"), (p, n["module"])


def build(tmp, compiler, link_hookit):
    hk.cc(tmp, ["early_lib.c"], "libearly.so", compiler=compiler, shared=True,
          link_hookit=False)
    # -lhookit first: the loader runs libearly.so's constructor before libhookit's.
    return hk.cc(tmp, ["lifetime.c"], "lifetime", compiler=compiler, link_hookit=link_hookit,
                 libs=["-L" + tmp, "-learly", "-Wl,-rpath," + tmp])


def test_before_and_after_main_linked_gcc(tmp):
    exe = build(tmp, "gcc", True)
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert (rc, out, err) == (0, STDOUT, ""), (rc, out, err)
    check(tmp, hk.export_json(tmp, hk.one_profile(tmp, "lifetime")))


def test_before_and_after_main_linked_clang(tmp):
    exe = build(tmp, "clang", True)
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert (rc, out, err) == (0, STDOUT, ""), (rc, out, err)
    check(tmp, hk.export_json(tmp, hk.one_profile(tmp, "lifetime")))


def test_before_and_after_main_hookit_run(tmp):
    exe = build(tmp, "gcc", False)
    p = hk.hookit(tmp, "run", "-o", tmp, "--", exe, check=False)
    assert (p.returncode, p.stdout, p.stderr) == (0, STDOUT, ""), p
    check(tmp, hk.export_json(tmp, hk.one_profile(tmp, "lifetime")))
