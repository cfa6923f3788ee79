"""hookit export's formats: callgrind (round trip through valgrind's
callgrind_annotate), folded stacks, the SVG flame graph in headless
Chromium, Chrome trace JSON from a real trace."""
import json, os, re, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixed  # noqa: E402
import hk  # noqa: E402


def flat_totals(doc):
    """Per function over all threads: calls, self ns, inclusive ns of the
    outermost activations (the recursion rule), from an export's JSON."""
    tot = {}

    def walk(nodes, active):
        for n in nodes:
            t = tot.setdefault(n["name"], [0, 0, 0])
            t[0] += n["calls"]
            t[1] += n["excl_ns"]
            if n["name"] not in active:
                t[2] += n["incl_ns"]
            walk(n.get("children", []), active | {n["name"]})
    for th in doc["threads"]:
        walk(th["roots"], frozenset())
    return tot


def annotate(tmp, path, inclusive):
    if not hk.have("callgrind_annotate"):
        hk.skip("callgrind_annotate (valgrind) not installed")
    # From another directory: callgrind_annotate strips its cwd from file names.
    p = subprocess.run(["callgrind_annotate", "--inclusive=" + ("yes" if inclusive else "no"),
                        "--threshold=100", "--auto=no", path], capture_output=True, text=True,
                       cwd="/")
    assert p.returncode == 0, p.stderr
    assert "WARNING" not in p.stderr, p.stderr
    rows, totals = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$", line)
        if not m:
            continue
        ns, calls, what = int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), m.group(3)
        if what.strip() == "PROGRAM TOTALS":
            totals = (ns, calls)
        else:
            fn = what.split(":", 1)[1].split(" [")[0]
            rows[fn] = (ns, calls)
    return totals, rows


