"""Workload 2: real third-party C code, the SQLite amalgamation (~270,000
lines), driven by bench/sqlite_driver.c.

SQLite is fetched at bench time from the npm registry (the package
better-sqlite3 ships the amalgamation in deps/sqlite3/), never committed:
`npm pack` puts the tarball in OUT/sqlite/, where it stays as a cache, and
sqlite3.c is compiled there once per set of flags (a minute or more)."""
import glob
import os
import shutil
import subprocess
import sys

from . import config, realcode
from .sources import Unavailable, fetch, upstream
from .alternate import run_alternating
from .build import INSTRUMENT, LINK_HOOKIT, clock_floor_lib, count_floor_libs
from .measure import count_calls
from .rows import Row, standard_rows
from .table import Targets, human_bytes, print_table, summarize

DRIVER = os.path.join(config.ROOT, "bench", "sqlite_driver.c")
DIR = os.path.join(config.OUT, "sqlite")
# Ordinary embedded-use settings: one connection, no extension loading.
DEFINES = ["-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION=1"]


def compile_object(src, name, flags):
    obj = os.path.join(DIR, name)
    if not os.path.exists(obj):
        print(f"  sqlite: compiling {name} (once)", file=sys.stderr)
        subprocess.run([config.CC, "-O2", "-g", "-c", "-o", obj + ".tmp",
                        os.path.join(src, "sqlite3.c")] + DEFINES + flags, check=True)
        os.rename(obj + ".tmp", obj)
    return obj


def link(name, src, obj, flags):
    exe = os.path.join(DIR, name)
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(os.path.getmtime(DRIVER),
                                                              os.path.getmtime(obj)):
        subprocess.run([config.CC, "-O2", "-g", "-I", src, "-o", exe, DRIVER, obj] + flags
                       + ["-lm"], check=True)
    return exe


def builds():
    src = fetch(upstream.fetch_sqlite)
    plain_obj = compile_object(src, "sqlite3-plain.o", [])
    instr_obj = compile_object(src, "sqlite3-instr.o", INSTRUMENT)
    return (link("sqlite-plain", src, plain_obj, []),
            link("sqlite-noop", src, instr_obj, INSTRUMENT),
            link("sqlite-hookit", src, instr_obj, INSTRUMENT + LINK_HOOKIT),
            os.path.join(src, "sqlite3.c"))


def run(reps):
    try:
        plain, noop, hooked, source = builds()
    except Unavailable as e:
        print(f"== 2. SQLite: skipped: {e} ==\n")
        return {"skipped": str(e)}
    lines = sum(1 for _ in open(source, errors="replace"))
    calls = count_calls(hooked, [config.SQLITE_ORDERS], os.path.join(DIR, "count-run"))
    # One diagnostic row more: what reading the debug line info at exit costs.
    nolines = Row("nolines", "hookit JPROFOPTS=nolines", [hooked], "hookit",
                  {"JPROFOPTS": "nolines"})
    rows = config.chosen_rows(standard_rows(plain, noop, hooked, config.WITH_OTHERS,
                                            with_compensate=False, extra=[nolines],
                                            floor_lib=clock_floor_lib(),
                                            count_floors=count_floor_libs()))
    runs = run_alternating(rows, lambda row: [config.SQLITE_ORDERS], reps, "sqlite")
    sums = {r["fields"].get("checksum") for rs in runs.values() for r in rs}
    if len(sums) != 1:
        raise SystemExit(f"bench: the SQLite builds computed different results: {sums}")
    summary = summarize(rows, runs, calls)
    print(f"== 2. SQLite {lines:,} lines (npm {config.SQLITE_PACKAGE}), bench/sqlite_driver.c "
          f"{config.SQLITE_ORDERS:,} orders: {calls:,} instrumented calls per run "
          f"(count plugin), {reps} alternating rounds ==")
    print_table(rows, summary)
    print()
    targets = check_targets(summary, calls)
    real = realcode.check_targets(summary, calls)
    realcode.gate("sqlite", noop, [config.SQLITE_ORDERS], real, rows)
    print()
    return {"calls": calls, "orders": config.SQLITE_ORDERS, "lines": lines, "reps": reps,
            "rows": summary, "targets": targets + real.results}


def check_targets(s, calls):
    targets = Targets()
    add = targets.add

    hk, base, noop = s.get("sample"), s["uninstrumented"], s["noop"]    # the default
    add("calls", "instrumented calls per run >= 20 million", calls / 1e6, calls >= 20e6, " M")
    if not hk:
        print()                 # BENCH_ROWS left the default row out: its targets too
        return targets.results
    if hk.get("profile_calls") is not None:
        print(f"  {'':58} (hookit's profile counts {hk['profile_calls']:,.0f} calls)")
    if "uftrace" in s:
        uf = s["uftrace"]
        ratio = (uf["cpu_s"] - base["cpu_s"]) / max(hk["cpu_s"] - base["cpu_s"], 1e-9)
        add("vs_uftrace", "default (timer=sample) vs uftrace record: uftrace's added CPU / ours >= 4",
            ratio, ratio >= 4, "x", f"(total CPU ratio {uf['cpu_s'] / hk['cpu_s']:.2f}x)")
    size = hk["output_bytes"] or 0
    add("profile_size", "profile file <= 1 MB", human_bytes(size), size <= 1 << 20)
    # CPU time after main: on a busy machine the wall time of the exit is
    # mostly waiting for a CPU.
    exit_cpu = hk["exit_cpu_ms"]
    note = f"(wall {hk['exit_ms']:.1f} ms"
    if hk.get("build_ms") is not None:
        note += f"; the profile's build_ns: {hk['build_ms']:.1f} ms wall"
    if hk.get("write_ms") is not None:
        note += f"; write_ns: {hk['write_ms']:.1f} ms"
    add("exit_ms", "names + writing the profile at exit, CPU < 100 ms", exit_cpu,
        exit_cpu < 100, " ms", note + ")")
    nl = s.get("nolines")
    if nl:
        print(f"  (JPROFOPTS=nolines, no source lines: peak RSS added "
              f"{nl['maxrss_mb'] - noop['maxrss_mb']:.1f} MB, exit CPU {nl['exit_cpu_ms']:.1f} ms,"
              f" profile {human_bytes(nl['output_bytes'])})")
    print()
    return targets.results
