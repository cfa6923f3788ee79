"""What every real-code workload (SQLite, Lua, fmt) is held to: the targets
of issue 17, checked side by side in the same run, and the exactness gate.

  timer=sample     CPU <= 1.3x the no-op-hook build's
  default (exact)  CPU <= 2.0x the no-op-hook build's
  uftrace record   >= 5x hookit's CPU time and >= 5x its wall time
  peak RSS         <= the no-op build's + 10 MB
  at exit          <= 20 ms CPU for names and writing, for up to 100,000
                   nodes (more nodes: proportionally more)

Beside the timer=sample target, the floors under it (bench/tree_floor.c,
bench/key_floor.c): what counting calls per context costs with nothing
else done, shown, and checked to have counted every call.
"""
from . import exact
from .rows import tree_floor_count
from .table import Targets


def check_targets(s, calls):
    targets = Targets("issue 17")
    add = targets.add
    hk, noop = s.get("hookit"), s["noop"]
    floor = s.get("floor")
    if hk:
        exact_targets(s, targets)
    sm = s.get("sample")
    if sm:
        x = sm["cpu_s"] / noop["cpu_s"]
        add("sample_vs_noop", "timer=sample CPU / no-op hooks' CPU <= 1.3", x, x <= 1.3, "x",
            f"(+{sm['added_ns_per_call_over_noop']:.1f} ns per call"
            + (f"; the TSC floor {floor['cpu_s'] / noop['cpu_s']:.2f}x" if floor and not hk else "")
            + ")")
    count_floor_targets(s, calls, targets)
    return targets


def count_floor_targets(s, calls, targets):
    """The floors under timer=sample, when their rows ran: their CPU over the
    no-op build's (shown), and whether the tree floor counted every call (a
    floor that skipped work would be no floor)."""
    for key in ("treefloor", "keyfloor"):
        if key in s:
            x = s[key]["cpu_s"] / s["noop"]["cpu_s"]
            targets.show(key + "_vs_noop", f"{s[key]['label']} CPU / no-op hooks' CPU", x, "x",
                         f"(+{s[key]['added_ns_per_call_over_noop']:.1f} ns per call)")
    if "treefloor" in s:
        said = tree_floor_count(s["treefloor"])
        counted = said[1] if said else 0
        targets.add("tree_floor_counted", "the tree floor counted every call", counted,
                    counted == calls, " calls",
                    f"(of {calls:,}; {said[0]:,} contexts)" if said else "(it printed no count)")


def exact_targets(s, targets):
    """The targets of the default (exact) row, when it ran (BENCH_ROWS)."""
    add = targets.add
    hk, noop = s["hookit"], s["noop"]
    x = hk["cpu_s"] / noop["cpu_s"]
    floor = s.get("floor")
    add("exact_vs_noop", "default (exact) CPU / no-op hooks' CPU <= 2.0", x, x <= 2.0, "x",
        f"(+{hk['added_ns_per_call_over_noop']:.1f} ns per call"
        + (f"; the TSC floor, two clock reads per call and nothing else: "
           f"{floor['cpu_s'] / noop['cpu_s']:.2f}x, +{floor['added_ns_per_call_over_noop']:.1f} ns"
           if floor else "") + ")")
    uf = s.get("uftrace")
    if uf:
        cpu, wall = uf["cpu_s"] / hk["cpu_s"], uf["wall_s"] / hk["wall_s"]
        lost = [line for line in uf["stderr"] if "not recorded" in line]
        if lost:
            # uftrace stopped recording (its depth limit, reached when it
            # misses the longjmps of Lua's pcall): it did less work than a
            # trace of the run, so the ratio compares nothing.
            note = f"(not a comparison: uftrace said \"{lost[0][:60]}\")"
            targets.show("uftrace_cpu", "uftrace record CPU / hookit's CPU", cpu, "x", note)
            targets.show("uftrace_wall", "uftrace record wall / hookit's wall", wall, "x", note)
        else:
            # What a profiler that only read the clock would get: the bar
            # exact timing itself leaves (uftrace's recorder runs beside its
            # target on another CPU, so its wall time is less than its CPU).
            at_floor = (lambda k: f"(the TSC floor's: {uf[k] / floor[k]:.2f}x)") if floor else (lambda k: "")
            add("uftrace_cpu", "uftrace record CPU / hookit's CPU >= 5", cpu, cpu >= 5, "x",
                at_floor("cpu_s"))
            add("uftrace_wall", "uftrace record wall / hookit's wall >= 5", wall, wall >= 5, "x",
                at_floor("wall_s"))
    rss = hk["maxrss_mb"] - noop["maxrss_mb"]
    add("rss_added", "peak RSS added over no-op hooks <= 10 MB", rss, rss <= 10, " MB")
    nodes = hk.get("profile_nodes") or 0
    if hk.get("exit_cpu_ms") is not None and noop.get("exit_cpu_ms") is not None:
        # The CPU hookit's exit adds (names resolved, profile written) over
        # the bare exit; 20 ms is the budget of a tree up to 100,000 nodes.
        spent = hk["exit_cpu_ms"] - noop["exit_cpu_ms"]
        budget = 20 * max(1.0, nodes / 100000)
        add("write_ms", f"profile at exit (names + write), CPU ms <= {budget:.0f}", spent,
            spent <= budget, " ms", f"({nodes:,.0f} nodes)")


# The gate of each hookit mode: its row's key, the target's name, JPROFOPTS.
GATES = (("hookit", "exact_tree", None), ("sample", "exact_tree_sample", "timer=sample"))


def gate(name, noop, args, targets, rows):
    """The exactness gate of every mode among rows (the default, and
    timer=sample, whose entry and exit are its own), recorded among the
    targets (a FAIL fails the bench)."""
    keys = {r.key for r in rows}
    for key, target, opts in GATES:
        if key in keys:
            result = exact.check(name, noop, args, opts)
            targets.results.append({"target": target, "value": result["paths"],
                                    "ok": result["ok"], "note": result["summary"]})
