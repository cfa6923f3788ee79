"""The job's reduction at MPI_Finalize at its limits (issue 31).

When MPI itself fails ("an MPI error ... falls back to per-rank files with
one line on stderr"): a PMPI_Issend that always fails (tests/mpi/mpifail.c,
preloaded) makes every rank's send to its parent an MPI error.  Each such
rank writes its profile as a file of its own and says so in one line; rank
0 lists them missing from the job profile after the bound; the program's
output and exit status are unchanged; nothing is lost.

Its memory ("peak memory at any rank <= the merged tree plus two inputs"):
the simulation of the reduction (tests/mpi/simreduce.c) measures, level by
level, the heap's peak at the root against the level's merged tree alone
plus the child's message and its partial once read."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402
import test_mpi as base  # noqa: E402
import test_mpi_job as job  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def _mpi_error_falls_back(tmp, mpi):
    mpi.need()
    base.build(tmp, mpi.cc, "job.c", "job")
    fail = os.path.join(tmp, "mpifail.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", fail, os.path.join(HERE, "mpifail.c")], check=True)
    np = 3
    p = mpi.run(tmp, np, ["./job"], env={"HOOKIT_OUTPUT": tmp, "HOOKIT_MPI_TIMEOUT": "1", "LD_PRELOAD": fail},
                timeout=120)
    assert sorted(p.stdout.splitlines()) == sorted(f"rank {r} of {np}" for r in range(np)), p.stdout
    # ranks 1 and 2 (rank 0's children): one line each, and a file each
    lines = [ln for ln in p.stderr.splitlines() if "MPI error sending to the parent rank" in ln]
    assert sorted(re.search(r"rank (\d+):", ln).group(1) for ln in lines) == ["1", "2"], p.stderr
    for r in (1, 2):
        files = glob.glob(os.path.join(tmp, f"hookit.job.job.*.r{r}-{r}.*.prof"))
        assert len(files) == 1, os.listdir(tmp)
        doc = hk.export_json(tmp, files[0])
        assert [row["rank"] for row in doc["ranks"]] == [r] and job.all_calls(doc, "leaf") == r + 1, doc["ranks"]
    # rank 0's job profile: itself, the others missing
    files = job.job_files(tmp, "job")
    assert len(files) == 1, os.listdir(tmp)
    doc = hk.export_json(tmp, files[0])
    meta = doc["process"]["meta"]
    assert (meta["job_missing"], meta["job_missing_ranks"]) == (2, "1,2"), meta
    assert job.all_calls(doc, "leaf") == 1
    assert re.search(r"2 of 3 ranks missing \(1,2\)", p.stderr), p.stderr


def test_mpi_error_falls_back_openmpi(tmp):
    _mpi_error_falls_back(tmp, job.OPENMPI)


def test_mpi_error_falls_back_mpich(tmp):
    _mpi_error_falls_back(tmp, job.MPICH)


@hk.not_under("address", "thread", why="the heap is measured with glibc's mallinfo2, which a sanitizer's "
              "allocator replaces")
def test_reduction_memory_bound(tmp):
    """1,000 synthetic ranks of 3,000 contexts: at every level of the tree
    the root's peak is within the merged tree plus two inputs (up to the
    allocator's slack, 2%); a reduction that kept every child's message
    (a leak of one input per level) reaches 1.85 of it at the top."""
    out = os.path.join(tmp, "simreduce")
    cmd = ["gcc", "-std=gnu11", "-O1", "-Wall", "-I" + hk.ROOT, "-o", out,
           os.path.join(HERE, "simreduce.c"), os.path.join(hk.BUILD, "obj", "libprofile.a"), "-lz"]
    subprocess.run(cmd + hk.SANITIZE_FLAGS, check=True)
    p = subprocess.run([out, "1000", "--contexts", "3000"], capture_output=True, text=True, check=True)
    rows = re.findall(r"memory at level (\d+): peak ([\d.]+) MB over the start, merged tree ([\d.]+) \+ message "
                      r"([\d.]+) \+ input ([\d.]+) MB: ([\d.]+) of that", p.stdout)
    assert [int(r[0]) for r in rows] == list(range(10)), p.stdout
    for r in rows:
        tree, msg, inp = float(r[2]), float(r[3]), float(r[4])
        assert tree > 0 and msg > 0 and inp > 0, r
        assert float(r[1]) <= (tree + msg + inp) * 1.02, (r, p.stdout)
    print("peak over the bound, level by level:", [r[5] for r in rows])
