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


def export_on_pty(tmp, trace, fmt="chrome", slow=False, tty=True):
    """Export to a pipe (bytes counted; read slowly, 64 KB each 0.1 s,
    with slow) with stderr on a terminal (a pty) or a pipe: (output bytes,
    stderr text, seconds)."""
    import pty, select, subprocess, time
    master, slave = pty.openpty() if tty else os.pipe()
    t0 = time.monotonic()
    p = subprocess.Popen([hk.BIN, "export", "--format=" + fmt, trace], stdout=subprocess.PIPE,
                         stderr=slave, cwd=tmp, env=hk.test_env())
    os.close(slave)
    out, size, err = [], 0, b""
    fd_out = p.stdout.fileno()
    open_fds = {fd_out, master}
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], 60)
        assert ready, "export made no progress for 60 s"
        for fd in ready:
            try:
                chunk = os.read(fd, 65536 if slow and fd == fd_out else 1 << 20)
            except OSError:             # EIO: the terminal's other side closed
                chunk = b""
            if not chunk:
                open_fds.discard(fd)
            elif fd == fd_out and slow:
                out.append(chunk)
                time.sleep(0.1)
            elif fd == fd_out:
                size += len(chunk)
            else:
                err += chunk
    assert p.wait() == 0, err
    os.close(master)
    return (b"".join(out) if slow else size), err.decode(), time.monotonic() - t0


@hk.not_under("address", "thread", why="a 218 MB timeline takes minutes under a sanitizer; "
               "the estimate and the progress are the same code as in the plain build")
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



def contexts_program(tmp, width=20):
    """a_i > b_j > c_k for every i, j, k: width**3 calling contexts."""
    src = ["static volatile unsigned long sink;"]
    for i in range(width):
        src.append(f"__attribute__((noinline)) void c{i}(void) {{ sink += {i}; }}")
    src.append("static void (*const cs[])(void) = {%s};" % ", ".join(f"c{i}" for i in range(width)))
    for i in range(width):
        src.append(f"__attribute__((noinline)) void b{i}(void) {{ for (int k = 0; k < {width}; k++) cs[k](); }}")
    src.append("static void (*const bs[])(void) = {%s};" % ", ".join(f"b{i}" for i in range(width)))
    for i in range(width):
        src.append(f"__attribute__((noinline)) void a{i}(void) {{ for (int k = 0; k < {width}; k++) bs[k](); }}")
    src.append("static void (*const as[])(void) = {%s};" % ", ".join(f"a{i}" for i in range(width)))
    src.append(f"int main(void) {{ for (int k = 0; k < {width}; k++) as[k](); return 0; }}")
    path = os.path.join(tmp, "contexts.c")
    with open(path, "w") as f:
        f.write("\n".join(src) + "\n")
    exe = hk.cc(tmp, [path], "contexts")
    hk.run(tmp, [exe])
    return hk.one_profile(tmp, "contexts")


def test_progress_of_any_export_on_a_terminal(tmp):
    """Not only the timeline: a JSON export kept over a second (its reader
    is slow) shows what it wrote on a terminal, and the output is intact."""
    import re
    prof = contexts_program(tmp)
    plain = hk.hookit(tmp, "export", "--format=json", prof).stdout.encode()
    assert len(plain) > 1000000, len(plain)
    data, err, seconds = export_on_pty(tmp, prof, "json", slow=True)
    assert seconds > 1.5 and data == plain, (seconds, len(data), len(plain))
    json.loads(data)
    steps = re.findall(r"\rhookit: export: json: ([\d.]+) MB written, ([\d.]+) s", err)
    assert steps, err
    assert all(float(t) >= 1.0 for _, t in steps), steps
    assert [float(b) for b, _ in steps] == sorted(float(b) for b, _ in steps), steps
    m = re.search(r"\rhookit: export: json: ([\d.]+) MB in ([\d.]+) s\r?\n$", err)
    assert m and abs(float(m.group(1)) - len(plain) / 1e6) < 0.06, (err[-200:], len(plain))
    # not on a terminal: nothing
    data, err, _ = export_on_pty(tmp, prof, "json", slow=True, tty=False)
    assert data == plain and err == "", err
