"""hookit diff and hookit merge on the fixed profiles (known numbers)."""
import json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixed  # noqa: E402
import hk  # noqa: E402


def rows(text, table):
    """The rows of one diff table as lists of columns (name last)."""
    out, on = [], False
    for line in text.splitlines():
        if line.startswith("== "):
            on = line.startswith("== " + table)
            continue
        if on and line and line.lstrip()[0].isdigit():
            cols = line.split(None, 11)
            out.append(cols)
    return out


def test_diff_golden_and_numbers(tmp):
    a, b = fixed.fixed_profiles(tmp)
    out = hk.hookit(tmp, "diff", a, b).stdout.replace(tmp + "/", "")
    fixed.check_golden("diff.txt", out)
    assert "total time: 1.40ms -> 2.45ms (+1.05ms, +75.0%)" in out, out
    funcs = rows(out, "functions")
    # sorted by impact: |change of self time|
    assert [r[-1] for r in funcs][:5] == ["app:fib", "app:report", "app:lex", "app:cache",
                                          "app:tiny"], funcs
    assert len(funcs) == 9                      # fmt did not change
    fib = funcs[0]
    assert fib[:4] == ["9", "9", "+0", "800.00us"] and fib[4:7] == ["1.60ms", "+800.00us", "+100.0%"]
    # fib's inclusive time counts each recursion once: 500+300 -> 1000+600
    assert fib[7:10] == ["800.00us", "1.60ms", "+800.00us"], fib
    cache = [r for r in funcs if r[-1] == "app:cache"][0]
    assert cache[6] == "new" and cache[2] == "+10", cache
    tiny = [r for r in funcs if r[-1] == "app:tiny"][0]
    assert tiny[6] == "gone" and tiny[1] == "0", tiny
    lex = [r for r in funcs if r[-1] == "app:lex"][0]
    assert lex[:3] == ["45", "65", "+20"], lex
    paths = rows(out, "call paths")
    assert paths[0][-1] == "worker > compute > fib", paths[0]
    assert any(r[-1] == "worker > compute > fib" and r[5] == "+300.00us" for r in paths), paths
    assert "unchanged" in out                   # main > report > lex and > fmt did not change


def test_diff_options(tmp):
    a, b = fixed.fixed_profiles(tmp)
    out = hk.hookit(tmp, "diff", "--functions", "--limit", "2", a, b).stdout
    assert "== call paths" not in out and len(rows(out, "functions")) == 2
    assert "... 7 more changed" in out, out
    same = hk.hookit(tmp, "diff", a, a).stdout
    # (a's function table also names cache, which no context of a calls:
    # no row, unchanged or not)
    assert rows(same, "functions") == [] and "... 9 unchanged" in same, same
    p = hk.hookit(tmp, "diff", a, check=False)
    assert p.returncode == 2 and "two profiles" in p.stderr


def node_of(doc, index, *path):
    return hk.node(hk.thread_of(doc, index), *path)


def test_merge_sum_min_mean_max(tmp):
    a, b = fixed.fixed_profiles(tmp)
    out = os.path.join(tmp, "m.prof")
    hk.hookit(tmp, "merge", "-o", out, a, a, b)
    doc = hk.export_json(tmp, out)
    meta = doc["process"]["meta"]
    assert meta["merged_inputs"] == 3 and meta["input.2"].endswith("b.prof pid 2000 rank -1")
    fib = node_of(doc, 0, "main", "compute", "fib")
    assert fib["calls"] == 3 and fib["incl_ns"] == 2000000 and fib["excl_ns"] == 800000
    assert (fib["inputs"], fib["min_incl_ns"], fib["mean_incl_ns"], fib["max_incl_ns"]) == \
        (3, 500000, 666666, 1000000)
    assert (fib["min_incl_input"], fib["max_incl_input"]) == (0, 2)
    assert (fib["min_calls"], fib["mean_calls"], fib["max_calls"]) == (1, 1, 1)
    assert (fib["min_excl_ns"], fib["max_excl_ns"]) == (200000, 400000)
    tiny = node_of(doc, 0, "main", "report", "tiny")          # not in b
    assert (tiny["inputs"], tiny["min_incl_ns"], tiny["min_incl_input"], tiny["max_incl_ns"]) == \
        (2, 0, 2, 3000)
    cache = node_of(doc, 0, "main", "parse", "cache")         # only in b
    assert (cache["inputs"], cache["min_calls"], cache["min_incl_input"],
            cache["max_incl_input"], cache["mean_calls"]) == (1, 0, 0, 2, 3)
    worker = node_of(doc, 1, "worker")
    assert worker["calls"] == 3 and worker["incl_ns"] == 1500000
    # every command reads the merged profile
    hk.hookit(tmp, "report", "--flat", out)
    hk.hookit(tmp, "export", "--format=callgrind", out)
    d = hk.hookit(tmp, "diff", a, out).stdout
    assert "app:fib" in d


