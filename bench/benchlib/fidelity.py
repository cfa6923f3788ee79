"""The fidelity workload (issue 26): does the default profile's time agree
with the program as it runs without hookit?

  1. bench/phases.c: each phase's share against the uninstrumented build's
     own timing, every hookit mode, uftrace and gprof (benchlib/phases.py)
  2. real code, SQLite, Lua and fmt built with -O2 -fno-inline (so that
     perf's functions and hookit's are the same functions): the self-time
     shares of perf's top 10 functions, perf on the build with glibc's
     no-op hooks against hookit's profile (benchlib/selfshares.py); perf
     on the build without instrumentation beside them, to show what the
     no-op hooks alone move
  3. the same programs at plain -O2 -g (inlining on, as users build),
     hookit's default profile in the view as compiled (--as-compiled:
     inlined copies folded into their hosts) against perf charging each
     sample to the innermost out-of-line instrumented function (perf's
     inlined frames are part of their host, as in that view); JSON keys
     "<program>_inline"

The gates: the default mode within 3 points on every phase, and on each of
perf's top 10 functions of each program in both builds; the other modes
are shown.  config.FIDELITY_PARTS chooses among phases, noinline (2) and
inline (3)."""
import collections
import os
import shutil
import tempfile

from . import config, phases, selfshares
from .build import INSTRUMENT, LINK_HOOKIT, compile_exe, instrumented_builds
from .measure import clean_env
from .programs import fmt_driver, lua_sources
from .sources import Unavailable, fetch, upstream

NOINLINE = ["-fno-inline"]
# The uninstrumented build also keeps its calls calls: an instrumented
# function cannot end in a jump to its callee (its exit hook comes after),
# a plain one would, and its callee's time would go to its caller.
PLAIN_ONLY = ["-fno-optimize-sibling-calls"]
GATE_POINTS = 3.0
TOP = 10
MODES = [("default", "default", ""), ("exact", "timer=exact", "timer=exact"),
         ("compensate", "compensate", "timer=exact,compensate"), ("throttle", "throttle", "throttle")]
# The builds compared with perf (config.FIDELITY_PARTS names them): their
# flags, and the stem of their binaries' names.  "inline" is plain -O2 -g,
# the default inlining build; its instrumented binaries are the ones the
# cost workloads build (same names, same flags).
BUILDS = {"noinline": (NOINLINE, "-noinline"), "inline": ([], "")}


def fmt_build(build):
    flags, tag = BUILDS[build]
    driver = fmt_driver()
    return (compile_exe(f"fmt{tag}-nosib-plain", [driver], flags + PLAIN_ONLY, cc="g++"),) + \
        instrumented_builds("fmt" + tag, [driver], extra_flags=flags, cc="g++") + \
        ([config.FIDELITY_FMT_N],)


def lua_build(build):
    flags, tag = BUILDS[build]
    sources, libs, lua_flags = lua_sources()
    return (compile_exe(f"lua{tag}-nosib-plain", sources, lua_flags + flags + PLAIN_ONLY, libs),) + \
        instrumented_builds("lua" + tag, sources, libs, lua_flags + flags) + \
        ([os.path.join(config.ROOT, "bench", "lua", "work.lua"), config.FIDELITY_LUA_N],)


def sqlite_build(build):
    from . import sqlite
    flags, tag = BUILDS[build]
    src = fetch(upstream.fetch_sqlite)
    plain = sqlite.compile_object(src, f"sqlite3{tag}-nosib-plain.o", flags + PLAIN_ONLY)
    instr = sqlite.compile_object(src, f"sqlite3{tag}-instr.o", INSTRUMENT + flags)
    return (sqlite.link(f"sqlite{tag}-nosib-plain", src, plain, flags + PLAIN_ONLY),
            sqlite.link(f"sqlite{tag}-noop", src, instr, INSTRUMENT + flags),
            sqlite.link(f"sqlite{tag}-hookit", src, instr, INSTRUMENT + flags + LINK_HOOKIT),
            [config.FIDELITY_SQLITE_ORDERS])


BUILDERS = {"sqlite": sqlite_build, "lua": lua_build, "fmt": fmt_build}


class View(collections.namedtuple("View", "part build title target as_compiled")):
    """One comparison with perf: the part's number in the output, the build
    (BUILDS), its table's title, its
    targets' prefix in the JSON, and whether hookit's side is the view as
    compiled (perf's side then charges out-of-line functions only)."""


