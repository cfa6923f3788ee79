"""MPI (issue 8): real 4-rank jobs under Open MPI's mpirun, C and Fortran,
linked with -lhookit and under `hookit run`; MPI frames with known call
counts and bytes; hookit merge across ranks checked through the JSON
(min/max rank, imbalance, per-rank summary, per-function table); a rank
killed by a signal.  Skipped (with the reason) only when mpirun cannot run
a 1-rank job here.  Settings for a sandbox (docs/mpi.md): run as root,
oversubscribe, shared memory only."""
import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NP = 4
UNIT_NS = 80_000_000          # ranks.c: rank r sleeps (r + 1) * 80 ms in work()
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(NP)]
# Shared memory and loopback only (no network interfaces needed), no ssh.
# These tests are about each rank's own profile: HOOKIT_MPI_OUTPUT=ranks
# (the job profile reduced at MPI_Finalize: test_mpi_job.py).
MPI_ENV = {
    # Every call timed: the MPI frames' and work's times are checked.
    "JPROFOPTS": "timer=exact",
    "HOOKIT_MPI_OUTPUT": "ranks",
    "OMPI_MCA_btl": "self,vader",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_plm_rsh_agent": "false",
}


@functools.lru_cache(maxsize=None)
def _mpi_problem():
    for tool in ("mpirun", "mpicc", "mpifort"):
        if not shutil.which(tool):
            return f"{tool} not installed (make deps installs openmpi-bin, libopenmpi-dev, gfortran)"
    try:
        p = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "1", "true"],
                           capture_output=True, text=True, timeout=60,
                           env=hk.test_env(**MPI_ENV))
    except subprocess.TimeoutExpired:
        return "mpirun -np 1 true did not finish in 60 s"
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return "mpirun cannot run here: " + (lines[0] if lines else f"exit {p.returncode}")
    return None


def need_mpi():
    why = _mpi_problem()
    if why:
        hk.skip(why)


def build(tmp, compiler, source, out, link=True):
    cmd = [compiler, "-g", "-O1", "-finstrument-functions", "-o", os.path.join(tmp, out),
           os.path.join(HERE, source)]
    if link:
        cmd += ["-L" + hk.LIB, "-lhookit", "-Wl,-rpath," + hk.LIB] + hk.HOOKIT_LINK_TAIL
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stderr}"
    return os.path.join(tmp, out)


def mpirun(tmp, argv, check=True, env=None, timeout=90):
    e = dict(MPI_ENV)
    e.update(env or {})
    return hk.run(tmp, MPIRUN + argv, env=e, check=check, timeout=timeout)


def rank_files(tmp, exe):
    """{rank: path} of the per-rank profiles, checking the file names."""
    out = {}
    for path in glob.glob(os.path.join(tmp, f"hookit.{exe}.*.prof")):
        m = re.fullmatch(rf"hookit\.{re.escape(exe)}\.r(\d+)\.(\d+)\.prof", os.path.basename(path))
        assert m, f"not a per-rank profile name: {path}"
        assert int(m.group(1)) not in out, f"two profiles for rank {m.group(1)}"
        out[int(m.group(1))] = path
    return out


def wait_rank_files(tmp, exe, count, seconds=15):
    """Profiles written while dying may land a moment after mpirun returns
    (a helper process writes them): poll up to a deadline."""
    deadline = time.monotonic() + seconds
    while True:
        files = rank_files(tmp, exe)
        if len(files) >= count or time.monotonic() > deadline:
            return files
        time.sleep(0.05)


def mpi_frames(thread, parent):
    """{name: node} of the MPI frames directly under the function parent."""
    n = hk.node(thread, parent)
    return {c["name"]: c for c in n["children"] if c["name"].startswith("MPI:")}


FINISHED = {"MPI:MPI_Init": (1, 0), "MPI:MPI_Finalize": (1, 0)}
# terminated while waiting in main's MPI_Barrier for the rank that died
TERMINATED = {"MPI:MPI_Init": (1, 0), "MPI:MPI_Barrier": (1, 0)}


