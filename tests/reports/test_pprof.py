"""hookit export --format=pprof read back by `go tool pprof` (Debian's
golang-go, installed by make deps): -top on self_time and calls gives the
same totals as `hookit report --flat`, -traces gives one sample per calling
context with its exact calls."""
import gzip, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixed  # noqa: E402
import hk  # noqa: E402


# Every call timed, so that every function has self time: pprof's top lists
# a function only for a non-zero value of the sample type asked for, and
# these tests compare its lists with the report's.
TIMED = {"JPROFOPTS": "timer=exact"}


def pprof(tmp, *args):
    if not hk.have("go"):
        hk.skip("go (Debian's golang-go) not installed: make deps installs it")
    env = hk.test_env(HOME=tmp, GOPATH=os.path.join(tmp, "go"), GOCACHE=os.path.join(tmp, "gocache"),
                      PPROF_TMPDIR=tmp, GOFLAGS="-mod=mod")
    p = subprocess.run(["go", "tool", "pprof"] + list(args), capture_output=True, text=True,
                       cwd=tmp, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout


def export(tmp, prof, name="out.pb.gz"):
    out = os.path.join(tmp, name)
    hk.hookit(tmp, "export", "--format=pprof", "-o", out, prof)
    with open(out, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", "not gzip"
    gzip.open(out).read()      # a complete gzip stream
    return out


def top(tmp, pb, index):
    """{function: (flat, cum)} from -top, integers (ns or calls)."""
    text = pprof(tmp, "-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0",
                 "-unit=ns", "-sample_index=" + index, pb)
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+(\d+)(?:ns)?\s+[\d.]+%\s+(.+)$", line)
        if m:
            assert m.group(3) not in rows, line
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    assert rows, text
    return rows


def report_flat(tmp, prof):
    """{function: [calls, self ns]} summed over threads, from hookit report --flat."""
    text = hk.hookit(tmp, "report", "--flat", "--units", "ns", prof).stdout
    out = {}
    for line in text.splitlines():
        # (cpu and wait columns when the profile has wait time)
        m = re.match(r"\s*[\d.]+\s+(\d+)ns\s+\d+ns\s+(\d+)\s+\S+\s+\S+(?:\s+\d+ns\s+\d+ns)?\s+F:(.*)\(\)$",
                     line)
        if m:
            name = m.group(3).split(".", 1)[1]      # F:module.function()
            t = out.setdefault(name, [0, 0])
            t[0] += int(m.group(2))
            t[1] += int(m.group(1))
    assert out, text
    return out


def outermost_incl(doc):
    """Per function: inclusive time of its outermost activations, all threads."""
    tot = {}
    for th in doc["threads"]:
        for path, n in hk.walk(th["roots"]):
            if n["name"] not in path[:-1]:
                tot[n["name"]] = tot.get(n["name"], 0) + n["incl_ns"]
    return tot


def check_against_report(tmp, prof):
    pb = export(tmp, prof)
    flat = report_flat(tmp, prof)
    doc = hk.export_json(tmp, prof)
    incl = outermost_incl(doc)
    self_time = top(tmp, pb, "self_time")
    calls = top(tmp, pb, "calls")
    assert set(self_time) == set(calls) == set(flat), (sorted(self_time), sorted(flat))
    for fn, (c, s) in flat.items():
        assert self_time[fn][0] == s, (fn, self_time[fn], s)
        assert self_time[fn][1] == incl[fn], (fn, self_time[fn], incl[fn])
        assert calls[fn][0] == c, (fn, calls[fn], c)
    total = sum(n["excl_ns"] for th in doc["threads"] for _, n in hk.walk(th["roots"]))
    assert sum(v[0] for v in self_time.values()) == total
    return pb, doc


def traces(tmp, pb):
    """[(labels, value, stack root first)] from -traces on calls."""
    text = pprof(tmp, "-traces", "-sample_index=calls", pb)
    out = []
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        labels, value, stack = {}, None, []
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.match(r"\s*(\w+):\s+(.*)$", line)
            if m and value is None:
                labels[m.group(1)] = m.group(2)
                continue
            m = re.match(r"\s*(\d+)\s+(.+)$", line)
            if m and value is None:
                value, stack = int(m.group(1)), [m.group(2).strip()]
            else:
                stack.append(line.strip())
        if value is not None:
            out.append((labels, value, tuple(reversed(stack))))
    return out


def test_pprof_fixed_profile_totals_equal_report_flat(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    check_against_report(tmp, a)


def test_pprof_real_program_top_and_traces(tmp):
    exe = hk.cc(tmp, ["recurse_fib.c"], "recurse_fib")
    hk.run(tmp, [exe], env=TIMED)
    prof = hk.one_profile(tmp, "recurse_fib")
    pb, doc = check_against_report(tmp, prof)
    # one sample per calling context, with the context's exact calls
    want = {}
    for th in doc["threads"]:
        for path, n in hk.walk(th["roots"]):
            want[(th["tid"], path)] = n["calls"]
    got = {}
    for labels, value, stack in traces(tmp, pb):
        key = (int(labels["tid"]), stack)
        assert key not in got, key
        got[key] = value
    assert got == want


def test_pprof_threads_are_labelled(tmp):
    exe = hk.cc(tmp, ["threads.c"], "threads", libs=["-lpthread"])
    hk.run(tmp, [exe], env=TIMED)
    prof = hk.one_profile(tmp, "threads")
    pb, doc = check_against_report(tmp, prof)
    tids = {int(l["tid"]) for l, _, _ in traces(tmp, pb)}
    assert tids == {t["tid"] for t in doc["threads"]}, tids
    # no string label: pprof's graph would draw it as a tag box on every
    # node (issue 30); the comments name the threads instead
    assert all(set(l) == {"tid"} for l, _, _ in traces(tmp, pb))
    dot = pprof(tmp, "-dot", pb)
    assert "box3d" not in dot and "thread:" not in dot, dot[:2000]
    comments = pprof(tmp, "-comments", pb)
    for t in doc["threads"]:
        assert f"thread {t['index']}: {t['name'] or '(no name)'}, tid {t['tid']}" in comments, comments