NOINLINE_VIEW = View(2, "noinline", "-O2 -fno-inline", "selfshares", False)
INLINE_VIEW = View(3, "inline", "-O2 (inlining), hookit --as-compiled", "selfshares_inline", True)


def hookit_run(hooked, args, work, opts, as_compiled=False):
    """One run of the libhookit build; its profile's self-time shares."""
    import subprocess
    out = os.path.join(work, "hookit-" + (opts or "default"))
    os.mkdir(out)
    env = clean_env({"HOOKIT_OUTPUT": out, **({"JPROFOPTS": opts} if opts else {})})
    subprocess.run([hooked] + [str(a) for a in args], cwd=out, env=env, check=True,
                   capture_output=True)
    profs = [f for f in os.listdir(out) if f.endswith(".prof")]
    if len(profs) != 1:
        raise SystemExit(f"bench: {hooked} JPROFOPTS={opts}: profiles {profs}")
    return selfshares.hookit_shares(os.path.join(out, profs[0]), as_compiled)


def chosen_modes():
    """The modes config.FIDELITY_MODES names (default always among them)."""
    wanted = config.FIDELITY_MODES
    return [m for m in MODES if not wanted or m[0] in wanted or m[0] == "default"]


def perf_run(exe, args, work, instrumented, env=None, own=(), out_of_line=False):
    """perf's shares of one run of exe (a perf that saw nothing ends the bench)."""
    data = selfshares.perf_record(exe, args, work, env)
    try:
        return selfshares.perf_shares(data, instrumented, own, out_of_line)
    except selfshares.PerfFailed as e:
        raise SystemExit(f"bench: {e}") from None
    finally:
        os.unlink(data)


def compare_program(name, view=NOINLINE_VIEW):
    """perf against every hookit mode on one program; the table and the
    gate.  The view as compiled compares the default mode only."""
    modes = chosen_modes() if not view.as_compiled else MODES[:1]
    try:
        plain, noop, hooked, args = BUILDERS[name](view.build)
    except Unavailable as e:
        print(f"== fidelity {view.part}, {name} {view.title}: skipped: {e} ==\n")
        return {"skipped": str(e)}
    work = tempfile.mkdtemp(prefix="hookit-fidelity-")
    try:
        instrumented = selfshares.instrumented_functions(noop)
        perf, tally = perf_run(noop, args, work, instrumented, out_of_line=view.as_compiled)
        # The same functions uninstrumented: what the no-op hooks alone move.
        plain_shares, tally["plain"] = perf_run(plain, args, work, instrumented,
                                                out_of_line=view.as_compiled)
        # perf on hookit's own build, hookit's code left out: the witness of
        # hookit's placement of its samples (not of the program's time).
        own_dir = os.path.join(work, "perf-hookit")
        os.mkdir(own_dir)
        on_hookit, tally["on_hookit"] = perf_run(hooked, args, work, instrumented,
                                                 clean_env({"HOOKIT_OUTPUT": own_dir}),
                                                 selfshares.OWN_DSOS, view.as_compiled)
        got, metas = {"perf_plain": plain_shares}, {}
        for key, _, opts in modes:
            got[key], metas[key] = hookit_run(hooked, args, work, opts, view.as_compiled)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = report(name, view, args, modes, perf, tally, got, metas)
    placement = selfshares.compare(on_hookit, got["default"], TOP)[1]
    print(f"  perf on hookit's build (default mode, its own code left out: "
          f"{tally['on_hookit'].get('in_hookit', 0):,} of {tally['on_hookit'].get('samples', 0):,} "
          f"samples) against hookit's profile of another run, perf's top {TOP}: "
          f"{placement:.2f} pp (placement, shown)\n")
    out["errors_perf_on_hookit"] = placement
    out["targets"].append({"target": f"{view.target.replace('selfshares', 'placement')}_{name}",
                           "value": placement, "ok": None,
                           "note": "perf on hookit's build against hookit's profile"})
    return out


