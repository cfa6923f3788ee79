"""A live view of an MPI job (issue 32, docs/live.md "Several processes"
and "Several hosts"): each rank marks its job in its arena at MPI_Init,
from Open MPI's or MPICH's (Hydra) launcher; `hookit snapshot --job ID` and
`hookit top --job ID` find every rank of it on this host, the MPI frames
named, the slowest rank named; the job still ends as it would and writes
its job profile.  Several hosts, simulated: two readers started by each
launcher (`mpirun -np 2 hookit snapshot --readers ...`), each with a share
of the processes, paused, copied and released together over MPI and
reduced into one job snapshot; across two readers a job-level snapshot is
still one moment (tests/live/pingpong.c); a reader killed while the two
hold a pause holds nobody beyond the bound."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402
import test_mpi as base  # noqa: E402
import test_mpi_job as job  # noqa: E402

NP = 3


def start_ready(tmp, argv, env):
    """argv started, once it printed "ready"."""
    p = subprocess.Popen(argv, cwd=tmp, env=hk.test_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    assert line == "ready\n", (line, p.poll())
    return p


def start_job(tmp, mpi, rt):
    """livejob on NP ranks under mpi's launcher, once rank 0 said ready."""
    base.build(tmp, mpi.cc, "livejob.c", "livejob")
    env = dict(mpi.env)
    # the default timer: sampled CPU time, which the ranks' order keeps on a
    # loaded machine (every call's wall-clock time counts a descheduled
    # rank's waits as its work)
    env.update(HOOKIT_RUNTIME_DIR=rt, HOOKIT_OUTPUT=tmp, JPROFOPTS="")
    p = start_ready(tmp, mpi.launch + [mpi.np_flag, str(NP), "./livejob", "120"], env)
    time.sleep(1.5)                     # rounds enough for the ranks' times to differ
    return p


def end_job(tmp, p):
    open(os.path.join(tmp, "stop"), "w").close()
    out, err = p.communicate(timeout=120)
    return p.returncode, err


def job_id(tmp, rt):
    """The id the registry's ranks carry, from the message of a wrong one."""
    r = hk.hookit(tmp, "snapshot", "--job", "no-such-job", check=False, env={"HOOKIT_RUNTIME_DIR": rt})
    assert r.returncode == 1, r
    m = re.search(r"the jobs there: (\S+) \((\d+) ranks here, of (\d+)\)", r.stderr)
    assert m and m.group(2) == m.group(3) == str(NP), r.stderr
    return m.group(1)


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().split("\0")
    except OSError:
        return []


def descends_from(pid, root):
    """Whether root is pid or one of its ancestors."""
    for _ in range(64):
        if pid == root:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read()
    except OSError:
        return ""              # gone meanwhile


def running_job(tmp, mpi):
    """livejob running under mpi's launcher: (Popen, registry, job id)."""
    mpi.need()
    rt = os.path.join(tmp, "rt")
    p = start_job(tmp, mpi, rt)
    try:
        return p, rt, job_id(tmp, rt)
    except BaseException:
        end_job(tmp, p)
        raise


