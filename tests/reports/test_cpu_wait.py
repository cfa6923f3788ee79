"""Time on the CPU apart from time waiting in every view and export (issue
30), on a program with a known split (tests/reports/progs/split.c): two
threads compute 120 ms of CPU time each in crunch() (measured by the
program itself, CLOCK_THREAD_CPUTIME_ID), two wait 400 ms each in
idle_wait() (a condition variable nobody signals), main joins them.  A view
that ranks by wall-clock time puts the waiting first; ranked or weighed by
CPU time, the computing threads come first, by wait time the waiting ones.
Each export is read back by its real consumer: callgrind_annotate, go tool
pprof, jq and Python's json, headless Chromium for the SVG and speedscope."""
import json, os, re, subprocess, sys, tempfile, threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hk  # noqa: E402

MS = 1_000_000
CRUNCH_MS, IDLE_MS = 120, 400

_lock = threading.Lock()
_runs = {}


def split_run(scale=1):
    """(profile path, CPU ns the two crunchers measured), made once per
    scale for the whole module (the tests run in parallel threads)."""
    with _lock:
        if scale not in _runs:
            d = tempfile.mkdtemp(prefix="hookit-split-")
            exe = hk.cc(d, [os.path.join(HERE, "progs", "split.c")], "split", libs=["-lpthread"])
            # Under qemu-user a sample's program counter is a translated
            # block's boundary and its CPU clock qemu's (docs/testing.md):
            # there every call is timed instead, CPU being the time outside
            # the blocking calls, which the program's own CPU clock bounds.
            env = {"JPROFOPTS": "timer=exact"} if hk.TARGET else None
            out = hk.run(d, [exe, str(scale)], env=env).stdout
            used = [float(x) for x in re.findall(r"crunch (\d+) ms", out)]
            assert len(used) == 2, out
            _runs[scale] = (hk.one_profile(d, "split"), sum(used) * MS)
        return _runs[scale]


NS = r"(\d+)ns"


def flat(tmp, prof, *args):
    """[(function, self, cpu, wait)] in the order report --flat prints them."""
    text = hk.hookit(tmp, "report", "--flat", "--units", "ns", "--no-pager", *args, prof).stdout
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*[\d.]+\s+(\d+)ns\s+\d+ns\s+\d+\s+\S+\s+\S+\s+(\d+)ns\s+(\d+)ns\s+F:split\.(\w+)\(\)$",
                     line)
        if m:
            rows.append((m.group(4), int(m.group(1)), int(m.group(2)), int(m.group(3))))
    assert rows and " cpu " in text and " wait " in text, text
    return rows


def check_split(rows, used_ns, scale=1):
    """crunch: all CPU, no wait; idle_wait: all wait, almost no CPU."""
    by = {r[0]: r for r in rows}
    _, self_ns, cpu, wait = by["crunch"]
    assert cpu >= used_ns * 0.98 and wait == 0, by["crunch"]
    _, self_ns, cpu, wait = by["idle_wait"]
    assert wait >= 2 * IDLE_MS * scale * MS * 0.98 and cpu < 20 * MS, by["idle_wait"]


def test_flat_merged_threads_keeps_cpu_and_wait(tmp):
    prof, used = split_run()
    rows = flat(tmp, prof, "--merge-threads")
    check_split(rows, used)
    # (by wall-clock self time either may come first: on a loaded machine
    # the crunchers take longer than their CPU time)
    # by CPU the computing, by wait the waiting
    assert flat(tmp, prof, "--merge-threads", "--sort", "cpu")[0][0] == "crunch"
    assert flat(tmp, prof, "--merge-threads", "--sort", "wait")[0][0] == "idle_wait"


def test_merged_profiles_keep_cpu_and_wait(tmp):
    prof, used = split_run()
    prof2, used2 = split_run(2)
    rows = flat(tmp, prof, "--merge", "--merge-threads")
    # report --merge of one profile is that profile; of two, their sums
    text = hk.hookit(tmp, "report", "--flat", "--units", "ns", "--no-pager", "--merge",
                     "--merge-threads", prof, prof2).stdout
    m = re.search(r"(\d+)ns\s+(\d+)ns\s+F:split\.crunch\(\)", text)
    assert m and int(m.group(1)) >= (used + used2) * 0.98 and int(m.group(2)) == 0, text
    check_split(rows, used)


