"""One profile per MPI job (issue 31, docs/mpi.md "One profile per job"):
the ranks' profiles reduced at MPI_Finalize over MPI, rank 0 writing
hookit.<exe>.job.<jobid>.prof.  Under Open MPI's mpirun (MPICH's: see
test_mpich_*), 1, 2, 3 and 7 ranks, threads inside ranks (MPI_Init_thread),
MPMD, Fortran, HOOKIT_MPI_OUTPUT=job|ranks|both, the job profile against
`hookit merge` of the ranks' own profiles node by node, a rank that died
(listed as missing, the others reduced), a program that never calls
MPI_Finalize (per-rank files, one line), the program's output and exit
status unchanged.  The 16-, 64- and 128-rank runs are in
tests/stress/test_mpi_scale.py (make stress TESTS=mpi_scale)."""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402
import test_mpi as base  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# The environment of test_mpi.py without its HOOKIT_MPI_OUTPUT=ranks.
ENV = {k: v for k, v in base.MPI_ENV.items() if k != "HOOKIT_MPI_OUTPUT"}
LAUNCH = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


class MPI:
    """One MPI library: its compilers and its launcher (Debian's names)."""

    def __init__(self, name, cc, fc, launch, np_flag, env, module):
        self.name, self.cc, self.fc, self.launch = name, cc, fc, launch
        self.np_flag, self.env, self.module = np_flag, env, module

    def need(self):
        for tool in (self.cc, self.fc, self.launch[0]):
            if not shutil.which(tool):
                hk.skip(f"{tool} not installed (make deps installs {self.name})")
        if self.name == "openmpi":
            base.need_mpi()

    def run(self, tmp, np, argv, env=None, check=True, timeout=120, extra=()):
        e = dict(self.env)
        e.update(env or {})
        return hk.run(tmp, self.launch + list(extra) + [self.np_flag, str(np)] + argv, env=e,
                      check=check, timeout=timeout)


OPENMPI = MPI("openmpi", "mpicc.openmpi", "mpifort.openmpi", ["mpirun.openmpi"] + LAUNCH[1:],
              "-np", ENV, "libmpi.so.40")
MPICH = MPI("mpich", "mpicc.mpich", "mpifort.mpich", ["mpiexec.mpich"], "-n", {}, "libmpich.so.12")


def mpirun(tmp, np, argv, env=None, check=True, timeout=120, extra=()):
    return OPENMPI.run(tmp, np, argv, env=env, check=check, timeout=timeout, extra=extra)


def job_files(tmp, exe):
    """The job profiles hookit.EXE.job.ID.prof (not a subtree's .rA-B.PID.prof)."""
    pattern = rf"hookit\.{re.escape(exe)}\.job\.(?!.*\.r\d+-\d+\.)[\w.-]+\.prof"
    return sorted(p for p in glob.glob(os.path.join(tmp, f"hookit.{exe}.job.*.prof"))
                  if re.fullmatch(pattern, os.path.basename(p)))


def own_files(tmp, exe):
    """{rank: path} of the ranks' own profiles."""
    out = {}
    for p in glob.glob(os.path.join(tmp, f"hookit.{exe}.r*.prof")):
        m = re.fullmatch(rf"hookit\.{re.escape(exe)}\.r(\d+)\.\d+\.prof", os.path.basename(p))
        if m:
            out[int(m.group(1))] = p
    return out


def all_calls(doc, name):
    """Calls of function name over every thread of a profile."""
    return sum(n["calls"] for t in doc["threads"] for n in t["nodes"] if n["name"] == name)


