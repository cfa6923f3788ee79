"""Settings of `make bench`, all from the environment (see docs/performance.md)."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("HOOKIT_BUILD_DIR") or os.path.join(ROOT, "build"))
LIB = os.path.join(BUILD, "lib")
HOOKIT = os.path.join(BUILD, "bin", "hookit")
COUNT_PLUGIN = os.path.join(BUILD, "examples", "libcount.so")
# Binaries and the SQLite download live here (kept between runs as a cache).
OUT = os.path.abspath(os.environ.get("BENCH_OUT") or os.path.join(BUILD, "bench"))
CC = os.environ.get("CC") or "gcc"
if CC == "cc":                      # make's default CC: say which compiler it is
    CC = "gcc"

QUICK = os.environ.get("BENCH_QUICK", "") not in ("", "0")


def _int(name, full, quick):
    return int(os.environ.get(name) or (quick if QUICK else full))


# fib(N): 2*F(N+1)-1 calls (36: 48,315,633; 30: 2,692,537).
N = _int("BENCH_N", 36, 30)
# The thread variant: fib(THREAD_N) in each of 1, 2 and 4 threads.
THREAD_N = _int("BENCH_THREAD_N", 34, 28)
# Rounds of the microbenchmark and thread tables: 9, as their medians
# decide the tightest targets and one run on this kind of VM varies by
# +-15% (docs/performance.md).
REPS = _int("BENCH_REPS", 9, 3)
# Extra repetitions when the load average exceeds the CPUs at the start.
LOADED_EXTRA_REPS = _int("BENCH_LOADED_EXTRA_REPS", 2, 0)
# Orders of the SQLite session (customers = orders / 20).
SQLITE_ORDERS = _int("BENCH_SQLITE_ORDERS", 32000, 3000)
SQLITE_REPS = _int("BENCH_SQLITE_REPS", 5, 1)
SQLITE_PACKAGE = os.environ.get("BENCH_SQLITE_PACKAGE") or "better-sqlite3@12"
# The Lua workload's loop count (bench/lua/work.lua) and the fmt workload's
# rows (bench/fmt_driver.cc): about 20 million instrumented calls each.
LUA_N = _int("BENCH_LUA_N", 400, 40)
FMT_N = _int("BENCH_FMT_N", 10000, 1000)
REAL_REPS = _int("BENCH_REAL_REPS", 5, 1)
# The scale workload (bench/contexts.c): WIDTH^3 leaf contexts over THREADS
# threads, 1 and PASSES passes.
SCALE_WIDTH = _int("BENCH_SCALE_WIDTH", 100, 40)
SCALE_THREADS = _int("BENCH_SCALE_THREADS", 8, 4)
SCALE_PASSES = _int("BENCH_SCALE_PASSES", 4, 3)
SCALE_REPS = _int("BENCH_SCALE_REPS", 3, 1)
# The programs of the floors table (bench/benchlib/floors.py).
FLOORS_PROGRAMS = [p for p in (os.environ.get("BENCH_FLOORS_PROGRAMS") or
                               ("fmt" if QUICK else "sqlite,lua,fmt")).split(",") if p]
# The fidelity workload (issue 26): bench/phases.c's SCALE, the rounds of
# its table, and the real programs compared with perf (sqlite, lua, fmt).
FIDELITY_SCALE = _int("BENCH_FIDELITY_SCALE", 4, 2)
FIDELITY_REPS = _int("BENCH_FIDELITY_REPS", 5, 3)
FIDELITY_PROGRAMS = [p for p in (os.environ.get("BENCH_FIDELITY_PROGRAMS") or
                                 ("fmt" if QUICK else "sqlite,lua,fmt")).split(",") if p]
# The parts of the fidelity workload (phases: bench/phases.c; noinline:
# the real programs at -O2 -fno-inline against perf; inline: the same at
# -O2, hookit's view as compiled against perf); unset: all.
FIDELITY_PARTS = [p for p in (os.environ.get("BENCH_FIDELITY_PARTS") or
                              "phases,noinline,inline").split(",") if p]
# The hookit modes of the phases table (default, exact, compensate,
# sampler_timer); unset: all.
FIDELITY_MODES = [m for m in (os.environ.get("BENCH_FIDELITY_MODES") or "").split(",") if m] or None
# The real programs' sizes in the fidelity workload: a second or more of
# CPU each, for enough samples (hookit's 4,000 per CPU second).
FIDELITY_SQLITE_ORDERS = _int("BENCH_FIDELITY_SQLITE_ORDERS", 80000, 20000)
FIDELITY_LUA_N = _int("BENCH_FIDELITY_LUA_N", 1000, 300)
FIDELITY_FMT_N = _int("BENCH_FIDELITY_FMT_N", 40000, 20000)
# Workloads to run (comma separated): micro, threads, sqlite, lua, fmt, scale,
# fidelity, floors (not by default: issue 17's decomposition, run on demand).
WORKLOADS = [w for w in (os.environ.get("BENCH_WORKLOADS") or
                         ("micro,threads" if QUICK else "micro,sqlite,lua,fmt,scale,threads,fidelity")).split(",")
             if w]
# Rows of the real-code tables (SQLite, Lua, fmt) to run, by key, comma
# separated (hookit, sample, floor, treefloor, keyfloor, alloc,
# nolines, uftrace, callgrind);
# the uninstrumented and no-op rows always run.  Unset: all.  Targets and
# exactness gates follow the rows that ran (BENCH_ROWS=floor,sample: the
# timer=sample target and its gate).
ROWS = [r for r in (os.environ.get("BENCH_ROWS") or "").split(",") if r]


def chosen_rows(rows):
    return [r for r in rows if not ROWS or r.key in ("uninstrumented", "noop") or r.key in ROWS]


# Comparison rows (uftrace, callgrind): off in the quick mode.
WITH_OTHERS = os.environ.get("BENCH_OTHERS", "0" if QUICK else "1") not in ("", "0")
# Write every number as JSON here too (tests read it).
JSON_OUT = os.environ.get("BENCH_JSON")
