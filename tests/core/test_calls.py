"""End to end: tests/progs/calls.c linked with -lhookit, built by GCC and
Clang, run, exported to JSON and compared node by node with the tree the
source implies (nested calls, direct and mutual recursion, calls through
function pointers, static functions, wall time)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calls_tree  # noqa: E402
import hk  # noqa: E402

MS = 1_000_000


def build(tmp, compiler, flags=()):
    return hk.cc(tmp, ["calls.c"], "calls", compiler=compiler, flags=flags)


def check_calls_profile(tmp, doc, pid=None, leave_through_exit=False, exe="calls"):
    """Everything the profile of one run of `calls` must say."""
    proc = doc["process"]
    assert os.path.basename(proc["exe"]) == exe, proc
    if pid is not None:
        assert proc["pid"] == pid, (proc["pid"], pid)
    assert len(doc["threads"]) == 1, [(t["index"], t["tid"]) for t in doc["threads"]]
    t = hk.thread_of(doc, 0)
    if pid is not None:
        assert t["tid"] == pid, (t["tid"], pid)
    assert [r["name"] for r in t["roots"]] == ["main"], [r["name"] for r in t["roots"]]
    hk.assert_tree(t, calls_tree.expected(leave_through_exit))
    hk.check_tree_consistent(t)
    for p, n in hk.walk(t["roots"]):
        assert n["module"] == exe, (p, n["module"])

    busy = hk.node(t, "main", "busy_wait_ms")
    # It spins for 50 ms of CPU time inside itself: inclusive and exclusive
    # time both see it.  Timed (timer=exact), a little less than 50 ms would
    # mean a clock off; sampled (the default), the estimate is whole samples
    # taken at the kernel's tick (4 ms here, 10 ms with HZ=100), and a
    # sample due as the function ends may go to its caller: two ticks short
    # at most.
    # Under qemu-user (make check-arm64) a sampled signal lands only between
    # translated blocks: the spin's samples are emulation's, not checked.
    exact = doc["process"]["meta"]["timer"] == "exact"
    least = 45 if exact else 0 if hk.TARGET else 30
    assert least * MS <= busy["excl_ns"] <= busy["incl_ns"] < 5000 * MS, busy
    nap = hk.node(t, "main", "nap_ms")
    # Asleep, not on the CPU: the time still counts (sampled: as the
    # measured time of the blocking call, wait_ns).
    assert 19 * MS <= nap["excl_ns"] <= nap["incl_ns"] < 5000 * MS, nap
    period = doc["process"]["meta"].get("sample_period_ns", 0)
    assert exact or nap["excl_ns"] - nap["wait_ns"] == nap["samples"] * period, nap
    main = hk.node(t, "main")
    assert main["incl_ns"] >= busy["incl_ns"] + nap["incl_ns"], (main, busy, nap)
    # A leaf's time is all its own.
    for p, n in hk.walk(t["roots"]):
        if not n["children"]:
            assert n["incl_ns"] == n["excl_ns"], (p, n)
    # main's own time is small: the loops in it call functions at once.
    assert main["excl_ns"] < main["incl_ns"] / 2, main
    return t


def run_and_check(tmp, compiler, flags=(), env=None):
    exe = build(tmp, compiler, flags)
    rc, out, err, pid = hk.popen_run(tmp, [exe], env=env)
    assert rc == calls_tree.STATUS, (rc, out, err)
    assert out == calls_tree.STDOUT, out
    assert hk.hookit_lines(err) == [], err   # nothing to say on a normal run
    prof = hk.one_profile(tmp, "calls")
    assert os.path.basename(prof) == f"hookit.calls.{pid}.prof", prof
    doc = hk.export_json(tmp, prof)
    assert doc["process"]["ppid"] == os.getpid(), doc["process"]
    assert doc["process"]["argv"] == [exe], doc["process"]["argv"]
    check_calls_profile(tmp, doc, pid)


def test_calls_gcc(tmp):
    run_and_check(tmp, "gcc")


def test_calls_clang(tmp):
    run_and_check(tmp, "clang")


def test_calls_gcc_O2_timed(tmp):
    """Every call timed (timer=exact): wall time to the clock's precision."""
    run_and_check(tmp, "gcc", flags=["-O2"], env={"JPROFOPTS": "timer=exact"})