def tree_roots(text):
    return re.findall(r"^\s+0\s+\d+\s+\S+\s+\S+\s+\S+\s+\S+\s+F:split\.(\w+)\(\)$", text, re.M)


def test_tree_sorted_by_cpu_and_wait(tmp):
    prof, _ = split_run()
    base = ["report", "--merge-threads", "--no-pager"]
    by_cpu = tree_roots(hk.hookit(tmp, *base, "--sort", "cpu", prof).stdout)
    by_wait = tree_roots(hk.hookit(tmp, *base, "--sort", "wait", prof).stdout)
    # By wait the crunchers, which never wait, come last; first the idlers
    # (2 x 400 ms) or main, whose join lasts as long as the slowest thread:
    # on a loaded machine the crunchers' wall time, past 0.8 s at load 9-13.
    assert by_cpu[0] == "cruncher" and by_wait[0] in ("idler", "main") and by_wait[-1] == "cruncher", \
        (by_cpu, by_wait)
    assert sorted(by_cpu) == sorted(by_wait) == ["cruncher", "idler", "main"], by_cpu
    # the CPU and WAIT columns of the merged tree
    text = hk.hookit(tmp, *base, prof).stdout
    assert re.search(r"LV\s+CALLS\s+BASE\s+CUM\s+CPU\s+WAIT\s+NAME", text), text
    bad = hk.hookit(tmp, "report", "--sort", "idle", prof, check=False)
    assert bad.returncode == 2 and "cpu, wait" in bad.stderr, bad.stderr


def test_callers_and_callees_split(tmp):
    prof, used = split_run()
    text = hk.hookit(tmp, "report", "--merge-threads", "--units", "ns", "--no-pager",
                     "--callers", "crunch", prof).stdout
    assert re.search(r"CALLS\s+INCL\s+EXCL\s+CPU\s+WAIT\s+CALLER", text), text
    m = re.search(r"\s+2\s+\d+ns\s+(\d+)ns\s+(\d+)ns\s+(\d+)ns\s+F:split\.cruncher\(\)", text)
    assert m and int(m.group(2)) >= used * 0.98 and int(m.group(3)) == 0, text
    text = hk.hookit(tmp, "report", "--merge-threads", "--units", "ns", "--no-pager",
                     "--callees", "idler", "--sort", "wait", prof).stdout
    m = re.search(r"\s+2\s+\d+ns\s+(\d+)ns\s+(\d+)ns\s+(\d+)ns\s+F:split\.idle_wait\(\)", text)
    assert m and int(m.group(3)) >= 2 * IDLE_MS * MS * 0.98 and int(m.group(2)) < 20 * MS, text


def folded(tmp, prof, weight):
    text = hk.hookit(tmp, "export", "--format=folded", "--merge-threads", "--weight", weight,
                     prof).stdout
    leaf = {}
    for line in text.splitlines():
        stack, w = line.rsplit(" ", 1)
        name = stack.split(";")[-1]
        leaf[name] = leaf.get(name, 0) + int(w)
    return leaf


def test_folded_weights(tmp):
    prof, used = split_run()
    cpu, wait = folded(tmp, prof, "cpu"), folded(tmp, prof, "wait")
    assert cpu["crunch"] >= used * 0.98 and cpu.get("idle_wait", 0) < 20 * MS, cpu
    assert wait["idle_wait"] >= 2 * IDLE_MS * MS * 0.98 and "crunch" not in wait, wait
    bad = hk.hookit(tmp, "export", "--format=folded", "--weight", "bytes", prof, check=False)
    assert bad.returncode == 2 and "time, cpu, wait or calls" in bad.stderr, bad.stderr


def test_svg_by_cpu_in_chromium(tmp):
    from test_exports import chromium
    prof, _ = split_run()
    widths = {}
    for weight in ("time", "cpu"):
        svg = os.path.join(tmp, f"{weight}.svg")
        hk.hookit(tmp, "export", "--format=svg", "--merge-threads", "--weight", weight, "-o", svg,
                  prof)
        dom = chromium(tmp, "file://" + svg, ["--dump-dom"])
        widths[weight] = {n: float(w) for w, n in
                          re.findall(r'<g class="f[^"]*" [^>]*data-w="([\d.]+)"[^>]*data-n="(\w+)"',
                                     dom)}
        assert "hookit flame graph" in dom
        if weight == "time":
            # each frame's tooltip data: its exclusive time on the CPU and
            # waiting (the script shows them on hover)
            assert re.search(r'data-n="idle_wait"[^>]*data-cpu="[\d.]+(ns|us|ms)" '
                             r'data-wait="[\d.]+(ms|s)"', dom), dom[:3000]
    # by time the idle threads take their share of the threads' time, as
    # the JSON says (a loaded machine slows the crunchers: no fixed share);
    # by CPU they are (almost) gone
    doc = hk.export_json(tmp, prof, "--merge-threads")
    roots = [n for n in doc["threads"][0]["nodes"] if n["parent"] is None]
    share = sum(n["incl_ns"] for n in roots if n["name"] == "idler") / sum(n["incl_ns"] for n in roots)
    assert share > 0.1 and abs(widths["time"]["idler"] - share) < 0.001, (widths, share)
    assert widths["cpu"]["cruncher"] > 0.9 and widths["cpu"].get("idler", 0) < 0.05, widths


