"""The timeline export at size: --min-time, --depth, --thread, --from/--to
leave calls out as the trace is read; a size estimate (within 5% of the
real size) warns above 200 MB; progress shows on a terminal (a pty) when an
export takes over a second; and report's trace listing refuses --min-pct and --sort instead of ignoring
them."""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import test_trace as tt  # noqa: E402


def events(tmp, trace, *args):
    p = hk.hookit(tmp, "export", "--format=chrome", *args, trace)
    doc = json.loads(p.stdout)
    return [e for e in doc["traceEvents"] if e["ph"] == "X"], p.stderr


def test_chrome_filters(tmp):
    tt.record(tmp)
    trace = tt.traces(tmp)[0]
    full, err = events(tmp, trace)
    assert err == "" and len(full) > 10, (err, len(full))
    # --depth 2: main and what it calls, nothing deeper
    shallow, _ = events(tmp, trace, "--depth", "2")
    assert {e["name"] for e in shallow} == {"main", "mid", "fib", "slow"}, shallow
    assert len(shallow) == 4
    # --min-time: only calls at least that long, and every such call
    cut = sorted(float(e["dur"]) for e in full)[len(full) // 2]      # microseconds
    longer, _ = events(tmp, trace, "--min-time", f"{cut}us")
    want = [e for e in full if float(e["dur"]) >= cut - 0.0005]
    assert 0 < len(longer) <= len(want) and len(longer) >= len(want) - 1, (len(longer), len(want))
    # --from/--to: the calls overlapping a window
    slow = [e for e in full if e["name"] == "slow"][0]     # ts: us since the process start
    window, _ = events(tmp, trace, "--from", f"{float(slow['ts']) + 0.001:.3f}us")
    assert {e["name"] for e in window} == {"main", "slow", "leaf"}, window
    before, _ = events(tmp, trace, "--to", f"{float(slow['ts']) - 0.001:.3f}us")
    assert "slow" not in {e["name"] for e in before} and "mid" in {e["name"] for e in before}
    p = hk.hookit(tmp, "export", "--format=chrome", "--min-time", "soon", trace, check=False)
    assert p.returncode == 2 and "--min-time needs a time" in p.stderr


def test_listing_refuses_min_pct_and_sort(tmp):
    tt.record(tmp)
    trace = tt.traces(tmp)[0]
    for args, opt in ((["--min-pct", "5"], "--min-pct"), (["--sort", "calls"], "--sort")):
        p = hk.hookit(tmp, "report", *args, trace, check=False)
        assert p.returncode == 2 and f"{opt} does not apply to a trace's listing" in p.stderr, p
        assert hk.hookit(tmp, "report", "--tree", *args, trace).returncode == 0


MANY = """\
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) + leaf(x + 1); }
int main(int argc, char **argv)
{
    long n = atol(argv[1]), acc = 0;
    for (long i = 0; i < n; i++)
        acc += mid((int)i);
    printf("%ld\\n", acc & 1);
    return 0;
}
"""


def big_trace(tmp, iterations):
    """A trace of 3 * iterations + 1 calls."""
    src = os.path.join(tmp, "many.c")
    with open(src, "w") as f:
        f.write(MANY)
    exe = hk.cc(tmp, [src], "many")
    hk.run(tmp, [exe, str(iterations)], env={"HOOKIT_PROFILER": "libhktrace.so"})
    return tt.traces(tmp)[0]


def export_on_pty(tmp, trace):
    """Export to a pipe (bytes counted) with stderr on a terminal: (bytes,
    stderr text, seconds)."""
    import pty, select, subprocess, time
    master, slave = pty.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([hk.BIN, "export", "--format=chrome", trace], stdout=subprocess.PIPE,
                         stderr=slave, cwd=tmp, env=hk.test_env())
    os.close(slave)
    size, err = 0, b""
    out = p.stdout.fileno()
    open_fds = {out, master}
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], 60)
        assert ready, "export made no progress for 60 s"
        for fd in ready:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:             # EIO: the terminal's other side closed
                chunk = b""
            if not chunk:
                open_fds.discard(fd)
            elif fd == out:
                size += len(chunk)
            else:
                err += chunk
    assert p.wait() == 0, err
    os.close(master)
    return size, err.decode(), time.monotonic() - t0


def test_size_estimate_warning_and_progress(tmp):
    import re, subprocess
    trace = big_trace(tmp, 500000)          # 1,500,001 calls, about 218 MB of JSON
    size, err, seconds = export_on_pty(tmp, trace)
    m = re.search(r"warning: the timeline will be about (\d+) MB \(1500001 calls\)", err)
    assert m, err
    estimate = int(m.group(1)) << 20
    assert size > 200 << 20, size
    assert abs(estimate - size) < size * 0.05, (estimate, size)
    # progress on the terminal: percentages that only grow, then the total
    steps = [int(x) for x in re.findall(r"\rhookit: export: +(\d+)% of 1500001 calls", err)]
    if seconds >= 1.5:
        assert steps and steps == sorted(steps), err
        assert re.search(r"\rhookit: export: 100% of 1500001 calls in [\d.]+ s\r?\n", err), err
    elif seconds < 1.0:
        assert not steps, err
    # not on a terminal: the warning alone, no progress
    p = subprocess.run([hk.BIN, "export", "--format=chrome", trace], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, cwd=tmp, env=hk.test_env())
    assert p.returncode == 0 and "\r" not in p.stderr, p.stderr
    assert len(p.stderr.splitlines()) == 1 and m.group(0) in p.stderr, p.stderr

