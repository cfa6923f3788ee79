"""What real programs do to a profiler: signal handlers running
instrumented code on the interrupted thread (some signals land inside
hookit's hooks), longjmp and C++ exceptions that skip exit hooks.  The
trees stay exact and consistent; the program's behaviour is unchanged."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

HANDLER = ("on_signal", "tick_helper")


def fib_tree(t, n):
    with t.call("fib"):
        if n >= 2:
            fib_tree(t, n - 1)
            fib_tree(t, n - 2)


def without_handlers(thread):
    """The thread's tree with every signal handler subtree cut off, and the
    handler's calls: (pruned thread, on_signal calls, tick_helper calls)."""
    calls = {"on_signal": 0, "tick_helper": 0}

    def prune(nodes, inside_handler=False):
        out = []
        for n in nodes:
            if n["name"] == "on_signal" or inside_handler:
                assert n["name"] in HANDLER, ("in a handler", n["name"])
                calls[n["name"]] += n["calls"]
                if n["name"] == "on_signal":
                    assert [c["name"] for c in n["children"]] in ([], ["tick_helper"]), n
                prune(n["children"], True)
                continue
            assert n["name"] != "tick_helper", "tick_helper outside on_signal"
            out.append(dict(n, children=prune(n["children"])))
        return out

    pruned = dict(thread, roots=prune(thread["roots"]))
    return pruned, calls["on_signal"], calls["tick_helper"]


def check_signals(tmp, compiler):
    exe = hk.cc(tmp, ["signals.c"], "signals", compiler=compiler)
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert rc == 0 and err == "", (rc, out, err)
    m = re.fullmatch(r"signals: fib=2584 handled=(\d+)\n", out)
    assert m, out
    handled = int(m.group(1))
    assert handled >= 200, f"only {handled} signals: the test proves little"
    doc = hk.export_json(tmp, hk.one_profile(tmp, "signals"))
    t = hk.thread_of(doc, 0)
    hk.check_tree_consistent(t)
    pruned, on_signal, tick_helper = without_handlers(t)

    want = hk.CallTree()
    with want.call("main"):
        for _ in range(100):
            with want.call("run_fib"):
                fib_tree(want, 18)
    hk.assert_tree(pruned, want.calls)

    assert on_signal == tick_helper, (on_signal, tick_helper)
    assert 0 < on_signal <= handled, (on_signal, handled)
    meta = doc["process"].get("meta", {})
    if "dropped_events" in meta:
        # A handler that interrupts a hook loses all four of its events
        # (enter/exit of on_signal and tick_helper): nothing else is lost.
        dropped = int(meta["dropped_events"])
        assert dropped == 4 * (handled - on_signal), (dropped, handled, on_signal)


def test_signal_handlers_gcc(tmp):
    check_signals(tmp, "gcc")


def test_signal_handlers_clang(tmp):
    check_signals(tmp, "clang")


def skipped_exits_tree(kind):
    """jump.c / throw.cc: main -> a -> b -> c leave by longjmp/throw, five times."""
    names = {"jump": ("jump_a", "jump_b", "jump_c", "after_jump"),
             "throw": ("thrower_a(int)", "thrower_b(int)", "thrower_c(int)", "after_catch()")}
    a, b, c, after = names[kind]
    t = hk.CallTree()
    with t.call("main"):
        for _ in range(5):
            with t.call(a):
                with t.call(b):
                    with t.call(c):
                        pass
            with t.call(after):
                pass
        if kind == "jump":
            with t.call("last"):
                pass
    return t.calls


def check_skipped_exits(tmp, src, exe_name, compiler, stdout):
    exe = hk.cc(tmp, [src], exe_name, compiler=compiler)
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert (rc, out, err) == (0, stdout, ""), (rc, out, err)
    doc = hk.export_json(tmp, hk.one_profile(tmp, exe_name))
    t = hk.thread_of(doc, 0)
    hk.assert_tree(t, skipped_exits_tree(exe_name))
    hk.check_tree_consistent(t)


def test_longjmp_gcc(tmp):
    """The frames longjmp leaves are closed; what main calls next is main's child."""
    check_skipped_exits(tmp, "jump.c", "jump", "gcc", "jump: 11\n")


def test_longjmp_clang(tmp):
    check_skipped_exits(tmp, "jump.c", "jump", "clang", "jump: 11\n")


def test_exceptions_gxx(tmp):
    check_skipped_exits(tmp, "throw.cc", "throw", "g++", "throw: caught 5\n")


def test_exceptions_clangxx(tmp):
    check_skipped_exits(tmp, "throw.cc", "throw", "clang++", "throw: caught 5\n")