def check_c_rank(doc, rank, module="libmpi.so.40", in_main=FINISHED):
    pr = doc["process"]
    assert pr["rank"] == rank and pr["size"] == NP, pr
    t = hk.thread_of(doc, 0)
    hk.check_tree_consistent(t)
    frames = mpi_frames(t, "exchange")
    assert set(frames) == {"MPI:MPI_Send", "MPI:MPI_Recv", "MPI:MPI_Allreduce", "MPI:MPI_Barrier"}, \
        frames.keys()
    expect = {"MPI:MPI_Send": (3, 24000), "MPI:MPI_Recv": (3, 24000),
              "MPI:MPI_Allreduce": (1, 40), "MPI:MPI_Barrier": (1, 0)}
    for name, (calls, nbytes) in expect.items():
        f = frames[name]
        assert (f["calls"], f["mpi_bytes"]) == (calls, nbytes), (rank, name, f)
        assert f["module"].startswith(module.split(".so")[0]), f
        assert f["children"] == [] and f["incl_ns"] > 0, f
    life = {n["name"]: n for n in hk.node(t, "main")["children"] if n["name"].startswith("MPI:")}
    assert {k: (n["calls"], n["mpi_bytes"]) for k, n in life.items()} == in_main, life
    work = hk.node(t, "main", "work")
    assert work["incl_ns"] >= (rank + 1) * UNIT_NS, (rank, work["incl_ns"])
    assert all(not n["name"].startswith("MPI:") for _, n in hk.walk(hk.node(t, "work")["children"]))


def test_c_linked_four_ranks_and_merge(tmp):
    """mpirun -np 4 ./app (linked with -lhookit): one profile per rank with
    rank and size, MPI frames with exact counts and bytes under exchange();
    hookit merge: min/max rank, imbalance, per-rank summary, functions."""
    need_mpi()
    build(tmp, "mpicc", "ranks.c", "ranks")
    mpirun(tmp, ["./ranks"])
    files = rank_files(tmp, "ranks")
    assert sorted(files) == list(range(NP)), files
    for rank, path in files.items():
        check_c_rank(hk.export_json(tmp, path), rank)

    job = os.path.join(tmp, "job.prof")
    hk.hookit(tmp, "merge", "-o", job, *sorted(files.values()))
    doc = hk.export_json(tmp, job)
    t = hk.thread_of(doc, 0)
    work = hk.node(t, "main", "work")
    assert work["calls"] == NP and work["inputs"] == NP, work
    assert (work["min_incl_rank"], work["max_incl_rank"]) == (0, 3), work
    # rank r: (r + 1) units; mean 2.5 units, max 4: imbalance 1.6
    assert UNIT_NS <= work["min_incl_ns"] < 3 * UNIT_NS, work
    assert 4 * UNIT_NS <= work["max_incl_ns"] < 6 * UNIT_NS, work
    assert 130 <= work["imbalance_pct"] <= 175, work
    step = hk.node(t, "work", "step")
    assert (step["calls"], step["min_calls"], step["max_calls"], step["mean_calls"]) == \
        (100, 10, 40, 25), step
    assert work["incl_ns"] == sum(
        hk.node(hk.thread_of(hk.export_json(tmp, files[r]), 0), "main", "work")["incl_ns"]
        for r in range(NP))
    send = hk.node(t, "exchange", "MPI:MPI_Send")
    assert (send["calls"], send["mpi_bytes"], send["min_calls"], send["max_calls"]) == \
        (3 * NP, 24000 * NP, 3, 3), send

    ranks = {r["rank"]: r for r in doc["ranks"]}
    assert sorted(ranks) == list(range(NP)), doc["ranks"]
    for r, row in ranks.items():
        assert (row["mpi_calls"], row["mpi_bytes"], row["end"]) == (8, 48040, "exit"), row
        assert 0 < row["mpi_ns"] < row["time_ns"], row
        assert row["pid"] == hk.export_json(tmp, files[r])["process"]["pid"]
    funcs = {(f["name"], f["module"]): f for f in doc["functions"]}
    w = funcs[("work", "ranks")]
    assert (w["min_rank"], w["max_rank"], w["inputs"]) == (0, 3, NP), w
    assert w["max_incl_ns"] == work["max_incl_ns"] and 130 <= w["imbalance_pct"] <= 175, w
    s = [f for (name, _), f in funcs.items() if name == "MPI:MPI_Send"]
    assert len(s) == 1 and s[0]["calls"] == 12 and s[0]["mpi_bytes"] == 96000, s

    rep = hk.hookit(tmp, "report", job).stdout
    assert re.search(r"LV\s+CALLS\s+SUM\s+MIN\s+@R\s+MEAN\s+MAX\s+@R\s+IMB", rep), rep
    assert "== per rank" in rep and "== functions over ranks" in rep, rep
    line = next(l for l in rep.splitlines() if l.rstrip().endswith("F:ranks.work()"))
    cells = line.split()
    assert cells[4] == "0" and cells[7] == "3" and 1.3 <= float(cells[8]) <= 1.75, line
    for r in range(NP):
        assert re.search(rf"^\s+{r}\s+{ranks[r]['pid']}\s.*\s8\s+48040\s+exit$", rep, re.M), rep


