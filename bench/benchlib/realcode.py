"""What every real-code workload (SQLite, Lua, fmt) is held to: the cost
gates of issue 26, checked side by side in the same run, the targets of
issue 17 that still stand, and the exactness gate.

  default (timer=sample)  CPU <= 1.25x the tree floor's, and <= 1.10x
                          (timer=sample's own gate: it is the default)
  timer=exact             CPU <= 1.10x the TSC floor's
  uftrace record          CPU >= 10x the default's
  peak RSS                <= the no-op build's + 10 MB
  at exit                 <= 20 ms CPU for names and writing, for up to
                          100,000 nodes (more nodes: proportionally more)

The floors (bench/tree_floor.c, bench/clock_floor.c) are what counting
calls per context, and reading the clock twice per call, cost with nothing
else done; each is checked to have done its job (the tree floor to have
counted every call).
"""
from . import exact
from .rows import tree_floor_count
from .table import Targets


def ratio_note(s, key):
    return f"(+{s[key]['added_ns_per_call_over_noop']:.1f} ns per call over the no-op hooks)"


def check_targets(s, calls):
    targets = Targets("issue 26")
    add = targets.add
    noop = s["noop"]
    sm, tree = s.get("sample"), s.get("treefloor")
    if sm and tree:
        x = sm["cpu_s"] / tree["cpu_s"]
        add("default_vs_tree_floor", "default (timer=sample) CPU / tree floor's CPU <= 1.25", x, x <= 1.25,
            "x", ratio_note(s, "sample"))
        add("sample_vs_tree_floor", "timer=sample CPU / tree floor's CPU <= 1.10", x, x <= 1.10, "x",
            f"(the tree floor: {tree['cpu_s'] / noop['cpu_s']:.2f}x the no-op hooks)")
    elif sm:
        x = sm["cpu_s"] / noop["cpu_s"]
        targets.show("sample_vs_noop", "default (timer=sample) CPU / no-op hooks' CPU", x, "x",
                     ratio_note(s, "sample"))
    if s.get("hookit"):
        exact_targets(s, targets)
    if sm:
        common_targets(s, sm, targets)
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
    """timer=exact's gate, when its row ran: against the TSC floor."""
    hk, noop, floor = s["hookit"], s["noop"], s.get("floor")
    if floor:
        x = hk["cpu_s"] / floor["cpu_s"]
        targets.add("exact_vs_tsc_floor", "timer=exact CPU / TSC floor's CPU <= 1.10", x, x <= 1.10, "x",
                    f"(+{hk['added_ns_per_call_over_noop'] - floor['added_ns_per_call_over_noop']:.1f} "
                    f"ns per call over two clock reads)")
    else:
        x = hk["cpu_s"] / noop["cpu_s"]
        targets.show("exact_vs_noop", "timer=exact CPU / no-op hooks' CPU", x, "x", ratio_note(s, "hookit"))


def common_targets(s, hk, targets):
    """What the default mode is held to besides its cost: uftrace's cost
    against it, memory, the exit."""
    add = targets.add
    noop = s["noop"]
    uf = s.get("uftrace")
    if uf:
        cpu = uf["cpu_s"] / hk["cpu_s"]
        lost = [line for line in uf["stderr"] if "not recorded" in line]
        if lost:
            # uftrace stopped recording (its depth limit, reached when it
            # misses the longjmps of Lua's pcall): it did less work than a
            # trace of the run, so the ratio compares nothing.
            targets.show("uftrace_cpu", "uftrace record CPU / hookit default's CPU", cpu, "x",
                         f"(not a comparison: uftrace said \"{lost[0][:60]}\")")
        else:
            add("uftrace_cpu", "uftrace record CPU / hookit default's CPU >= 10", cpu, cpu >= 10, "x",
                f"(wall: {uf['wall_s'] / hk['wall_s']:.2f}x)")
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
GATES = (("hookit", "exact_tree", "timer=exact"), ("sample", "exact_tree_sample", None))


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