# Walks the exported JSON of a deep chain in a child Python with json's
# default limits (schema 2 is a flat table: no nesting grows with depth).
DEEP_CHAIN = r"""
import json, sys
doc = json.load(open(sys.argv[1]))
nodes = [t for t in doc["threads"] if t["index"] == 0][0]["nodes"]
roots = [n for n in nodes if n["parent"] is None]
assert [r["name"] for r in roots] == ["main"], [r["name"] for r in roots]
children = {}
for n in nodes:
    children.setdefault(n["parent"], []).append(n)
depth, level = 0, children.get(roots[0]["id"], [])
while level:
    n = level[0]
    assert len(level) == 1 and n["name"] == "down" and n["calls"] == 1, (depth, n["name"])
    assert n["incl_ns"] >= n["excl_ns"] >= 0, (depth, n)
    assert n["depth"] == depth + 1, (depth, n["depth"])
    depth, level = depth + 1, children.get(n["id"], [])
print(depth)
"""


def test_deep_recursion(tmp):
    """No fixed depth limit: 20000 nested calls, every level its own node."""
    src = os.path.join(tmp, "deep.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\n"
                "__attribute__((noinline)) long down(long n) { return n ? 1 + down(n - 1) : 0; }\n"
                "int main(void) { printf(\"%ld\\n\", down(19999)); return 0; }\n")
    exe = hk.cc(tmp, [src], "deep", flags=["-O0"])
    p = hk.run(tmp, [exe])
    assert p.stdout == "19999\n", p.stdout
    js = os.path.join(tmp, "deep.json")
    hk.hookit(tmp, "export", "--format=json", "-o", js, hk.one_profile(tmp, "deep"))
    p = hk.run(tmp, [sys.executable, "-c", DEEP_CHAIN, js])
    assert p.stdout.strip() == "20000", p.stdout + p.stderr


FLAT_SUMMARY = r"""
import json, sys
doc = json.load(open(sys.argv[1]))
out = []
for t in sorted(doc["threads"], key=lambda t: t["index"]):
    flat = {}
    for n in t["nodes"]:
        flat[n["name"]] = flat.get(n["name"], 0) + n["calls"]
    out.append({"index": t["index"], "flat": flat, "nodes": len(t["nodes"])})
print(json.dumps(out))
"""


def flat_summary(tmp, prof):
    """Per thread (by index): {name: total calls} and the node count, read in
    a child Python with json's default limits."""
    import json
    js = prof + ".json"
    hk.hookit(tmp, "export", "--format=json", "-o", js, prof)
    p = hk.run(tmp, [sys.executable, "-c", FLAT_SUMMARY, js])
    return json.loads(p.stdout)


def test_errno_preserved(tmp):
    """errno survives the hooks' rare paths: a thread's first event, the
    shadow stack and node arena growing, the exit hook (tests/progs/errno_keep.c)."""
    exe = hk.cc(tmp, ["errno_keep.c"], "errno_keep", libs=["-lpthread"])
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert (rc, out, err) == (0, "errno_keep: bad=0\n", ""), (rc, out, err)
    threads = flat_summary(tmp, hk.one_profile(tmp, "errno_keep"))
    assert [t["index"] for t in threads] == [0, 1, 2, 3, 4], threads
    main = threads[0]
    flat = main["flat"]
    assert flat["deep"] == 20001 and flat["wide"] == 401, flat
    assert flat["leaf_10"] == 401 and flat["probe"] == 20001, flat
    assert main["nodes"] == 1 + 3 * 20001 + 401 * 51 + 1, main["nodes"]
    for t in threads[1:]:
        assert t["flat"] == {"probe": 1}, t


def test_exit_from_a_signal_handler(tmp):
    """exit() from a handler that interrupted a hook: the profile written
    then is consistent (tests/progs/signal_exit.c; 40 runs, as the exit lands
    inside a hook only some of the time)."""
    exe = hk.cc(tmp, ["signal_exit.c"], "signal_exit")
    bad = []
    for run in range(40):
        rc, out, err, pid = hk.popen_run(tmp, [exe])
        assert (rc, out, err) == (7, "", ""), (rc, out, err)
        prof = hk.one_profile(tmp, "signal_exit")
        doc = hk.export_json(tmp, prof)
        os.unlink(prof)
        t = hk.thread_of(doc, 0)
        try:
            hk.check_tree_consistent(t)
            assert [r["name"] for r in t["roots"]] == ["main"], [r["name"] for r in t["roots"]]
        except AssertionError as e:
            bad.append(f"run {run}: {e}")
    assert not bad, f"{len(bad)} of 40 profiles inconsistent:\n" + "\n".join(bad[:5])