def test_pprof_sample_types(tmp):
    from test_pprof import pprof, top
    prof, used = split_run()
    pb = os.path.join(tmp, "split.pb.gz")
    hk.hookit(tmp, "export", "--format=pprof", "--weight", "cpu", "-o", pb, prof)
    cpu, wait = top(tmp, pb, "cpu"), top(tmp, pb, "wait")
    # (a function with no CPU at all, as sampled, is not in pprof's list)
    assert cpu["crunch"][0] >= used * 0.98 and cpu.get("idle_wait", (0,))[0] < 20 * MS, cpu
    assert wait["idle_wait"][0] >= 2 * IDLE_MS * MS * 0.98 and wait.get("crunch", (0,))[0] == 0
    # --weight cpu: the sample type pprof shows when none is asked for
    assert re.search(r"^Type: cpu$", pprof(tmp, "-top", pb), re.M)


def test_callgrind_events(tmp):
    if not hk.have("callgrind_annotate"):
        hk.skip("callgrind_annotate (valgrind) not installed")
    prof, used = split_run()
    out = os.path.join(tmp, "callgrind.out.split")
    hk.hookit(tmp, "export", "--format=callgrind", "-o", out, prof)
    p = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True, cwd="/")
    assert p.returncode == 0, p.stderr
    assert "Events recorded:  Time_ns Calls Wait_ns Cpu_ns" in p.stdout, p.stdout[:800]
    rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s.*?\s([\d,]+) (?:\([ \d.]+%\)\s+)?([\d,]+)(?: \([ \d.]+%\))?\s+"
                     r"([\d,]+)(?: \([ \d.]+%\))?\s+\S*:(\w+) \[split\]$", line)
        if m:
            rows[m.group(5)] = [int(m.group(i).replace(",", "")) for i in (1, 3, 4)]
    time_ns, wait, cpu = rows["crunch"]
    assert cpu >= used * 0.98 and wait == 0, rows
    time_ns, wait, cpu = rows["idle_wait"]
    assert wait >= 2 * IDLE_MS * MS * 0.98 and cpu < 20 * MS, rows


def test_json_merged_threads_jq_and_python(tmp):
    prof, used = split_run()
    out = os.path.join(tmp, "split.json")
    hk.hookit(tmp, "export", "--format=json", "--merge-threads", "-o", out, prof)
    with open(out) as f:
        doc = json.load(f)
    nodes = {n["name"]: n for n in doc["threads"][0]["nodes"]}
    assert nodes["crunch"]["excl_ns"] - nodes["crunch"]["wait_ns"] >= used * 0.98
    assert nodes["idle_wait"]["wait_ns"] >= 2 * IDLE_MS * MS * 0.98
    if not hk.have("jq"):
        hk.skip("jq not installed")
    p = subprocess.run(["jq", "[.threads[0].nodes[] | select(.name == \"idle_wait\") | .wait_ns]"
                        " | add", out], capture_output=True, text=True)
    assert p.returncode == 0 and int(p.stdout) == nodes["idle_wait"]["wait_ns"], p


def first_fn(text):
    return re.search(r"split:(\w+)$", text, re.M).group(1)


