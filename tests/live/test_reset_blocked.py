"""`ctl reset` and `ctl zerobase` on a process whose threads are all blocked
(issue 18): the control thread cannot rewrite a tree only its own thread
writes, so the command is pending for each blocked thread, every reader
(snapshots, a flush written by the process) shows it applied, and the
thread applies it, as of the command's moment, before its next change.
The call counts are the program's own (tests/live/resetwait.c), not read
back from hookit's output."""
import os, re, signal, subprocess, time

import hk

SRC = os.path.join(hk.ROOT, "tests", "live", "resetwait.c")
# thread 0: main; 1: a thread that ended before the command; 2: the worker
BEFORE = {0: {"before": 100}, 1: {"early_main": 1, "early": 9}, 2: {"work": 50}}
# what runs after the release: the worker's first hook is its SIGUSR1 handler's
AFTER = {0: {"after_main": 20}, 1: {}, 2: {"on_usr1": 1, "after": 30}}
OPEN = {0: ("main", "joiner"), 1: (), 2: ("worker", "wait_usr1")}   # open while blocked
THREADS = [0, 1, 2]
BLOCKED_S = 0.3                 # how long the threads stay blocked after the command


def per_thread(doc):
    """{thread index: {name: (calls, incl_ns)}}, summed over the name's nodes."""
    out = {}
    for th in doc["threads"]:
        d = out.setdefault(th["index"], {})
        for _path, n in hk.walk(th["roots"]):
            calls, incl = d.get(n["name"], (0, 0))
            d[n["name"]] = (calls + n["calls"], incl + n["incl_ns"])
    return out


def calls(doc):
    return {i: {k: v[0] for k, v in d.items()} for i, d in per_thread(doc).items()}


def snapshot(tmp, rt, pid, name, *opts):
    out = os.path.join(tmp, name)
    r = hk.hookit(tmp, "snapshot", *opts, "-o", out, str(pid), env={"HOOKIT_RUNTIME_DIR": rt})
    assert f"wrote {out}" in r.stdout, r.stdout
    return hk.export_json(tmp, out)


def expect_applied(doc, cmd, what):
    got = calls(doc)
    assert sorted(got) == THREADS, (what, got)
    for i in THREADS:
        # every call made before the command is gone (zerobase: the nodes stay, at 0)
        assert all(c == 0 for c in got[i].values()), (what, i, got[i])
        names = set(got[i])
        if cmd == "reset":
            assert names == set(OPEN[i]), (what, i, names)
        else:
            assert names == set(OPEN[i]) | set(BEFORE[i]), (what, i, names)


