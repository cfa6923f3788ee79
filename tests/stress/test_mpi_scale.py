"""`make stress TESTS=mpi_scale`: the job profile of issue 31 at 16, 64 and
128 ranks on this machine (--oversubscribe), Open MPI and MPICH: one file,
every rank in it with exact call counts, none missing; each run's figures
(the reduction's times, MPI_Finalize's) go to $BUILD/stress-figures.jsonl
for docs/mpi.md."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
import hk  # noqa: E402
import stress  # noqa: E402
import test_mpi  # noqa: E402
import test_mpi_job as job  # noqa: E402


def scale(tmp, mpi, np):
    mpi.need()
    test_mpi.build(tmp, mpi.cc, "job.c", "job")
    d = os.path.join(tmp, f"np{np}")
    os.mkdir(d)
    p = mpi.run(tmp, np, ["./job", "threads", "1"], env={"HOOKIT_OUTPUT": d}, timeout=900)
    assert len(p.stdout.splitlines()) == np, p.stdout
    assert len(os.listdir(d)) == 1, os.listdir(d)
    doc = hk.export_json(tmp, job.job_files(d, "job")[0])
    meta = doc["process"]["meta"]
    assert (meta["merged_ranks"], meta["job_ranks"], meta["job_missing"]) == (np, np, 0), meta
    t = hk.thread_of(doc, 0)
    assert hk.node(t, "main", "compute", "leaf")["calls"] == np * (np + 1) // 2
    assert job.all_calls(doc, "in_thread") == np
    assert sorted(r["rank"] for r in doc["ranks"]) == list(range(np))
    stress.record(f"mpi_job_{mpi.name}_{np}", {k: v for k, v in meta.items() if k.startswith("job_")})


def test_openmpi_16_ranks(tmp):
    scale(tmp, job.OPENMPI, 16)


def test_openmpi_64_ranks(tmp):
    scale(tmp, job.OPENMPI, 64)


def test_openmpi_128_ranks(tmp):
    scale(tmp, job.OPENMPI, 128)


def test_mpich_16_ranks(tmp):
    scale(tmp, job.MPICH, 16)


def test_mpich_64_ranks(tmp):
    scale(tmp, job.MPICH, 64)


def test_mpich_128_ranks(tmp):
    scale(tmp, job.MPICH, 128)