def test_diff_cpu_and_wait_changes(tmp):
    a, _ = split_run()
    b, _ = split_run(2)
    text = hk.hookit(tmp, "diff", "--functions", a, b).stdout
    assert re.search(r"CPU CHANGE WAIT CHANGE\s+FUNCTION", text), text
    # the waiting grew by 2 x 400 ms (and main's join with the slowest
    # thread), the computing by what the crunchers measured
    by_wait = hk.hookit(tmp, "diff", "--functions", "--sort", "wait", a, b).stdout
    by_cpu = hk.hookit(tmp, "diff", "--functions", "--sort", "cpu", a, b).stdout
    assert first_fn(by_wait) in ("idle_wait", "main") and first_fn(by_cpu) == "crunch", \
        (by_wait, by_cpu)
    line = re.search(r"^.*split:idle_wait$", by_wait, re.M).group(0)
    # CPU CHANGE a few us or ms either way, WAIT CHANGE about +800 ms
    assert re.search(r"([+-]?\d+(\.\d\d)?(ns|us|ms))\s+\+(79\d\.\d\dms|8\d\d\.\d\dms|9\d\d\.\d\dms|1\.\d\ds)\s+split:idle_wait$",
                     line), line
    line = re.search(r"^.*split:crunch$", by_cpu, re.M).group(0)
    assert re.search(r"\s0ns\s+split:crunch$", line), line   # no wait in crunch, before or after


def test_folded_by_cpu_in_speedscope(tmp):
    from test_speedscope import Served, speedscope_app, value
    app = speedscope_app()
    prof, used = split_run()
    name = "cpu.folded"
    hk.hookit(tmp, "export", "--format=folded", "--merge-threads", "--weight", "cpu", "-o",
              os.path.join(tmp, name), prof)
    with Served(tmp, app) as s:
        _, rows = s.sandwich(tmp, name, "hookit-cpu")
    # weights without a unit: crunch's self is its CPU time in ns, the
    # waiting has next to none
    assert value(rows["crunch"][1])[0] >= used * 0.98, rows
    assert "idle_wait" not in rows or value(rows["idle_wait"][1])[0] < 20 * MS, rows


# ---- hookit top: the state of each thread, fitting the terminal, the end -------------

def start_split(tmp, scale, *args, jprofopts=None):
    """split running with hookit, once its arena is registered."""
    import time
    exe = hk.cc(tmp, [os.path.join(HERE, "progs", "split.c")], "split", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    os.makedirs(rt, mode=0o700, exist_ok=True)
    env = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt, JPROFOPTS=jprofopts)
    p = subprocess.Popen([exe, str(scale), *args], cwd=tmp, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(rt, f"{p.pid}.arena")):
        assert p.poll() is None and time.monotonic() < deadline, "no arena"
        time.sleep(0.01)
    # the four threads have started (they name themselves: under qemu-user,
    # or on a loaded machine, that can take a second) ...
    while sorted(thread_names(p.pid)).count("idler") < 2 or thread_names(p.pid).count("cruncher") < 2:
        assert p.poll() is None and time.monotonic() < deadline, thread_names(p.pid)
        time.sleep(0.01)
    time.sleep(0.3)             # ... and are in crunch and idle_wait
    return p, {"HOOKIT_RUNTIME_DIR": rt}


def thread_names(pid):
    """The names of pid's threads (/proc/PID/task/*/comm)."""
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return names


def thread_blocks(out):
    return {b.split(")", 1)[0]: b for b in out.split("\n== thread ")[1:]}


def test_top_thread_state(tmp):
    # (killed once top has printed: under qemu-user, where top takes
    # seconds, the program runs longer than that)
    p, env = start_split(tmp, 30 if hk.TARGET else 10)
    try:
        out = hk.hookit(tmp, "top", "--once", "-i", "0.3", "--rows", "3", str(p.pid),
                        env=env).stdout
    finally:
        p.kill()
        p.communicate()
    blocks = thread_blocks(out)
    assert len(blocks) == 5, out
    waiting = [b for b in blocks.values() if "idle_wait" in b]
    working = [b for b in blocks.values() if "F:split.crunch()" in b]
    assert len(waiting) == 2 and len(working) == 2, out
    for b in waiting:
        # the kernel's state, hookit's wait, and no CPU used
        assert re.search(r"tid \d+  S sleeping, in a blocking call, cpu [0-5]%", b), b
    for b in working:
        assert re.search(r"tid \d+  R running, cpu \d+%", b) and "blocking" not in b.split("\n")[0], b
    # main joins: in a blocking call too
    assert re.search(r"\(main\) tid \d+  S sleeping, in a blocking call", out), out
    # the functions' CPU and WAIT, from the live arena: waiting is wait
    # (300 ms in at least), computing is CPU
    for b in waiting:
        excl, cpu, wait = top_func_row(b, "idle_wait")
        assert wait >= 250 * MS and cpu < 20 * MS and excl >= wait, b
    for b in working:
        excl, cpu, wait = top_func_row(b, "crunch")
        assert wait == 0 and cpu == excl > 0, b
    # and the hottest call paths' the same way
    for b in waiting:
        excl, cpu, wait = top_path_row(b, r"F:split\.idler\(\) > F:split\.idle_wait\(\)")
        assert wait >= 250 * MS and cpu < 20 * MS and excl >= wait, b
    for b in working:
        excl, cpu, wait = top_path_row(b, r"F:split\.cruncher\(\) > F:split\.crunch\(\)")
        assert wait == 0 and cpu == excl > 0, b


UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def top_row(block, header, row):
    """(EXCL, CPU, WAIT) in ns of the row of one of top's tables whose
    header (regex) the block has and whose line ends with row (regex),
    after its SHARE, EXCL, CPU and WAIT columns."""
    assert re.search(header, block), block
    m = re.search(rf"^\s+[\d.]+%\s+(\S+)\s+(\S+)\s+(\S+)\s+{row}$", block, re.M)
    assert m, block
    return [float(re.match(r"[\d.]+", v).group(0)) * UNIT_NS[re.sub(r"[\d.]+", "", v)]
            for v in m.groups()]


def top_func_row(block, fn):
    """fn's row in top's functions table (INCL and CALLS after WAIT)."""
    return top_row(block, r"SHARE\s+EXCL\s+CPU\s+WAIT\s+INCL\s+CALLS\s+NAME",
                   rf"\S+\s+\d+\s+F:split\.{fn}\(\)")


def top_path_row(block, path):
    """A row of top's hottest call paths (CALLS after WAIT)."""
    return top_row(block, r"SHARE\s+EXCL\s+CPU\s+WAIT\s+CALLS\s+PATH", rf"\d+\s+{path}")


def test_top_fits_the_width_and_says_the_end(tmp):
    # (under qemu-user each hookit command takes a second or two: the
    # program must outlive the first)
    p, env = start_split(tmp, 12 if hk.TARGET else 3)
    try:
        narrow = hk.hookit(tmp, "top", "--once", "-i", "0.2", str(p.pid),
                           env={**env, "COLUMNS": "48"}).stdout
        # not --once: refreshed until the program ends, then one line
        r = hk.hookit(tmp, "top", "-i", "0.2", "--rows", "1", str(p.pid), env=env)
    finally:
        p.communicate(timeout=60)
    lines = narrow.splitlines()
    assert lines and all(len(l) <= 48 for l in lines), [l for l in lines if len(l) > 48]
    # a call path elided in the middle keeps its share and its leaf
    assert re.search(r"^\s+100\.0%.*\.\.\..* > F:split\.idle_wait\(\)$", narrow, re.M), narrow
    prof = hk.one_profile(tmp, "split")
    last = r.stdout.splitlines()[-1]
    assert re.fullmatch(rf"process {p.pid} ended at \d\d:\d\d:\d\d; it wrote {re.escape(prof)} "
                        rf"\(hookit report {re.escape(prof)}\)", last), last


def test_ctl_flush_names_its_file_and_report_reads_the_last(tmp):
    """`ctl PID flush` says which file it wrote; two flushes and the exit
    make three profiles of one process, and `hookit report` (no file) reads
    the last, which holds everything, not the three as a fork family."""
    # (under qemu-user each hookit command takes a second or two: the
    # program must outlive both flushes)
    p, env = start_split(tmp, 12 if hk.TARGET else 4)
    try:
        wrote = []
        for _ in range(2):
            r = hk.hookit(tmp, "ctl", str(p.pid), "flush", env=env)
            m = re.fullmatch(rf"process {p.pid}: flush done: wrote ({re.escape(tmp)}/hookit\.split\."
                             rf"{p.pid}(\.\d+)?\.prof)\n", r.stdout)
            assert m and os.path.exists(m.group(1)), r.stdout
            wrote.append(m.group(1))
    finally:
        p.communicate(timeout=60)
    assert wrote[0] != wrote[1], wrote
    profs = hk.profiles(tmp, "split")
    assert len(profs) == 3, profs
    r = hk.hookit(tmp, "report", "--flat", "--no-pager")
    assert "fork family" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    last = re.search(r"reading (\S+), the newest profile", r.stderr).group(1)
    assert os.path.join(tmp, last) not in wrote, (last, wrote)


# ---- snapshots: CPU and waiting apart too -----------------------------------------

