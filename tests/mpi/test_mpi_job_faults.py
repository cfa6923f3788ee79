"""The job's reduction at MPI_Finalize when MPI itself fails (issue 31, "an
MPI error ... falls back to per-rank files with one line on stderr"): a
PMPI_Issend that always fails (tests/mpi/mpifail.c, preloaded) makes every
rank's send to its parent an MPI error.  Each such rank writes its profile
as a file of its own and says so in one line; rank 0 lists them missing
from the job profile after the bound; the program's output and exit
status are unchanged; nothing is lost."""
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
