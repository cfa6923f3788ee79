"""Workloads 4 and 5: real third-party code besides SQLite, fetched at bench
time (bench/benchlib/sources.py), never committed.

  lua   Lua 5.4's interpreter (Debian's lua5.4 sources) embedded by
        bench/lua_driver.c, running bench/lua/work.lua: the instrumented
        code is the interpreter's C (luaV_execute, the table and string
        libraries, pcall's longjmp, coroutines)
  fmt   {fmt} (Debian's libfmt-dev, header-only) formatting a report in
        bench/fmt_driver.cc: template-heavy C++ instantiated in the program

Each builds three ways (uninstrumented, no-op hooks, libhookit), runs the
standard rows alternately, is held to issue 17's targets and passes the
exactness gate (bench/benchlib/realcode.py)."""
import glob
import os
import shutil

from . import config, realcode
from .alternate import run_alternating
from .build import clock_floor_lib, count_floor_libs, three_builds
from .measure import count_calls
from .rows import standard_rows
from .sources import Unavailable, fetch, upstream
from .table import print_table, summarize


def lua_sources():
    """(sources, libraries, flags) of the Lua workload."""
    src, files, flags = fetch(upstream.lua_sources)
    lib = [f for f in files if os.path.basename(f) != "lua.c"]    # the library, not its main
    driver = os.path.join(config.ROOT, "bench", "lua_driver.c")
    libs = [f for f in flags if f.startswith("-l")]
    defines = [f for f in flags if not f.startswith("-l")]
    return lib + [driver], libs, ["-I" + src] + defines


def lua_builds():
    sources, libs, flags = lua_sources()
    return three_builds("lua", sources, libs=libs, extra_flags=flags)


def lua_args():
    return [os.path.join(config.ROOT, "bench", "lua", "work.lua"), config.LUA_N]


def fmt_driver():
    """bench/fmt_driver.cc, when {fmt} and g++ are here."""
    if not glob.glob("/usr/include/fmt/format.h"):
        raise Unavailable("libfmt-dev is not installed (apt-get install libfmt-dev)")
    if not shutil.which("g++"):
        raise Unavailable("g++ is not installed")
    return os.path.join(config.ROOT, "bench", "fmt_driver.cc")


def fmt_builds():
    return three_builds("fmt", [fmt_driver()], cc="g++")


def fmt_args():
    return [config.FMT_N]


# uftrace 0.13's record aborts on the Lua workload with its default
# library-call tracing ("plthook: invalid dynsym idx" after pcall's
# longjmp); without it (--no-libcall) it records the program's own
# functions, as hookit does.
WORKLOADS = {
    "lua": ("4. Lua 5.4 (Debian lua5.4) embedded, bench/lua/work.lua", lua_builds, lua_args,
            ["--no-libcall"]),
    "fmt": ("5. {fmt} (Debian libfmt-dev), bench/fmt_driver.cc", fmt_builds, fmt_args, []),
}


def run(name, reps):
    title, builds, args_of, uftrace_args = WORKLOADS[name]
    try:
        plain, noop, hooked = builds()
    except Unavailable as e:
        print(f"== {title}: skipped: {e} ==\n")
        return {"skipped": str(e)}
    args = args_of()
    calls = count_calls(hooked, args, os.path.join(config.OUT, name + "-count"))
    rows = config.chosen_rows(standard_rows(plain, noop, hooked, config.WITH_OTHERS,
                                            with_compensate=False, floor_lib=clock_floor_lib(),
                                            count_floors=count_floor_libs(),
                                            uftrace_args=uftrace_args))
    runs = run_alternating(rows, lambda row: args, reps, name)
    sums = {r["fields"].get("checksum") for rs in runs.values() for r in rs}
    if len(sums) != 1:
        raise SystemExit(f"bench: the {name} builds computed different results: {sums}")
    summary = summarize(rows, runs, calls)
    print(f"== {title}: {calls:,} instrumented calls per run (count plugin), "
          f"{reps} alternating rounds ==")
    print_table(rows, summary)
    print()
    targets = realcode.check_targets(summary, calls)
    realcode.gate(name, noop, args, targets, rows)
    print()
    return {"calls": calls, "reps": reps, "rows": summary, "targets": targets.results}
