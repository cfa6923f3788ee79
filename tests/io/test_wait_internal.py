"""hookit's own locks are not the program's wait: threads that never block
(tests/io/internal_locks.c) but make libjprof take its context-table lock
(makecontext) and libhookit its module-scan lock (dlopen), four at a time
so the locks are contended.  Those calls reach the blocking-call wrappers
through the PLT; under the per-thread guard they pass through untimed.
The only waits are main's four pthread_join calls."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def test_internal_locks_are_not_the_programs_wait(tmp):
    exe = hk.cc(tmp, [os.path.join(HERE, "internal_locks.c")], "internal_locks",
                link_hookit=False, libs=["-lpthread", "-ldl"])
    src = os.path.join(tmp, "lib.c")
    with open(src, "w") as f:
        f.write("int lib_fn(void) { return 1; }\n")
    lib = hk.cc(tmp, [src], "liblocks.so", shared=True, link_hookit=False)
    p = hk.hookit(tmp, "run", "--", exe, "2000", lib)
    assert p.stdout == "done\n", (p.stdout, p.stderr)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "internal_locks"))
    waits = [(t["index"], path, n["calls"], n["wait_calls"], n["wait_ns"])
             for t in doc["threads"] for path, n in hk.walk(t["roots"])
             if n["wait_calls"] or n["wait_ns"]]
    makers = [n for t in doc["threads"] for p_, n in hk.walk(t["roots"]) if p_[-1] == "make_many"]
    assert len(makers) == 4 and all(n["calls"] == 1 for n in makers), makers
    assert [w[:2] for w in waits] == [(0, ("main",))] and waits[0][3] == 4, waits
