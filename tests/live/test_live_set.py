"""Several processes read live at once (issue 32, docs/live.md "Several
processes"): `hookit snapshot` and `hookit top` over --pids, --family and
--all (MPI jobs, --job: tests/mpi/test_mpi_live.py); the thread, process
and job levels; the pauses measured per process and in all; several
readers at once; a reader killed while it holds a job pause; only the
owner reads or pauses.

Every test uses its own registry (HOOKIT_RUNTIME_DIR)."""
import os, signal, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import test_live  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUSY = os.path.join(HERE, "busy.c")
PINGPONG = os.path.join(HERE, "pingpong.c")


def rt_env(rt, **extra):
    return hk.test_env(HOOKIT_RUNTIME_DIR=rt, **extra)


def start(tmp, exe, *args, rt, wait=True):
    """exe with args, once its arena is registered in rt."""
    p, where = test_live.start(tmp, *args, exe=exe, wait_threads=wait)
    assert where == rt, (where, rt)
    return p


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                if d.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return out


def stop(*ps):
    """End them and their children (a fork child keeps the pipes open)."""
    for p in ps:
        for c in children(p.pid):
            try:
                os.kill(c, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if p.poll() is None:
            p.terminate()
    for p in ps:
        p.communicate(timeout=30)


def wait_arenas(rt, n):
    deadline = time.monotonic() + 10
    while len([x for x in os.listdir(rt) if x.endswith(".arena")]) < n:
        assert time.monotonic() < deadline, os.listdir(rt)
        time.sleep(0.05)


def hookit(tmp, rt, *args, check=True, extra_env=None):
    env = {"HOOKIT_RUNTIME_DIR": rt}
    env.update(extra_env or {})
    return hk.hookit(tmp, *args, check=check, env=env)


def snap(tmp, rt, name, *args):
    out = os.path.join(tmp, name)
    r = hookit(tmp, rt, "snapshot", "-o", out, *args)
    assert f"wrote {out}: " in r.stdout, r.stdout
    return hk.export_json(tmp, out), r.stdout


def meta(doc):
    return doc["process"]["meta"]


def pauses(doc):
    """The live_pauses table: [{pid, rank, pause_ns, gather_ns, copy_ns, threads}]."""
    lines = meta(doc)["live_pauses"].splitlines()
    keys = lines[0].split("\t")
    return [dict(zip(keys, map(int, line.split("\t")))) for line in lines[1:]]


def calls(doc):
    """{function name: calls} over every thread of the merged profile."""
    out = {}
    for t in doc["threads"]:
        for n in t["nodes"]:
            out[n["name"]] = out.get(n["name"], 0) + n["calls"]
    return out


# ---- which processes -------------------------------------------------------------------

def test_pids_family_and_all_select_the_processes(tmp):
    """--pids takes exactly those; --family a process and its profiled
    descendants; --all every profiled process in the registry.  The merged
    profile sums them: a function all of them run appears once with the
    calls of all."""
    exe = hk.cc(tmp, [BUSY], "busy", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    a = start(tmp, exe, 1, 60, rt=rt)
    b = start(tmp, exe, 0, 60, rt=rt)
    f = start(tmp, exe, 0, 60, "fork", rt=rt)   # a parent and its fork child
    try:
        wait_arenas(rt, 4)
        doc, out = snap(tmp, rt, "pids.prof", "--pids", f"{a.pid},{b.pid}")
        assert sorted(r["pid"] for r in pauses(doc)) == sorted([a.pid, b.pid]), pauses(doc)
        assert "2 processes, 3 threads, consistency thread" in out, out
        assert meta(doc)["live_set_processes"] == 2 and meta(doc)["merged_inputs"] == 2, meta(doc)
        assert calls(doc)["spin"] == 3, calls(doc)          # a: main + 1 worker, b: main

        doc, out = snap(tmp, rt, "family.prof", "--family", str(f.pid))
        pids = sorted(r["pid"] for r in pauses(doc))
        assert len(pids) == 2 and f.pid in pids, pids
        child = [x for x in pids if x != f.pid][0]
        assert children(f.pid) == [child], (children(f.pid), child)

        doc, out = snap(tmp, rt, "all.prof", "--all")
        assert sorted(r["pid"] for r in pauses(doc)) == sorted([a.pid, b.pid, f.pid, child]), pauses(doc)
        # one bad pid: nothing written, the reason given
        r = hookit(tmp, rt, "snapshot", "-o", os.path.join(tmp, "x.prof"), "--pids", f"{a.pid},1",
                   check=False)
        assert r.returncode == 1 and not os.path.exists(os.path.join(tmp, "x.prof")), r
        r = hookit(tmp, rt, "snapshot", "--pids", str(a.pid), str(b.pid), check=False)
        assert r.returncode == 2 and "not both" in r.stderr, r.stderr
    finally:
        stop(a, b, f)


# ---- one moment across processes ---------------------------------------------------------

def test_job_level_is_one_moment_across_processes(tmp):
    """Two processes hand a token back and forth: at every moment the
    parent's finished pings minus the child's finished pongs is 0 or 1.
    A job-level snapshot of the family holds both at one moment, so it
    always shows that; every thread was parked or outside the hooks."""
    exe = hk.cc(tmp, [PINGPONG], "pingpong")
    rt = os.path.join(tmp, "rt")
    p = start(tmp, exe, 60, rt=rt)
    try:
        wait_arenas(rt, 2)
        diffs = []
        for i in range(12):
            doc, out = snap(tmp, rt, f"j{i}.prof", "--family", str(p.pid), "--consistency=job")
            assert "2 processes" in out and "consistency job" in out, out
            m = meta(doc)
            assert m["live_consistency"] == "job" and m["live_set_processes"] == 2, m
            c = calls(doc)
            assert "ping" in c and "pong" in c, (c, pauses(doc))
            diffs.append(c["ping"] - c["pong"])
            rows = pauses(doc)
            assert len(rows) == 2
            for r in rows:
                # each process paused within the set's one pause
                assert 0 < r["pause_ns"] <= m["live_set_pause_ns"], (r, m)
                assert r["copy_ns"] <= r["pause_ns"], r
            assert m["live_set_pause_max_ns"] == max(r["pause_ns"] for r in rows)
        assert p.poll() is None
    finally:
        stop(p)
    assert all(d in (0, 1) for d in diffs), diffs
    print("ping - pong at each job-level snapshot:", diffs)


def test_process_level_pauses_one_after_another(tmp):
    """The process level (TAU's radial sweep): each process paused on its
    own, the set's pause the sum of theirs."""
    exe = hk.cc(tmp, [BUSY], "busy", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    ps = [start(tmp, exe, 1, 60, rt=rt) for _ in range(3)]
    try:
        doc, out = snap(tmp, rt, "p.prof", "--all", "--consistency=process")
        assert "one process after another" in out, out
        m = meta(doc)
        rows = pauses(doc)
        assert len(rows) == 3 and all(r["pause_ns"] > 0 for r in rows), rows
        assert m["live_set_pause_ns"] == m["live_set_pause_sum_ns"] == sum(r["pause_ns"] for r in rows), m
        assert m["live_consistency"] == "process"
    finally:
        stop(*ps)


def test_sixteen_processes_job_pause_is_the_copy(tmp):
    """16 processes whose only thread is blocked (main asleep in an open
    frame): a job-level snapshot waits for none of them, so its pause is
    the copy, whatever the load (the reader's own waits for a CPU taken
    out): at most the copy time + 5 ms."""
    exe = hk.cc(tmp, [BUSY], "busy", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    ps = [start(tmp, exe, 0, 120, "pause", rt=rt, wait=False) for _ in range(16)]
    figures = []
    try:
        time.sleep(0.3)
        for i in range(5):
            doc, out = snap(tmp, rt, f"j{i}.prof", "--all", "--consistency=job")
            m = meta(doc)
            assert m["live_set_processes"] == 16, m
            rows = pauses(doc)
            assert len(rows) == 16 and all(r["threads"] == 1 for r in rows), rows
            own = m["live_set_pause_ns"] - m.get("live_set_pause_runnable_ns", 0)
            assert own <= m["live_set_copy_ns"] + 5_000_000, m
            figures.append((m["live_set_pause_ns"], m["live_set_copy_ns"], own))
    finally:
        stop(*ps)
    print("16 processes, job pause / copy / pause without the reader's CPU waits (ms):",
          [tuple(round(x / 1e6, 3) for x in f) for f in figures])


def running_busy(tmp, n):
    """n busy processes (a worker thread each) registered in tmp/rt, their
    threads running: (Popens, registry)."""
    exe = hk.cc(tmp, [BUSY], "busy", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    ps = [start(tmp, exe, 1, 120, rt=rt, wait=False) for _ in range(n)]
    try:
        wait_arenas(rt, n)
    except BaseException:
        stop(*ps)
        raise
    time.sleep(0.3)
    return ps, rt


def test_top_drops_a_process_that_ended(tmp):
    """`top --iterations N` prints N views and ends; a process of the set
    that ends between two refreshes is dropped with one line naming it,
    and the view goes on with the others."""
    ps, rt = running_busy(tmp, 3)
    try:
        top = subprocess.Popen([hk.BIN, "top", "--iterations", "4", "-i", "0.3", "--pids",
                                ",".join(str(p.pid) for p in ps)], cwd=tmp, env=rt_env(rt),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = top.stdout.readline()
        assert first.startswith("hookit top: ") and "processes 3" in first, (first, top.stderr.read())
        ps[1].terminate()
        ps[1].communicate(timeout=30)
        out, err = top.communicate(timeout=60)
        assert top.returncode == 0, err
    finally:
        stop(*ps)
    views = [v for v in (first + out).split("hookit top: ")[1:]]
    assert len(views) == 4, out
    said = [k for k, v in enumerate(views) if f"process {ps[1].pid} ended: dropped from the view" in v]
    assert len(said) == 1, out
    for v in views[said[0]:]:
        assert v.startswith(views[0].split()[0]) and "processes 2" in v.splitlines()[0], v
        rows = [line.split() for line in v.splitlines() if line[:2] == "  " and line.split()[:1] != []
                and line.split()[0].isdigit() and len(line.split()) > 1 and line.split()[1].isdigit()]
        assert sorted(int(r[1]) for r in rows) == sorted([ps[0].pid, ps[2].pid]), v


# ---- several readers, a dead reader, another user ------------------------------------------

def test_readers_at_once_never_corrupt_or_stall(tmp):
    """Two `top`s and a snapshot, all at the job level, on the same four
    processes at once, three times: every one ends, in time, with whole
    trees; the programs keep running."""
    ps, rt = running_busy(tmp, 4)
    try:
        env = rt_env(rt)
        for round in range(3):
            t0 = time.monotonic()
            out = os.path.join(tmp, f"s{round}.prof")
            readers = [subprocess.Popen([hk.BIN, "top", "--once", "-i", "0.2", "--all", "--consistency=job"],
                                        cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                       for _ in range(2)]
            readers.append(subprocess.Popen([hk.BIN, "snapshot", "--all", "--consistency=job", "-o", out],
                                            cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True))
            for q in readers:
                o, e = q.communicate(timeout=60)
                assert q.returncode == 0, e
            assert time.monotonic() - t0 < 30
            doc = hk.export_json(tmp, out)
            assert meta(doc)["live_set_processes"] == 4
            for t in doc["threads"]:
                hk.check_tree_consistent(t)
            assert all(p.poll() is None for p in ps)
    finally:
        stop(*ps)


def progress(tmp, rt, pids):
    """Calls of outer() in all of pids, from a thread-level snapshot (which
    never pauses anyone)."""
    doc, _ = snap(tmp, rt, "progress.prof", "--pids", ",".join(map(str, pids)))
    return calls(doc).get("outer", 0)


def test_reader_killed_holding_a_job_pause(tmp):
    """A reader SIGKILLed while it holds every thread of three processes
    paused: each thread goes on by itself within the bound (0.5 s), and the
    next reader breaks the dead reader's hold at once."""
    exe = hk.cc(tmp, [BUSY], "busy", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    ps = [start(tmp, exe, 1, 120, rt=rt, wait=False) for _ in range(3)]
    pids = [p.pid for p in ps]
    try:
        wait_arenas(rt, 3)
        time.sleep(0.3)
        reader = subprocess.Popen([hk.BIN, "snapshot", "--all", "--consistency=job", "-o",
                                   os.path.join(tmp, "never.prof")], cwd=tmp,
                                  env=rt_env(rt, HOOKIT_LIVE_HOLD_MS=20000),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = reader.stderr.readline()
        assert "holding the pause" in line, line
        reader.kill()
        reader.wait()
        time.sleep(0.6)                 # past the bound
        a = progress(tmp, rt, pids)
        time.sleep(0.3)
        b = progress(tmp, rt, pids)
        assert b > a, (a, b)            # running again
        t0 = time.monotonic()
        doc, _ = snap(tmp, rt, "after.prof", "--all", "--consistency=job")
        assert time.monotonic() - t0 < 5 and meta(doc)["live_set_processes"] == 3
        assert all(p.poll() is None for p in ps)
        print(f"calls of outer() 0.6 s and 0.9 s after the kill: {a} -> {b}")
    finally:
        stop(*ps)


def test_another_user_cannot_read_or_pause_a_set(tmp):
    """Only the processes' user (or root) reads or pauses them, as a set
    too: another user is refused by pid, and finds nothing of theirs in a
    registry that is not its own."""
    if os.geteuid() != 0 or not hk.have("setpriv"):
        hk.skip("needs root and setpriv to act as a second user")
    exe = hk.cc(tmp, [BUSY], "busy", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    ps = [start(tmp, exe, 1, 60, rt=rt) for _ in range(2)]
    pids = ",".join(str(p.pid) for p in ps)
    try:
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", hk.BIN]
        for args in (["snapshot", "--consistency=job", "--pids", pids, "-o", "/tmp/x.prof"],
                     ["snapshot", "--consistency=job", "--family", str(ps[0].pid), "-o", "/tmp/x.prof"],
                     ["top", "--once", "--consistency=job", "--pids", pids]):
            r = subprocess.run(nobody + args, cwd="/", env=rt_env(rt), capture_output=True, text=True)
            assert r.returncode == 1, (args, r)
            assert f"process {ps[0].pid} belongs to user" in r.stderr and "refused" in r.stderr, r.stderr
        for args in (["snapshot", "--all", "-o", "/tmp/x.prof"], ["snapshot", "--job", "x", "-o", "/tmp/x.prof"]):
            r = subprocess.run(nobody + args, cwd="/", env=rt_env(rt), capture_output=True, text=True)
            assert r.returncode == 1 and ("Permission denied" in r.stderr or "refused" in r.stderr), (args, r)
            assert str(ps[0].pid) not in r.stdout
        assert not os.path.exists("/tmp/x.prof")
        # the owner (root) reads them
        doc, _ = snap(tmp, rt, "root.prof", "--pids", pids, "--consistency=job")
        assert meta(doc)["live_set_processes"] == 2
    finally:
        stop(*ps)
