"""The view as compiled (issue 29): GCC instruments the copies of a
function it inlines, so by default hookit shows what the source says,
every function a call.  libjprof knows which calls were inlined copies
(their hook has the host's call site: ARENA_NODE_INLINED, the profile's
"inlined" column), and `--as-compiled` (report, export, diff) folds them
into the function they were inlined into, as perf and a debugger see the
optimized binary.  On tests/reports/progs/inlining.c built with gcc -O2:
sq() always inlined into work(), twice() a real call."""
import os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hk  # noqa: E402

N, M = 50, 2000


def profile(tmp):
    exe = hk.cc(tmp, [os.path.join(HERE, "progs", "inlining.c")], "inlining", flags=["-O2"])
    # every call timed: the folded copies' time must land in their host
    hk.run(tmp, [exe], env={"JPROFOPTS": "timer=exact"})
    return hk.one_profile(tmp, "inlining")


def nodes(doc):
    return {path: n for path, n in hk.walk(doc["threads"][0]["roots"])}


def test_inlined_copies_fold_into_their_host(tmp):
    prof = profile(tmp)
    src = nodes(hk.export_json(tmp, prof))
    # as the source says: sq is a call of work's, marked as an inlined copy
    sq, tw, work = src[("main", "work", "sq")], src[("main", "work", "twice")], src[("main", "work")]
    assert sq["calls"] == N * M and sq.get("inlined") == 1, sq
    assert tw["calls"] == N * M and not tw.get("inlined"), tw
    assert work["calls"] == N and not work.get("inlined"), work
    # as compiled: sq is work's own code, its time work's, its calls gone
    comp = nodes(hk.export_json(tmp, prof, "--as-compiled"))
    assert set(comp) == {("main",), ("main", "work"), ("main", "work", "twice")}, sorted(comp)
    cw = comp[("main", "work")]
    assert cw["excl_ns"] == work["excl_ns"] + sq["excl_ns"] and cw["incl_ns"] == work["incl_ns"], (cw, work, sq)
    assert comp[("main", "work", "twice")]["calls"] == N * M
    assert comp[("main",)]["incl_ns"] == src[("main",)]["incl_ns"]
    assert not any(n.get("inlined") for n in comp.values()), comp
    # the report and diff views take it too
    flat = hk.hookit(tmp, "report", "--flat", "--no-pager", prof).stdout
    assert "F:inlining.sq()" in flat and "F:inlining.twice()" in flat, flat
    flat = hk.hookit(tmp, "report", "--flat", "--no-pager", "--as-compiled", prof).stdout
    # (the names, not bare "sq": the header's path is a random directory's)
    assert "F:inlining.sq()" not in flat and "F:inlining.twice()" in flat and "F:inlining.work()" in flat, flat
    tree = hk.hookit(tmp, "report", "--no-pager", "--as-compiled", prof).stdout
    assert not re.search(r"F:inlining\.sq\(\)", tree), tree
    diff = hk.hookit(tmp, "diff", "--all", "--as-compiled", prof, prof).stdout
    assert "inlining:twice" in diff and "inlining:sq" not in diff, diff
    folded = hk.hookit(tmp, "export", "--format=folded", "--as-compiled", prof).stdout
    assert folded and not re.search(r"(^|;)sq[; ]", folded, re.M) and "main;work;twice " in folded, folded


def test_live_snapshot_has_the_inlined_column(tmp):
    """A snapshot of the running program carries the marks too."""
    exe = hk.cc(tmp, [os.path.join(HERE, "progs", "inlining.c")], "inlining", flags=["-O2"])
    rt = os.path.join(tmp, "rt")
    env = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt)
    p = subprocess.Popen([exe, "forever"], cwd=tmp, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n"
        snap = os.path.join(tmp, "now.prof")
        hk.hookit(tmp, "snapshot", "-o", snap, str(p.pid), env={"HOOKIT_RUNTIME_DIR": rt})
    finally:
        p.kill()
        p.communicate()
    src = nodes(hk.export_json(tmp, snap))
    assert src[("main", "work", "sq")].get("inlined") == 1, src
    assert not src[("main", "work", "twice")].get("inlined"), src
    comp = nodes(hk.export_json(tmp, snap, "--as-compiled"))
    assert ("main", "work", "sq") not in comp and ("main", "work", "twice") in comp, sorted(comp)
