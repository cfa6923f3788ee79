"""The call-flow trace plugin (libhktrace.so) and the trace reader: the
listing of a small program line by line, options, threads, fork, exec,
signal death, the tree computed from a trace, and bad input."""
import glob, json, os, random, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

FLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "flow.c")

# The call flow of `flow` without arguments (tests/reports/progs/flow.c).
MAIN_FLOW = """\
main() {
  mid() {
    leaf();
    leaf();
    leaf();
  } mid()
  fib() {
    fib() {
      fib();
      fib();
    } fib()
    fib();
  } fib()
  slow() {
    leaf();
  } slow()
} main()"""


def build(tmp):
    return hk.cc(tmp, [FLOW], "flow", libs=["-lpthread"])


def traces(tmp):
    return sorted(glob.glob(os.path.join(tmp, "hookit.*.trace")))


def record(tmp, *args, opts=None, check=True):
    exe = build(tmp)
    env = {"HOOKIT_PROFILER": "libhktrace.so"}
    if opts is not None:
        env["HKTRACEOPTS"] = opts
    return hk.popen_run(tmp, [exe] + list(args), env=env) if not check else \
        hk.run(tmp, [exe] + list(args), env=env)


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def listing(tmp, trace, *args):
    """[(thread header, [(time_ms, duration_ns or None, text)])] of hookit report."""
    out = hk.hookit(tmp, "report", *args, trace).stdout
    threads = []
    for line in out.splitlines():
        if line.startswith("== "):
            threads.append((line, []))
        elif threads and re.match(r"\s*\d+\.\d{6} ", line):
            dur = line[16:26].strip()
            ns = None
            if dur:
                m = re.fullmatch(r"([\d.]+)(ns|us|ms|s)", dur)
                assert m, line
                ns = float(m.group(1)) * UNITS[m.group(2)]
            tid = int(line[27:34])
            assert f"tid {tid} " in threads[-1][0] or "call flow in time order" in threads[-1][0]
            threads[-1][1].append((float(line[:15]), ns, line[36:].replace("F:flow.", "")))
    return threads


def check_plausible(lines):
    """Times never go back; a closing line's duration covers its calls."""
    prev = 0.0
    opened = []
    for t, ns, text in lines:
        assert t >= prev, (t, prev)
        prev = t
        if text.rstrip().endswith("{"):
            opened.append(t)
        elif text.lstrip().startswith("}"):
            start = opened.pop()
            assert ns is not None and ns >= (t - start) * 1e6 * 0.99 - 1, (text, ns, t, start)
        else:
            assert ns is not None and ns >= 0, text


def test_listing_line_by_line(tmp):
    record(tmp)
    (trace,) = traces(tmp)
    threads = listing(tmp, trace)
    assert len(threads) == 1 and "thread 0 (main)" in threads[0][0], threads
    lines = threads[0][1]
    assert "\n".join(text for _, _, text in lines) == MAIN_FLOW
    check_plausible(lines)
    slow = [ns for _, ns, text in lines if text == "  } slow()"][0]
    assert 4e6 <= slow < 5e9, slow          # nanosleep(5 ms) inside


def test_threads(tmp):
    record(tmp, "thread")
    (trace,) = traces(tmp)
    threads = listing(tmp, trace)
    assert len(threads) == 2
    worker = "\n".join(text for _, _, text in threads[1][1])
    assert worker == "worker() {\n  mid() {\n    leaf();\n    leaf();\n    leaf();\n  } mid()\n} worker()"
    assert "thread 1" in threads[1][0]
    # --interleave: one listing in time order with both threads' lines
    (header, lines), = listing(tmp, trace, "--interleave")
    assert "2 threads" in header
    texts = [text for _, _, text in lines]
    assert sorted(texts) == sorted([t for _, ls in threads for _, _, t in ls])
    times = [t for t, _, _ in lines]
    assert times == sorted(times)