def report(name, view, args, modes, perf, tally, got, metas):
    print(f"== fidelity {view.part}, {name} {view.title} ({' '.join(map(str, args))}): self-time "
          f"shares of perf's top {TOP} functions ==")
    charged = ("the innermost out-of-line instrumented function (perf's inlined frames are "
               "their hosts')" if view.as_compiled else "the innermost instrumented function")
    print(f"  perf record -e cpu-clock -F {selfshares.PERF_HZ} --call-graph=dwarf, no-op hooks, "
          f"each sample charged to {charged}: "
          f"{tally.get('samples', 0):,} samples, {tally.get('kept', 0):,} the program's "
          f"({tally.get('kept_in_kernel', 0):,} of them in the kernel), "
          f"{tally.get('in_hooks', 0):,} in the hooks (left out), "
          f"{tally.get('no_instrumented_frame', 0):,} with no instrumented frame (left out)")
    own = metas["default"].get("hookit_samples")
    print(f"  hookit default{' --as-compiled' if view.as_compiled else ''}: "
          f"{metas['default'].get('sampler', '?')}, "
          f"{own if own is not None else '?'} samples in hookit's own code (charged to no node)")
    plain = tally["plain"]
    print("  perf, plain: the same build without -finstrument-functions (and without sibling "
          f"calls), its samples charged the same way ({plain.get('samples', 0):,} samples, "
          f"{plain.get('kept', 0):,} kept): what the no-op hooks alone move")
    columns = [("perf_plain", "perf, plain")] + [(k, label) for k, label, _ in modes]
    results = {key: selfshares.compare(perf, got[key], TOP) for key, _ in columns}
    against_plain = print_shares(columns, results, got["perf_plain"])
    print(f"targets (issue 26, {name} {view.title}):")
    err = results["default"][1]
    ok = err <= GATE_POINTS
    print(f"  {'default mode: perf top 10 within 3 points of perf':58} {err:9.2f} pp  "
          f"{'PASS' if ok else 'FAIL'}")
    print(f"  {'default mode against perf on the uninstrumented build':58} "
          f"{against_plain['default']:9.2f} pp  shown")
    print()
    return {"args": args, "build": view.build, "as_compiled": view.as_compiled,
            "perf_tally": tally,
            "rows": {k: [{"function": f, "perf": p, "other": h} for f, p, h in results[k][0]]
                     for k in results},
            "errors": {k: results[k][1] for k in results},
            "errors_against_plain": against_plain,
            "hookit_samples": own,
            "targets": [{"target": f"{view.target}_{name}", "value": err, "ok": ok,
                         "note": f"default mode against perf, top 10, {view.title}"},
                        {"target": f"{view.target}_plain_{name}", "value": against_plain["default"],
                         "ok": None, "note": "against perf on the uninstrumented build"}]}


def print_shares(columns, results, plain):
    """The table: perf's top functions, each column's share of them, and
    each column's worst difference from perf and from perf on the plain
    build (returned)."""
    print(f"  {'function':46} {'perf':>6} " + " ".join(f"{label:>11}" for _, label in columns))
    for i, (fn, p, _) in enumerate(results["default"][0]):
        cells = " ".join(f"{results[k][0][i][2]:10.2f}%" for k, _ in columns)
        print(f"  {selfshares.short(fn, 46):46} {p:5.2f}% {cells}")
    print(f"  {'worst difference from perf, points':46} {'':6} "
          + " ".join(f"{results[k][1]:11.2f}" for k, _ in columns))
    against_plain = {k: max(abs(plain.get(f, 0.0) - h) for f, _, h in results[k][0])
                     for k, _ in columns[1:]}
    print(f"  {'worst difference from perf, plain, points':46} {'':6} {'':11} "
          + " ".join(f"{against_plain[k]:11.2f}" for k, _ in columns[1:]))
    return against_plain


def run(reps):
    parts = config.FIDELITY_PARTS
    unknown = set(parts) - {"phases", "noinline", "inline"}
    if unknown:
        raise SystemExit(f"bench: unknown part(s) {', '.join(sorted(unknown))} in "
                         "BENCH_FIDELITY_PARTS (valid: phases, noinline, inline)")
    out = {"phases": phases.run(reps, modes=config.FIDELITY_MODES)} if "phases" in parts else {}
    targets = list(out["phases"]["targets"]) if out else []
    views = [(NOINLINE_VIEW, ""), (INLINE_VIEW, "_inline")]
    for name in config.FIDELITY_PROGRAMS:
        if not shutil.which("perf"):
            print(f"== fidelity 2, {name}: skipped: perf is not installed ==\n")
            break
        for view, suffix in views:
            if view.build in parts:
                out[name + suffix] = compare_program(name, view)
                targets += out[name + suffix].get("targets", [])
    out["targets"] = targets
    return out
