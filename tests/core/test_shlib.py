"""Functions in a shared library the program links (tests/progs/shlib.c):
exact counts, module names, a static function inside the library, a
callback back into the executable."""
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