def _live_job(tmp, mpi):
    p, rt, jid = running_job(tmp, mpi)
    try:
        if mpi.name == "mpich":
            # Hydra's id: mpiexec's control port, as every host's proxy has it
            ports = set()
            for x in os.listdir("/proc"):
                if x.isdigit() and comm(x).startswith("hydra_pmi_prox"):
                    args = cmdline(x)
                    if "--control-port" in args:
                        ports.add(args[args.index("--control-port") + 1])
            assert jid.startswith("hydra-") and jid[6:] in ports, (jid, ports)
        out = os.path.join(tmp, "job.prof")
        r = hk.hookit(tmp, "snapshot", "--job", jid, "--consistency=job", "-o", out,
                      env={"HOOKIT_RUNTIME_DIR": rt})
        assert f"{NP} processes" in r.stdout and "consistency job" in r.stdout, r.stdout
        doc = hk.export_json(tmp, out)
        meta = doc["process"]["meta"]
        assert meta["merged_ranks"] == NP and meta["live_consistency"] == "job", meta
        assert sorted(row["rank"] for row in doc["ranks"]) == list(range(NP)), doc["ranks"]
        t = hk.thread_of(doc, 0)
        barrier = hk.node(t, "main", "MPI:MPI_Barrier")     # named from the arena
        assert barrier["module"] == mpi.module and barrier["calls"] >= NP, barrier
        unit = hk.node(t, "main", "work", "unit")
        assert unit["max_incl_rank"] == NP - 1 and unit["min_incl_rank"] == 0, unit

        r = hk.hookit(tmp, "top", "--once", "-i", "0.5", "--job", jid, env={"HOOKIT_RUNTIME_DIR": rt})
        assert re.search(rf"slowest rank r{NP - 1} \(pid \d+\)", r.stdout), r.stdout
        rows = [line.split() for line in r.stdout.splitlines() if re.match(r"\s+r\d+\s+\d+", line)]
        assert sorted(row[0] for row in rows) == [f"r{k}" for k in range(NP)], r.stdout
        fn = [line for line in r.stdout.splitlines() if line.endswith(" F:livejob.unit()") and ">" not in line]
        assert len(fn) == 1 and fn[0].split()[3] == "r0" and fn[0].split()[5] == f"r{NP - 1}", r.stdout
        assert p.poll() is None
    finally:
        rc, err = end_job(tmp, p)
    # the job went on as it would: its exit status, its job profile
    assert rc == 0, err
    assert len(job.job_files(tmp, "livejob")) == 1, os.listdir(tmp)


def test_live_job_openmpi(tmp):
    _live_job(tmp, job.OPENMPI)


def test_live_job_mpich(tmp):
    _live_job(tmp, job.MPICH)


def readers(tmp, mpi, rt, *args, nreaders=2):
    """hookit snapshot --readers under mpi's launcher."""
    env = dict(mpi.env)
    env.update(HOOKIT_RUNTIME_DIR=rt)
    return hk.run(tmp, mpi.launch + [mpi.np_flag, str(nreaders), hk.BIN, "snapshot", "--readers"] + list(args),
                  env=env, timeout=120)


def _readers_job(tmp, mpi):
    p, rt, jid = running_job(tmp, mpi)
    try:
        out = os.path.join(tmp, "readers.prof")
        r = readers(tmp, mpi, rt, "--job", jid, "--consistency=job", "-o", out)
        assert re.search(rf"wrote {re.escape(out)}: {NP} processes, \d+ threads, 2 readers, consistency job",
                         r.stdout), r.stdout
        doc = hk.export_json(tmp, out)
        meta = doc["process"]["meta"]
        assert meta["live_readers"] == 2 and meta["live_set_processes"] == NP, meta
        assert meta["merged_ranks"] == NP, meta
        assert sorted(row["rank"] for row in doc["ranks"]) == list(range(NP)), doc["ranks"]
        rows = meta["live_pauses"].splitlines()[1:]
        assert sorted(int(x.split("\t")[1]) for x in rows) == list(range(NP)), rows
        assert all(int(x.split("\t")[2]) > 0 for x in rows), rows        # every process paused
        hk.node(hk.thread_of(doc, 0), "main", "MPI:MPI_Barrier")
        assert p.poll() is None
    finally:
        rc, err = end_job(tmp, p)
    assert rc == 0, err


def test_readers_openmpi(tmp):
    _readers_job(tmp, job.OPENMPI)


def test_readers_mpich(tmp):
    _readers_job(tmp, job.MPICH)


