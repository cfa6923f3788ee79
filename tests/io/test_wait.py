"""Time spent waiting, apart from time spent working (issue 19): the
blocking-call wrappers (hookit/io_wait.c) and jprof's wait_ns, wait_calls
and cpu_ns (profiler/jprof/metrics/wait.c), checked against known waits
(tests/io/known_wait.c), the program's behaviour against the same program
without hookit, and the exports through their real readers: jq, Python's
json, go tool pprof, callgrind_annotate."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MS = 1_000_000

# function: (known wait in ms, blocking calls that are not I/O, exactly or None)
KNOWN = {
    "join_wait": (200, 2),          # pthread_join 200 ms, and the EDEADLK self-join
    "cond_wait": (180, None),       # pthread_cond_wait 150 ms + a timedwait timing out at 30 ms
    "mutex_wait": (95, None),       # the holder keeps the mutex 100 ms after it posts
    "sem_waiter": (70, None),
    "sleeper": (100, 5),            # nanosleep 50 + usleep 30 + clock_nanosleep 20, 2 invalid
    "poller": (130, 6),             # poll 60 + select 40 + epoll_wait 30; 1000 polls with no timeout
    "waiter": (80, 2),              # waitpid on a child that sleeps 80 ms, one ECHILD
}


def build(tmp, static=False):
    src = os.path.join(HERE, "known_wait.c")
    if not static:
        return hk.cc(tmp, [src], "known_wait", libs=["-lpthread"])
    out = os.path.join(tmp, "known_wait")
    cmd = [hk.BIN, "link", "--", "gcc", "-static", "-g", "-O1", "-finstrument-functions",
           "-o", out, src, "-lpthread"]
    c = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    if c.returncode != 0 and "cannot find -l" in c.stderr:
        hk.skip("static libraries missing: " + c.stderr.strip().splitlines()[-1])
    assert c.returncode == 0, c.stderr
    return out


def run_known(tmp, env=None, static=False):
    """Runs known_wait with hookit and without; returns the main process's
    profile path.  Every call timed (timer=exact) unless env says: the
    checks compare handlers' wall-clock spins with their frames' times."""
    exe = build(tmp, static)
    p = hk.run(tmp, [exe], env=env or {"JPROFOPTS": "timer=exact"})
    plain = hk.cc(tmp, [os.path.join(HERE, "known_wait.c")], "known_wait_plain",
                  link_hookit=False, instrument=False, libs=["-lpthread"])
    q = hk.run(tmp, [plain])
    # Behaviour unchanged: return values, errno, EINTR, cancellation (the
    # program checks each), the same output with and without hookit.
    assert p.stdout == q.stdout == "all checks passed\n", (p.stdout, q.stdout)
    assert p.stderr == "", p.stderr
    profs = [f for f in hk.profiles(tmp, "known_wait")]
    # main's profile and the fork child's (waiter): main's has join_wait
    for prof in profs:
        doc = hk.export_json(tmp, prof)
        if any(n["name"] == "join_wait" for _, n in hk.walk(hk.thread_of(doc, 0)["roots"])):
            return prof, doc
    raise AssertionError(f"no profile of main among {profs}")


def check_known(doc):
    t = hk.thread_of(doc, 0)
    for fn, (ms, calls) in KNOWN.items():
        n = hk.node(t, "main", fn)
        wait = n["wait_ns"]
        # at least the known wait; at most the function's own time (waiting
        # happens in its own blocking calls), which is nearly all wait
        assert wait >= ms * MS * 0.98, (fn, wait, ms)
        assert wait <= n["excl_ns"] + MS // 10, (fn, wait, n["excl_ns"])
        # (what is left is on-CPU work: thread creation, a fork; a
        # pre-emption on this busy machine may add a few scheduler slices)
        assert n["excl_ns"] - wait < 40 * MS, (fn, n["excl_ns"], wait)
        if calls is not None:
            assert n["wait_calls"] == calls, (fn, n["wait_calls"], calls)
    # 1000 free mutexes are not waits; the 4 calls at most that may block are
    assert hk.node(t, "main", "mutex_wait")["wait_calls"] <= 4
    # A signal handler ran 50 ms inside a poll that waited 30 ms: the
    # handler's time is its own (a child's), not the wait's too.
    h = hk.node(t, "main", "handler_during_wait")
    alarm = hk.child(h, "on_alarm")
    assert alarm["incl_ns"] >= 50 * MS, alarm
    assert alarm["wait_ns"] == 0, alarm
    # (counted twice it would be 80 ms at least)
    assert 25 * MS <= h["wait_ns"] < 75 * MS, (h["wait_ns"], alarm["incl_ns"])
    assert h["wait_ns"] <= h["excl_ns"] + MS // 10, h
    # Every other thread's sleep is its own wait: nap_ms under each worker.
    for th in doc["threads"]:
        for path, n in hk.walk(th["roots"]):
            if n["name"] == "nap_ms" and n["calls"]:
                assert n["wait_ns"] >= n["incl_ns"] - 15 * MS, (path, n)
            if n["name"] in ("now_ms", "on_alarm", "slow_worker"):
                assert n["wait_ns"] == 0, (path, n)
    return t


def test_known_waits(tmp):
    _, doc = run_known(tmp)
    check_known(doc)


def test_known_waits_static(tmp):
    """Fully static (`hookit link`, --wrap): the same numbers."""
    _, doc = run_known(tmp, static=True)
    check_known(doc)


def test_json_by_jq_and_python(tmp):
    """jq 1.6 and Python's json read wait_ns from the flat node table
    (schema 2); the sums agree, and every node carries it."""
    prof, _ = run_known(tmp)
    out = os.path.join(tmp, "w.json")
    hk.hookit(tmp, "export", "--format=json", "-o", out, prof)
    with open(out) as f:
        doc = json.load(f)
    assert doc["schema"] == 2
    nodes = [n for th in doc["threads"] for n in th["nodes"]]
    assert nodes and all(isinstance(n["wait_ns"], int) and isinstance(n["wait_calls"], int)
                         for n in nodes), nodes[:3]
    py_total = sum(n["wait_ns"] for n in nodes)
    py_join = sum(n["wait_ns"] for n in nodes if n["name"] == "join_wait")
    if not hk.have("jq"):
        hk.skip("jq not installed (make deps installs it)")

    def jq(expr):
        p = subprocess.run(["jq", expr, out], capture_output=True, text=True, cwd=tmp)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)
    assert jq("[.threads[].nodes[].wait_ns] | add") == py_total
    assert jq('[.threads[].nodes[] | select(.name == "join_wait") | .wait_ns] | add') == py_join
    assert py_join >= 200 * MS
    assert "wait_ns" in jq(".threads[0].metrics") and "wait_calls" in jq(".threads[0].metrics")


def test_report_columns(tmp):
    """hookit report: CPU + WAIT = BASE on every line of the tree; --flat's
    cpu and wait per function equal the JSON's sums."""
    prof, doc = run_known(tmp)
    text = hk.hookit(tmp, "report", "--units", "ns", prof).stdout
    assert re.search(r"LV\s+CALLS\s+BASE\s+CUM\s+CPU\s+WAIT\s+NAME", text), text
    rows = 0
    for line in text.splitlines():
        m = re.match(r"\s*\d+\s+\d+\s+(\d+)ns\s+\d+ns\s+(\d+)ns\s+(\d+)ns\s+F:known_wait\.(\w+)\(\)$", line)
        if m:
            base, cpu, wait = int(m.group(1)), int(m.group(2)), int(m.group(3))
            assert cpu + wait == base or (cpu == 0 and wait >= base), line
            rows += 1
    assert rows >= 10, text
    m = re.search(r"^\s*\d+\s+\d+\s+\d+ns\s+\d+ns\s+\d+ns\s+(\d+)ns\s+F:known_wait\.join_wait\(\)$",
                  text, re.M)
    assert m and int(m.group(1)) >= 200 * MS, text

    flat = hk.hookit(tmp, "report", "--flat", "--units", "ns", prof).stdout
    head = [l.split() for l in flat.splitlines() if l.split()[:2] == ["%time", "self"]]
    assert head and head[0][-3:] == ["cpu", "wait", "name"], flat
    want = {}
    t0 = hk.thread_of(doc, 0)
    for _, n in hk.walk(t0["roots"]):
        w = want.setdefault(n["name"], [0, 0])
        w[0] += max(n["excl_ns"] - n["wait_ns"], 0)
        w[1] += n["wait_ns"]
    first = flat.split("\n\n")[0]        # thread 0's table
    seen = 0
    for line in first.splitlines():
        m = re.search(r"\s(\d+)ns\s+(\d+)ns\s+F:known_wait\.(\w+)\(\)$", line)
        if m:
            assert want[m.group(3)] == [int(m.group(1)), int(m.group(2))], (line, want[m.group(3)])
            seen += 1
    assert seen >= 10, first


