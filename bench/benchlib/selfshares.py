"""Self-time shares of a program's functions two ways (issue 26): by perf,
sampling the build with glibc's no-op hooks, and by hookit's profile of
the same sources linked with libhookit.

perf's side counts time the way hookit does: each cpu-clock sample (with a
DWARF call graph) is charged to the innermost frame that is an
instrumented function of the program (one whose code calls
__cyg_profile_func_enter: objdump says which, not hookit), so library and
kernel frames fold into their innermost instrumented caller; frames perf
shows as inlined count when they are instrumented functions (GCC
instruments an inlined body too, and hookit counts it).  On an inlining
build compared with hookit's view as compiled (`--as-compiled`: inlined
copies folded into their hosts), the owner is the innermost *out-of-line*
instrumented function instead: frames perf shows as inlined are not
functions there (out_of_line=True).  A sample whose
leaf is a hook (__cyg_profile_func_enter/exit, or its PLT stub) is left
out: that is instrumentation, not the program, and the uninstrumented
program would not have spent it.  So is a sample with no instrumented
frame at all (start-up before main, the dynamic loader): hookit's tree has
no node for it either.  Names are compared demangled (perf's by c++filt,
libiberty's demangler, as hookit stores them), with GCC's clone suffixes
(.constprop.0, .isra.0, .part.0, .cold) removed on both sides."""
import collections
import json
import os
import re
import subprocess
import tempfile

from . import config

HOOK_PREFIX = "__cyg_profile_func_"
# perf record's sampling rate: 10 kHz of cpu-clock, 40x hookit's 250 us.
PERF_HZ = 10000


CLONE = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?"
                   r"| \[clone [^]]+\])+$")


def base_name(sym):
    """A function's name without GCC's clone suffixes (.constprop.0 as the
    binary spells it, [clone .constprop.0] as the demangler does)."""
    return CLONE.sub("", sym)


def instrumented_functions(exe):
    """Names of the functions in exe whose code calls the enter hook."""
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", exe], capture_output=True,
                          text=True, check=True).stdout
    found, current = set(), None
    for line in text.splitlines():
        m = re.match(r"[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = m.group(1)
        elif current and "call" in line and f"<{HOOK_PREFIX}enter" in line:
            found.add(base_name(current))
    return found


def perf_record(exe, args, work, env=None):
    """perf record -e cpu-clock with DWARF call graphs of one run; the
    program's stdout line (it prints its own CPU time)."""
    data = os.path.join(work, "perf.data")
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(PERF_HZ),
                        "--call-graph=dwarf", "-o", data, exe] + [str(a) for a in args],
                       cwd=work, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"perf record {exe} failed: {p.stderr.strip()[-500:]}")
    return data


FRAME = re.compile(r"\s+[0-9a-f]+ (.+) \((.+)\)$")


class PerfFailed(Exception):
    pass


def perf_samples(data, inline=True):
    """Each sample's frames, innermost first: [(symbol, dso), ...];
    inline=False: without the frames perf would add for inlined code (it
    looks them up in the debug information, slowly, on an inlining build)."""
    err = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen(["perf", "script", "-i", data, "-F", "tid,period,ip,sym,dso",
                          "--no-demangle"] + ([] if inline else ["--no-inline"]),
                         stdout=subprocess.PIPE, stderr=err, text=True)
    yield from parse_script(p.stdout)
    if p.wait() != 0:
        err.seek(0)
        raise PerfFailed(f"perf script -i {data} failed ({p.returncode}): {err.read()[-500:]}")


def parse_script(lines):
    """perf script's samples, each a header line and its frames, a blank line after."""
    frames = None
    for line in lines:
        if not line.strip():
            if frames is not None:
                yield frames
            frames = None
        elif not line.startswith("\t"):            # "TID PERIOD", right-aligned
            frames = []
        elif frames is not None:
            m = FRAME.match(line.rstrip("\n"))
            if m:
                sym = m.group(1)
                frames.append((re.sub(r"\+0x[0-9a-f]+$", "", sym), m.group(2)))
    if frames is not None:
        yield frames


