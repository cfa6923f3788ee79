"""Workload 7, floors: what each of hookit's duties costs on real code,
done the cheapest way, against timer=sample (issue 17).

bench/tree_floor.c, preloaded into each program's no-op build, counts
calls per context and does nothing else; built with more of its options,
it adds, one at a time, what hookit must do besides counting:

  + frame stack     FLOOR_FRAMES: the frames that catch longjmps and
                    unreported unwinds (exactness)
  + signal word     FLOOR_BUSY: a signal handler's hooks must not tear a
                    hook they interrupt
  + switch          FLOOR_SWITCH: the compiler's hooks jump to the profiler
                    through pointers (libhookit's switch and plugin)

Each row runs alternately with the uninstrumented and no-op builds and
hookit's timer=sample, on each program of BENCH_FLOORS_PROGRAMS (sqlite,
lua, fmt; quick: fmt), and must count every call (a floor that skipped
work would be none)."""
import os

from . import config, programs, sqlite
from .alternate import run_alternating
from .build import preload_lib
from .measure import count_calls
from .rows import Row, tree_floor_count, tree_floor_row
from .sources import Unavailable
from .table import Targets, print_table, summarize

STEPS = (("treefloor", "tree floor (bare tree)", ()),
         ("frames", "+ frame stack", ("FLOOR_FRAMES",)),
         ("busy", "+ signal word", ("FLOOR_FRAMES", "FLOOR_BUSY")),
         ("switch", "+ switch: hookit's duties", ("FLOOR_FRAMES", "FLOOR_BUSY", "FLOOR_SWITCH")))


def program(name):
    """(uninstrumented, no-op and hookit builds, arguments) of one real-code workload."""
    if name == "sqlite":
        plain, noop, hooked, _ = sqlite.builds()
        return plain, noop, hooked, [config.SQLITE_ORDERS]
    _, builds, args_of, _ = programs.WORKLOADS[name]
    return builds() + (args_of(),)


def rows_for(plain, noop, hooked):
    rows = [Row("uninstrumented", "uninstrumented", [plain]), Row("noop", "glibc no-op hooks", [noop])]
    rows += [tree_floor_row(noop, preload_lib("tree_floor", defines), key, label)
             for key, label, defines in STEPS]
    rows.append(Row("sample", "hookit default (timer=sample)", [hooked], "hookit"))
    return rows


def run(reps):
    result = {"programs": {}, "targets": []}
    for name in config.FLOORS_PROGRAMS:
        try:
            plain, noop, hooked, args = program(name)
        except Unavailable as e:
            print(f"== 7. floors, {name}: skipped: {e} ==\n")
            continue
        calls = count_calls(hooked, args, os.path.join(config.OUT, name + "-floors-count"))
        rows = rows_for(plain, noop, hooked)
        summary = summarize(rows, run_alternating(rows, lambda row: args, reps, name), calls)
        print(f"== 7. floors, {name}: {calls:,} instrumented calls per run, "
              f"{reps} alternating rounds ==")
        print_table(rows, summary)
        print()
        targets = check(summary, calls)
        print()
        result["programs"][name] = {"calls": calls, "rows": summary}
        result["targets"] += [dict(t, target=f"{name}:{t['target']}") for t in targets.results]
    return result


def check(s, calls):
    """Each row's CPU over the no-op build's (shown); every floor counted
    every call."""
    targets = Targets("issue 17, floors")
    noop = s["noop"]["cpu_s"]
    for key, label, _ in STEPS + (("sample", "hookit timer=sample", ()),):
        targets.show(key + "_vs_noop", f"{label} CPU / no-op hooks' CPU", s[key]["cpu_s"] / noop, "x")
    for key, label, _ in STEPS:
        said = tree_floor_count(s[key])
        counted = said[1] if said else 0
        targets.add(key + "_counted", f"{label}: counted every call", counted, counted == calls,
                    " calls", f"({said[0]:,} contexts)" if said else "(no count printed)")
    return targets