def test_calls_clang_O2_timed(tmp):
    run_and_check(tmp, "clang", flags=["-O2"], env={"JPROFOPTS": "timer=exact"})


def test_calls_pie_and_nopie(tmp):
    """Addresses resolve the same in a position-dependent executable."""
    exe = build(tmp, "gcc", flags=["-no-pie", "-fno-pie"])
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert rc == calls_tree.STATUS and out == calls_tree.STDOUT, (rc, out, err)
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")), pid)


def test_exit_from_nested_frame(tmp):
    """exit(3) from main -> die_here: the frames still open are in the
    profile, the exit status and stdout are the program's."""
    exe = build(tmp, "gcc")
    rc, out, err, pid = hk.popen_run(tmp, [exe, "exit"])
    assert rc == calls_tree.STATUS, (rc, out, err)
    assert out == calls_tree.EXIT_STDOUT, out
    doc = hk.export_json(tmp, hk.one_profile(tmp, "calls"))
    assert doc["process"]["argv"] == [exe, "exit"], doc["process"]["argv"]
    check_calls_profile(tmp, doc, pid, leave_through_exit=True)


def test_output_directory(tmp):
    """HOOKIT_OUTPUT picks the directory; unset, the current directory."""
    exe = build(tmp, "gcc")
    out_dir = os.path.join(tmp, "out")
    os.mkdir(out_dir)
    hk.run(tmp, [exe], env={"HOOKIT_OUTPUT": out_dir}, check=False)
    assert hk.profiles(tmp) == [], os.listdir(tmp)
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(out_dir, "calls")))

    cwd = os.path.join(tmp, "cwd")
    os.mkdir(cwd)
    hk.run(cwd, [exe], env={"HOOKIT_OUTPUT": None}, check=False)
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(cwd, "calls")))


def test_two_runs_two_profiles(tmp):
    """Each process writes its own file; a second run never overwrites."""
    exe = build(tmp, "gcc")
    pids = set()
    for _ in range(2):
        rc, out, err, pid = hk.popen_run(tmp, [exe])
        assert rc == calls_tree.STATUS, err
        pids.add(pid)
    profs = hk.profiles(tmp, "calls")
    assert sorted(os.path.basename(p) for p in profs) == \
        sorted(f"hookit.calls.{pid}.prof" for pid in pids), profs
    for p in profs:
        check_calls_profile(tmp, hk.export_json(tmp, p))


def test_report_of_a_real_profile(tmp):
    """`hookit report`, tree and --flat, agree with the exact tree: each
    node as (LV, CALLS, F:module.function()), each function's total calls."""
    import collections
    exe = build(tmp, "gcc")
    hk.run(tmp, [exe], check=False)
    prof = hk.one_profile(tmp, "calls")

    lines = hk.hookit(tmp, "report", prof).stdout.splitlines()
    head = [i for i, l in enumerate(lines) if l.split()[:2] == ["LV", "CALLS"]]
    assert len(head) == 1, lines[:5]
    got = collections.Counter()
    for l in lines[head[0] + 1:]:
        if not l.strip():
            continue
        f = l.split()
        got[(int(f[0]), int(f[1]), f[-1])] += 1
    want = collections.Counter((len(p) - 1, c, f"F:calls.{p[-1]}()")
                               for p, c in calls_tree.expected().items())
    assert got == want, (sorted((got - want).items()), sorted((want - got).items()))

    lines = hk.hookit(tmp, "report", "--flat", prof).stdout.splitlines()
    head = [i for i, l in enumerate(lines) if "calls" in l.split() and "name" in l.split()]
    assert len(head) == 1, lines[:5]
    cols = lines[head[0]].split()
    flat = {}
    for l in lines[head[0] + 1:]:
        if l.strip():
            f = l.split()
            flat[f[-1]] = int(f[cols.index("calls")])
    assert flat == {f"F:calls.{n}()": c for n, c in calls_tree.flat_counts().items()}, flat


