"""The view as compiled on both compilers (issue 29): GCC and Clang (without
-finstrument-functions-after-inlining) call the hooks around every inlined
copy, with the host's call site, and libjprof marks such contexts
(ARENA_NODE_INLINED); `--as-compiled` folds them into their hosts.  On
tests/reports/progs/inlined_hosts.c at -O2: sq() inlined into two hosts and
called out of line from main; its copies call leaf(), which host_a also
calls directly.  Every count and time is checked against the source view
of the same profile (timer=exact: every call timed, so the sums are exact)."""
import os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hk  # noqa: E402

N, M, K = 40, 1000, 3000
SRC = os.path.join(HERE, "progs", "inlined_hosts.c")


def nodes(doc):
    return {path: n for path, n in hk.walk(doc["threads"][0]["roots"])}


def profile(tmp, compiler):
    d = os.path.join(tmp, compiler)
    os.makedirs(d)
    exe = hk.cc(d, [SRC], "inlined_hosts", compiler=compiler, flags=["-O2"])
    hk.run(d, [exe], env={"JPROFOPTS": "timer=exact"})
    return d, hk.one_profile(d, "inlined_hosts")


def check_source_view(src, compiler):
    """As the source says: every sq a call, the copies marked, the
    out-of-line one not."""
    want = {("main", "host_a", "sq"): (N * M, 1), ("main", "host_b", "sq"): (N * M, 1),
            ("main", "sq"): (K, 0), ("main", "host_a"): (N, 0), ("main", "host_b"): (N, 0),
            ("main", "host_a", "leaf"): (N * M, 0), ("main", "host_a", "sq", "leaf"): (N * M, 0),
            ("main", "host_b", "sq", "leaf"): (N * M, 0), ("main", "sq", "leaf"): (K, 0)}
    for path, (calls, inlined) in want.items():
        n = src.get(path)
        assert n and n["calls"] == calls and (n.get("inlined") or 0) == inlined, \
            (compiler, path, n, sorted(src))
    assert set(src) == set(want) | {("main",)}, (compiler, sorted(src))


def check_as_compiled(src, comp, compiler):
    """The copies folded: their time the host's own, their calls gone, their
    callees the host's (merged with the host's own calls of leaf)."""
    assert set(comp) == {("main",), ("main", "host_a"), ("main", "host_b"), ("main", "sq"),
                         ("main", "host_a", "leaf"), ("main", "host_b", "leaf"),
                         ("main", "sq", "leaf")}, (compiler, sorted(comp))
    for host in ("host_a", "host_b"):
        h, copy, ch = src[("main", host)], src[("main", host, "sq")], comp[("main", host)]
        assert ch["calls"] == N and ch["incl_ns"] == h["incl_ns"], (compiler, ch, h)
        assert ch["excl_ns"] == h["excl_ns"] + copy["excl_ns"], (compiler, ch, h, copy)
    la, lb = comp[("main", "host_a", "leaf")], comp[("main", "host_b", "leaf")]
    direct, via = src[("main", "host_a", "leaf")], src[("main", "host_a", "sq", "leaf")]
    assert la["calls"] == 2 * N * M and lb["calls"] == N * M, (compiler, la, lb)
    assert la["incl_ns"] == direct["incl_ns"] + via["incl_ns"], (compiler, la, direct, via)
    assert la["excl_ns"] == direct["excl_ns"] + via["excl_ns"], (compiler, la, direct, via)
    for path in (("main",), ("main", "sq"), ("main", "sq", "leaf")):
        assert (comp[path]["calls"], comp[path]["incl_ns"], comp[path]["excl_ns"]) == \
            (src[path]["calls"], src[path]["incl_ns"], src[path]["excl_ns"]), (compiler, path)
    assert not any(n.get("inlined") for n in comp.values()), (compiler, comp)


def check_flat_report(d, prof, compiler):
    """report --flat --as-compiled: sq keeps only its out-of-line calls."""
    def calls_of(out, fn):
        m = re.search(r"^\s*\S+\s+\S+\s+\S+\s+(\d+)\s.*F:inlined_hosts\." + fn + r"\(\)$", out, re.M)
        assert m, (compiler, fn, out)
        return int(m.group(1))
    src = hk.hookit(d, "report", "--flat", "--no-pager", prof).stdout
    comp = hk.hookit(d, "report", "--flat", "--no-pager", "--as-compiled", prof).stdout
    assert calls_of(src, "sq") == 2 * N * M + K, (compiler, src)
    assert calls_of(comp, "sq") == K and calls_of(comp, "leaf") == 3 * N * M + K, (compiler, comp)
    tree = hk.hookit(d, "report", "--no-pager", "--as-compiled", prof).stdout
    assert len(re.findall(r"F:inlined_hosts\.sq\(\)", tree)) == 1, (compiler, tree)


def test_inlined_copies_fold_into_both_hosts_gcc_and_clang(tmp):
    for compiler in hk.C_COMPILERS:
        d, prof = profile(tmp, compiler)
        src = nodes(hk.export_json(d, prof))
        check_source_view(src, compiler)
        check_as_compiled(src, nodes(hk.export_json(d, prof, "--as-compiled")), compiler)
        check_flat_report(d, prof, compiler)