def pprof_top(tmp, pb, index):
    """{function: flat ns} from go tool pprof -top -sample_index=index."""
    p = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=1000", "-nodefraction=0",
                        "-edgefraction=0", "-unit=ns",
                        "-sample_index=" + index, pb], capture_output=True, text=True, cwd=tmp,
                       env=dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"),
                                PPROF_TMPDIR=tmp))
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\d+)ns\s+\S+%\s+\S+%\s+\d+ns\s+\S+%\s+(\S+)$", line)
        if m:
            out[m.group(2)] = int(m.group(1))
    return p.stdout, out


def test_pprof_wait_sample_type(tmp):
    """go tool pprof -sample_index=wait: each function's flat wait is the
    sum of its nodes' wait_ns over every thread; cpu + wait = self_time."""
    if not hk.have("go"):
        hk.skip("go (golang-go) not installed (make deps installs it)")
    prof, doc = run_known(tmp)
    pb = os.path.join(tmp, "w.pb.gz")
    hk.hookit(tmp, "export", "--format=pprof", "-o", pb, prof)
    text, wait = pprof_top(tmp, pb, "wait")
    assert "Type: wait" in text, text
    want = {}
    for th in doc["threads"]:
        for _, n in hk.walk(th["roots"]):
            want[n["name"]] = want.get(n["name"], 0) + n["wait_ns"]
    for fn, ns in want.items():
        assert wait.get(fn, 0) == ns, (fn, wait.get(fn), ns)
    assert wait["join_wait"] >= 200 * MS
    _, cpu = pprof_top(tmp, pb, "cpu")
    _, self_time = pprof_top(tmp, pb, "self_time")
    assert set(self_time) <= set(cpu) | set(wait), (sorted(self_time), sorted(cpu), sorted(wait))
    for fn, ns in self_time.items():
        # cpu is self time less wait, never below 0 (the clocks may differ by a tick)
        assert ns <= cpu.get(fn, 0) + wait.get(fn, 0) <= ns + 1000, (fn, cpu.get(fn), wait.get(fn), ns)


