"""Workload 1: the recursive microbenchmark (bench/recurse.c, fib(N))."""
import os

from . import config, exact, machine
from .alternate import run_alternating
from .build import clock_floor_lib, node_size, three_builds
from .rows import Row, standard_rows
from .table import LEGEND, Targets, print_table, summarize

SRC = os.path.join(config.ROOT, "bench", "recurse.c")


def fib_calls(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


def builds():
    return three_builds("recurse", [SRC], libs=["-pthread"])


def run(reps):
    plain, noop, hooked = builds()
    rows = standard_rows(plain, noop, hooked, config.WITH_OTHERS, with_off=True,
                         floor_lib=clock_floor_lib())
    calls = fib_calls(config.N)
    before = machine.cores_check()
    runs = run_alternating(rows, lambda row: [config.N], reps, "micro")
    after = machine.cores_check()
    for key, rs in runs.items():
        for r in rs:
            if r["fields"]["calls"] != calls:
                raise SystemExit(f"bench: {key} made {r['fields']['calls']} calls, not {calls}")
    summary = summarize(rows, runs, calls)
    print(f"== 1. recursive microbenchmark: fib({config.N}) = {calls:,} calls per run, "
          f"{reps} alternating rounds ==")
    print_table(rows, summary)
    print()
    machine.print_cores(before, after)
    targets = check_targets(summary, calls)
    gate = exact.check("micro", noop, [config.N])
    targets.append({"target": "exact_tree", "value": gate["paths"], "ok": gate["ok"],
                    "note": gate["summary"]})
    print()
    return {"calls": calls, "n": config.N, "reps": reps, "rows": summary, "targets": targets,
            "cores_check": {"before": before, "after": after}}


def check_targets(s, calls):
    """Issue 5's targets on this workload, printed and returned."""
    targets = Targets()
    add = targets.add

    hk, base, noop = s["hookit"], s["uninstrumented"], s["noop"]
    # A cost, like every figure of the issue (no-op hooks ~5 ns, two TSC
    # reads 20-25 ns) and like the timer=sample target below: what the
    # hook pair adds to a call, over the uninstrumented build.
    cost = hk["loop_ns_per_call"] - base["loop_ns_per_call"]
    floor = s.get("floor")
    above = (f"; {hk['loop_ns_per_call'] - floor['loop_ns_per_call']:+.2f} ns over the TSC floor"
             if floor else "")
    add("default_ns_per_call", "timer=exact, cost per call (enter + exit, over uninstr.) <= 25",
        cost, cost <= 25, " ns", f"(loop CPU per call {hk['loop_ns_per_call']:.2f} ns, the call itself"
        f" {base['loop_ns_per_call']:.2f}{above})")
    if "uftrace" in s:
        uf = s["uftrace"]
        ratio = (uf["cpu_s"] - base["cpu_s"]) / max(hk["cpu_s"] - base["cpu_s"], 1e-9)
        add("vs_uftrace", "timer=exact vs uftrace record: uftrace's added CPU / ours >= 4",
            ratio, ratio >= 4, "x", f"(total CPU ratio {uf['cpu_s'] / hk['cpu_s']:.2f}x)")
    sm = s["sample"]
    hooks = noop["loop_ns_per_call"] - base["loop_ns_per_call"]
    ratio = (sm["loop_ns_per_call"] - base["loop_ns_per_call"]) / max(hooks, 1e-9)
    add("sample_vs_noop", "default (timer=sample) cost / no-op hooks' cost (over uninstr.) <= 2",
        ratio, ratio <= 2, "x",
        f"(total {sm['loop_ns_per_call']:.2f} vs {noop['loop_ns_per_call']:.2f} ns/call)")
    size = node_size()
    if size is not None:
        add("node_bytes", "tree node (struct arena_node) <= 64 bytes", size, size <= 64, " B")
    comp = s.get("compensate")
    if comp and comp.get("main_incl_ns"):
        # The profile's times are wall-clock: on a busy machine they include
        # the time the process waited for a CPU, which compensation (calls x
        # measured overhead) does not remove.  cpu_equiv swaps the run's wall
        # time for its CPU time and keeps what compensation subtracted.
        equiv = comp["compensated_cpu_equiv_ns"]
        ratio = equiv / base["loop_cpu_ns"]
        wall_ratio = comp["main_incl_ns"] / base["loop_wall_ns"]
        raw = hk["main_incl_ns"] / base["loop_wall_ns"] if hk.get("main_incl_ns") else None
        # What is left per call after compensation.  The issue asks to show
        # it, with no threshold, and on fib it cannot go to zero: the call's
        # own 1 ns runs in the shadow of the hooks' clock reads, so
        # subtracting what a hook pair costs alone takes the call with it.
        residual = (equiv - base["loop_cpu_ns"]) / calls
        added = hk["loop_ns_per_call"] - base["loop_ns_per_call"]
        targets.show("compensate", "compensate: main's incl. - uninstr., per call",
                     residual, " ns",
                     f"({abs(residual) / max(added, 1e-9) * 100:.1f}% of the {added:.1f} ns added per call;"
                     f" ratio {ratio:.2f}x: CPU-equivalent {equiv / 1e6:.1f} ms vs {base['loop_cpu_ns'] / 1e6:.1f} ms;"
                     f" wall: {comp['main_incl_ns'] / 1e6:.1f} vs {base['loop_wall_ns'] / 1e6:.1f} ms ="
                     f" {wall_ratio:.2f}x" + (f", uncompensated {raw:.2f}x" if raw else "")
                     + f"; the profile's overhead_ns_per_call: {comp.get('meta_overhead_ns_per_call')})")
        print("  (CPU-equivalent = main's compensated time with the run's wall time replaced")
        print("   by its CPU time, i.e. without waiting for a CPU)")
    print()
    return targets.results + floor_targets(s)


def floor_targets(s):
    """Issue 17's target on fib: timer=exact within 1.5 ns per call of
    the TSC floor (two clock reads per call and nothing else), loop CPU."""
    if "floor" not in s:
        return []
    targets = Targets("issue 17")
    above = s["hookit"]["loop_ns_per_call"] - s["floor"]["loop_ns_per_call"]
    targets.add("exact_over_floor", "timer=exact over the TSC floor, ns per call <= 1.5",
                above, above <= 1.5, " ns",
                f"({s['hookit']['loop_ns_per_call']:.2f} vs {s['floor']['loop_ns_per_call']:.2f} ns, loop CPU)")
    print()
    return targets.results


def legend():
    print(LEGEND)
