"""`hookit top --readers` (issue 32, docs/live.md "Several hosts"): the
whole of a job on several hosts, live, read by one reader per host started
by the launcher, simulated here by two and three readers on this host each
owning a share of the job's processes, under Open MPI and MPICH.  Every
refresh is one synchronised job-level snapshot of every share, reduced
over MPI; reader 0 draws the view, which has the structure of the one-host
`top --job` of the same processes (the same ranks, functions and calling
contexts, the same slowest rank and the same ranks at the min and max) and
counts between two one-host views taken before and after it.  A reader
SIGKILLed mid-run: the others end within the bound, each with one line,
and every process runs on.  A process that ends between refreshes is
dropped and the view says so.  A reader that hangs (SIGSTOP, which no
launcher notices): the same."""
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402
import test_mpi_job as job  # noqa: E402
import test_mpi_live as live  # noqa: E402

UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def ns(text):
    m = re.fullmatch(r"([\d.]+)(ns|us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * UNITS[m.group(2)]


def views(text):
    """Each view top printed, as text from its header line on."""
    return [v for v in re.split(r"(?m)^(?=hookit top: )", text) if v.startswith("hookit top: ")]


def parse(view):
    """A view's header, rows per rank, functions by name, contexts by
    (thread, path)."""
    lines = view.splitlines()
    out = {"header": lines[0], "members": {}, "functions": {}, "contexts": {}, "text": view}
    section = None
    for line in lines[1:]:
        if line.startswith("  functions over"):
            section = "functions"
        elif line.startswith("  hottest calling"):
            section = "contexts"
        elif not line.strip() or "EXCL SUM" in line:
            continue
        elif section is None and re.match(r"\s+r\d+\s+\d+\s", line):
            f = line.split()
            out["members"][f[0]] = {"pid": int(f[1]), "time": ns(f[2]), "calls": int(f[5])}
        elif section == "functions":
            f = line.split(None, 7)
            out["functions"][f[7]] = {"excl": ns(f[0]), "incl": ns(f[1]), "min": ns(f[2]), "min_at": f[3],
                                      "max": ns(f[4]), "max_at": f[5], "calls": int(f[6])}
        elif section == "contexts":
            f = line.split(None, 6)
            out["contexts"][(int(f[0]), f[6])] = {"excl": ns(f[1]), "min_at": f[3], "max_at": f[5]}
    return out


def consistent(v, nranks):
    """What holds in any view of the job: every rank once, the header's
    calls their sum, min <= max <= the sum for every function."""
    assert sorted(v["members"]) == [f"r{k}" for k in range(nranks)], v["text"]
    calls = int(re.search(r"calls (\d+)", v["header"]).group(1))
    assert calls == sum(m["calls"] for m in v["members"].values()), v["text"]
    for name, f in v["functions"].items():
        slack = 0.01 * f["incl"] + 10      # printed with two decimals
        assert f["min"] <= f["max"] + slack and f["max"] <= f["incl"] + slack, (name, f)
    assert re.search(rf"slowest rank r{nranks - 1} \(pid \d+\)", v["text"]), v["text"]
    unit = v["functions"]["F:livejob.unit()"]
    assert unit["min_at"] == "r0" and unit["max_at"] == f"r{nranks - 1}", unit


def one_host(tmp, rt, jid):
    r = hk.hookit(tmp, "top", "--once", "-i", "0.3", "--rows", "50", "--consistency=job", "--job", jid,
                  env={"HOOKIT_RUNTIME_DIR": rt})
    (v,) = views(r.stdout)
    return parse(v)


def top_readers(tmp, mpi, rt, nreaders, *args, timeout=120):
    env = dict(mpi.env)
    env.update(HOOKIT_RUNTIME_DIR=rt)
    return hk.run(tmp, mpi.launch + [mpi.np_flag, str(nreaders), hk.BIN, "top", "--readers"] + list(args),
                  env=env, timeout=timeout)


def _top_readers_job(tmp, mpi):
    p, rt, jid = live.running_job(tmp, mpi)
    nranks = live.NP
    try:
        for nreaders in (2, 3):
            before = one_host(tmp, rt, jid)
            r = top_readers(tmp, mpi, rt, nreaders, "--job", jid, "--consistency=job", "--iterations", "2",
                            "-i", "0.3", "--rows", "50")
            after = one_host(tmp, rt, jid)
            shown = views(r.stdout)
            assert len(shown) == 2, r.stdout                  # reader 0 draws, the others only serve
            assert not r.stderr.strip() or "hookit:" not in r.stderr, r.stderr
            for text in shown:
                v = parse(text)
                assert re.search(rf"processes {nranks}\b.*consistency job  readers {nreaders}  pause \S+ "
                                 r"\(the longest reader's; slowest barrier \S+\)", v["header"]), v["header"]
                consistent(v, nranks)
                for w in (before, after):
                    # the same job in the same structure
                    assert set(v["functions"]) == set(w["functions"]), (v["text"], w["text"])
                    assert set(v["contexts"]) == set(w["contexts"]), (v["text"], w["text"])
                    assert {k: m["pid"] for k, m in v["members"].items()} == \
                        {k: m["pid"] for k, m in w["members"].items()}
                # counts of one job that runs on: between the views before and after
                for k, m in v["members"].items():
                    assert before["members"][k]["calls"] <= m["calls"] <= after["members"][k]["calls"], k
                for name, f in v["functions"].items():
                    assert before["functions"][name]["calls"] <= f["calls"] <= after["functions"][name]["calls"], \
                        name
        consistent(before, nranks)
        assert p.poll() is None
    finally:
        rc, err = live.end_job(tmp, p)
    assert rc == 0, err


def test_top_readers_openmpi(tmp):
    _top_readers_job(tmp, job.OPENMPI)


def test_top_readers_mpich(tmp):
    _top_readers_job(tmp, job.MPICH)


def start_busy(tmp, rt, count, seconds="120"):
    exe = hk.cc(tmp, [os.path.join(hk.ROOT, "tests", "live", "busy.c")], "busy", libs=["-lpthread"])
    env = {"HOOKIT_RUNTIME_DIR": rt, "HOOKIT_OUTPUT": tmp}
    progs = [subprocess.Popen([exe, "1", seconds], cwd=tmp, env=hk.test_env(**env), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(count)]
    deadline = time.monotonic() + 10
    while sum(os.path.exists(os.path.join(rt, f"{p.pid}.arena")) for p in progs) < count:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)                     # the arenas made, the threads running
    return progs


def reader_rank(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(x.split(b"=", 1) for x in f.read().split(b"\0") if b"=" in x)
    except OSError:
        return None
    v = env.get(b"OMPI_COMM_WORLD_RANK", env.get(b"PMI_RANK"))
    return int(v) if v is not None else None


def readers_of(launcher):
    """This launcher's readers (not another test's), by rank."""
    return {reader_rank(int(x)): int(x) for x in os.listdir("/proc")
            if x.isdigit() and live.comm(x).strip() == "hookit" and live.descends_from(int(x), launcher.pid)}


def outer_calls(tmp, rt, progs):
    """Each process's calls of outer(), by thread-level snapshots."""
    out = []
    for p in progs:
        prof = os.path.join(tmp, f"t{p.pid}.prof")
        r = hk.hookit(tmp, "snapshot", "-o", prof, str(p.pid), env={"HOOKIT_RUNTIME_DIR": rt})
        doc = hk.export_json(tmp, prof)
        out.append(sum(n["calls"] for t in doc["threads"] for n in t["nodes"] if n["name"] == "outer"))
        assert r.returncode == 0
    return out


def wait_views(stream, count, timeout):
    """Lines of stream until count views began (each one's header)."""
    seen, text = 0, ""
    deadline = time.monotonic() + timeout
    while seen < count:
        assert time.monotonic() < deadline, text
        line = stream.readline()
        assert line, text
        text += line
        seen += line.startswith("hookit top: ")
    return text


# Both launchers end the whole job of readers when one of them dies or
# exits with an error (Hydra at once, with SIGKILL).  Told to let the
# others run (mpirun --enable-recovery, mpiexec -disable-auto-cleanup),
# they leave the readers to their own bounds, which is what is tested;
# Hydra 4.0.2's -disable-auto-cleanup does not survive a killed process
# (its proxy fails to write to it and exits, taking every reader along),
# so under MPICH a reader that hangs (SIGSTOP) is what leaves the others to
# their bounds.
KEEP_GOING = {"openmpi": ["--enable-recovery"], "mpich": ["-disable-auto-cleanup"]}
BOUND_S = 0.2 + 2 + 2          # the interval, the word's bound, a share's (HOOKIT_MPI_TIMEOUT=2)


def running_reader(pid):
    """pid is a reader still running: not gone, and not a zombie (a reader
    that ended is reaped by its launcher's proxy, which under MPICH may
    wait for the hung reader first)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z" and live.comm(pid).strip() == "hookit"
    except (OSError, IndexError):
        return False


def _reader_lost_mid_run(tmp, mpi, sig, said_by, keep_going=True):
    """Three readers over three processes; after two views reader 2 gets
    sig: readers 0 and 1 end within the bound, each of said_by with one
    line, and every process runs on (none stays paused)."""
    mpi.need()
    rt = os.path.join(tmp, "rt")
    progs = start_busy(tmp, rt, 3)
    pids = ",".join(str(p.pid) for p in progs)
    launcher = None
    err = ""
    try:
        env = dict(mpi.env)
        env.update(HOOKIT_RUNTIME_DIR=rt, HOOKIT_MPI_TIMEOUT="2")
        launcher = subprocess.Popen(mpi.launch + (KEEP_GOING[mpi.name] if keep_going else []) + [
            mpi.np_flag, "3", hk.BIN, "top", "--readers", "--pids", pids, "--consistency=job", "-i", "0.2",
            "--iterations", "10000"], cwd=tmp, env=hk.test_env(**env), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True)
        wait_views(launcher.stdout, 2, 60)
        # the views go on: read them, or reader 0 blocks on a full pipe
        threading.Thread(target=launcher.stdout.read, daemon=True).start()
        readers = readers_of(launcher)
        assert sorted(readers) == [0, 1, 2], readers
        os.kill(readers[2], sig)
        t0 = time.monotonic()
        while any(running_reader(pid) for k, pid in readers.items() if k != 2):
            assert time.monotonic() - t0 < BOUND_S + 4, "the other readers did not end"
            time.sleep(0.05)
        took = time.monotonic() - t0
        # every process runs on: none was left paused
        a = outer_calls(tmp, rt, progs)
        time.sleep(0.3)
        b = outer_calls(tmp, rt, progs)
        assert all(y > x for x, y in zip(a, b)), (a, b)
        assert all(p.poll() is None for p in progs)
    finally:
        if launcher:
            os.killpg(launcher.pid, signal.SIGKILL)
            os.killpg(launcher.pid, signal.SIGCONT)
            err = launcher.stderr.read()
            launcher.wait()
        for p in progs:
            p.terminate()
            p.communicate(timeout=30)
    said = [line for line in err.splitlines() if line.startswith("hookit: ")]
    # each reader that was left to its bounds said why, in one line
    assert sorted(int(re.search(r"top --readers: reader (\d+):", line).group(1)) for line in said) == said_by, err
    print(f"{mpi.name}: the other readers ended {took:.2f} s after reader 2 got signal {sig}")


def test_reader_killed_mid_run_openmpi(tmp):
    _reader_lost_mid_run(tmp, job.OPENMPI, signal.SIGKILL, [0, 1])


def test_reader_killed_mid_run_mpich(tmp):
    # Hydra ends the other readers at once: nobody is left to say anything
    _reader_lost_mid_run(tmp, job.MPICH, signal.SIGKILL, [], keep_going=False)


def test_reader_hung_mid_run_openmpi(tmp):
    _reader_lost_mid_run(tmp, job.OPENMPI, signal.SIGSTOP, [0, 1])


def test_reader_hung_mid_run_mpich(tmp):
    _reader_lost_mid_run(tmp, job.MPICH, signal.SIGSTOP, [0, 1])


def test_ended_process_dropped_and_said(tmp):
    """Two readers, three processes; one ends between refreshes: it is
    dropped from the view with one line naming it, the view goes on with
    the other two."""
    job.OPENMPI.need()
    rt = os.path.join(tmp, "rt")
    progs = start_busy(tmp, rt, 3)
    pids = ",".join(str(p.pid) for p in progs)
    launcher = None
    try:
        env = dict(job.OPENMPI.env)
        env.update(HOOKIT_RUNTIME_DIR=rt)
        launcher = subprocess.Popen(job.OPENMPI.launch + [
            "-np", "2", hk.BIN, "top", "--readers", "--pids", pids, "-i", "0.3", "--iterations", "6"],
            cwd=tmp, env=hk.test_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        text = wait_views(launcher.stdout, 1, 60)
        progs[1].terminate()
        progs[1].communicate(timeout=30)
        out, err = launcher.communicate(timeout=60)
        text += out
    finally:
        if launcher and launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.communicate()
        for p in progs:
            p.terminate()
            p.communicate(timeout=30)
    assert launcher.returncode == 0, err
    shown = views(text)
    assert len(shown) == 6, text
    assert "processes 3" in shown[0], shown[0]
    said = [k for k, v in enumerate(shown) if f"process {progs[1].pid} ended: dropped from the view" in v]
    assert len(said) == 1, text
    for v in shown[said[0]:]:
        rows = [line.split() for line in v.splitlines() if re.match(r"\s+\d+\s+\d+\s+\S+s\s", line)]
        assert "processes 2" in v.splitlines()[0], v
        assert sorted(int(row[1]) for row in rows) == sorted([progs[0].pid, progs[2].pid]), v


def test_two_tops_and_a_snapshot_of_readers_at_once(tmp):
    """Two `top --readers` and a `snapshot --readers`, all at the job
    level, on the same processes at once (two readers each): each pause
    word is taken by one reader at a time, so every one of them ends with
    all its views or its snapshot, whole; the processes run on."""
    job.OPENMPI.need()
    rt = os.path.join(tmp, "rt")
    progs = start_busy(tmp, rt, 2)
    pids = ",".join(str(p.pid) for p in progs)
    env = dict(job.OPENMPI.env)
    env.update(HOOKIT_RUNTIME_DIR=rt)
    base = job.OPENMPI.launch + ["-np", "2", hk.BIN]
    out = os.path.join(tmp, "s.prof")
    argvs = [base + ["top", "--readers", "--pids", pids, "--consistency=job", "--iterations", "3", "-i", "0.2"]] * 2
    argvs.append(base + ["snapshot", "--readers", "--pids", pids, "--consistency=job", "-o", out])
    try:
        clients = [subprocess.Popen(a, cwd=tmp, env=hk.test_env(**env), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for a in argvs]
        results = [c.communicate(timeout=120) + (c.returncode,) for c in clients]
        assert all(p.poll() is None for p in progs)
    finally:
        for p in progs:
            p.terminate()
            p.communicate(timeout=30)
    for o, e, rc in results:
        assert rc == 0 and "hookit:" not in e, (o, e)
    for o, e, rc in results[:2]:
        shown = views(o)
        assert len(shown) == 3 and all("processes 2" in v.splitlines()[0] for v in shown), o
    assert "2 processes" in results[2][0] and "2 readers" in results[2][0], results[2]
    for t in hk.export_json(tmp, out)["threads"]:
        hk.check_tree_consistent(t)


def test_another_user_is_refused_by_every_reader(tmp):
    """Readers started by another user (nobody) over root's processes: each
    is refused as a one-host reader would be, says so in one line and the
    launcher ends at once with status 1; the processes are never paused."""
    if os.geteuid() != 0 or not hk.have("setpriv"):
        hk.skip("needs root and setpriv to act as a second user")
    job.MPICH.need()
    rt = os.path.join(tmp, "rt")
    progs = start_busy(tmp, rt, 2)
    pids = ",".join(str(p.pid) for p in progs)
    try:
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "mpiexec.mpich", "-n", "2",
                            hk.BIN, "top", "--readers", "--once", "--consistency=job", "--pids", pids],
                           cwd="/", env=hk.test_env(HOOKIT_RUNTIME_DIR=rt, HOME="/tmp"), capture_output=True,
                           text=True, timeout=60)
        assert all(p.poll() is None for p in progs)
    finally:
        for p in progs:
            p.terminate()
            p.communicate(timeout=30)
    said = [line for line in r.stderr.splitlines() if line.startswith("hookit: ")]
    assert r.returncode == 1 and "hookit top:" not in r.stdout, r
    assert len(said) == 2 and all(f"process {progs[0].pid} belongs to user root" in line and "refused" in line
                                  for line in said), r.stderr
