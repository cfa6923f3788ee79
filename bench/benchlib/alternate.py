"""Runs the rows of one table alternately, several rounds, so a slow moment
of the (shared) machine hits every row alike; each run in a fresh directory
that is removed once measured (uftrace writes ~32 bytes per call)."""
import os
import shutil
import sys
import tempfile

from .measure import RunFailed, run_copies, run_once

# Rows of other tools: when one fails on a workload (uftrace aborts on
# Lua's longjmp-heavy interpreter), the table goes on without it and says so.
COMPARISONS = ("uftrace", "callgrind")


def progress(text):
    """Where the bench is, on a terminal only (never in logs or tests)."""
    if sys.stderr.isatty():
        print(f"{text:100}", end="\r", file=sys.stderr, flush=True)


def run_alternating(rows, args_of, reps, label):
    """rows: Row list; args_of(row) -> the program's arguments;
    returns {row.key: [run, ...]}.  The order rotates every round so no row
    always runs right after the same neighbour.  A comparison row that
    fails is removed from rows (in place) with a note; any other failure
    ends the bench."""
    runs = {r.key: [] for r in rows}
    work_root = tempfile.mkdtemp(prefix="hookit-bench-")
    try:
        for rep in range(reps):
            order = rows[rep % len(rows):] + rows[:rep % len(rows)]
            for row in order:
                if row not in rows:
                    continue
                work = os.path.join(work_root, f"{row.key}-{rep}")
                os.mkdir(work)
                progress(f"  {label}: round {rep + 1}/{reps}: {row.label}")
                try:
                    if row.copies > 1:
                        runs[row.key].append(run_copies(row, args_of(row), work, row.copies))
                    else:
                        runs[row.key].append(run_once(row, args_of(row), work))
                except RunFailed as e:
                    if row.kind not in COMPARISONS:
                        raise
                    last = [ln for ln in str(e).splitlines() if ln.strip()][-1:]
                    print(f"note: {row.label} failed on this workload, left out of the table: "
                          f"{last[0][:200] if last else '?'}")
                    rows.remove(row)
                    del runs[row.key]
                shutil.rmtree(work, ignore_errors=True)
    finally:
        progress("")
        shutil.rmtree(work_root, ignore_errors=True)
    return runs