def snapshot_split(tmp, jprofopts):
    """A snapshot of split (scale 10, the idlers waiting in 50 ms pieces)
    about 1 s into its run, and the seconds from its start to the
    snapshot's end (an upper bound of any thread's time)."""
    import time
    t0 = time.monotonic()
    p, env = start_split(tmp, 10, "pieces", jprofopts=jprofopts)
    try:
        time.sleep(0.7)
        snap = os.path.join(tmp, "now.prof")
        hk.hookit(tmp, "snapshot", "-o", snap, str(p.pid), env=env)
        elapsed = time.monotonic() - t0
    finally:
        p.kill()
        p.communicate()
    return snap, elapsed


# A thread that only waits still uses some CPU: main creates four threads
# before its join; under qemu-user, translating that code takes 60 ms.
IDLE_CPU = (250 if hk.TARGET else 50) * MS


def check_snapshot_split(tmp, snap, elapsed):
    """Each thread's waiting and CPU time in the snapshot: the idlers'
    ended waits (the pieces) and main's join still in progress are wait,
    the crunchers' time is CPU.  The threads ran at least 1 s (0.3 s after
    the arena, then 0.7 s) less their start-up, at most `elapsed`."""
    doc = hk.export_json(tmp, snap)
    at_most = elapsed * 1e9
    seen = {"idler": 0, "cruncher": 0}
    for t in doc["threads"]:
        nodes = {n["name"]: n for n in t["nodes"]}
        # (a live thread keeps the name it started with: told by its root)
        kind = next((n["name"] for n in t["nodes"] if n["parent"] is None), "?")
        if kind == "idler":
            n = nodes["idle_wait"]
            # ended waits: many pieces, counted in full (not only the one in progress)
            assert n["calls"] >= 5 and n["wait_calls"] >= n["calls"], n
            assert 700 * MS <= n["wait_ns"] <= at_most and n["excl_ns"] >= n["wait_ns"], n
            assert n["excl_ns"] - n["wait_ns"] < IDLE_CPU, n   # next to no CPU
            assert n["incl_ns"] >= n["wait_ns"], n
        elif kind == "cruncher":
            n = nodes["crunch"]
            assert n["wait_ns"] == 0 and n["excl_ns"] >= 50 * MS, n
        elif kind == "main":
            # main joins the threads: one wait, still in progress
            n = nodes["main"]
            assert n["wait_calls"] >= 1 and 700 * MS <= n["wait_ns"] <= at_most, n
            assert n["excl_ns"] - n["wait_ns"] < IDLE_CPU, n
        seen[kind] = seen.get(kind, 0) + 1
    assert seen == {"idler": 2, "cruncher": 2, "main": 1}, seen
    # report and its sort keys read them: by wait the waiting first, by CPU the computing
    by_wait = flat(tmp, snap, "--merge-threads", "--sort", "wait")
    by_cpu = flat(tmp, snap, "--merge-threads", "--sort", "cpu")
    assert by_wait[0][0] in ("idle_wait", "main") and by_cpu[0][0] == "crunch", (by_wait, by_cpu)


def test_snapshot_keeps_cpu_and_wait_sampled(tmp):
    snap, elapsed = snapshot_split(tmp, None)
    check_snapshot_split(tmp, snap, elapsed)
    # sampled (the default): a node's time is its samples plus its waits,
    # as in the profile the process writes; the samples have their column
    doc = hk.export_json(tmp, snap)
    assert all("samples" in n for t in doc["threads"] for n in t["nodes"]), doc["threads"][0]


def test_snapshot_keeps_cpu_and_wait_exact(tmp):
    snap, elapsed = snapshot_split(tmp, "timer=exact")
    check_snapshot_split(tmp, snap, elapsed)


def test_snapshot_cpu_sampled_under_exact_timing(tmp):
    """JPROFOPTS=cpu: the snapshot has cpu_ns, as the process's profile does."""
    snap, _ = snapshot_split(tmp, "timer=exact,cpu")
    doc = hk.export_json(tmp, snap)
    crunch = [n for t in doc["threads"] for n in t["nodes"] if n["name"] == "crunch"]
    idle = [n for t in doc["threads"] for n in t["nodes"] if n["name"] == "idle_wait"]
    assert len(crunch) == 2 and all(n["cpu_ns"] >= 50 * MS for n in crunch), crunch
    assert all(n["cpu_ns"] < 20 * MS for n in idle), idle
