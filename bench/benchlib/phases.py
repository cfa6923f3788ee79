"""The fidelity workload, part 1 (issue 26): where the time goes in
bench/phases.c, by every profiler, against the program's own timing.

The truth is the uninstrumented build (-O2) timing its own three phases:
each phase's share of the three, the median of the rounds.  CPU time
(CLOCK_THREAD_CPUTIME_ID) when the machine is busy (its wall time then
counts waiting for a CPU), CLOCK_MONOTONIC otherwise.  Every profiler sees
the same source built with -finstrument-functions (gprof: with -pg); what it
says of the three phase functions' inclusive time, as shares of their sum,
is compared phase by phase, and the worst error is in points.  The gate: the
default mode within GATE_POINTS on every phase."""
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile

from . import config, machine
from .build import INSTRUMENT, LINK_HOOKIT, compile_exe
from .measure import clean_env, parse_fields

SRC = os.path.join(config.ROOT, "bench", "phases.c")
PHASES = ("tiny", "mid", "slow")
GATE_POINTS = 3.0

# The hookit modes, as a user sets them: (key, label, JPROFOPTS).
MODES = [
    ("default", "hookit default (timer=sample)", ""),
    ("exact", "hookit timer=exact", "timer=exact"),
    ("compensate", "hookit timer=exact,compensate", "timer=exact,compensate"),
    ("sampler_timer", "hookit sampler=timer", "sampler=timer"),
    ("throttle", "hookit throttle (docs/filters.md)", "throttle"),
]


def builds():
    """plain, no-op hooks (for uftrace), libhookit, -pg (for gprof)."""
    os.makedirs(config.OUT, exist_ok=True)
    return {
        "plain": compile_exe("phases-plain", [SRC], []),
        "noop": compile_exe("phases-noop", [SRC], INSTRUMENT),
        "hookit": compile_exe("phases-hookit", [SRC], INSTRUMENT + LINK_HOOKIT),
        "gprof": compile_exe("phases-pg", [SRC], ["-pg"]),
    }


def shares(values):
    """{phase: ns} -> {phase: percent of the three}."""
    total = sum(values.values())
    return {p: 100.0 * values[p] / total if total else 0.0 for p in PHASES}


def run_program(argv, work, env=None):
    p = subprocess.run(argv, cwd=work, env=clean_env(dict(env or {}, HOOKIT_OUTPUT=work)),
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} failed ({p.returncode}): {p.stderr[-1000:]}")
    return p


def plain_times(exe, scale, work):
    """The program's own timing of its phases: (wall ns, CPU ns) per phase."""
    fields = parse_fields(run_program([exe, str(scale)], work).stdout)
    return ({p: fields[p] for p in PHASES}, {p: fields["cpu_" + p] for p in PHASES})


def hookit_times(exe, scale, work, opts):
    """The phase functions' inclusive ns in hookit's profile, and its meta."""
    run_program([exe, str(scale)], work, {"JPROFOPTS": opts} if opts else {})
    prof = [f for f in os.listdir(work) if f.endswith(".prof")]
    if len(prof) != 1:
        raise SystemExit(f"bench: phases under JPROFOPTS={opts}: profiles {prof} in {work}")
    doc = json.loads(subprocess.run([config.HOOKIT, "export", "--format=json",
                                     os.path.join(work, prof[0])], check=True,
                                    capture_output=True, text=True).stdout)
    incl = {p: 0 for p in PHASES}
    for t in doc["threads"]:
        for n in t["nodes"]:
            if n["name"].startswith("phase_") and n["name"][6:] in incl:
                incl[n["name"][6:]] += n["incl_ns"]
    os.unlink(os.path.join(work, prof[0]))
    return incl, doc["process"].get("meta", {})


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9}


def uftrace_times(exe, scale, work):
    """uftrace record, then uftrace report's total (inclusive) time per phase
    function, as a user reads it (wall time, preemption included)."""
    data = os.path.join(work, "uftrace.data")
    run_program(["uftrace", "record", "-d", data, exe, str(scale)], work)
    text = subprocess.run(["uftrace", "report", "-d", data], capture_output=True, text=True,
                          check=True).stdout
    shutil.rmtree(data, ignore_errors=True)
    incl = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d.]+)\s+(ns|us|ms|s|m)\s+[\d.]+\s+\S+\s+\d+\s+phase_(\w+)$", line)
        if m and m.group(3) in PHASES:
            incl[m.group(3)] = float(m.group(1)) * UNITS[m.group(2)]
    return incl


def gprof_times(exe, scale, work):
    """gprof -b -q: each phase function's self + children seconds (10 ms samples)."""
    run_program([exe, str(scale)], work)
    text = subprocess.run(["gprof", "-b", "-q", exe, os.path.join(work, "gmon.out")],
                          capture_output=True, text=True, check=True).stdout
    incl = {}
    for line in text.splitlines():
        m = re.match(r"\[\d+\]\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s+\d+\s+phase_(\w+) \[\d+\]", line)
        if m and m.group(3) in PHASES:
            incl[m.group(3)] = (float(m.group(1)) + float(m.group(2))) * 1e9
    os.unlink(os.path.join(work, "gmon.out"))
    return incl


