"""Blocking calls that a signal handler interrupts, or that never return
normally (issue 19's leftovers; docs/io.md "Wait time"): the time is
checked against the wall times the program (tests/io/wait_edges.c)
measured itself, never against hookit's own numbers."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MS = 1_000_000


def run_case(tmp, case, env=None, check=True):
    """Runs wait_edges CASE with hookit, and without (the same output);
    returns ({name: ms} the program measured, the main thread's tree)."""
    exe = hk.cc(tmp, [os.path.join(HERE, "wait_edges.c")], "wait_edges", libs=["-lpthread"])
    plain = hk.cc(tmp, [os.path.join(HERE, "wait_edges.c")], "wait_edges_plain",
                  link_hookit=False, instrument=False, libs=["-lpthread"])
    p = hk.run(tmp, [exe, case], env=env, check=check)
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
