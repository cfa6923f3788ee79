"""Workload 3: the microbenchmark in 1, 2 and 4 threads, the same work per
thread (fib(THREAD_N) each): scaling.

Throughput = calls of all threads / the loop's wall time.  On an idle
machine with 2 CPUs, 2 threads should reach 2x the throughput of 1; any
cache line shared on the hot path shows as less.

A virtual machine's 2 CPUs need not be 2 cores: the hypervisor may run
them on the two hardware threads of one core for a while, and then two
threads of anything but latency-bound code share that core's execution
units (docs/performance.md, "Two virtual CPUs, one core").  So every
variant also runs as 2 separate processes released at the same moment:
they share no memory at all, only the machine.  2 threads reaching the
throughput of 2 processes shows nothing is shared in the process, whatever
the machine did; the control row (hooks that write one shared line) shows
what a shared line does to that figure."""
import statistics

from . import config, machine
from .alternate import run_alternating
from .build import clock_floor_lib, shared_line_lib
from .micro import builds, fib_calls
from .rows import Row
from .table import Targets, med, span

# (rows' key suffix, threads per process, processes)
SHAPES = (("1", 1, 1), ("2", 2, 1), ("2p", 1, 2), ("4", 4, 1))
# Threads over processes: at least this for "nothing shared", well above
# what one shared line gives (the control row: about 0.55).
SHARED_NOTHING_BAR = 0.95


def variants(plain, noop, hooked):
    """(key, label, binary, kind, environment, shapes) per variant."""
    every = [s[0] for s in SHAPES]
    return [("uninstrumented", "uninstrumented", plain, "plain", {}, every),
            ("noop", "glibc no-op hooks", noop, "plain", {}, every),
            ("floor", "TSC floor (rdtsc only)", noop, "plain",
             {"LD_PRELOAD": clock_floor_lib()}, every),
            ("control", "control: one shared line", noop, "plain",
             {"LD_PRELOAD": shared_line_lib()}, ["1", "2", "2p"]),
            ("hookit", "hookit timer=exact", hooked, "hookit", {"JPROFOPTS": "timer=exact"}, every),
            ("sample", "hookit default (timer=sample)", hooked, "hookit", {}, every)]


def rows_for(plain, noop, hooked):
    rows = []
    for key, label, binary, kind, env, shapes in variants(plain, noop, hooked):
        for suffix, threads, copies in SHAPES:
            if suffix not in shapes:
                continue
            r = Row(f"{key}-{suffix}", label, [binary], kind, env)
            r.variant, r.threads, r.copies = key, threads, copies
            rows.append(r)
    return rows


def paired(runs, others, ratio):
    """The median over rounds of ratio(run, the same round's other run)."""
    vals = [ratio(r, o) for r, o in zip(runs, others)
            if r.get("loop_ns") and o.get("loop_ns") and r.get("loop_cpu_ns") and o.get("loop_cpu_ns")]
    return statistics.median(vals) if vals else None


def shape_label(row):
    return f"{row.copies} proc" if row.copies > 1 else f"{row.threads} thr"


def summarize(row, runs, per_thread):
    rs = runs[row.key]
    workers = row.threads * row.copies
    calls = per_thread * workers
    wall, cpu = med(rs, "loop_ns"), med(rs, "loop_cpu_ns")
    lo, hi = span(rs, "loop_ns")
    ones = runs[f"{row.variant}-1"]
    s = {"label": row.label, "threads": row.threads, "processes": row.copies, "reps": len(rs),
         "loop_wall_ms": wall / 1e6, "loop_wall_ms_range": [lo / 1e6, hi / 1e6],
         "cpu_ms": cpu / 1e6, "cpu_ns_per_call": cpu / calls,
         "mcalls_per_s": calls / wall * 1e3}
    # Against the 1-thread run of the same round (a slow moment of the
    # machine hits both), the median of those.
    s["throughput_x_1"] = paired(rs, ones, lambda r, one: workers * one["loop_ns"] / r["loop_ns"])
    s["cpu_per_call_x_1"] = paired(
        rs, ones, lambda r, one: r["loop_cpu_ns"] / (workers * one["loop_cpu_ns"]))
    # The same from each row's fastest round: what the work does on two
    # cores of its own, when the machine gave it them at least once.
    s["best_throughput_x_1"] = workers * fastest(ones) / fastest(rs)
    if row.threads == 2:
        procs = runs[f"{row.variant}-2p"]
        s["threads_x_processes"] = paired(rs, procs, lambda r, p: p["loop_ns"] / r["loop_ns"])
        s["best_threads_x_processes"] = fastest(procs) / fastest(rs)
    return s


def fastest(runs):
    return min(r["loop_ns"] for r in runs)