def _job_profile_1_2_3_7_ranks(tmp, mpi):
    """The default: one profile for the job and none per rank; exact sums
    and spread over ranks; every rank in the table, ending at MPI_Finalize;
    the reduction's and MPI_Finalize's times in the metadata; the program's
    own output unchanged."""
    mpi.need()
    base.build(tmp, mpi.cc, "job.c", "job")
    for np in (1, 2, 3, 7):
        d = os.path.join(tmp, f"np{np}")
        os.mkdir(d)
        p = mpi.run(tmp, np, ["./job"], env={"HOOKIT_OUTPUT": d})
        assert sorted(p.stdout.splitlines()) == sorted(f"rank {r} of {np}" for r in range(np)), p.stdout
        files = os.listdir(d)
        assert len(files) == 1 and re.fullmatch(r"hookit\.job\.job\.[\w.-]+\.prof", files[0]), files
        doc = hk.export_json(tmp, os.path.join(d, files[0]))
        meta = doc["process"]["meta"]
        assert meta["merged_ranks"] == np and meta["job_ranks"] == np and meta["job_missing"] == 0, meta
        assert meta["end"] == "MPI_Finalize", meta
        assert meta["job_mpi_finalize_ns"] >= meta["job_reduce_ns"] > 0, meta
        t = hk.thread_of(doc, 0)
        leaf = hk.node(t, "main", "compute", "leaf")
        assert (leaf["calls"], leaf["min_calls"], leaf["max_calls"], leaf["inputs"]) == \
            (np * (np + 1) // 2, 1, np, np), leaf
        barrier = hk.node(t, "main", "MPI:MPI_Barrier")
        assert barrier["calls"] == np and barrier["module"] == mpi.module, barrier
        assert not [n for n in t["nodes"] if n["name"] == "MPI:MPI_Finalize"], "taken before it"
        rows = sorted(doc["ranks"], key=lambda r: r["rank"])
        assert [(r["rank"], r["end"]) for r in rows] == [(r, "MPI_Finalize") for r in range(np)], rows


def test_job_profile_1_2_3_7_ranks(tmp):
    _job_profile_1_2_3_7_ranks(tmp, OPENMPI)


def test_mpich_job_profile_1_2_3_7_ranks(tmp):
    _job_profile_1_2_3_7_ranks(tmp, MPICH)


def _job_agrees_with_merge_of_rank_files(tmp, mpi):
    """HOOKIT_MPI_OUTPUT=both, 5 ranks with 2 threads each (MPI_Init_thread):
    each rank's own profile is what went into the job, and `hookit merge`
    of them in rank order gives the job profile node by node (every column),
    the same per-function table and the same per-rank rows (but the file)."""
    mpi.need()
    base.build(tmp, mpi.cc, "job.c", "job")
    np = 5
    mpi.run(tmp, np, ["./job", "threads", "2"], env={"HOOKIT_OUTPUT": tmp, "HOOKIT_MPI_OUTPUT": "both"})
    jobs = job_files(tmp, "job")
    ranks = own_files(tmp, "job")
    assert len(jobs) == 1 and sorted(ranks) == list(range(np)), os.listdir(tmp)
    merged = os.path.join(tmp, "merged.prof")
    hk.hookit(tmp, "merge", "-o", merged, *[ranks[r] for r in range(np)])
    job, mer = hk.export_json(tmp, jobs[0]), hk.export_json(tmp, merged)
    assert len(job["threads"]) == len(mer["threads"]) >= 3
    for a, b in zip(job["threads"], mer["threads"]):
        assert (a["index"], a["nodes"]) == (b["index"], b["nodes"]), a["index"]
    assert job["functions"] == mer["functions"]
    strip = lambda rows: [{k: v for k, v in r.items() if k != "file"} for r in rows]  # noqa: E731
    assert strip(job["ranks"]) == strip(mer["ranks"])
    assert all_calls(job, "in_thread") == np * (1 + 2), "thread i calls it i + 1 times"
    assert all_calls(job, "leaf") == np * (np + 1) // 2
    for key in ("merged_inputs", "merged_ranks", "hostname", "end"):
        assert job["process"]["meta"][key] == mer["process"]["meta"][key], key


def test_job_agrees_with_merge_of_rank_files(tmp):
    _job_agrees_with_merge_of_rank_files(tmp, OPENMPI)


def test_mpich_job_agrees_with_merge_of_rank_files(tmp):
    _job_agrees_with_merge_of_rank_files(tmp, MPICH)


def test_ranks_mode_and_a_bad_value(tmp):
    """HOOKIT_MPI_OUTPUT=ranks: every rank's own profile, no job profile;
    a bad value: one line naming the variable, and the job profile."""
    base.need_mpi()
    base.build(tmp, "mpicc", "job.c", "job")
    d = os.path.join(tmp, "ranks")
    os.mkdir(d)
    mpirun(tmp, 3, ["./job"], env={"HOOKIT_OUTPUT": d, "HOOKIT_MPI_OUTPUT": "ranks"})
    assert sorted(re.sub(r"\.\d+\.prof$", "", f) for f in os.listdir(d)) == \
        ["hookit.job.r0", "hookit.job.r1", "hookit.job.r2"], os.listdir(d)
    d = os.path.join(tmp, "bad")
    os.mkdir(d)
    p = mpirun(tmp, 2, ["./job"], env={"HOOKIT_OUTPUT": d, "HOOKIT_MPI_OUTPUT": "all"})
    lines = [ln for ln in p.stderr.splitlines() if "HOOKIT_MPI_OUTPUT" in ln]
    assert len(lines) == 2 and "job, ranks or both" in lines[0], p.stderr   # one per rank
    assert len(job_files(d, "job")) == 1 and len(os.listdir(d)) == 1, os.listdir(d)


def test_output_and_exit_status_unchanged(tmp):
    """The program's output and exit status are those of the same program
    without hookit, also with code after MPI_Finalize (not in the job
    profile: it was taken at MPI_Finalize)."""
    base.need_mpi()
    base.build(tmp, "mpicc", "job.c", "job")
    plain = os.path.join(tmp, "plain")
    subprocess.run(["mpicc", "-O1", "-o", plain, os.path.join(HERE, "job.c")], check=True)
    for args in (["after"], ["after", "status", "7"]):
        a = mpirun(tmp, 3, ["./job"] + args, env={"HOOKIT_OUTPUT": tmp}, check=False)
        b = mpirun(tmp, 3, ["./plain"] + args, check=False)
        assert a.returncode == b.returncode, (args, a.returncode, b.returncode)
        assert sorted(a.stdout.splitlines()) == sorted(b.stdout.splitlines()), (a.stdout, b.stdout)
    assert a.returncode == 7
    doc = hk.export_json(tmp, job_files(tmp, "job")[0])
    assert all_calls(doc, "after_finalize") == 0 and all_calls(doc, "leaf") == 6


def test_mpmd_ranks_with_different_trees(tmp):
    """mpirun -np 2 ./a : -np 2 ./b: one job profile with both trees; a call
    path of ranks 2-3 only has its minimum (0) at rank 0, where it is absent."""
    base.need_mpi()
    base.build(tmp, "mpicc", "job.c", "job")
    subprocess.run(["mpicc", "-g", "-O1", "-finstrument-functions", "-DVARIANT_B", "-o",
                    os.path.join(tmp, "job_b"), os.path.join(HERE, "job.c"), "-L" + hk.LIB,
                    "-lhookit", "-Wl,-rpath," + hk.LIB] + hk.HOOKIT_LINK_TAIL, check=True)
    e = dict(ENV, HOOKIT_OUTPUT=tmp)
    hk.run(tmp, LAUNCH + ["-np", "2", "./job", ":", "-np", "2", "./job_b"], env=e, timeout=120)
    jobs = job_files(tmp, "job")
    assert len(jobs) == 1 and not glob.glob(os.path.join(tmp, "hookit.job_b.*")), os.listdir(tmp)
    t = hk.thread_of(hk.export_json(tmp, jobs[0]), 0)
    a, b = hk.node(t, "main", "variant_a"), hk.node(t, "main", "variant_b")
    assert (a["inputs"], a["calls"], a["max_incl_rank"] in (0, 1), a["min_incl_rank"]) == (2, 2, True, 2), a
    assert (b["inputs"], b["calls"], b["max_incl_rank"] in (2, 3), b["min_incl_rank"]) == (2, 2, True, 0), b
    # functions match by name and module: each executable's compute() is its own
    assert hk.node(t, "main", "compute", "leaf")["calls"] == 1 + 2
    assert sum(n["calls"] for n in t["nodes"] if n["name"] == "leaf") == 1 + 2 + 3 + 4


def _fortran_job(tmp, mpi):
    """A Fortran program (mpi_init_, mpi_finalize_): one job profile."""
    mpi.need()
    base.build(tmp, mpi.fc, "fortran.f90", "fmpi")
    mpi.run(tmp, 3, ["./fmpi"], env={"HOOKIT_OUTPUT": tmp})
    jobs = job_files(tmp, "fmpi")
    assert len(jobs) == 1 and len(glob.glob(os.path.join(tmp, "hookit.*.prof"))) == 1, os.listdir(tmp)
    doc = hk.export_json(tmp, jobs[0])
    assert doc["process"]["meta"]["merged_ranks"] == 3
    assert sorted(r["rank"] for r in doc["ranks"]) == [0, 1, 2]


def test_fortran_job(tmp):
    _fortran_job(tmp, OPENMPI)


def test_mpich_fortran_job(tmp):
    _fortran_job(tmp, MPICH)


def test_mpich_constants_are_its_header(tmp):
    """The handles mpi_comm.c uses without a header are the library's own:
    MPICH's numbers as its mpi.h defines them, Open MPI's objects as its
    mpi.h names them."""
    MPICH.need()
    src = open(os.path.join(hk.ROOT, "profile", "mpi_comm.c")).read()
    m = re.search(r"world = \(mh\)\(uintptr_t\)(0x[0-9a-f]+);\s*byte_type = \(mh\)\(uintptr_t\)"
                  r"(0x[0-9a-f]+);\s*errors_return = \(mh\)\(uintptr_t\)(0x[0-9a-f]+);", src)
    assert m, "mpi_comm.c's MPICH constants"
    prog = os.path.join(tmp, "c.c")
    with open(prog, "w") as f:
        f.write("#include <mpi.h>\n#include <stdio.h>\nint main(void) {\n"
                "printf(\"%#x %#x %#x\\n\", (unsigned)MPI_COMM_WORLD, (unsigned)MPI_BYTE,"
                " (unsigned)MPI_ERRORS_RETURN);\nreturn 0;\n}\n")
    subprocess.run([MPICH.cc, "-o", os.path.join(tmp, "c"), prog], check=True)
    out = subprocess.run([os.path.join(tmp, "c")], capture_output=True, text=True, check=True).stdout
    assert out.split() == list(m.groups()), (out, m.groups())
    OPENMPI.need()
    with open(prog, "w") as f:
        f.write("#include <mpi.h>\n#include <stdio.h>\nint main(void) {\n"
                "printf(\"%d\\n\", MPI_COMM_WORLD == &ompi_mpi_comm_world && MPI_BYTE =="
                " (MPI_Datatype)&ompi_mpi_byte && MPI_ERRORS_RETURN == &ompi_mpi_errors_return);\n"
                "return 0;\n}\n")
    subprocess.run([OPENMPI.cc, "-o", os.path.join(tmp, "o"), prog], check=True)
    assert subprocess.run([os.path.join(tmp, "o")], capture_output=True, text=True).stdout == "1\n"
    for name in ("ompi_mpi_comm_world", "ompi_mpi_byte", "ompi_mpi_errors_return"):
        assert re.search(rf'find\("{name}"\)', src), name


def test_never_finalized_falls_back_to_rank_files(tmp):
    """A program that never calls MPI_Finalize: every rank writes its own
    profile at exit, and says so in one line."""
    base.need_mpi()
    base.build(tmp, "mpicc", "job.c", "job")
    p = mpirun(tmp, 2, ["./job", "nofinalize"], env={"HOOKIT_OUTPUT": tmp}, check=False)
    files = base.wait_rank_files(tmp, "job", 2)
    assert sorted(files) == [0, 1] and not job_files(tmp, "job"), os.listdir(tmp)
    lines = [ln for ln in p.stderr.splitlines() if "without MPI_Finalize" in ln]
    assert len(lines) == 2, p.stderr


def _wait_for(pred, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def test_dead_rank_listed_missing(tmp):
    """8 ranks, rank 2 SIGKILLed before MPI_Finalize and the launcher told
    to let the others run (--enable-recovery): rank 0 waits for its child
    2 at most 2 x HOOKIT_MPI_TIMEOUT, then writes the job profile with ranks
    2-3 missing (3's parent was 2); rank 3, whose parent never took its
    profile, writes it as a file of its own.  Nothing is lost: every live
    rank is in one of the two.  (Open MPI's own MPI_Finalize then waits for
    the dead rank forever: the test ends the job.)"""
    base.need_mpi()
    base.build(tmp, "mpicc", "job.c", "job")
    e = hk.test_env(**ENV, HOOKIT_OUTPUT=tmp, HOOKIT_MPI_TIMEOUT="1")
    proc = subprocess.Popen(LAUNCH + ["--enable-recovery", "-np", "8", "./job", "die", "2"], cwd=tmp,
                            env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    t0 = time.monotonic()
    try:
        part = lambda: glob.glob(os.path.join(tmp, "hookit.job.job.*.r3-3.*.prof"))  # noqa: E731
        ok = _wait_for(lambda: job_files(tmp, "job") and part(), 40)
        took = time.monotonic() - t0
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    assert ok, (os.listdir(tmp), err)
    assert took < 20, took
    doc = hk.export_json(tmp, job_files(tmp, "job")[0])
    meta = doc["process"]["meta"]
    assert (meta["job_missing"], meta["job_missing_ranks"]) == (2, "2-3"), meta
    assert sorted(r["rank"] for r in doc["ranks"]) == [0, 1, 4, 5, 6, 7]
    assert all_calls(doc, "leaf") == sum(r + 1 for r in (0, 1, 4, 5, 6, 7))
    sub = hk.export_json(tmp, part()[0])
    assert [r["rank"] for r in sub["ranks"]] == [3] and all_calls(sub, "leaf") == 4
    assert re.search(r"2 of 8 ranks missing \(2-3\)", err), err
    assert re.search(r"rank 3: the parent rank did not take the profile in time", err), err


def test_merge_in_threads_same_bits(tmp):
    """hookit merge -j N reduces shares of the inputs along the binomial tree
    with the partial merges the job's reduction uses: for any N and any
    order of the inputs (some given twice: exact ties; call paths absent
    from some ranks), the very same bytes as one thread."""
    import random
    gen = base._genranks(tmp)
    d = os.path.join(tmp, "ranks")
    os.mkdir(d)
    subprocess.run([gen, d, "16", "3"], check=True)
    files = sorted(glob.glob(os.path.join(d, "*.prof")))
    rng = random.Random(31)
    orders = [files, files[::-1], files[:2] + files[8:9] + files[2:8] + files[9:]]
    orders += [rng.sample(files, len(files)) + rng.sample(files, 5) for _ in range(3)]
    for k, inputs in enumerate(orders):
        one = os.path.join(tmp, f"one{k}.prof")
        hk.hookit(tmp, "merge", "-o", one, *inputs)
        want = open(one, "rb").read()
        for jobs in (2, 3, 4, 7, len(inputs)):
            for flags in ([], ["-m"]):
                out = os.path.join(tmp, f"j{k}.{jobs}.prof")
                if flags:
                    hk.hookit(tmp, "merge", "-o", one, *flags, *inputs)
                    want = open(one, "rb").read()
                hk.hookit(tmp, "merge", "-j", str(jobs), "-o", out, *flags, *inputs)
                assert open(out, "rb").read() == want, (k, jobs, flags)
            hk.hookit(tmp, "merge", "-o", one, *inputs)
            want = open(one, "rb").read()


def test_simulated_reduction(tmp):
    """simreduce.c runs the reduction over synthetic ranks in one process:
    with --exact, every partial of a 24-rank tree made and the root's the
    sequential merge's byte for byte; level by level, the model's table and
    critical path for 100 ranks (docs/mpi.md has the 100,000-rank run)."""
    out = os.path.join(tmp, "simreduce")
    cmd = ["gcc", "-std=gnu11", "-O1", "-Wall", "-I" + hk.ROOT, "-o", out,
           os.path.join(HERE, "simreduce.c"), os.path.join(hk.BUILD, "obj", "libprofile.a"), "-lz"]
    subprocess.run(cmd + hk.SANITIZE_FLAGS, check=True)
    p = subprocess.run([out, "24", "--exact", "--contexts", "600", "--variants", "4"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and "is byte for byte the sequential merge" in p.stdout, p.stdout + p.stderr
    p = subprocess.run([out, "100", "--contexts", "600"], capture_output=True, text=True, check=True)
    rows = [ln.split() for ln in p.stdout.splitlines() if re.match(r"\s+\d+\s+\d+\s", ln)]
    assert [int(r[1]) for r in rows] == [1, 2, 4, 8, 16, 32, 64], p.stdout
    assert all(int(r[2]) > 0 for r in rows) and int(rows[-1][2]) > int(rows[0][2]), p.stdout
    assert re.search(r"critical path: \d+\.\d+ s", p.stdout), p.stdout


def test_world_not_the_launchers_job_falls_back(tmp):
    """A world that is not the launcher's job (here a singleton MPICH
    process told by Slurm's variables that the job has 4 tasks): no
    reduction, the rank writes its own profile, one line says why."""
    MPICH.need()
    base.build(tmp, MPICH.cc, "job.c", "job")
    p = hk.run(tmp, ["./job"], env={"HOOKIT_OUTPUT": tmp, "SLURM_PROCID": "0", "SLURM_NTASKS": "4"},
               timeout=60)
    assert p.stdout == "rank 0 of 1\n", p.stdout
    assert sorted(own_files(tmp, "job")) == [0] and not job_files(tmp, "job"), os.listdir(tmp)
    lines = [ln for ln in p.stderr.splitlines() if "no job profile" in ln]
    assert len(lines) == 1 and "MPI_COMM_WORLD has 1 ranks, the launcher's job 4" in lines[0], p.stderr


def test_job_profile_under_hookit_run(tmp):
    """mpirun -np 3 hookit run -o DIR -- ./app (not linked with hookit):
    the preloaded libhookit reduces the same way."""
    base.need_mpi()
    base.build(tmp, "mpicc", "job.c", "job_run", link=False)
    d = os.path.join(tmp, "out")
    mpirun(tmp, 3, [hk.BIN, "run", "-o", d, "--", "./job_run"])
    assert len(os.listdir(d)) == 1 and len(job_files(d, "job_run")) == 1, os.listdir(d)
    doc = hk.export_json(tmp, job_files(d, "job_run")[0])
    assert doc["process"]["meta"]["merged_ranks"] == 3 and all_calls(doc, "leaf") == 6