def test_tree_from_trace_matches_jprof(tmp):
    """Every view works on a trace: its tree has exactly jprof's call counts."""
    exe = build(tmp)
    hk.run(tmp, [exe, "thread"], env={"HOOKIT_PROFILER": "libhktrace.so"})
    hk.run(tmp, [exe, "thread"])
    (trace,) = traces(tmp)
    (prof,) = hk.profiles(tmp)
    a, b = hk.export_json(tmp, trace), hk.export_json(tmp, prof)
    for index in (0, 1):
        assert hk.call_counts(hk.thread_of(a, index)) == hk.call_counts(hk.thread_of(b, index))
        hk.check_tree_consistent(hk.thread_of(a, index))
    assert a["process"]["meta"]["profiler"] == "hktrace"
    tree = hk.hookit(tmp, "report", "--tree", trace).stdout
    assert re.search(r"\n\s+0\s+1\s+\S+\s+\S+\s+F:flow\.main\(\)", tree), tree
    flat = hk.hookit(tmp, "report", "--flat", trace).stdout
    assert re.search(r"\s5\s.*F:flow\.fib\(\)", flat), flat


def test_threshold_drops_short_calls(tmp):
    record(tmp, opts="threshold=1ms")
    (trace,) = traces(tmp)
    (header, lines), = listing(tmp, trace)
    assert [text for _, _, text in lines] == ["main() {", "  slow();", "} main()"], lines
    doc = hk.export_json(tmp, trace)
    assert doc["process"]["meta"]["trace_threshold_ns"] == 1000000
    assert int(doc["process"]["meta"]["trace_short_calls_dropped"]) == 10


def test_depth_limit(tmp):
    record(tmp, opts="depth=2")
    (trace,) = traces(tmp)
    (header, lines), = listing(tmp, trace)
    assert [text for _, _, text in lines] == ["main() {", "  mid();", "  fib();", "  slow();",
                                              "} main()"], lines


def test_size_cap_one_message(tmp):
    rc, out, err, pid = record(tmp, "many", opts="size=1", check=False)
    assert rc == 0, err
    msgs = hk.hookit_lines(err, pid)
    assert len(msgs) == 1 and "size cap of 1 MB reached" in msgs[0], err
    (trace,) = traces(tmp)
    assert os.path.getsize(trace) < 1.2 * 2**20
    out = hk.hookit(tmp, "report", trace).stdout
    assert "size cap reached" in out.splitlines()[-1], out[-500:]
    doc = hk.export_json(tmp, trace)
    assert doc["process"]["meta"]["trace_truncated"] == "size cap reached"
    assert int(doc["process"]["meta"]["trace_events_lost"]) > 0


def test_bad_options_one_line_each(tmp):
    # (help alone ends the program before it runs: core/test_bad_input)
    rc, out, err, pid = record(tmp, opts="threshold=fast,bogus,depth=0", check=False)
    assert rc == 0 and out.strip() == "14", (rc, out)
    lines = hk.hookit_lines(err, pid)
    assert any("bad value in HKTRACEOPTS option 'threshold=fast'" in l for l in lines), err
    assert any("unknown option 'bogus'" in l for l in lines), err
    assert any("bad value in HKTRACEOPTS option 'depth=0'" in l for l in lines), err
    assert len(traces(tmp)) == 1


def test_fork_child_has_its_own_trace(tmp):
    rc, out, err, pid = record(tmp, "fork", check=False)
    assert rc == 0, err
    files = traces(tmp)
    assert len(files) == 2, files
    parent = [f for f in files if f".{pid}.trace" in f]
    assert len(parent) == 1, (files, pid)
    child = [f for f in files if f not in parent][0]
    ptext = [t for _, _, t in listing(tmp, parent[0])[0][1]]
    ctext = [t for _, _, t in listing(tmp, child)[0][1]]
    assert ctext == ["main() {", "  leaf();", "} main()"], ctext
    assert ptext[-5:] == ["    leaf();", "    leaf();", "    leaf();", "  } mid()", "} main()"]
    assert sum(1 for t in ptext if "leaf" in t) == 3 + 1 + 3, ptext   # not the child's leaf(7)
    cdoc = hk.export_json(tmp, child)
    assert cdoc["process"]["ppid"] == pid


