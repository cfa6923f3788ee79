"""Stress scenarios, shared by tests/stress (`make stress`, full size) and
tests/reliability (`make check`, a short run of each).

Every scenario builds its program twice from tests/stress/progs: natively
(no instrumentation, no hookit) and instrumented and linked with libhookit.
Both run with the same arguments; stdout and the exit status must be
identical, the instrumented run must leave its profile(s), and profcheck
(tests/stress/progs/profcheck.c) must find them consistent: every node
called, exclusive <= inclusive <= the process's duration, a parent's
inclusive time at least its children's sum.  Then each scenario checks the
counts it can know exactly.

Each scenario returns a dict of the figures it measured (for the report).
"""
import glob, os, re, subprocess, time

import hk

PROGS = os.path.join(hk.ROOT, "tests", "stress", "progs")


def profcheck_bin(tmp):
    out = os.path.join(tmp, "profcheck")
    if not os.path.exists(out):
        lib = os.path.join(hk.BUILD, "obj", "libprofile.a")
        p = subprocess.run(["gcc", "-std=gnu11", "-D_GNU_SOURCE", "-O2"] + hk.SANITIZE_FLAGS + ["-I" + hk.ROOT,
                            "-I" + hk.INCLUDE, "-o", out, os.path.join(PROGS, "profcheck.c"),
                            lib, "-lz"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    return out


class Check:
    """profcheck's findings over a set of profiles."""

    def __init__(self, text):
        self.funcs, self.edges, self.meta, self.totals = {}, {}, {}, {}
        for line in text.splitlines():
            if line.startswith("func "):
                name, calls = line[5:].rsplit("\t", 1)
                self.funcs[name] = int(calls)
            elif line.startswith("edge "):
                parent, child, calls = line[5:].split("\t")
                self.edges[(parent, child)] = int(calls)
            elif line.startswith("meta "):
                k, v = line[5:].split("\t")
                self.meta[k] = int(v)
            else:
                k, v = line.split()
                self.totals[k] = int(v)

    def calls(self, fn):
        return self.funcs.get(fn, 0)


def profcheck(tmp, profiles):
    assert profiles, f"no profile written in {tmp}: {os.listdir(tmp)}"
    p = subprocess.run([profcheck_bin(tmp)] + profiles, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, f"inconsistent profile: {p.stderr}"
    return Check(p.stdout)


def build(tmp, src, name, cxx=False, libs=()):
    """(native, instrumented) executables of tests/stress/progs/src."""
    compiler = "g++" if cxx else "gcc"
    srcs = [os.path.join(PROGS, src)]
    native = hk.cc(tmp, srcs, name + ".native", compiler=compiler, link_hookit=False,
                   instrument=False, libs=libs)
    inst = hk.cc(tmp, srcs, name, compiler=compiler, libs=libs)
    return native, inst


def run_both(tmp, native, inst, args, timeout=1200, env=None):
    """Run natively (in tmp/native) and instrumented (in tmp/run, which gets
    the profiles); the same stdout and exit status.  Returns the
    instrumented run's CompletedProcess, its profiles and its wall time."""
    nd, rd = os.path.join(tmp, "native"), os.path.join(tmp, "run")
    os.makedirs(nd, exist_ok=True)
    os.makedirs(rd, exist_ok=True)
    args = [str(x) for x in args]
    a = hk.run(nd, [native] + args, timeout=timeout, check=False, env=env)
    t0 = time.monotonic()
    b = hk.run(rd, [inst] + args, timeout=timeout, check=False, env=env)
    secs = time.monotonic() - t0
    assert a.returncode == b.returncode, \
        f"exit status {b.returncode} instrumented, {a.returncode} native\nstderr:\n{b.stderr[-3000:]}"
    assert a.stdout == b.stdout, f"stdout differs:\nnative:\n{a.stdout[-2000:]}\ninstrumented:\n{b.stdout[-2000:]}"
    profs = sorted(glob.glob(os.path.join(rd, "hookit.*.prof")))
    return b, profs, secs


def figures(stderr, key):
    """The numbers after `key` on the program's stderr line starting with it."""
    for line in stderr.splitlines():
        if line.startswith(key + " "):
            return [float(x) for x in re.findall(r"[\d.]+", line[len(key):])]
    raise AssertionError(f"no '{key}' line on stderr:\n{stderr[-2000:]}")


# ---- the scenarios -----------------------------------------------------------

def threads(tmp, alive, short, max_kb_per_thread=2):
    """ALIVE threads at once, then SHORT short-lived ones: every thread's
    calls counted; memory per ended thread bounded (its tree stays in the
    profile; its stack and state are reused)."""
    native, inst = build(tmp, "st_threads.c", "st_threads", libs=["-lpthread"])
    r, profs, secs = run_both(tmp, native, inst, [alive, short])
    c = profcheck(tmp, profs)
    n = alive + short
    # one tree per thread, or fewer when older ended threads are merged
    # into one "(merged)" thread (JPROFOPTS threads_kept, default 1000)
    assert min(n + 1, 1001) <= c.totals["threads"] <= n + 1, c.totals
    assert c.calls("work") == n and c.calls("leaf") == 2 * n, (c.calls("work"), c.calls("leaf"))
    assert c.edges.get(("alive", "work")) == alive and c.edges.get(("short_lived", "work")) == short
    mid, end = figures(r.stderr, "rss_kb")
    growth = (end - mid) / max(1, short * 0.9)
    assert growth <= max_kb_per_thread, \
        f"resident memory grew {end - mid:.0f} KB over {short * 0.9:.0f} threads ({growth:.2f} KB each)"
    return {"threads_alive": alive, "threads_total": n, "rss_kb_mid": mid, "rss_kb_end": end,
            "kb_per_thread": round(growth, 2), "seconds": round(secs, 1)}


def recursion(tmp, depth):
    native, inst = build(tmp, "st_recurse.c", "st_recurse", libs=["-lpthread"])
    r, profs, secs = run_both(tmp, native, inst, [depth])
    c = profcheck(tmp, profs)
    assert c.calls("down") == depth, c.calls("down")
    assert c.totals["maxdepth"] >= depth + 1, c.totals
    # the call after the recursion is back at the thread's top level
    assert c.edges.get(("run", "after")) == 1, [e for e in c.edges if e[1] == "after"]
    return {"depth": depth, "seconds": round(secs, 1)}


def fork_tree(tmp, a, b):
    native, inst = build(tmp, "st_forktree.c", "st_forktree")
    r, profs, secs = run_both(tmp, native, inst, [a, b])
    n = a + a * b
    assert len(profs) == n + 1, f"{len(profs)} profiles for {n + 1} processes"
    c = profcheck(tmp, profs)
    assert c.calls("work") == n and c.calls("leaf") == 2 * n, (c.calls("work"), c.calls("leaf"))
    assert c.edges.get(("child", "work")) == a and c.edges.get(("grandchild", "work")) == a * b
    pids = {int(re.search(r"\.(\d+)\.prof$", p).group(1)) for p in profs}
    assert len(pids) == n + 1
    return {"processes": n + 1, "seconds": round(secs, 1)}


def signals(tmp, seconds, min_rate):
    native, inst = build(tmp, "st_signals.c", "st_signals", libs=["-lpthread"])
    r, profs, secs = run_both(tmp, native, inst, [seconds])
    sent, handled, rate = figures(r.stderr, "sent")
    c = profcheck(tmp, profs)
    counted = c.calls("on_usr1")
    dropped = c.meta.get("dropped_events", 0)
    # a handler that interrupts a hook is not counted (the hook is busy) and
    # is then in dropped_events: never more calls than ran, nothing lost
    # without a trace
    assert counted <= handled <= counted + dropped, (counted, handled, dropped)
    assert c.calls("count") == counted, (c.calls("count"), counted)
    assert rate >= min_rate, f"only {rate:.0f} signals/s sent"
    return {"signals_sent": int(sent), "signals_per_s": int(rate), "handled": int(handled),
            "counted": counted, "dropped_events": dropped}


def exceptions(tmp, depth, repeat):
    native, inst = build(tmp, "st_throw.cc", "st_throw", cxx=True, libs=["-lpthread"])
    r, profs, secs = run_both(tmp, native, inst, [depth, repeat])
    c = profcheck(tmp, profs)
    assert c.calls("dive(long)") == depth * repeat, c.calls("dive(long)")
    assert c.edges.get(("run(void*)", "dive(long)")) == repeat
    assert c.edges.get(("run(void*)", "after(long)")) == 1, \
        [e for e in c.edges if e[1] == "after(long)"]
    return {"throw_depth": depth, "throws": repeat, "seconds": round(secs, 1)}


def longjmps(tmp, depth, repeat):
    native, inst = build(tmp, "st_longjmp.c", "st_longjmp")
    r, profs, secs = run_both(tmp, native, inst, [depth, repeat])
    c = profcheck(tmp, profs)
    assert c.calls("dive") == depth * repeat, c.calls("dive")
    assert c.edges.get(("main", "dive")) == repeat
    # what main calls after the last longjmp is main's child, not left
    # under a frame the longjmp skipped
    assert c.edges.get(("main", "after")) == 1, \
        f"after() placed under {[e[0] for e in c.edges if e[1] == 'after']}: a frame the longjmp left stayed open"
    return {"longjmp_depth": depth, "longjmps": repeat, "seconds": round(secs, 1)}


def dlopen(tmp, nlibs, seconds):
    """2 threads dlopen/call/dlclose NLIBS instrumented libraries.  Counts
    are exact, and every call is under its own name: an
    address reused by another library after dlclose must not rename it."""
    native, inst = build(tmp, "st_dlopen.c", "st_dlopen", libs=["-lpthread", "-ldl"])
    for i in range(nlibs):
        hk.cc(tmp, [os.path.join(PROGS, "st_dlib.c")], f"libst{i}.so", link_hookit=False,
              shared=True, flags=[f"-DLIB={i}"])
    r, profs, secs = run_both(tmp, native, inst, [tmp, nlibs, seconds])
    cycles = int(figures(r.stderr, "cycles")[0])
    c = profcheck(tmp, profs)
    total = c.calls("lib_fn") + c.calls("lib_leaf")
    assert total == 2 * cycles, (c.calls("lib_fn"), c.calls("lib_leaf"), cycles)
    unresolved = [f for f in c.funcs if f.startswith("0x")]
    assert not unresolved, unresolved
    misnamed = cycles - c.calls("lib_fn")
    assert misnamed == 0, \
        f"{misnamed} of {cycles} calls of lib_fn are under another name (address reuse after dlclose)"
    return {"dlopen_cycles": cycles, "libraries": nlibs, "seconds": seconds, "misnamed": misnamed}


def long_run(tmp, seconds, max_growth_kb):
    native, inst = build(tmp, "st_longrun.c", "st_longrun", libs=["-lpthread"])
    r, profs, secs = run_both(tmp, native, inst, [seconds], timeout=seconds * 3 + 120)
    first, last, peak = figures(r.stderr, "rss_kb")
    profcheck(tmp, profs)
    assert peak - first <= max_growth_kb, f"resident memory grew from {first} KB to {peak} KB"
    return {"seconds": seconds, "rss_kb_first": first, "rss_kb_max": peak}


def record(test, figures_):
    """Append a scenario's figures to $BUILD/stress-figures.jsonl (read by
    hand for docs/reliability.md)."""
    import json
    with open(os.path.join(hk.BUILD, "stress-figures.jsonl"), "a") as f:
        f.write(json.dumps({"test": test, "time": int(time.time()), **figures_}) + "\n")