def test_hookit_run_under_mpirun(tmp):
    """mpirun -np 4 hookit run -- ./app (not linked with hookit): the same
    per-rank profiles and MPI frames, through the preloaded libhookit."""
    need_mpi()
    build(tmp, "mpicc", "ranks.c", "ranks_run", link=False)
    mpirun(tmp, [hk.BIN, "run", "-o", tmp, "--", "./ranks_run"])
    files = rank_files(tmp, "ranks_run")
    assert sorted(files) == list(range(NP)), os.listdir(tmp)
    for rank, path in files.items():
        check_c_rank(hk.export_json(tmp, path), rank)


def test_fortran_four_ranks(tmp):
    """A Fortran program (mpif.h, mpi_send_ manglings): per-rank profiles,
    MPI frames named after the C functions, bytes from the Fortran type
    sizes, under the calling subroutine."""
    need_mpi()
    build(tmp, "mpifort", "fortran.f90", "fmpi")
    mpirun(tmp, ["./fmpi"])
    files = rank_files(tmp, "fmpi")
    assert sorted(files) == list(range(NP)), os.listdir(tmp)
    for rank, path in files.items():
        doc = hk.export_json(tmp, path)
        assert (doc["process"]["rank"], doc["process"]["size"]) == (rank, NP)
        t = hk.thread_of(doc, 0)
        frames = mpi_frames(t, "ring_")
        expect = {"MPI:MPI_Send": (2, 8000), "MPI:MPI_Recv": (2, 8000),
                  "MPI:MPI_Allreduce": (1, 16), "MPI:MPI_Barrier": (1, 0)}
        assert {k: (f["calls"], f["mpi_bytes"]) for k, f in frames.items()} == expect, frames
        assert all(f["module"].startswith("libmpi_mpifh") for f in frames.values()), frames
        assert hk.node(t, "compute_")["calls"] == 1
        assert (hk.node(t, "MPI:MPI_Init")["calls"], hk.node(t, "MPI:MPI_Finalize")["calls"]) == (1, 1)
    job = os.path.join(tmp, "job.prof")
    hk.hookit(tmp, "merge", "-o", job, *(files[r] for r in range(NP)))
    doc = hk.export_json(tmp, job)
    spin = hk.node(hk.thread_of(doc, 0), "compute_", "spin_")
    assert (spin["calls"], spin["min_calls"], spin["max_calls"], spin["mean_calls"]) == \
        (50, 5, 20, 12), spin
    assert [r["rank"] for r in doc["ranks"]] == list(range(NP)), doc["ranks"]
    assert next(f for f in doc["functions"] if f["name"] == "spin_")["calls"] == 50


CALLS = {   # calls.c: parent function -> {MPI frame: bytes}, one call each
    "p2p": {"MPI_Isend": 400, "MPI_Irecv": 400, "MPI_Waitall": 0, "MPI_Sendrecv": 400},
    "coll": {"MPI_Bcast": 128, "MPI_Reduce": 32, "MPI_Gather": 8, "MPI_Scatter": 12,
             "MPI_Allgather": 20, "MPI_Alltoall": 48, "MPI_Allreduce": 24, "MPI_Ibarrier": 0,
             "MPI_Wait": 0},
    "fileio": {"MPI_File_open": 0, "MPI_File_write_at": 256, "MPI_File_read_at": 256,
               "MPI_File_close": 0},
}


