"""Functions inlined at -O2 keep their place in the tree (gcc and clang)."""
import hk


def check(tmp, compiler):
    exe = hk.cc(tmp, ["inlined.c"], f"inlined_{compiler}", compiler=compiler, flags=["-O2"])
    p = hk.run(tmp, [exe])
    assert p.stdout == "inlined: 18\n" and p.stderr == "", p
    doc = hk.export_json(tmp, hk.one_profile(tmp, f"inlined_{compiler}"))
    t = hk.thread_of(doc, 0)
    hk.assert_tree(t, {("main",): 1, ("main", "compute"): 3, ("main", "compute", "helper"): 3,
                       ("main", "compute", "helper", "kernel"): 6})
    hk.check_tree_consistent(t)
    assert doc["process"]["meta"]["unmatched_exits"] == 0, doc["process"]["meta"]


def test_inlined_gcc(tmp):
    check(tmp, "gcc")


def test_inlined_clang(tmp):
    check(tmp, "clang")
