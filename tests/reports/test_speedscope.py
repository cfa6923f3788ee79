"""hookit's exports in the real speedscope, in headless Chromium.

speedscope's built app comes from the npm registry at test time (npm pack,
cached in $BUILD/npm, never committed: tests/lib/upstream.py), is served with
the profile from a local http server (127.0.0.1, a free port), and opened
with `index.html#profileURL=...&view=sandwich`.  The sandwich view is a DOM
table (total, self, name per function) that speedscope builds only from a
profile it parsed, so `chromium --dump-dom` shows what it read: the tests
compare it with the known contents of the fixed profile (mkfixed.c) and with
hookit report --flat.  docs/reports.md#speedscope says how to do it by hand."""
import functools, html, http.server, os, re, signal, subprocess, sys, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixed  # noqa: E402
import hk  # noqa: E402
import upstream  # noqa: E402

# The fixed profile a.prof, both threads together (mkfixed.c): function ->
# (total, self) in ns, total with recursion counted once.
FIXED = {"main": (1000000, 100000), "compute": (950000, 150000), "fib": (800000, 800000),
         "parse": (200000, 150000), "lex": (60000, 60000), "report": (100000, 80000),
         "fmt": (7000, 7000), "tiny": (3000, 3000), "worker": (400000, 50000)}
THREAD_FRAMES = {"[thread 0 main]": (1000000, 0), "[thread 1 worker]": (400000, 0)}


def speedscope_app():
    """The unpacked release folder; a skip saying why when it cannot be had."""
    if not os.path.exists("/usr/bin/chromium"):
        hk.skip("/usr/bin/chromium not installed (make deps installs Debian's chromium)")
    with upstream.LOCK:
        try:
            return upstream.fetch_speedscope(os.path.join(hk.BUILD, "npm"))
        except upstream.FetchFailed as e:
            hk.skip(f"cannot fetch speedscope from the npm registry here: {e}")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Served:
    """tmp over http on 127.0.0.1 (a free port), speedscope as /speedscope/."""

    def __init__(self, tmp, app):
        link = os.path.join(tmp, "speedscope")
        if not os.path.islink(link):
            os.symlink(app, link)
        handler = functools.partial(Quiet, directory=tmp)
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def sandwich(self, tmp, name, title):
        """(document title, the profile's name in the toolbar,
        {symbol: (total, self)} as the sandwich table shows them)."""
        url = (f"{self.base}/speedscope/index.html#profileURL={self.base}/{name}"
               f"&title={title}&view=sandwich")
        dom = chromium_dom(tmp, url)
        rows = sandwich_rows(dom)
        if not rows:
            # The page was drawn before the profile came (once in a make
            # check under load: the headers, no rows): a second look with
            # more virtual time, the same page and profile.
            dom = chromium_dom(tmp, url, budget_ms=30000, timeout=45)
            rows = sandwich_rows(dom)
        assert rows, f"speedscope shows no sandwich table for {name}:\n" \
                     + re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", dom))[:800]
        m = re.search(r"<title>(.*?)</title>", dom)
        return (html.unescape(m.group(1)) if m else ""), rows


def sandwich_rows(dom):
    """{symbol: (total, self)} of the sandwich table in dom."""
    rows = {}
    # (the profile switcher, a table of its own, comes before)
    table = dom.split("Symbol Name</th>", 1)[-1] if "Symbol Name</th>" in dom else ""
    for tr in re.findall(r"<tr [^>]*>(.*?)</tr>", table, re.S):
        cells = [html.unescape(re.sub(r"<[^>]*>", "", c)).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        if len(cells) == 3:
            rows[cells[2]] = (cells[0], cells[1])
    return rows


def chromium_dom(tmp, url, timeout=25, budget_ms=10000):
    """The DOM after speedscope fetched the profile and rendered (a virtual
    time budget).  speedscope answers a file it cannot read with alert(),
    which blocks headless Chromium: a run that does not end in time is that
    failure (and its process group is killed)."""
    cmd = ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--window-size=1200,1200",
           "--user-data-dir=" + os.path.join(tmp, "chromium-profile"),
           f"--virtual-time-budget={budget_ms}", "--dump-dom", url]
    p = subprocess.Popen(cmd, cwd=tmp, env=dict(os.environ, HOME=tmp), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"chromium did not finish in {timeout}s: speedscope could not read "
                             f"the profile (an alert box waits) or hangs: {url}") from None
    assert p.returncode == 0, err[-2000:]
    return out


UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def value(cell):
    """'800,000 (57%)' -> 800000; '800.00µs (57%)' -> (800000.0, unit)."""
    v = cell.split(" (")[0]
    m = re.fullmatch(r"([\d.]+)(ns|µs|ms|s)", v)
    if m:
        return float(m.group(1)) * UNITS[m.group(2)], UNITS[m.group(2)]
    assert re.fullmatch(r"[\d,]+", v), cell
    return int(v.replace(",", "")), 0


def close(cell, want, slack=0.0):
    """speedscope's time cells keep two decimals of their unit; slack: a
    share of want more (a timeline's times are rebuilt from rounded events)."""
    got, unit = value(cell)
    return got == want if not unit else abs(got - want) <= 0.005 * unit + slack * want + 1e-9


def check_table(rows, want, what):
    assert set(rows) == set(want), (what, sorted(rows), sorted(want))
    for name, (total, self_ns) in want.items():
        assert close(rows[name][0], total) and close(rows[name][1], self_ns), \
            (what, name, rows[name], (total, self_ns))


def fixed_in_speedscope(tmp, fmt, name):
    """The fixed profile exported as FMT into NAME, read back from
    speedscope's sandwich table: the rows, after the page title is checked."""
    app = speedscope_app()
    a, _ = fixed.fixed_profiles(tmp)
    hk.hookit(tmp, "export", f"--format={fmt}", "-o", os.path.join(tmp, name), a)
    with Served(tmp, app) as s:
        title, rows = s.sandwich(tmp, name, f"hookit-{fmt}")
    assert title == f"hookit-{fmt} - speedscope", title
    return rows


def test_folded_in_speedscope(tmp):
    rows = fixed_in_speedscope(tmp, "folded", "a.folded")
    # weights without a unit: the exclusive ns as plain numbers
    check_table(rows, {**FIXED, **THREAD_FRAMES}, "folded")


def test_pprof_in_speedscope(tmp):
    rows = fixed_in_speedscope(tmp, "pprof", "a.pb.gz")
    # the time sample types are nanoseconds: speedscope shows µs and ms
    assert rows["fib"][1].startswith("800.00µs"), rows["fib"]
    check_table(rows, FIXED, "pprof")


def test_chrome_trace_in_speedscope(tmp):
    """A real trace (tests/reports/progs/flow.c, two threads) as a Chrome
    timeline: speedscope's first profile is the main thread, whose times
    are hookit report --flat's for that thread."""
    app = speedscope_app()
    exe = hk.cc(tmp, [os.path.join(os.path.dirname(__file__), "progs", "flow.c")], "flow",
                libs=["-lpthread"])
    hk.run(tmp, [exe, "thread"], env={"HOOKIT_PROFILER": "libhktrace.so"})
    trace = os.path.join(tmp, [f for f in os.listdir(tmp) if f.endswith(".trace")][0])
    hk.hookit(tmp, "export", "--format=chrome", "-o", os.path.join(tmp, "flow.json"), trace)
    flat = hk.hookit(tmp, "report", "--flat", "--units", "ns", trace).stdout
    main = flat.split("\n\n")[0]
    assert "thread 0 (main)" in main, flat
    want = {}
    for line in main.splitlines():
        m = re.match(r"\s*[\d.]+\s+(\d+)ns\s.*\sF:flow\.(\w+)\(\)$", line)
        if m:
            want[m.group(2)] = int(m.group(1))
    assert set(want) == {"main", "mid", "leaf", "fib", "slow"}, flat
    with Served(tmp, app) as s:
        _, rows = s.sandwich(tmp, "flow.json", "hookit-chrome")
    # the event's args follow its name: 'slow {"module":"flow"}'
    rows = {k.split(" {")[0]: v for k, v in rows.items()}
    assert set(rows) == set(want), (rows, want)
    for name, self_ns in want.items():
        assert close(rows[name][1], self_ns, 0.001), (name, rows[name], self_ns)
    assert close(rows["main"][0], sum(want.values()), 0.001), (rows["main"], want)