def test_merge_threads_and_many_inputs(tmp):
    a, b = fixed.fixed_profiles(tmp)
    out = os.path.join(tmp, "m.prof")
    hk.hookit(tmp, "merge", "--merge-threads", "-o", out, *([a, b] * 20))
    doc = hk.export_json(tmp, out)
    assert len(doc["threads"]) == 1
    t = doc["threads"][0]
    assert {n["name"] for n in t["roots"]} == {"main", "worker"}
    fib = hk.node(t, "worker", "compute", "fib")
    assert fib["calls"] == 80 and fib["inputs"] == 40 and fib["max_incl_ns"] == 600000
    assert doc["process"]["meta"]["merged_inputs"] == 40


def test_merge_refuses_bad_input(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    bad = os.path.join(tmp, "bad.prof")
    with open(bad, "wb") as f:
        f.write(open(a, "rb").read()[:100])
    out = os.path.join(tmp, "m.prof")
    p = hk.hookit(tmp, "merge", "-o", out, a, bad, check=False)
    assert p.returncode == 1 and "bad.prof" in p.stderr and not os.path.exists(out), p.stderr
    p = hk.hookit(tmp, "merge", a, check=False)
    assert p.returncode == 2 and "-o OUT" in p.stderr


DIFF_APP = r"""
#include <stdio.h>
#include <stdlib.h>
int down(int n) { return n ? 1 + down(n - 1) : 0; }
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i % 7; return s; }
int main(int argc, char **argv) { printf("%d %d\n", work(atoi(argv[1])), down(999)); return 0; }
"""


def test_diff_across_builds_with_other_exe_names(tmp):
    """app and app_v2: the main executable's functions match by name, the
    header says so, nothing is 'new' or 'gone', and the recursion 1,000
    deep reads as one step of the path."""
    src = os.path.join(tmp, "app.c")
    with open(src, "w") as f:
        f.write(DIFF_APP)
    a_dir, b_dir = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    os.makedirs(a_dir)
    os.makedirs(b_dir)
    hk.run(a_dir, [hk.cc(tmp, [src], "app"), "1000"], env={"HOOKIT_OUTPUT": a_dir})
    hk.run(b_dir, [hk.cc(tmp, [src], "app_v2"), "200000"], env={"HOOKIT_OUTPUT": b_dir})
    a, b = hk.one_profile(a_dir, "app"), hk.one_profile(b_dir, "app_v2")
    # --all: a path whose times came out equal in A and B is hidden otherwise
    out = hk.hookit(tmp, "diff", "--limit", "0", "--all", a, b).stdout
    assert "matched: functions by name; the main executables app (A) and app_v2 (B) as one module" \
        in out, out
    rows = [l for l in out.splitlines() if re.match(r"\s+\d+\s+\d+\s+[+-]\d+", l)]
    # a function or path only one side has shows 0 calls on the other
    # ("new" or "gone" in a % column only says a time went from or to 0)
    assert rows and not [l for l in rows if 0 in (int(l.split()[0]), int(l.split()[1]))], out
    fn_rows = [l for l in rows if l.endswith(":work") or l.endswith(":main") or l.endswith(":down")]
    assert len(fn_rows) == 3 and all(":" in l and "app:" in l for l in fn_rows), fn_rows
    assert "down > down" not in out
    assert re.search(r"main > down \u00d71000$", out, re.M), out
    work = [l for l in rows if l.endswith("main > work")]
    assert len(work) == 1, out


def test_diff_same_exe_says_how_matched(tmp):
    a, b = fixed.fixed_profiles(tmp)
    out = hk.hookit(tmp, "diff", a, b).stdout
    assert re.search(r"^matched: functions by name and module \(main executable \S+\)", out, re.M), out