def test_exec_writes_the_trace(tmp):
    rc, out, err, pid = record(tmp, "exec", check=False)
    assert rc == 0, err
    (trace,) = traces(tmp)
    doc = hk.export_json(tmp, trace)
    assert doc["process"]["meta"]["end"] == "exec"
    text = [t for _, _, t in listing(tmp, trace)[0][1]]
    assert "  mid() {" in text and text[-1] == "} main()", text


def test_signal_death_writes_the_trace(tmp):
    rc, out, err, pid = record(tmp, "abort", check=False)
    assert rc == -6, (rc, err)
    (trace,) = traces(tmp)
    doc = hk.export_json(tmp, trace)
    assert doc["process"]["meta"]["end"] == "signal"
    assert doc["process"]["meta"]["signal"].startswith("6")
    text = [t for _, _, t in listing(tmp, trace)[0][1]]
    # main never returned: the reader closes it at the end of the trace
    assert text[0] == "main() {" and text[-1] == "} main()" and "  mid() {" in text, text


def test_corrupt_traces_named_with_offset(tmp):
    record(tmp, "thread")
    (trace,) = traces(tmp)
    data = open(trace, "rb").read()
    bad = os.path.join(tmp, "bad.trace")
    for cut in (0, 7, 40, 64, 70, 200, len(data) // 2, len(data) - 1):
        with open(bad, "wb") as f:
            f.write(data[:cut])
        p = hk.hookit(tmp, "report", bad, check=False)
        assert p.returncode == 1, (cut, p.returncode, p.stderr)
        assert "bad.trace" in p.stderr, (cut, p.stderr)
        if cut >= 8:                        # shorter: not even the magic, so not a trace
            assert "offset" in p.stderr, (cut, p.stderr)
    rng = random.Random(4)
    for i in range(150):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        with open(bad, "wb") as f:
            f.write(bytes(b))
        for view in ([], ["--flat"]):
            p = hk.hookit(tmp, "report", *view, bad, check=False)
            assert p.returncode in (0, 1), (i, p.returncode, p.stderr)
            if p.returncode == 1:
                assert "bad.trace" in p.stderr, p.stderr


def test_chrome_and_folded_of_fork_family(tmp):
    record(tmp, "fork")
    files = traces(tmp)
    doc = json.loads(hk.hookit(tmp, "export", "--format=chrome", *files).stdout)
    pids = {e["pid"] for e in doc["traceEvents"] if e["ph"] == "X"}
    assert len(pids) == 2
    merged = hk.hookit(tmp, "report", "--merge", *files).stdout
    assert re.search(r"\s0\s+2\s+\S+\s+\S+\s+F:flow\.main\(\)", merged), merged


def test_unwritable_output_reported_trace_kept_status_kept(tmp):
    """An output 'directory' that is a file: one line at start, the trace
    in the fallback (the current directory), a last line naming it."""
    exe = build(tmp)
    bad = os.path.join(tmp, "afile")
    open(bad, "w").close()
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so",
                                                      "HOOKIT_OUTPUT": bad, "TMPDIR": None})
    assert rc == 0 and out.strip() == "14", (rc, out, err)
    lines = hk.hookit_lines(err, pid)
    assert len(lines) == 2 and bad in lines[0] and "Not a directory" in lines[0], err
    assert lines[1].startswith(f"hookit[{pid}]: hktrace: wrote {tmp}/hookit.flow."), err
    assert len(traces(tmp)) == 1


def test_missing_output_dir_is_created_for_traces(tmp):
    exe = build(tmp)
    missing = os.path.join(tmp, "no", "such", "dir")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so",
                                                      "HOOKIT_OUTPUT": missing})
    assert rc == 0 and out.strip() == "14" and hk.hookit_lines(err, pid) == [], (rc, out, err)
    assert len(traces(missing)) == 1