def median_shares(runs):
    """The per-phase median of several runs' shares."""
    return {p: statistics.median(r[p] for r in runs) for p in PHASES}


def spread(runs):
    return {p: (min(r[p] for r in runs), max(r[p] for r in runs)) for p in PHASES}


def worst_error(got, truth):
    return max(abs(got[p] - truth[p]) for p in PHASES)


def measure(b, scale, reps, modes, others):
    """Alternating rounds of the plain build and every hookit mode; uftrace
    and gprof once each (they are slow, and their error is not small)."""
    wall, cpu = [], []
    got = {key: [] for key, _, _ in modes}
    metas = {key: [] for key, _, _ in modes}
    work = tempfile.mkdtemp(prefix="hookit-fidelity-")
    try:
        for _ in range(reps):
            w, c = plain_times(b["plain"], scale, work)
            wall.append(shares(w))
            cpu.append(shares(c))
            for key, _, opts in modes:
                incl, meta = hookit_times(b["hookit"], scale, work, opts)
                got[key].append(shares(incl))
                metas[key].append(meta)
        single = {}
        if others and shutil.which("uftrace"):
            single["uftrace"] = uftrace_times(b["noop"], scale, work)
        if others and shutil.which("gprof"):
            single["gprof"] = gprof_times(b["gprof"], scale, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return wall, cpu, got, metas, single


def fmt_row(label, sh, truth, note=""):
    cells = " ".join(f"{sh[p]:7.1f}%" for p in PHASES)
    err = f"{worst_error(sh, truth):6.1f}" if truth else f"{'':6}"
    return f"  {label:34} {cells} {err}{('  ' + note) if note else ''}"


def hookit_note(runs_shares, metas):
    lo_hi = spread(runs_shares)
    note = "runs " + ", ".join(f"{lo:.1f}-{hi:.1f}" for lo, hi in lo_hi.values())
    own = [int(m["hookit_samples"]) for m in metas if "hookit_samples" in m]
    if own:
        note += f"; {statistics.median(own):,.0f} samples in hookit's code"
    samplers = sorted({m["sampler"] for m in metas if "sampler" in m})
    if samplers:
        note += f"; {'/'.join(samplers)}"
    return note


def run(reps, scale=None, modes=None):
    """The table and the gate; returns the JSON of the workload."""
    scale = scale or config.FIDELITY_SCALE
    modes = [m for m in MODES if modes is None or m[0] in modes or m[0] == "default"]
    b = builds()
    busy = machine.busy()
    wall, cpu, got, metas, single = measure(b, scale, reps, modes, config.WITH_OTHERS)
    truth_kind = "CPU" if busy else "wall"
    truth = median_shares(cpu if busy else wall)
    print(f"== fidelity 1: bench/phases.c {scale}: the phase functions' inclusive shares, "
          f"{reps} alternating rounds ==")
    print(f"  truth: the uninstrumented build's own {truth_kind} time per phase "
          f"(median; {'the machine is busy: CPU clock' if busy else 'CLOCK_MONOTONIC'})")
    print(f"  {'':34} {'tiny':>8} {'mid':>8} {'slow':>8} {'worst':>6}")
    print(f"  {'':34} {'':>8} {'':>8} {'':>8} {'points':>6}")
    print(fmt_row("uninstrumented, CPU clock", median_shares(cpu), None,
                  "runs " + ", ".join(f"{lo:.1f}-{hi:.1f}" for lo, hi in spread(cpu).values())))
    print(fmt_row("uninstrumented, wall clock", median_shares(wall), None,
                  "runs " + ", ".join(f"{lo:.1f}-{hi:.1f}" for lo, hi in spread(wall).values())))
    rows = {}
    for key, label, _ in modes:
        rows[key] = median_shares(got[key])
        print(fmt_row(label, rows[key], truth, hookit_note(got[key], metas[key])))
    for key, label in (("uftrace", "uftrace record (wall time)"),
                       ("gprof", "gprof -pg (10 ms samples, one run)")):
        if key in single and len(single[key]) == len(PHASES):
            rows[key] = shares(single[key])
            print(fmt_row(label, rows[key], truth))
        elif key in single:
            print(f"  {label}: no phase functions in its report")
    targets = []
    print("targets (issue 26, phases):")
    if "default" in rows:
        err = worst_error(rows["default"], truth)
        ok = err <= GATE_POINTS
        print(f"  {'default mode: every phase within 3 points of the truth':58} "
              f"{err:9.1f} pp  {'PASS' if ok else 'FAIL'}")
        targets.append({"target": "phases_default", "value": err, "ok": ok,
                        "note": f"against the {truth_kind} shares"})
    print()
    return {"scale": scale, "reps": reps, "truth_kind": truth_kind, "truth": truth,
            "plain_cpu": cpu, "plain_wall": wall, "modes": got, "shares": rows,
            "errors": {k: worst_error(v, truth) for k, v in rows.items()},
            "targets": targets}