def test_callgrind_wait_event(tmp):
    """callgrind_annotate shows the Wait_ns event, per function equal to the
    JSON's sums, and its total."""
    if not hk.have("callgrind_annotate"):
        hk.skip("callgrind_annotate (valgrind) not installed")
    prof, doc = run_known(tmp)
    out = os.path.join(tmp, "w.callgrind")
    # Without source lines (on by default), callgrind_annotate lists each
    # function as ???:NAME, which the rows below read.
    hk.hookit(tmp, "export", "--format=callgrind", "--no-lines", "-o", out, prof)
    p = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True, cwd=tmp)
    assert p.returncode == 0, p.stderr
    assert re.search(r"Events recorded:\s+Time_ns Calls Wait_ns Cpu_ns", p.stdout), p.stdout
    want, want_cpu = {}, {}
    for th in doc["threads"]:
        for _, n in hk.walk(th["roots"]):
            want[n["name"]] = want.get(n["name"], 0) + n["wait_ns"]
            want_cpu[n["name"]] = want_cpu.get(n["name"], 0) + max(n["excl_ns"] - n["wait_ns"], 0)
    rows, cpu = {}, {}
    total = None
    for line in p.stdout.splitlines():
        nums = re.findall(r"([\d,]+)(?: \([^)]*\))?", line.split("???:")[0]) if "???:" in line else []
        m = re.search(r"\?\?\?:(\w+) \[", line)
        if m and len(nums) == 4:    # Time_ns Calls Wait_ns Cpu_ns
            rows[m.group(1)] = int(nums[2].replace(",", ""))
            cpu[m.group(1)] = int(nums[3].replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = int(re.findall(r"([\d,]+) \(", line)[2].replace(",", ""))
    assert total == sum(want.values()), (total, sum(want.values()))
    assert rows.get("join_wait") == want["join_wait"] >= 200 * MS, (rows, want["join_wait"])
    assert rows.get("poller") == want["poller"], rows
    # Cpu_ns: the exclusive time less the wait, per context, added up
    assert cpu.get("join_wait") == want_cpu["join_wait"], (cpu, want_cpu["join_wait"])


def test_nowait_passes_through(tmp):
    """JPROFOPTS=nowait: no wait columns, the program behaves the same, and
    the report keeps its old columns."""
    prof, doc = run_known(tmp, env={"JPROFOPTS": "timer=exact,nowait"})
    t = hk.thread_of(doc, 0)
    assert "wait_ns" not in t["metrics"], t["metrics"]
    text = hk.hookit(tmp, "report", prof).stdout
    assert re.search(r"LV\s+CALLS\s+BASE\s+CUM\s+NAME", text), text


def test_cpu_sampled(tmp):
    """JPROFOPTS=cpu: work() runs 200 ms of its thread's CPU time by the
    kernel's count (tests/io/cpu_spin.c), rest() sleeps 200 ms.  The sampled
    cpu_ns of work's subtree is that CPU time, whatever pre-emption on this
    busy machine added to its wall-clock time; rest is wait, not CPU; times
    stay exact (timer=exact)."""
    exe = hk.cc(tmp, [os.path.join(HERE, "cpu_spin.c")], "cpu_spin")
    p = hk.run(tmp, [exe], env={"JPROFOPTS": "timer=exact,cpu"})
    assert p.stdout == "done\n", p.stdout
    doc = hk.export_json(tmp, hk.one_profile(tmp, "cpu_spin"))
    assert doc["process"]["meta"]["timer"] == "exact", doc["process"]["meta"]
    t = hk.thread_of(doc, 0)
    assert "cpu_ns" in t["metrics"], t["metrics"]
    work = hk.node(t, "main", "work")
    work_cpu = sum(n["cpu_ns"] for _, n in hk.walk([work]))
    # Samples fall on the kernel's tick (4 ms at HZ=250): a few ticks either way.
    assert abs(work_cpu - 200 * MS) <= 0.1 * 200 * MS + 12 * MS, work_cpu
    assert work["incl_ns"] >= 200 * MS, work          # wall time: at least the CPU time
    rest = hk.node(t, "main", "rest")
    assert rest["cpu_ns"] <= 8 * MS and rest["wait_ns"] >= 0.98 * 200 * MS, rest
    text = hk.hookit(tmp, "report", "--units", "ns", hk.one_profile(tmp, "cpu_spin")).stdout
    m = re.search(r"^\s*1\s+1\s+(\d+)ns\s+\d+ns\s+(\d+)ns\s+(\d+)ns\s+F:cpu_spin\.rest\(\)$", text, re.M)
    assert m and int(m.group(2)) == rest["cpu_ns"] and int(m.group(3)) == rest["wait_ns"], text