def run_blocked(tmp, cmd):
    exe = hk.cc(tmp, [SRC], "resetwait", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    # Every call timed: the open frames' time from the command is checked.
    env = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt, JPROFOPTS="timer=exact")
    p = subprocess.Popen([exe], cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        line = p.stdout.readline().split()
        assert line[:1] == ["ready"], (line, p.stderr.read() if p.poll() is not None else "")
        pid = int(line[1])
        time.sleep(0.2)         # main reaches pthread_join
        # before: the program's own numbers (so the checks below can fail)
        got = calls(snapshot(tmp, rt, pid, "before.prof"))
        for i in THREADS:
            for name, n in BEFORE[i].items():
                assert got[i].get(name) == n, (i, got)
        t_cmd = time.monotonic()
        r = hk.hookit(tmp, "ctl", str(pid), cmd, check=False, env={"HOOKIT_RUNTIME_DIR": rt})
        assert r.returncode == 0 and r.stdout.strip() == f"process {pid}: {cmd} done", r
        # every reader sees it applied, though neither thread has run since
        expect_applied(snapshot(tmp, rt, pid, "thread.prof"), cmd, "snapshot")
        expect_applied(snapshot(tmp, rt, pid, "process.prof", "--consistency=process"), cmd,
                       "process snapshot")
        r = hk.hookit(tmp, "ctl", str(pid), "flush", env={"HOOKIT_RUNTIME_DIR": rt})
        flushed = hk.profiles(tmp, "resetwait")
        assert len(flushed) == 1, flushed
        expect_applied(hk.export_json(tmp, flushed[0]), cmd, "flush")
        time.sleep(BLOCKED_S)
        os.kill(pid, signal.SIGUSR1)        # only the worker's sigsuspend lets it in
        out, err = p.communicate(timeout=30)
        t_end = time.monotonic()
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, (out, err)
    assert out.strip().endswith("wakes 1"), out     # woken once, by SIGUSR1: no hook ran before
    final = [f for f in hk.profiles(tmp, "resetwait") if f != flushed[0]]
    assert len(final) == 1, final
    doc = per_thread(hk.export_json(tmp, final[0]))
    for i in THREADS:
        want = dict(AFTER[i])
        want.update({name: 0 for name in OPEN[i]})  # re-made or zeroed, not called again
        if cmd == "zerobase":
            want.update({name: 0 for name in BEFORE[i]})
        assert {k: v[0] for k, v in doc[i].items()} == want, (i, doc[i])
        # The open frames count their time from the command, not from the
        # moment their thread woke: at least the time blocked after it, at
        # most the time since the command was sent.
        for name in OPEN[i]:
            incl = doc[i][name][1]
            assert BLOCKED_S * 1e9 <= incl <= (t_end - t_cmd) * 1e9, (i, name, incl, t_end - t_cmd)


def test_reset_reaches_blocked_threads_at_once(tmp):
    run_blocked(tmp, "reset")


def test_zerobase_reaches_blocked_threads_at_once(tmp):
    run_blocked(tmp, "zerobase")


IO_SRC = os.path.join(hk.ROOT, "tests", "live", "resetio.c")
BLOCK_MS = 600                  # how long the read and the sleep block in all
CMD_AT_MS = 300                 # when the command is sent, after "ready"
FLUSH_AT_MS = 450               # a flush while both still block


def span_bounds(end_ns, cmd0, cmd1, what):
    """A blocking call that ended at end_ns (the program's clock) and was
    cut by a command sent between cmd0 and cmd1 (the test's clock, the same
    CLOCK_MONOTONIC): its time counts from the command's moment, so it lies
    in [end - cmd1, end - cmd0], with room for the clock rate's rounding
    and the few microseconds between hookit's clock reading and the
    program's own around the call."""
    lo, hi = end_ns - cmd1, end_ns - cmd0
    assert lo > 100 * 1_000_000, (what, "the call did not outlast the command", lo)
    return lo * 0.99 - 2_000_000, hi * 1.01 + 2_000_000


POKE_AT_MS = 380                # poke: SIGUSR1, main's handler applies the command


def run_blocked_io(tmp, cmd, poke=False):
    exe = hk.cc(tmp, [IO_SRC], "resetio", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    env = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt)
    p = subprocess.Popen([exe, str(BLOCK_MS)], cwd=tmp, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().split()
        assert line[:1] == ["ready"], (line, p.stderr.read() if p.poll() is not None else "")
        ready = time.monotonic_ns()
        pid = int(line[1])
        ctl = {"HOOKIT_RUNTIME_DIR": rt}
        time.sleep(CMD_AT_MS / 1e3)
        cmd0 = time.monotonic_ns()
        r = hk.hookit(tmp, "ctl", str(pid), cmd, check=False, env=ctl)
        cmd1 = time.monotonic_ns()
        assert r.returncode == 0 and r.stdout.strip() == f"process {pid}: {cmd} done", r
        if poke:
            time.sleep(max(0, ready / 1e9 + POKE_AT_MS / 1e3 - time.monotonic()))
            os.kill(pid, signal.SIGUSR1)
        time.sleep(max(0, ready / 1e9 + FLUSH_AT_MS / 1e3 - time.monotonic()))
        flush0 = time.monotonic_ns()
        hk.hookit(tmp, "ctl", str(pid), "flush", env=ctl)
        flush1 = time.monotonic_ns()
        flushed = hk.profiles(tmp, "resetio")
        assert len(flushed) == 1, flushed
        time.sleep(max(0, ready / 1e9 + BLOCK_MS / 1e3 - time.monotonic()))
        out, err = p.communicate("go\n", timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, (out, err)
    mark = {w[0]: [int(x) for x in w[1:3]] for w in (ln.split() for ln in out.splitlines())}
    assert mark["usr1"][0] == (1 if poke else 0), out
    read_t0, read_t1 = mark["read"]
    sleep_t0, sleep_t1 = mark["sleep"]
    assert read_t0 < cmd0 and sleep_t0 < cmd0, ("both blocked before the command", mark, cmd0)
    assert read_t1 > flush1 and sleep_t1 > flush1, ("and after the flush", mark, flush1)

    # The flush, while both still blocked: their waits so far, from the
    # command's moment to the flush's (before: from their start).
    doc = hk.export_json(tmp, flushed[0])
    lo, hi = (flush0 - cmd1) * 0.99 - 2_000_000, (flush1 - cmd0) * 1.01 + 2_000_000
    for idx, path in ((0, ("main", "read_input")), (1, ("worker", "sleep_long"))):
        w = hk.node(hk.thread_of(doc, idx), *path).get("wait_ns", 0)
        assert lo <= w <= hi, ("flush", path, w, lo, hi)

    final = [f for f in hk.profiles(tmp, "resetio") if f != flushed[0]]
    assert len(final) == 1, final
    doc = hk.export_json(tmp, final[0])
    main = hk.thread_of(doc, 0)
    rd = hk.node(main, "main", "read_input")
    lo, hi = span_bounds(read_t1, cmd0, cmd1, "read")
    # the read: its node's I/O time and wait time, the process's I/O total
    # (nothing else did I/O after the command but the final line, written
    # after read_t1 and the profile's own writes, which are not counted)
    assert rd["io_calls"] == 1, rd
    assert lo <= rd["io_ns"] <= hi, ("read io_ns", rd["io_ns"], lo, hi, read_t1 - read_t0)
    assert lo <= rd["wait_ns"] <= hi, ("read wait_ns", rd["wait_ns"], lo, hi)
    meta = doc["process"]["meta"]
    assert lo <= meta["io_ns"] <= hi + 5_000_000, ("io_ns total", meta["io_ns"], lo, hi)
    # the wait: nanosleep, a blocking call that is not I/O
    sl = hk.node(hk.thread_of(doc, 1), "worker", "sleep_long")
    lo, hi = span_bounds(sleep_t1, cmd0, cmd1, "sleep")
    assert sl["wait_calls"] == 1, sl
    assert lo <= sl["wait_ns"] <= hi, ("sleep wait_ns", sl["wait_ns"], lo, hi, sleep_t1 - sleep_t0)


def test_reset_cuts_blocked_io_and_wait(tmp):
    """A read() and a nanosleep() already blocked when `ctl reset` arrives
    count only their time after it, in the final profile and in a flush
    made while they still block (before: the read kept all 600 ms)."""
    run_blocked_io(tmp, "reset")


def test_zerobase_cuts_blocked_io_and_wait(tmp):
    run_blocked_io(tmp, "zerobase")


def test_reset_applied_by_a_handler_during_the_read(tmp):
    """The same, with main applying the reset itself during its read, at
    the hook of a signal handler: the read's wait then goes on in the
    re-made context, where the flush finds it (before: the wait still
    named the old node, and the flush showed no wait for the read)."""
    run_blocked_io(tmp, "reset", poke=True)


def report_line(tmp, prof):
    r = hk.hookit(tmp, "report", prof, check=False)
    assert r.returncode == 1 and r.stdout == "", r
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_report_after_reset_names_it(tmp):
    """`hookit report` of a profile with no call counted because of a reset
    or zerobase says so, with the command and its moment (checked against
    when the test sent it), not "no instrumented function ran"."""
    exe = hk.cc(tmp, [IO_SRC], "resetio", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    env = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt)
    ctl = {"HOOKIT_RUNTIME_DIR": rt}
    started = time.monotonic_ns()
    p = subprocess.Popen([exe, "1500"], cwd=tmp, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().split()
        assert line[:1] == ["ready"], line
        ready, pid = time.monotonic_ns(), int(line[1])
        snap = os.path.join(tmp, "s.prof")
        # before any command: the program's calls (main, read_input, worker...)
        hk.hookit(tmp, "snapshot", "-o", snap, str(pid), env=ctl)
        assert hk.hookit(tmp, "report", snap).returncode == 0
        os.unlink(snap)
        time.sleep(0.2)
        seen = {}
        for cmd in ("reset", "zerobase"):
            cmd0 = time.monotonic_ns()
            hk.hookit(tmp, "ctl", str(pid), cmd, env=ctl)
            cmd1 = time.monotonic_ns()
            hk.hookit(tmp, "snapshot", "-o", snap, str(pid), env=ctl)
            seen[cmd] = (cmd0, cmd1, report_line(tmp, snap), hk.export_json(tmp, snap))
            os.unlink(snap)
        hk.hookit(tmp, "ctl", str(pid), "flush", env=ctl)
        flushed = hk.one_profile(tmp, "resetio")
        p.communicate("go\n", timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0
    for cmd, (cmd0, cmd1, said, doc) in seen.items():
        m = re.fullmatch(r"hookit: report: (\S+): no call completed since the (\w+) ([0-9.]+) s "
                         r"after the start \(`hookit ctl (\w+)`\): the calls before it were ([^;]*)(; .*)?",
                         said)
        assert m, said
        assert m[2] == m[4] == cmd, said
        assert m[5] == ("discarded" if cmd == "reset" else "zeroed, their contexts kept"), said
        if cmd == "zerobase":
            assert m[6] == "; 2 resets and zerobases in all", said
        else:
            assert m[6] is None, said
        # the moment, after the process's start: between [cmd0 - ready, cmd1 - started]
        lo, hi = (cmd0 - ready) / 1e9, (cmd1 - started) / 1e9
        assert lo - 0.001 <= float(m[3]) <= hi + 0.001, (said, lo, hi)
        meta = doc["process"]["meta"]
        assert meta["reset_command"] == cmd and meta["reset_count"] == (1 if cmd == "reset" else 2)
        assert lo * 1e9 <= meta["reset_at_ns"] <= hi * 1e9, (meta, lo, hi)
    # the profile the process wrote itself says the same of its last command
    said = report_line(tmp, flushed)
    m = re.search(r"no call completed since the zerobase ([0-9.]+) s after the start", said)
    assert m, said
    cmd0, cmd1 = seen["zerobase"][:2]
    lo, hi = (cmd0 - ready) / 1e9, (cmd1 - started) / 1e9
    assert lo - 0.001 <= float(m[1]) <= hi + 0.001, (said, lo, hi)