def test_output_dir_is_fixed_at_start(tmp):
    """A program that changes directory: the default output directory (the
    current one) and a relative HOOKIT_OUTPUT mean the directory at start."""
    exe = hk.cc(tmp, ["chdir.c"], "chdir")
    start = os.path.join(tmp, "start")
    elsewhere = os.path.join(tmp, "elsewhere")
    os.makedirs(os.path.join(start, "out"))
    os.mkdir(elsewhere)
    for env, where in (({"HOOKIT_OUTPUT": None}, start),
                       ({"HOOKIT_OUTPUT": "out"}, os.path.join(start, "out"))):
        rc, out, err, pid = hk.popen_run(start, [exe, elsewhere], env=env)
        assert (rc, out, err) == (0, "chdir: done\n", ""), (env, rc, out, err)
        assert os.listdir(elsewhere) == [], (env, os.listdir(elsewhere))
        prof = hk.one_profile(where, "chdir")
        t = hk.thread_of(hk.export_json(tmp, prof), 0)
        hk.assert_tree(t, {("main",): 1, ("main", "work"): 1})
        os.unlink(prof)


def test_argv_round_trips_through_json(tmp):
    """Arguments with quotes, backslashes, control characters and non-ASCII
    text come back exactly; bytes that are not UTF-8 still give valid JSON."""
    import json
    import subprocess
    exe = build(tmp, "gcc")
    args = ['quote"back\\slash', "new\nline\ttab", "caf\u00e9 \u2713", "\x01\x1f", ""]
    rc, out, err, pid = hk.popen_run(tmp, [exe] + args)
    assert (rc, out) == (calls_tree.STATUS, calls_tree.STDOUT), (rc, out, err)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "calls"))
    assert doc["process"]["argv"] == [exe] + args, doc["process"]["argv"]

    raw = os.path.join(tmp, "raw")
    os.mkdir(raw)
    p = subprocess.run([exe.encode(), b"\xff\xfe bad utf-8 \xc3"], cwd=raw,
                       env=hk.test_env(HOOKIT_OUTPUT=raw), capture_output=True)
    assert p.returncode == calls_tree.STATUS, p
    text = hk.hookit(tmp, "export", "--format=json", hk.one_profile(raw, "calls")).stdout
    argv = json.loads(text)["process"]["argv"]
    assert len(argv) == 2 and "bad utf-8" in argv[1], argv


def test_fork_gives_one_profile_per_process(tmp):
    exe = hk.cc(tmp, ["forks.c"], "forks")
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert rc == 0 and err == "", (rc, out, err)
    child = int(out.split()[2])
    assert out == f"forks: child {child} exited 4\n", out
    profs = hk.profiles(tmp, "forks")
    assert sorted(profs) == sorted(os.path.join(tmp, f"hookit.forks.{p}.prof")
                                   for p in (pid, child)), profs
    parent_doc = hk.export_json(tmp, os.path.join(tmp, f"hookit.forks.{pid}.prof"))
    child_doc = hk.export_json(tmp, os.path.join(tmp, f"hookit.forks.{child}.prof"))
    assert child_doc["process"]["ppid"] == pid, child_doc["process"]
    hk.assert_tree(hk.thread_of(parent_doc, 0),
                   {("main",): 1, ("main", "before_fork"): 1, ("main", "in_parent"): 2})
    hk.assert_tree(hk.thread_of(child_doc, 0), {("main",): 0, ("main", "in_child"): 3})
    for d in (parent_doc, child_doc):
        assert len(d["threads"]) == 1, d["threads"]
        hk.check_tree_consistent(hk.thread_of(d, 0))


def test_death_by_signal(tmp):
    """SIGTERM, SIGSEGV, SIGABRT from nested frames: the process dies by the
    same signal, and its profile holds main -> outer -> inner."""
    import signal
    exe = hk.cc(tmp, ["die.c"], "die")
    for how, sig in (("term", signal.SIGTERM), ("segv", signal.SIGSEGV),
                     ("abort", signal.SIGABRT)):
        rc, out, err, pid = hk.popen_run(tmp, [exe, how])
        assert (rc, out) == (-sig, f"die: {how}\n"), (how, rc, out, err)
        prof = os.path.join(tmp, f"hookit.die.{pid}.prof")
        assert os.path.exists(prof), (how, os.listdir(tmp))
        t = hk.thread_of(hk.export_json(tmp, prof), 0)
        hk.assert_tree(t, {("main",): 1, ("main", "outer"): 1, ("main", "outer", "inner"): 1})
        hk.check_tree_consistent(t)
