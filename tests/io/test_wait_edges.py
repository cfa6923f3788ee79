"""Blocking calls that a signal handler interrupts, or that never return
normally (issue 19's leftovers; docs/io.md "Wait time"): the time is
checked against the wall times the program (tests/io/wait_edges.c)
measured itself, never against hookit's own numbers."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MS = 1_000_000


def build_static(tmp):
    """wait_edges fully static through `hookit link` (ld --wrap)."""
    out = os.path.join(tmp, "wait_edges")
    if not os.path.exists(out):
        cmd = [hk.BIN, "link", "--", "gcc", "-static", "-g", "-O1", "-finstrument-functions",
               "-o", out, os.path.join(HERE, "wait_edges.c"), "-lpthread"]
        c = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        if c.returncode != 0 and "cannot find -l" in c.stderr:
            hk.skip("static libraries missing: " + c.stderr.strip().splitlines()[-1])
        assert c.returncode == 0, c.stderr
    return out


def run_case(tmp, case, env=None, check=True, static=False):
    """Runs wait_edges CASE with hookit, and without (the same output);
    returns ({name: ms} the program measured, the main thread's tree).
    Every call timed (timer=exact) unless env says: the checks compare
    wall-clock spins with frames' times (test_sampled_timer_* sample)."""
    for old in hk.profiles(tmp, "wait_edges"):
        os.unlink(old)
    exe = build_static(tmp) if static else hk.cc(tmp, [os.path.join(HERE, "wait_edges.c")],
                                                  "wait_edges", libs=["-lpthread"])
    plain = hk.cc(tmp, [os.path.join(HERE, "wait_edges.c")], "wait_edges_plain",
                  link_hookit=False, instrument=False, libs=["-lpthread"])
    p = hk.run(tmp, [exe, case], env=env or {"JPROFOPTS": "timer=exact"}, check=check)
    q = hk.run(tmp, [plain, case], check=check)
    # the program's behaviour is its own: the same lines, exit status, signal
    assert p.returncode == q.returncode, (p.returncode, q.returncode, p.stderr)
    assert re.sub(r"=[\d.]+", "", p.stdout) == re.sub(r"=[\d.]+", "", q.stdout), (p.stdout, q.stdout)
    measured = {k: float(v) for k, v in re.findall(r"^(\w+)=([\d.]+)$", p.stdout, re.M)}
    doc = hk.export_json(tmp, hk.one_profile(tmp, "wait_edges"))
    return measured, doc


def near(got_ns, want_ms, slack_ms=12):
    """got within slack of the program's own wall-clock measure."""
    return abs(got_ns / MS - want_ms) <= slack_ms


def test_io_time_excludes_the_handlers(tmp):
    """A read() that blocked ~300 ms during which SIGALRM's handler spun
    150 ms: the read's I/O time is the read's wall time less the handler's
    (measured by the program), and the handler's time is its own."""
    ms, doc = run_case(tmp, "io_handler")
    assert ms["spun_ms"] >= 150 and ms["read_ms"] >= 280, ms
    t = hk.thread_of(doc, 0)
    r = hk.node(t, "main", "io_handler", "blocking_read")
    h = hk.child(r, "spin_handler")
    assert h["incl_ns"] >= 150 * MS and h.get("wait_ns", 0) == 0, h
    want = ms["read_ms"] - ms["spun_ms"]
    assert near(r["io_ns"], want), (r["io_ns"] / MS, want, ms)
    assert near(r["wait_ns"], want), (r["wait_ns"] / MS, want, ms)
    # (counted twice, the read's I/O time would be its whole wall time)
    assert r["io_ns"] < (ms["read_ms"] - 100) * MS, (r["io_ns"], ms)
    # the per-file table's read time is the read's own too
    pipe = [f for f in doc.get("io_files", []) if f.get("reads")]
    assert pipe and near(sum(f["read_ns"] for f in pipe), want), pipe


def test_longjmp_out_of_a_handler_during_a_wait(tmp):
    """poll() interrupted at ~100 ms by SIGALRM, whose handler spins 150 ms
    and siglongjmps back: the poll never returns, yet its wait (from the
    call to the handler's start, as the program measured it) is charged,
    and the handler's time stays the handler's."""
    ms, doc = run_case(tmp, "longjmp")
    assert ms["waited_ms"] >= 95 and ms["spun_ms"] >= 150, ms
    t = hk.thread_of(doc, 0)
    w = hk.node(t, "main", "longjmp_case", "poll_then_jump")
    h = hk.child(w, "jump_handler")
    assert h["incl_ns"] >= 150 * MS and h["wait_ns"] == 0, h
    assert near(w["wait_ns"], ms["waited_ms"]), (w["wait_ns"] / MS, ms)
    assert w["wait_calls"] == 1, w
    # the wait is the frame's own time: what is left is a few instructions
    assert w["excl_ns"] - w["wait_ns"] < 10 * MS, w


def test_cancelled_during_a_wait(tmp):
    """A thread blocked in read() is cancelled after ~120 ms; its cleanup
    handler spins 30 ms: the read is charged from its start to the
    cleanup's (the program's own measure), the cleanup's time is its own."""
    ms, doc = run_case(tmp, "cancel")
    assert ms["cancelled"] == 1 and ms["blocked_ms"] >= 115, ms
    t = hk.thread_of(doc, 1)
    r = hk.node(t, "cancel_reader", "cancelled_read")
    c = hk.child(r, "cleanup_spin")
    assert c["incl_ns"] >= 30 * MS and c["wait_ns"] == 0, c
    assert near(r["wait_ns"], ms["blocked_ms"]), (r["wait_ns"] / MS, ms)
    assert r["excl_ns"] - r["wait_ns"] < 10 * MS, r


def test_still_blocked_at_exit(tmp):
    """A thread blocked in read() when main exits ~150 ms later: its wait
    up to the end is charged (the program measured it just before exit)."""
    ms, doc = run_case(tmp, "exit_blocked")
    t = hk.thread_of(doc, 1)
    r = hk.node(t, "blocked_reader", "forever_read")
    assert near(r["wait_ns"], ms["blocked_ms"]), (r["wait_ns"] / MS, ms)
    assert r["wait_ns"] >= ms["blocked_ms"] * MS, (r["wait_ns"] / MS, ms)
    assert r["excl_ns"] - r["wait_ns"] < 10 * MS, r


def test_sampled_timer_subtracts_the_handlers_cpu_time(tmp):
    """timer=sample: frames have no start time, so a handler's time during
    a blocking call is its samples (CPU time, as the program measured with
    CLOCK_THREAD_CPUTIME_ID; its wall time on a loaded machine is more):
    the read's I/O time is its wall time less the handler's CPU time."""
    ms, doc = run_case(tmp, "io_handler", env={"JPROFOPTS": "timer=sample"})
    t = hk.thread_of(doc, 0)
    r = hk.node(t, "main", "io_handler", "blocking_read")
    want = ms["read_ms"] - ms["spun_cpu_ms"]
    assert near(r["io_ns"], want), (r["io_ns"] / MS, want, ms)
    assert near(r["wait_ns"], want), (r["wait_ns"] / MS, want, ms)


def test_sampled_timer_longjmp_out_of_a_handler(tmp):
    """timer=sample and a longjmp out of the handler: the wait ends at the
    jump (no frame has a start time), less the handler's samples."""
    ms, doc = run_case(tmp, "longjmp", env={"JPROFOPTS": "timer=sample"})
    t = hk.thread_of(doc, 0)
    w = hk.node(t, "main", "longjmp_case", "poll_then_jump")
    want = ms["waited_ms"] + ms["spun_ms"] - ms["spun_cpu_ms"]
    assert near(w["wait_ns"], want), (w["wait_ns"] / MS, want, ms)
    assert w["wait_calls"] == 1, w


def test_static_variant(tmp):
    """Fully static (`hookit link`, --wrap): the I/O wrapper's token, the
    longjmp wrapper and the exit pass give the same numbers."""
    ms, doc = run_case(tmp, "io_handler", static=True)
    r = hk.node(hk.thread_of(doc, 0), "main", "io_handler", "blocking_read")
    assert near(r["io_ns"], ms["read_ms"] - ms["spun_ms"]), (r["io_ns"] / MS, ms)
    ms, doc = run_case(tmp, "longjmp", static=True)
    w = hk.node(hk.thread_of(doc, 0), "main", "longjmp_case", "poll_then_jump")
    assert near(w["wait_ns"], ms["waited_ms"]), (w["wait_ns"] / MS, ms)
    ms, doc = run_case(tmp, "exit_blocked", static=True)
    r = hk.node(hk.thread_of(doc, 1), "blocked_reader", "forever_read")
    assert near(r["wait_ns"], ms["blocked_ms"]), (r["wait_ns"] / MS, ms)