def print_table(rows, summary, per_thread, reps):
    print(f"== 3. threads: fib({config.THREAD_N}) = {per_thread:,} calls in each of 1, 2, 4 "
          f"threads and in 2 processes, {reps} alternating rounds ==")
    head = (f"{'variant':26} {'shape':>6} {'loop wall ms':>12} {'(min-max)':>15} {'CPU ms':>8} "
            f"{'CPU ns/call':>11} {'Mcalls/s':>9} {'x 1 thr: best':>13} {'med':>5} "
            f"{'CPU/call x 1':>12} {'thr/proc: best':>14} {'med':>5}")
    print(head)
    print("-" * len(head))
    for row in rows:
        s = summary[row.key]
        lo, hi = s["loop_wall_ms_range"]
        tp = "" if row.threads != 2 else (f"{s['best_threads_x_processes']:14.2f} "
                                          f"{s['threads_x_processes']:5.2f}")
        print(f"{row.label:26} {shape_label(row):>6} {s['loop_wall_ms']:12.1f} "
              f"{lo:7.1f}-{hi:<7.1f} {s['cpu_ms']:8.1f} {s['cpu_ns_per_call']:11.2f} "
              f"{s['mcalls_per_s']:9.1f} {s['best_throughput_x_1']:13.2f} {s['throughput_x_1']:5.2f} "
              f"{s['cpu_per_call_x_1']:12.2f} {tp}")
    print()
    print("loop wall ms, CPU ms: the program's own times of the work (release to the last")
    print("thread's or process's end), median (min-max); Mcalls/s: calls of all threads /")
    print("loop wall time; x 1 thr: that throughput / the same variant's with 1 thread, best:")
    print("from each row's fastest round, med: the median over rounds of the ratio to the same")
    print("round's 1-thread run; CPU/call x 1: CPU per call / the 1-thread run's, median the")
    print("same way; thr/proc: the throughput of 2 threads / that of 2 separate processes,")
    print("best and median likewise (1.00 = the threads share nothing).")
    print()


def add_targets(targets, summary):
    """The throughput target as the issue puts it, from the median of the
    per-round ratios (one lucky 1-thread round cannot decide it, which a
    ratio of fastest rounds would let it: a fast 2-thread round needs the
    machine to leave two cores alone at once, a fast 1-thread round only
    one).  Threads against processes from the fastest rounds: there both
    sides need the same two free cores (docs/performance.md, "Two virtual
    CPUs, one core").  The other figure is printed beside each."""
    t2, p2 = summary["hookit-2"], summary["hookit-2p"]
    u2, f2 = summary["uninstrumented-2"], summary["floor-2"]
    med2 = t2["throughput_x_1"]
    targets.add("threads2_throughput", "2 threads >= 1.9x the throughput of 1 (hookit default)",
                med2, med2 >= 1.9, "x",
                f"(best rounds {t2['best_throughput_x_1']:.2f}x; same run, median: 2 hookit processes"
                f" {p2['throughput_x_1']:.2f}x, uninstrumented {u2['throughput_x_1']:.2f}x,"
                f" TSC floor {f2['throughput_x_1']:.2f}x)")
    # What the machine cannot blur: 2 processes share no memory, so 2
    # threads that keep up with them share nothing on the hot path.
    tp = t2["best_threads_x_processes"]
    targets.add("threads2_shared_nothing",
                f"  2 threads / 2 processes, hookit default >= {SHARED_NOTHING_BAR}",
                tp, tp >= SHARED_NOTHING_BAR, "x",
                f"(median {t2['threads_x_processes']:.2f}x; timer=sample"
                f" {summary['sample-2']['best_threads_x_processes']:.2f}x;"
                f" the shared-line control {summary['control-2']['best_threads_x_processes']:.2f}x)")


def run(reps):
    busy = machine.load_text() if machine.busy() else None
    plain, noop, hooked = builds()
    rows = rows_for(plain, noop, hooked)
    per_thread = fib_calls(config.THREAD_N)
    before = machine.cores_check()
    runs = run_alternating(rows, lambda row: [config.THREAD_N, row.threads], reps, "threads")
    after = machine.cores_check()
    summary = {row.key: summarize(row, runs, per_thread) for row in rows}
    print_table(rows, summary, per_thread, reps)
    machine.print_cores(before, after)
    targets = Targets()
    add_targets(targets, summary)
    if busy:
        print(f"  (the wall-clock targets need 2 idle CPUs: {busy})")
    print()
    return {"per_thread_calls": per_thread, "n": config.THREAD_N, "reps": reps,
            "rows": summary, "targets": targets.results,
            "cores_check": {"before": before, "after": after}}