def _readers_one_moment(tmp, mpi, rounds):
    """Two processes handing a token back and forth, one per reader: every
    job-level snapshot shows pings - pongs of 0 or 1, as one reader does."""
    mpi.need()
    rt = os.path.join(tmp, "rt")
    exe = hk.cc(tmp, [os.path.join(hk.ROOT, "tests", "live", "pingpong.c")], "pingpong")
    p = start_ready(tmp, [exe, "120"], {"HOOKIT_RUNTIME_DIR": rt, "HOOKIT_OUTPUT": tmp})
    diffs = []
    try:
        for i in range(rounds):
            out = os.path.join(tmp, f"pp{i}.prof")
            readers(tmp, mpi, rt, "--family", str(p.pid), "--consistency=job", "-o", out)
            doc = hk.export_json(tmp, out)
            meta = doc["process"]["meta"]
            assert meta["live_readers"] == 2 and meta["live_set_processes"] == 2, meta
            calls = {}
            for t in doc["threads"]:
                for n in t["nodes"]:
                    calls[n["name"]] = calls.get(n["name"], 0) + n["calls"]
            diffs.append(calls["ping"] - calls["pong"])
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert all(d in (0, 1) for d in diffs), diffs


def test_readers_one_moment_openmpi(tmp):
    _readers_one_moment(tmp, job.OPENMPI, 6)


def test_readers_one_moment_mpich(tmp):
    _readers_one_moment(tmp, job.MPICH, 4)


def test_reader_killed_on_one_host(tmp):
    """Two readers hold a job-level pause of two processes (one each, as on
    two hosts) and one of them is SIGKILLed: every thread of both processes
    goes on within the bound (0.5 s), whatever the other reader and the
    launcher then do."""
    job.OPENMPI.need()
    rt = os.path.join(tmp, "rt")
    exe = hk.cc(tmp, [os.path.join(hk.ROOT, "tests", "live", "busy.c")], "busy", libs=["-lpthread"])
    env = {"HOOKIT_RUNTIME_DIR": rt, "HOOKIT_OUTPUT": tmp}
    progs = [subprocess.Popen([exe, "1", "120"], cwd=tmp, env=hk.test_env(**env), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    pids = ",".join(str(p.pid) for p in progs)
    launcher = None
    try:
        deadline = time.monotonic() + 10
        while sum(os.path.exists(os.path.join(rt, f"{p.pid}.arena")) for p in progs) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)
        renv = dict(job.OPENMPI.env)
        renv.update(HOOKIT_RUNTIME_DIR=rt, HOOKIT_LIVE_HOLD_MS="20000")
        launcher = subprocess.Popen(job.OPENMPI.launch + ["-np", "2", hk.BIN, "snapshot", "--readers", "--pids", pids,
                                                          "--consistency=job", "-o", os.path.join(tmp, "x.prof")],
                                    cwd=tmp, env=hk.test_env(**renv), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = launcher.stderr.readline()
        assert "holding the pause" in line, line
        readers = [int(x) for x in os.listdir("/proc") if x.isdigit() and comm(x).strip() == "hookit"
                   and descends_from(int(x), launcher.pid)]     # this launcher's, not another test's
        assert readers, "no reader process"
        os.kill(readers[0], signal.SIGKILL)
        time.sleep(0.6)                 # past the bound

        def outer_calls():
            """Each process's calls of outer(), by thread-level snapshots."""
            out = []
            for p in progs:
                prof = os.path.join(tmp, f"t{p.pid}.prof")
                r = hk.hookit(tmp, "snapshot", "-o", prof, str(p.pid), env={"HOOKIT_RUNTIME_DIR": rt})
                assert r.returncode == 0, r.stderr
                doc = hk.export_json(tmp, prof)
                out.append(sum(n["calls"] for t in doc["threads"] for n in t["nodes"] if n["name"] == "outer"))
            return out

        a = outer_calls()
        time.sleep(0.3)
        b = outer_calls()
        assert all(y > x for x, y in zip(a, b)), (a, b)  # both processes run again
        assert all(p.poll() is None for p in progs)
    finally:
        if launcher:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.communicate()
        for p in progs:
            p.terminate()
            p.communicate(timeout=30)