# hookit's own objects: on hookit's build, a sample there is hookit's, as
# the hooks' are on the no-op build.
OWN_DSOS = ("libhookit", "libjprof")
# The DSO perf gives a frame of code inlined into the frame below it.
INLINED = "inlined"


def innermost_dso(frames):
    """The object of the innermost frame that has one: perf shows a frame
    inlined there with the DSO "inlined"."""
    return next((dso for _, dso in frames if dso != INLINED), "")


def charge(samples, instrumented, own=(), out_of_line=False):
    """Samples (frames innermost first) charged to functions: ({function:
    samples}, the tally of what was kept and left out).  own: names of
    objects whose samples are left out as the hooks' are (OWN_DSOS, for
    perf on hookit's build).  out_of_line: a frame perf shows as inlined
    owns nothing (the view as compiled has folded it into its host)."""
    counts = collections.Counter()
    tally = collections.Counter()
    for frames in samples:
        tally["samples"] += 1
        if not frames:
            tally["no_stack"] += 1
            continue
        if frames[0][0].startswith(HOOK_PREFIX):      # the hook or its @plt stub
            tally["in_hooks"] += 1
            continue
        if own and any(o in os.path.basename(innermost_dso(frames)) for o in own):
            tally["in_hookit"] += 1
            continue
        owner = next((base_name(s) for s, dso in frames
                      if base_name(s) in instrumented and not (out_of_line and dso == INLINED)),
                     None)
        if owner is None:
            tally["no_instrumented_frame"] += 1
            continue
        counts[owner] += 1
        tally["kept"] += 1
        if frames[0][1] == "[kernel.kallsyms]":     # kept: hookit's sampler may not see it
            tally["kept_in_kernel"] += 1
    return counts, dict(tally)


def perf_shares(data, instrumented, own=(), out_of_line=False):
    """{function: percent of the program's samples}, and the tally of what
    was left out (hook leaves, samples with no instrumented frame, and
    those in own's objects); out_of_line as charge's."""
    counts, tally = charge(perf_samples(data, inline=not out_of_line), instrumented, own,
                           out_of_line)
    total = sum(counts.values())
    if not total:
        raise PerfFailed(f"perf script -i {data}: no sample of the program ({tally})")
    names = demangled(list(counts))
    return {names[f]: 100.0 * c / total for f, c in counts.items()}, tally


def hookit_shares(profile, as_compiled=False):
    """{function: percent of all self time} from hookit's profile (every
    thread, every context of a function summed), and the profile's meta;
    as_compiled: the view as compiled, inlined copies in their hosts."""
    view = ["--as-compiled"] if as_compiled else []
    doc = json.loads(subprocess.run([config.HOOKIT, "export", "--format=json", "--demangle=no"]
                                    + view + [profile], capture_output=True, text=True,
                                    check=True).stdout)
    self_ns = collections.Counter()
    for t in doc["threads"]:
        for n in t["nodes"]:
            self_ns[base_name(n["name"])] += n["excl_ns"]
    total = sum(self_ns.values())
    return {f: 100.0 * v / total for f, v in self_ns.items()} if total else {}, \
        doc["process"].get("meta", {})


def demangled(names):
    """{mangled: demangled} by c++filt, libiberty's demangler, as hookit's
    profile stores names (C names unchanged)."""
    p = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                       check=True)
    return dict(zip(names, p.stdout.splitlines()))


def short(name, width=44):
    return name if len(name) <= width else name[:width - 3] + "..."


def compare(perf, hookit, top=10):
    """The top functions by perf's share: (name, perf %, hookit %) and the
    worst absolute difference in points."""
    names = sorted(perf, key=perf.get, reverse=True)[:top]
    rows = [(n, perf[n], hookit.get(n, 0.0)) for n in names]
    return rows, max((abs(p - h) for _, p, h in rows), default=0.0)