def test_callgrind_round_trip(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    doc = hk.export_json(tmp, a)
    want = flat_totals(doc)
    out = os.path.join(tmp, "a.callgrind")
    hk.hookit(tmp, "export", "--format=callgrind", "-o", out, a)
    totals, rows = annotate(tmp, out, inclusive=False)
    assert totals == (sum(v[1] for v in want.values()), sum(v[0] for v in want.values())), totals
    for name, (calls, self_ns, _) in want.items():
        assert rows.get(name) == (self_ns, calls), (name, rows.get(name), (self_ns, calls))
    # inclusive: recursion counted once (fib = 500us + 300us, not 500+300+100+300)
    _, incl = annotate(tmp, out, inclusive=True)
    for name, (calls, _, incl_ns) in want.items():
        assert incl[name][0] == incl_ns, (name, incl[name], incl_ns)
    assert incl["fib"][0] == 800000 and incl["main"][0] == 1000000
    # hookit's own flat report (threads merged) says the same
    flat = hk.hookit(tmp, "report", "--flat", "--merge-threads", "--units", "ns", a).stdout
    for line in flat.splitlines():
        m = re.search(r"\s(\d+)ns\s+\S+\s+(\d+)\s.*F:app\.(\w+)\(\)", line)
        if m:
            assert rows[m.group(3)] == (int(m.group(1)), int(m.group(2))), line


def test_callgrind_real_program(tmp):
    """A real trace through callgrind_annotate: totals equal the profile's."""
    exe = hk.cc(tmp, [os.path.join(os.path.dirname(__file__), "progs", "flow.c")], "flow",
                libs=["-lpthread"])
    hk.run(tmp, [exe, "thread"], env={"HOOKIT_PROFILER": "libhktrace.so"})
    trace = [f for f in os.listdir(tmp) if f.endswith(".trace")]
    assert len(trace) == 1, os.listdir(tmp)
    path = os.path.join(tmp, trace[0])
    want = flat_totals(hk.export_json(tmp, path))
    out = os.path.join(tmp, "flow.callgrind")
    hk.hookit(tmp, "export", "--format=callgrind", "-o", out, path)
    totals, rows = annotate(tmp, out, inclusive=False)
    assert totals[1] == sum(v[0] for v in want.values())
    assert rows["fib"][1] == 5 and rows["leaf"][1] == 7, rows


def test_folded_totals(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    doc = hk.export_json(tmp, a)
    total = sum(n["incl_ns"] for t in doc["threads"] for n in t["roots"])
    calls = sum(n["calls"] for t in doc["threads"] for _, n in hk.walk(t["roots"]))
    out = hk.hookit(tmp, "export", "--format=folded", a).stdout
    lines = out.splitlines()
    assert sum(int(l.rsplit(" ", 1)[1]) for l in lines) == total
    assert "[thread 0 main];main;compute;fib;fib 200000" in lines, out
    out = hk.hookit(tmp, "export", "--format=folded", "--weight", "calls", "--merge-threads", a).stdout
    lines = out.splitlines()
    assert sum(int(l.rsplit(" ", 1)[1]) for l in lines) == calls
    assert "worker;compute;fib 2" in lines and "main;parse;lex 40" in lines, out
    # flamegraph.pl's parser: "stack count", stack without spaces at the ends
    for l in lines:
        assert re.fullmatch(r"[^ ;][^;]*(;[^;]+)* \d+", l), l


def chromium(tmp, url, extra=()):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        hk.skip("chromium not installed (make deps installs it)")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run",
           "--user-data-dir=" + os.path.join(tmp, "chromium-profile")] + list(extra) + [url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_svg_in_chromium(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    svg = os.path.join(tmp, "a.svg")
    hk.hookit(tmp, "export", "--format=svg", "-o", svg, a)
    shot = os.path.join(tmp, "a.png")
    chromium(tmp, "file://" + svg, ["--screenshot=" + shot, "--window-size=1200,500"])
    with open(shot, "rb") as f:
        png = f.read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000, len(png)
    dom = chromium(tmp, "file://" + svg, ["--dump-dom"])
    frames = re.findall(r'<g class="f[^"]*" [^>]*data-n="([^"]*)"', dom)
    # every node of both threads is wide enough to be drawn
    assert sorted(frames) == sorted(["main", "compute", "fib", "fib", "fib", "parse", "lex",
                                     "report", "lex", "fmt", "tiny",
                                     "worker", "compute", "fib"]), frames
    assert "hookit flame graph" in dom and 'id="search"' in dom
    # the script ran: search highlights the fib frames
    dom = chromium(tmp, "file://" + svg + "#search=^fib$", ["--dump-dom"])
    assert len(re.findall(r'<g class="f match"', dom)) == 4, dom[:3000]
    assert re.search(r'id="matched"[^>]*>matched 4 frames', dom), "no match summary"
    # zoom: the 2nd frame (compute) becomes full width, its parent stays
    dom = chromium(tmp, "file://" + svg + "#zoom=1", ["--dump-dom"])
    g = re.search(r'<g class="f" [^>]*data-n="compute"[^>]*>.*?<rect [^>]*width="([\d.]+)"', dom)
    assert g and abs(float(g.group(1)) - 1180) < 0.5, g and g.group(0)
    # tooltip data: calls, times and percentages
    assert re.search(r'data-n="fib"[^>]*data-c="1" data-i="500.00us" data-ip="50.00"', dom)


def test_svg_one_thread_and_merged(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    one = hk.hookit(tmp, "export", "--format=svg", "--thread", "1001", a).stdout
    assert one.count('class="thread"') == 1 and 'data-n="worker"' in one
    assert 'data-n="main"' not in one
    merged = hk.hookit(tmp, "export", "--format=svg", "--merge-threads", a).stdout
    assert merged.count('class="thread"') == 1 and 'data-n="worker"' in merged


def check_nesting(events):
    """Per (pid, tid): complete events nest properly (each one inside its
    parent or after it), begins have their ends."""
    by_thread = {}
    for e in events:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and e["ts"] >= 0, e
            by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, evs in by_thread.items():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            begin, end = e["ts"], e["ts"] + e["dur"]
            while stack and begin >= stack[-1] - 1e-6:
                stack.pop()
            if stack:
                assert end <= stack[-1] + 1e-6, (key, e, stack)
            stack.append(end)
    return by_thread


def test_chrome_from_trace(tmp):
    exe = hk.cc(tmp, [os.path.join(os.path.dirname(__file__), "progs", "flow.c")], "flow",
                libs=["-lpthread"])
    hk.run(tmp, [exe, "thread"], env={"HOOKIT_PROFILER": "libhktrace.so"})
    trace = os.path.join(tmp, [f for f in os.listdir(tmp) if f.endswith(".trace")][0])
    doc = json.loads(hk.hookit(tmp, "export", "--format=chrome", trace).stdout)
    events = doc["traceEvents"]
    by_thread = check_nesting(events)
    assert len(by_thread) == 2
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    assert len(names) == 2 and names[0].startswith("main"), names
    assert any(e["name"] == "process_name" and e["args"]["name"].startswith("flow")
               for e in events)
    calls = {}
    for e in events:
        if e["ph"] == "X":
            calls[e["name"]] = calls.get(e["name"], 0) + 1
    assert calls == {"main": 1, "mid": 2, "leaf": 7, "fib": 5, "slow": 1, "worker": 1}, calls
    slow = [e for e in events if e.get("name") == "slow"][0]
    assert slow["dur"] >= 4000, slow        # it sleeps 5 ms


def test_chrome_needs_a_trace(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    p = hk.hookit(tmp, "export", "--format=chrome", a, check=False)
    assert p.returncode == 1 and "needs a call-flow trace" in p.stderr, p.stderr


def test_export_golden(tmp):
    """folded and callgrind of the fixed profile, byte for byte."""
    a, b = fixed.fixed_profiles(tmp)
    errors = []
    for name, args in [("folded.txt", ["--format=folded", a]),
                       ("folded_calls_merged.txt", ["--format=folded", "--weight", "calls",
                                                    "--merge-threads", a]),
                       ("callgrind.txt", ["--format=callgrind", a]),
                       ("callgrind_two.txt", ["--format=callgrind", "--thread", "1001", a])]:
        out = hk.hookit(tmp, "export", *args).stdout
        out = re.sub(r"creator: hookit \S+", "creator: hookit VERSION", out)
        try:
            fixed.check_golden(name, out)
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n\n".join(errors)
