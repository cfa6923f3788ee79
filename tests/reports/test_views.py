"""hookit report's views on the fixed profiles, compared with golden output,
and the arithmetic the views promise (the recursion rule)."""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixed  # noqa: E402
import hk  # noqa: E402

# (golden file, report arguments); "A"/"B" stand for the fixed profiles.
VIEWS = [
    ("tree.txt", ["A"]),
    ("flat.txt", ["--flat", "A"]),
    ("callers_fib.txt", ["--callers", "fib", "A"]),
    ("callees_compute.txt", ["--callees", "compute", "A"]),
    ("callers_lex_sort_calls.txt", ["--callers", "lex", "--sort", "calls", "A"]),
    ("merge_threads.txt", ["--merge-threads", "A"]),
    ("merge.txt", ["--merge", "A", "B"]),
    ("two_profiles.txt", ["--depth", "1", "A", "B"]),
    ("min_pct.txt", ["--min-pct", "5", "A"]),
    ("flat_min_pct.txt", ["--flat", "--min-pct", "5", "--thread", "1000", "A"]),
    ("depth.txt", ["--depth", "2", "--thread", "1000", "A"]),
    ("sort_calls.txt", ["--sort", "calls", "--thread", "1000", "A"]),
    ("sort_excl.txt", ["--sort", "excl", "--thread", "1000", "A"]),
    ("sort_name.txt", ["--sort", "name", "--thread", "1000", "A"]),
    ("flat_sort_incl.txt", ["--flat", "--sort", "incl", "--thread", "1000", "A"]),
    ("flat_sort_name.txt", ["--flat", "--sort", "name", "--thread", "1000", "A"]),
    ("units_ms.txt", ["--units", "ms", "--thread", "1000", "A"]),
    ("units_ns.txt", ["--flat", "--units", "ns", "--thread", "1001", "A"]),
]


def report(tmp, args, a, b, **kw):
    argv = [{"A": a, "B": b}.get(x, x) for x in args]
    return hk.hookit(tmp, "report", *argv, **kw)


def test_golden_views(tmp):
    a, b = fixed.fixed_profiles(tmp)
    errors = []
    for name, args in VIEWS:
        out = report(tmp, args, a, b).stdout.replace(tmp + "/", "")
        try:
            fixed.check_golden(name, out)
        except AssertionError as e:
            errors.append(f"hookit report {' '.join(args)}:\n{e}")
    assert not errors, "\n\n".join(errors)


def flat_rows(text):
    """{name: (calls, self, total/call)} from a flat report of one thread."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*[\d.]+\s+(\S+)\s+\S+\s+(\d+)\s+\S+\s+(\S+)\s+F:app\.(\w+)\(\)", line)
        if m:
            rows[m.group(4)] = (int(m.group(2)), m.group(1), m.group(3))
    return rows


def test_recursion_rule_flat_and_callers(tmp):
    """fib recurses: its total is the outermost activations' inclusive time
    (500us in thread 0), never 500+300+100; callers' rows add up to it."""
    a, _ = fixed.fixed_profiles(tmp)
    flat = report(tmp, ["--flat", "--units", "ns", "--thread", "1000", "A"], a, a).stdout
    calls, self_ns, per_call = flat_rows(flat)["fib"]
    assert calls == 7 and self_ns == "500000ns", flat
    assert per_call == "71429ns", flat         # 500000 / 7, not 900000 / 7
    out = report(tmp, ["--callers", "fib", "--units", "ns", "--thread", "1000", "A"], a, a).stdout
    rows = [l.split() for l in out.splitlines() if l.strip().split()[:1] and
            l.split()[0].isdigit()]
    assert sum(int(r[0]) for r in rows) == 7, out
    assert sum(int(r[1][:-2]) for r in rows) == 500000, out
    assert sum(int(r[2][:-2]) for r in rows) == 500000, out
    assert "total 500000ns" in out, out
    # collapsed (the default): the inner calls in one row, their time inside
    # the entry's (compute's): 500us inclusive, of which fib's own 500us
    recursive = [r for r in rows if "[within the recursion]" in " ".join(r)]
    assert recursive and recursive[0][:3] == ["6", "0ns", "0ns"], out
    assert [r[:3] for r in rows if "F:app.compute()" in r] == [["1", "500000ns", "500000ns"]], out
    # apart: fib as its own caller, marked, with the same numbers
    out = report(tmp, ["--callers", "fib", "--units", "ns", "--thread", "1000",
                       "--no-collapse-recursion", "A"], a, a).stdout
    rows = [l.split() for l in out.splitlines() if l.strip().split()[:1] and
            l.split()[0].isdigit()]
    assert sum(int(r[1][:-2]) for r in rows) == 500000, out
    assert sum(int(r[2][:-2]) for r in rows) == 500000, out
    recursive = [r for r in rows if "(recursive)" in " ".join(r)]
    assert recursive and recursive[0][:3] == ["6", "0ns", "0ns"], out
    # --callees fib apart: fib calling itself carries calls only; its time is [self]
    out = report(tmp, ["--callees", "fib", "--units", "ns", "--thread", "1000",
                       "--no-collapse-recursion", "A"], a, a).stdout
    rows = [l.split() for l in out.splitlines() if l.strip().split()[:1] and
            l.split()[0].isdigit()]
    assert rows == [["6", "0ns", "0ns", "F:app.fib()", "(recursive)"]], out
    assert re.search(r"^\s+500000ns  \[self\]$", out, re.M), out


def test_merge_threads_sums_by_path(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    doc = hk.export_json(tmp, a)
    merged = hk.hookit(tmp, "export", "--format=json", "--merge-threads", a).stdout
    import json
    m = hk.nest(json.loads(merged))
    assert len(m["threads"]) == 1
    paths = hk.call_counts(m["threads"][0])
    assert paths[("main", "compute", "fib")] == 1
    assert paths[("worker", "compute", "fib")] == 2
    total = sum(n["incl_ns"] for t in doc["threads"] for n in t["roots"])
    assert sum(n["incl_ns"] for n in m["threads"][0]["roots"]) == total


def test_bad_options(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    for args, msg in [(["--sort", "size"], "--sort"), (["--units", "h"], "--units"),
                      (["--min-pct", "x"], "--min-pct"), (["--depth", "0"], "--depth")]:
        p = hk.hookit(tmp, "report", *args, a, check=False)
        assert p.returncode == 2 and msg in p.stderr, (args, p.stderr)
    p = hk.hookit(tmp, "report", "--callers", "nosuch", a, check=False)
    assert p.returncode == 1 and "no function named 'nosuch'" in p.stderr, p.stderr
