"""Functions in a shared library the program links (tests/progs/shlib.c):
exact counts, module names, a static function inside the library, a
callback back into the executable."""
import os
import time

import hk


def expected():
    t = hk.CallTree()
    with t.call("main"):
        with t.call("shlib_entry"):
            for _ in range(5):
                with t.call("shlib_hidden"):
                    for _ in range(2):
                        with t.call("shlib_leaf"):
                            pass
            with t.call("back_in_main"):
                pass
        for _ in range(3):
            with t.call("shlib_leaf"):
                pass
    return t.calls


def check_shlib(tmp, compiler, flags=()):
    hk.cc(tmp, ["shlib.c"], "libshlib.so", compiler=compiler, shared=True, link_hookit=False,
          flags=flags)
    exe = hk.cc(tmp, ["shlib_main.c"], "shlib_main", compiler=compiler, flags=flags,
                libs=["-L" + tmp, "-lshlib", "-Wl,-rpath," + tmp])
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert rc == 0, (rc, out, err)
    assert out == "shlib: 111\n", out
    doc = hk.export_json(tmp, hk.one_profile(tmp, "shlib_main"))
    t = hk.thread_of(doc, 0)
    hk.assert_tree(t, expected())
    hk.check_tree_consistent(t)
    modules = {"main": "shlib_main", "back_in_main": "shlib_main",
               "shlib_entry": "libshlib.so", "shlib_hidden": "libshlib.so",
               "shlib_leaf": "libshlib.so"}
    for p, n in hk.walk(t["roots"]):
        assert n["module"] == modules[n["name"]], (p, n["module"])


def test_shlib_gcc(tmp):
    check_shlib(tmp, "gcc")


def test_shlib_clang(tmp):
    check_shlib(tmp, "clang")


def test_shlib_clang_O2(tmp):
    check_shlib(tmp, "clang", ["-O2"])


def check_dlopen(tmp, compiler, runner=False):
    lib = hk.cc(tmp, ["shlib.c"], "libshlib.so", compiler=compiler, shared=True,
                link_hookit=False)
    exe = hk.cc(tmp, ["dlopen_main.c"], "dlopen_main", compiler=compiler,
                link_hookit=not runner, libs=["-ldl"])
    if runner:
        p = hk.hookit(tmp, "run", "-o", tmp, "--", exe, lib, check=False)
        rc, out, err = p.returncode, p.stdout, p.stderr
    else:
        rc, out, err, pid = hk.popen_run(tmp, [exe, lib])
    assert (rc, out, err) == (0, "dlopen: 105\n", ""), (rc, out, err)
    t = hk.thread_of(hk.export_json(tmp, hk.one_profile(tmp, "dlopen_main")), 0)
    want = hk.CallTree()
    with want.call("main"):
        with want.call("shlib_entry"):
            for _ in range(5):
                with want.call("shlib_hidden"):
                    for _ in range(2):
                        with want.call("shlib_leaf"):
                            pass
            with want.call("back_in_main"):
                pass
        with want.call("after_unload"):
            pass
    hk.assert_tree(t, want.calls)
    hk.check_tree_consistent(t)
    for p, n in hk.walk(t["roots"]):
        mod = "libshlib.so" if n["name"].startswith("shlib_") else "dlopen_main"
        assert n["module"] == mod, (p, n["module"])


def test_dlopen_dlclose_gcc(tmp):
    """A library loaded with dlopen and unloaded before exit keeps its names."""
    check_dlopen(tmp, "gcc")


def test_dlopen_dlclose_clang_hookit_run(tmp):
    check_dlopen(tmp, "clang", runner=True)


def test_dlclose_callback_waiting_for_a_dlopen(tmp):
    """jprof keeps dlopens out while a dlclose is being finished; a
    monitor_post_dlclose callback that joins a thread doing a dlopen must
    cost a bounded wait (200 ms per lock taken), never a hang."""
    lib = hk.cc(tmp, ["shlib.c"], "libshlib.so", shared=True, link_hookit=False)
    exe = hk.cc(tmp, ["dlclose_wait.c"], "dlclose_wait", libs=["-ldl", "-lpthread"])
    start = time.monotonic()
    p = hk.run(tmp, [exe, lib, "3"], timeout=60)
    took = time.monotonic() - start
    assert (p.stdout, p.stderr) == ("rounds 3\n", ""), p
    # Three rounds, each waiting twice (the worker's dlopen and dlclose).
    assert took < 20, took
    t = hk.thread_of(hk.export_json(tmp, hk.one_profile(tmp, "dlclose_wait")), 0)
    hk.check_tree_consistent(t)
    assert hk.node(t, "main")["calls"] == 1


def dlclose_deps_run(tmp):
    inner = hk.cc(tmp, ["dep_inner.c"], "libdep_inner.so", shared=True, link_hookit=False)
    outer = hk.cc(tmp, ["dep_outer.c"], "libdep_outer.so", shared=True, link_hookit=False,
                  libs=["-L" + tmp, "-ldep_inner", "-Wl,-rpath," + tmp])
    others = [hk.cc(tmp, ["dep_inner.c"], f"libdep_other{i}.so", shared=True, link_hookit=False,
                    flags=["-DFN=other_fn"]) for i in range(4)]
    exe = hk.cc(tmp, ["dlclose_deps.c"], "dlclose_deps", libs=["-ldl"])
    for f in os.listdir(tmp):
        if f.endswith(".prof"):
            os.unlink(os.path.join(tmp, f))
    p = hk.run(tmp, [exe, outer, inner] + others)
    t = hk.thread_of(hk.export_json(tmp, hk.one_profile(tmp, "dlclose_deps")), 0)
    return p.stdout, t


def test_dlclose_takes_the_names_of_what_it_unloads_with_it(tmp):
    """A dependency unloaded with the closed library keeps its names, even
    when another library is then mapped where it was."""
    for _ in range(5):          # until another library lands where the dependency was
        out, t = dlclose_deps_run(tmp)
        assert out.startswith("inner gone: yes\n"), out
        if out.endswith("reused: yes\n"):
            break
    else:
        hk.skip("no library was mapped where libdep_inner.so had been in 5 runs")
    seen = {(tuple(p), n["module"]): n["calls"] for p, n in hk.walk(t["roots"])}
    assert seen.get((("main", "outer_fn", "inner_fn"), "libdep_inner.so")) == 1, seen
    others = {m: c for (p, m), c in seen.items() if p == ("main", "other_fn")}
    assert sorted(others) == [f"libdep_other{i}.so" for i in range(4)], seen
    assert len(seen) == 7, seen