def test_every_kind_of_call(tmp):
    """Point-to-point (blocking and not), waits, collectives (MPI_IN_PLACE
    included, a non-blocking one), MPI-IO: one frame each under the function
    that made the call, with the bytes of docs/mpi.md's table."""
    need_mpi()
    build(tmp, "mpicc", "calls.c", "calls")
    mpirun(tmp, ["./calls", tmp])
    files = rank_files(tmp, "calls")
    assert sorted(files) == list(range(NP)), os.listdir(tmp)
    for rank, path in files.items():
        t = hk.thread_of(hk.export_json(tmp, path), 0)
        for parent, expect in CALLS.items():
            got = {name[4:]: (f["calls"], f["mpi_bytes"]) for name, f in mpi_frames(t, parent).items()}
            assert got == {k: (1, b) for k, b in expect.items()}, (rank, parent, got)
    assert os.path.getsize(os.path.join(tmp, "calls.dat")) == NP * 256


def test_stacks_with_another_pmpi_tool(tmp):
    """Another PMPI tool linked after libhookit still sees every call (hookit
    calls the next MPI_Send, the tool's, which calls PMPI_Send); linked
    before, the program still works and the tool counts its calls."""
    need_mpi()
    tool = os.path.join(tmp, "libpmpitool.so")
    p = subprocess.run(["mpicc", "-shared", "-fPIC", "-O1", "-o", tool,
                        os.path.join(HERE, "pmpi_tool.c")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    link_tool = ["-L" + tmp, "-Wl,--no-as-needed", "-lpmpitool", "-Wl,--as-needed", "-Wl,-rpath," + tmp]
    hookit_lib = ["-L" + hk.LIB, "-lhookit", "-Wl,-rpath," + hk.LIB] + hk.HOOKIT_LINK_TAIL
    for exe, libs, hookit_sees in (("after", hookit_lib + link_tool, True),
                                   ("before", link_tool + hookit_lib, False)):
        cmd = ["mpicc", "-g", "-O1", "-finstrument-functions", "-o", os.path.join(tmp, exe),
               os.path.join(HERE, "ranks.c")] + libs
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        assert p.returncode == 0, p.stderr
        run = mpirun(tmp, ["./" + exe])
        assert run.stderr.count("pmpi_tool: 3 MPI_Send") == NP, (exe, run.stderr)
        files = rank_files(tmp, exe)
        assert sorted(files) == list(range(NP)), os.listdir(tmp)
        for rank, path in files.items():
            frames = mpi_frames(hk.thread_of(hk.export_json(tmp, path), 0), "exchange")
            if hookit_sees:
                send = frames["MPI:MPI_Send"]
                assert (send["calls"], send["mpi_bytes"], send["module"]) == \
                    (3, 24000, "libmpi.so.40"), send
            else:
                assert "MPI:MPI_Send" not in frames and frames["MPI:MPI_Recv"]["calls"] == 3, frames


def test_rank_is_the_world_rank_when_self_is_asked_first(tmp):
    """The program's first MPI_Comm_rank is on MPI_COMM_SELF (0 everywhere):
    the files and metadata still carry each rank's MPI_COMM_WORLD rank."""
    need_mpi()
    build(tmp, "mpicc", "self_first.c", "self_first")
    out = mpirun(tmp, ["./self_first"]).stdout
    files = rank_files(tmp, "self_first")
    assert sorted(files) == list(range(NP)), (os.listdir(tmp), out)
    for rank, path in files.items():
        pr = hk.export_json(tmp, path)["process"]
        assert (pr["rank"], pr["size"]) == (rank, NP), pr


def _killed_rank(tmp, exe, sig):
    build(tmp, "mpicc", "ranks.c", exe)
    # Open MPI sends SIGTERM, then SIGKILL to the rest as soon as one rank
    # is gone: a grace period lets the profiles be written (docs/mpi.md).
    p = mpirun(tmp, ["./" + exe, "die", "1", str(sig)], check=False,
               env={"OMPI_MCA_odls_base_sigkill_timeout": "3"})
    assert p.returncode != 0, p
    return p


def test_rank_killed_by_sigkill_others_terminated(tmp):
    """Rank 1 dies by SIGKILL (no profile can be written); the launcher
    then terminates the others, whose profiles are written on SIGTERM."""
    need_mpi()
    _killed_rank(tmp, "killed9", 9)
    files = wait_rank_files(tmp, "killed9", NP - 1)
    assert sorted(files) == [0, 2, 3], os.listdir(tmp)
    for rank, path in files.items():
        doc = hk.export_json(tmp, path)
        meta = doc["process"]["meta"]
        assert meta["end"] == "signal" and meta["signal"].startswith("15 "), meta
        check_c_rank(doc, rank, in_main=TERMINATED)


def test_rank_crashes_others_terminated(tmp):
    """Rank 1 dies by SIGSEGV: its own profile says so; the others,
    terminated by the launcher, still write theirs; merge names the ends."""
    need_mpi()
    _killed_rank(tmp, "crash11", 11)
    files = wait_rank_files(tmp, "crash11", NP)
    assert sorted(files) == list(range(NP)), os.listdir(tmp)
    ends = {}
    for rank, path in files.items():
        doc = hk.export_json(tmp, path)
        ends[rank] = doc["process"]["meta"]["signal"].split()[0]
        check_c_rank(doc, rank, in_main={"MPI:MPI_Init": (1, 0)} if rank == 1 else TERMINATED)
    assert ends == {0: "15", 1: "11", 2: "15", 3: "15"}, ends
    job = os.path.join(tmp, "job.prof")
    hk.hookit(tmp, "merge", "-o", job, *files.values())
    rows = hk.export_json(tmp, job)["ranks"]
    assert [r["end"] for r in sorted(rows, key=lambda r: r["rank"])] == ["signal"] * NP, rows


def _genranks(tmp):
    out = os.path.join(tmp, "genranks")
    cmd = ["gcc", "-std=gnu11", "-g", "-O1", "-Wall", "-I" + hk.ROOT, "-o", out,
           os.path.join(HERE, "genranks.c"), os.path.join(hk.BUILD, "obj", "libprofile.a"), "-lz"] + hk.SANITIZE_FLAGS
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


def test_merge_generated_ranks_exact(tmp):
    """hookit merge of 16 generated rank profiles with known numbers
    (genranks.c): exact sums, min/mean/max, ranks of min and max (a context
    missing from a rank counts as 0 there), imbalance, summed mpi_bytes."""
    gen = _genranks(tmp)
    d = os.path.join(tmp, "ranks")
    os.mkdir(d)
    n = 16
    subprocess.run([gen, d, str(n), "3"], check=True)
    job = os.path.join(tmp, "job.prof")
    # in rank order (a tie goes to the first input given)
    inputs = [os.path.join(d, f"hookit.app.r{r}.{1000 + r}.prof") for r in range(n)]
    hk.hookit(tmp, "merge", "-o", job, *inputs)
    doc = hk.export_json(tmp, job)
    t = hk.thread_of(doc, 0)
    solve = hk.node(t, "main", "solve")
    ms = 1_000_000
    assert (solve["incl_ns"], solve["min_incl_ns"], solve["max_incl_ns"], solve["mean_incl_ns"]) == \
        (ms * n * (n + 1) // 2, ms, n * ms, ms * (n + 1) // 2), solve
    assert (solve["min_incl_rank"], solve["max_incl_rank"]) == (0, n - 1), solve
    assert solve["imbalance_pct"] == round(100 * n / ((n + 1) / 2)), solve
    mpi = hk.node(t, "solve", "MPI:MPI_Allreduce")
    assert (mpi["calls"], mpi["mpi_bytes"]) == (10 * n, 80 * n * (n + 1) // 2), mpi
    assert (mpi["min_incl_rank"], mpi["max_incl_rank"]) == (n - 1, 0), mpi
    sk = hk.node(t, "main", "skipped")
    assert (sk["inputs"], sk["min_incl_ns"], sk["min_incl_rank"], sk["max_incl_rank"]) == \
        (n // 4, 0, 0, 3), sk
    rows = sorted(doc["ranks"], key=lambda r: r["rank"])
    assert [r["mpi_ns"] for r in rows] == [(n - r) * 100000 for r in range(n)], rows
    assert [r["mpi_bytes"] for r in rows] == [80 * (r + 1) for r in range(n)], rows
    f = {x["name"]: x for x in doc["functions"]}
    assert (f["skipped"]["min_rank"], f["skipped"]["max_rank"], f["skipped"]["imbalance_pct"]) == \
        (0, 3, 400), f["skipped"]
    assert f["MPI:MPI_Allreduce"]["mpi_bytes"] == 80 * n * (n + 1) // 2
