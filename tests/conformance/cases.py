"""The conformance corpus: the cases, their builds, their references.

A case is one program (tests/conformance/progs or third-party code fetched at
test time) built with one compiler at one optimization level.  Its reference
is either "refstack" (refstack.c preloaded: exact where entries and exits
pair, and across setjmp/longjmp) or a function that writes the tree the
program guarantees (the processes, each a list of per-thread trees); there,
refstack and uftrace are run as witnesses and their agreement is reported
but does not decide.
"""
import os, shutil, time

import conformance as C
import hk
import thirdparty

BUILDS = [(comp, opt) for comp in ("gcc", "clang") for opt in ("O0", "O2", "O3", "O2-lto")]
# C++ unwinding meets inlining hardest with whole-program inlining: the
# exception cases also build at -O3 -flto.
LTO_BUILDS = BUILDS + [(comp, "O3-lto") for comp in ("gcc", "clang")]
QUICK_BUILDS = [(comp, opt) for comp in ("gcc", "clang") for opt in ("O0", "O2")]


class Case:
    def __init__(self, name, sources=(), lang="c", args=(), quick_args=None, reference="refstack",
                 flags=(), uninstrumented=(), shlibs=(), libs=(), timeout=60, quick=True,
                 builds=None, witnesses=("refstack", "uftrace"), env=None, prepare=None,
                 title=None, same_run=False, quick_builds=None, program=None):
        self.name, self.sources, self.lang = name, list(sources), lang
        self.args, self.quick_args = list(args), list(quick_args if quick_args is not None else args)
        self.reference, self.flags = reference, list(flags)
        self.uninstrumented, self.shlibs, self.libs = list(uninstrumented), list(shlibs), list(libs)
        self.timeout, self.quick = timeout, quick
        self.builds = builds or BUILDS
        self.witnesses = witnesses
        self.env = env or {}
        self.prepare = prepare          # third-party: () -> (sources, flags, args, workdir files)
        self.title = title or name
        self.same_run = same_run        # refstack and hookit chained in one run
        self.quick_builds = quick_builds
        self.program = program or name  # the binary: cases running one program share its builds


def tree(fn):
    """Run a Python mirror of the program on an hk.CallTree; returns its
    {path: calls}."""
    t = hk.CallTree()
    fn(t.call)
    return t.calls


def zero_prefix(calls, prefix):
    """A fork child's tree: prefix is inherited context (0 calls)."""
    return {tuple(prefix) + p: c for p, c in calls.items()}


# ---- expected trees ----------------------------------------------------------

def expected_jump(build):
    def prog(c):
        def dive(n):
            with c("dive"):
                if n == 0:
                    raise Jump("top")
                dive(n - 1)

        def inner_dive(n):
            with c("inner_dive"):
                if n == 0:
                    raise Jump("inner")
                inner_dive(n - 1)

        def middle(k):
            with c("middle"):
                try:
                    inner_dive(k)
                except Jump as j:
                    if j.to != "inner":
                        raise
                with c("leaf"):
                    pass
                if k == 2:
                    dive(3)
        with c("main"):
            for _ in range(5):
                try:
                    dive(8)
                except Jump:
                    pass
                with c("after"):
                    with c("leaf"):
                        pass
            for i in range(3):
                try:
                    middle(i)
                except Jump:
                    pass
                with c("leaf"):
                    pass
    return [[tree(prog)]]


class Jump(Exception):
    def __init__(self, to):
        self.to = to


def expected_sigjump(build):
    def prog(c):
        def deep(n):
            with c("deep"):
                if n == 0:
                    with c("on_usr1"):
                        with c("handler_work"):
                            raise Jump("env")
                deep(n - 1)
        with c("main"):
            for _ in range(3):
                try:
                    deep(5)
                except Jump:
                    pass
                with c("recover"):
                    pass
    return [[tree(prog)]]


def expected_exceptions(build):
    def prog(c):
        def thrower(n):
            with c("thrower(int)"):
                if n == 0:
                    raise Jump("err")
                thrower(n - 1)
        with c("main"):
            for k in range(5):
                with c("catch_at(int)"):
                    try:
                        thrower(k)
                    except Jump:
                        with c("handled()"):
                            pass
            for _ in range(2):
                with c("outer_catch()"):
                    try:
                        with c("rethrower(int)"):
                            try:
                                thrower(2)
                            except Jump:
                                with c("note()"):
                                    pass
                                raise
                    except Jump:
                        with c("handled()"):
                            pass
            with c("sort_throw()"):
                for _ in range(5):
                    with c("cmp_throw(void const*, void const*)"):
                        pass
                with c("handled()"):
                    pass
            with c("stdsort_throw()"):
                for _ in range(7):
                    with c("less_throw(int, int)"):
                        pass
                with c("handled()"):
                    pass
            for _ in range(3):
                with c("no_throw(int)"):
                    with c("thrower_safe(int)"):
                        pass
    return [[tree(prog)]]


def expected_cleanups(build):
    """progs/cleanups.cc: every destructor in the frame that owned its
    object, before the catch; std::terminate's handler on the frames the
    unwinder stopped at (a noexcept frame, whose own cleanups clang runs
    first and gcc does not), or on the throw (no handler)."""
    def guarded(c, ident, body):
        with c("Guard::Guard(int)"):
            pass
        try:
            body()
        finally:
            with c("Guard::~Guard()"):
                pass

    def thrower(c, n):
        with c("thrower(int)"):
            def body():
                if n == 0:
                    raise Jump("err")
                thrower(c, n - 1)
            guarded(c, n, body)

    def parent(c):
        def caught(body):
            try:
                body()
            except Jump:
                with c("handled()"):
                    pass

        def noted(body):
            try:
                body()
            except Jump:
                with c("note()"):
                    pass
                raise
        with c("main"):
            for k in range(4):
                with c("guarded_catch(int)"):
                    caught(lambda: guarded(c, 10, lambda: thrower(c, k)))
            for _ in range(2):
                with c("outer()"):
                    def rethrower():
                        with c("rethrower()"):
                            guarded(c, 20, lambda: noted(lambda: thrower(c, 2)))
                    caught(rethrower)
            for _ in range(2):
                with c("make_holder()"):
                    def holder():
                        with c("Holder::Holder()"):
                            noted(lambda: guarded(c, 30, lambda: guarded(c, 31, lambda: thrower(c, 1))))
                    caught(holder)
            for _ in range(2):
                with c("ftb()"):
                    caught(lambda: guarded(c, 40, lambda: thrower(c, 0)))
            with c("through_function()"):
                def through():
                    with c("guarded_thrower(int)"):
                        guarded(c, 51, lambda: thrower(c, 2))
                caught(lambda: guarded(c, 50, through))
            with c("sort_throw()"):
                def sort():
                    for i in range(7):
                        with c("less_guarded(int, int)"):
                            def one():
                                if i == 6:
                                    raise Jump("err")
                            guarded(c, 61, one)
                caught(lambda: guarded(c, 60, sort))
            for _ in range(2):
                with c("in_child(void (*)())"):
                    pass

    def child(c, which):
        def terminate():
            with c("on_terminate()"):
                pass
        with c("terminate_in_noexcept()" if which == 0 else "terminate_uncaught()"):
            if which == 0:
                with c("must_not_throw()"):
                    with c("Guard::Guard(int)"):
                        pass
                    try:
                        thrower(c, 2)
                    except Jump:
                        if build[0] == "clang":
                            with c("Guard::~Guard()"):
                                pass
                        terminate()     # the unwinder stops at the noexcept frame
            else:
                with c("Guard::Guard(int)"):
                    pass
                with c("thrower(int)"):
                    with c("Guard::Guard(int)"):
                        pass
                    terminate()         # no handler: no unwinding at all
    children = [zero_prefix(tree(lambda c, w=w: child(c, w)), ("main", "in_child(void (*)())"))
                for w in (0, 1)]
    return [[tree(parent)]] + [[ch] for ch in children]


def expected_daemon(build):
    parent = {("main",): 1, ("main", "prepare"): 1, ("main", "go_daemon"): 1}
    child = {("main", "run_daemon"): 1, ("main", "run_daemon", "work"): 3}
    return [[parent], [child]]


# ---- the corpus --------------------------------------------------------------

FORTIFY = [(comp, "O2") for comp in ("gcc", "clang")] + [(comp, "O3") for comp in ("gcc", "clang")]

CASES = [
    Case("recursion", ["recursion.c"]),
    Case("threadpool", ["threadpool.c"], libs=["-lpthread"]),
    Case("longjmp", ["jump.c"], flags=["-DJUMP=1"], reference=expected_jump),
    Case("siglongjmp", ["jump.c"], flags=["-DJUMP=2"], reference=expected_jump),
    Case("_longjmp", ["jump.c"], flags=["-DJUMP=3"], reference=expected_jump),
    Case("__longjmp_chk", ["jump.c"], flags=["-DJUMP=1", "-D_FORTIFY_SOURCE=2"],
         reference=expected_jump, builds=FORTIFY, quick=False),
    Case("sigjump", ["sigjump.c"], reference=expected_sigjump),
    Case("signals", ["signals.c"]),
    Case("exceptions", ["exceptions.cc"], lang="cxx", uninstrumented=["uninst_sort.cc"],
         reference=expected_exceptions, builds=LTO_BUILDS),
    Case("cleanups", ["cleanups.cc"], lang="cxx", uninstrumented=["uninst_call.cc"],
         reference=expected_cleanups, builds=LTO_BUILDS),
    Case("fmt_loop", ["fmt_loop.cc"], lang="cxx"),
    Case("coro-heap", ["coro.c"], flags=["-DSTACK=1"]),
    Case("coro-static", ["coro.c"], flags=["-DSTACK=2"]),
    Case("coro-frame", ["coro.c"], flags=["-DSTACK=3"]),
    Case("pthread_exit", ["pthread_exit.c"], libs=["-lpthread"]),
    Case("fork_deep", ["fork_deep.c"]),
    Case("fork_many", ["fork_many.c"], args=["1000"], quick_args=["40"], timeout=600),
    Case("nginx_like", ["nginx_like.c"]),
    Case("daemon", ["daemonize.c"], reference=expected_daemon, witnesses=("refstack",)),
    Case("vfork_exec", ["vfork_exec.c"]),
    Case("preinit", ["preinit.c"], shlibs=[("ctorlib", ["ctorlib.c"])]),
    Case("own_malloc", ["own_malloc.c"], shlibs=[("plug", ["plug.c"], False)],
         args=["{dir}/libplug.so"], libs=["-lpthread", "-ldl"], timeout=60),
    # Real third-party code, fetched at test time (thirdparty.py).
    Case("sqlite", prepare=thirdparty.prepare_sqlite, timeout=300, quick=False, same_run=True),
    Case("lua", prepare=thirdparty.prepare_lua, args=[os.path.join(C.PROGS, "work.lua")],
         timeout=120, quick_builds=[("gcc", "O2")], same_run=True),
    Case("lua_errors", prepare=thirdparty.prepare_lua, args=[os.path.join(C.PROGS, "errors.lua")],
         quick_args=[os.path.join(C.PROGS, "errors.lua"), "quick"], timeout=120, quick_builds=[("gcc", "O2")], same_run=True, program="lua"),
    Case("zstd", prepare=thirdparty.prepare_zstd, same_run=True, timeout=300, quick=False,
         args=["-q", "-f", "-T2", "-3", "-B1MiB", "{dir}/input.dat", "-o", "{dir}/out.zst"]),
]


# ---- building ------------------------------------------------------------------

def compiler(case, comp):
    return C.COMPILERS[case.lang][comp]


def build(case, comp, opt, quick):
    """Build the case's program; returns (exe, args).  Raises
    C.Unavailable (a -flto that does not link here, a fetch that cannot be
    done) or RuntimeError (a compile error)."""
    d = os.path.join(C.WORK, "bin", f"{case.program}-{comp}-{opt}")
    os.makedirs(d, exist_ok=True)
    cc = compiler(case, comp)
    oflags = C.OPTS[opt]
    sources, extra_flags, inputs = case.sources, case.flags, []
    srcdir = C.PROGS
    if case.prepare:
        srcdir, sources, extra_flags, inputs = case.prepare(d, comp, opt)
        if case.program == "zstd":
            thirdparty.zstd_input(d)
    paths = [s if os.path.isabs(s) else os.path.join(srcdir, s) for s in sources]
    libs = [f for f in extra_flags if f.startswith("-l")]
    base = [cc, "-g"] + oflags + [f for f in extra_flags if not f.startswith("-l")]
    link_extra = []
    for lib in case.shlibs:
        name, srcs = lib[0], lib[1]
        out = os.path.join(d, f"lib{name}.so")
        src = [os.path.join(C.PROGS, s) for s in srcs]
        C.cached(out, [base + ["-finstrument-functions", "-fPIC", "-shared", "-o", out] + src], src)
        if len(lib) < 3 or lib[2]:
            link_extra += ["-L" + d, "-l" + name, "-Wl,-rpath," + d]
    objs = []
    for s in case.uninstrumented:
        src = os.path.join(C.PROGS, s)
        obj = os.path.join(d, os.path.basename(s) + ".o")
        C.cached(obj, [base + ["-c", "-o", obj, src]], [src])
        objs.append(obj)
    exe = os.path.join(d, case.program.strip("_") or case.program)
    cmd = base + ["-finstrument-functions", "-o", exe] + paths + objs + link_extra + case.libs + libs
    try:
        C.cached(exe, [cmd], paths + objs + inputs)
    except RuntimeError as e:
        if "lto" in opt:
            err = [l for l in str(e).splitlines() if "error" in l or "undefined" in l]
            raise C.Unavailable(f"{cc} -flto does not build here: {(err or [str(e)])[0][:200]}")
        raise
    args = case.quick_args if quick else case.args
    return exe, [a.replace("{dir}", d) for a in args]


# ---- one case ------------------------------------------------------------------

def to_procs(expected):
    return [{"label": f"expected process {i}", "threads": [{"tree": t} for t in threads],
             "meta": {}} for i, threads in enumerate(expected)]


def run_case(case, comp, opt, quick=False):
    """Returns (status, line, detail lines): status PASS, FAIL or SKIP."""
    label = f"{case.title} {comp} -{opt.replace('-lto', ' -flto')}"
    try:
        exe, args = build(case, comp, opt, quick)
    except C.Unavailable as e:
        return "SKIP", f"SKIP {label}: {e}", []
    except C.FetchFailed as e:
        status = "SKIP" if quick else "FAIL"
        return status, f"{status} {label}: cannot fetch the sources here: {e}", []
    except Exception as e:                       # noqa: BLE001
        return "FAIL", f"FAIL {label}: build failed", str(e).splitlines()[-15:]
    rundir = os.path.join(C.WORK, "runs", f"{case.name}-{comp}-{opt}")
    shutil.rmtree(rundir, ignore_errors=True)
    # A hang is a FAIL, never a stuck run; the quick subset waits less.
    timeout = min(case.timeout, 15) if quick else case.timeout
    issues, notes = [], []
    if case.same_run:
        ref, got = C.run_chained(exe, args, rundir, timeout)
    else:
        ref, got = C.run_ref(exe, args, os.path.join(rundir, "ref"), timeout), None
    if callable(case.reference):
        expected = to_procs(case.reference((comp, opt)))
        ref_note = witness(expected, ref, "refstack") if "refstack" in case.witnesses else None
        if ref_note:
            notes.append(ref_note)
        if "uftrace" in case.witnesses and not quick:
            notes.append(uftrace_witness(expected, exe, args, os.path.join(rundir, "uftrace"),
                                         min(timeout, 30)))
        ref_kind = "expected tree"
    else:
        if ref["hung"]:
            return "FAIL", f"FAIL {label}: the reference run did not finish in {timeout}s", []
        bad = {k: v for p in ref["procs"] for k, v in p.get("problems", {}).items()}
        if bad or not ref["procs"] or ref["rc"] != 0:
            return "FAIL", (f"FAIL {label}: the reference is not exact here "
                            f"(rc {ref['rc']}, {len(ref['procs'])} processes, {bad})"), \
                ref["stderr"].splitlines()[-5:]
        expected = ref["procs"]
        ref_kind = "refstack, same run" if case.same_run else "refstack"
    if got is None:
        got = C.run_hookit(exe, args, os.path.join(rundir, "hookit"), timeout, case.env)
    if got["hung"]:
        issues.append(f"hookit run hung (killed after {timeout}s)")
    if not case.same_run and (got["rc"] != ref["rc"] or got["stdout"] != ref["stdout"]):
        issues.append(f"the program behaved differently under hookit (rc {got['rc']} vs {ref['rc']}, "
                      f"stdout {got['stdout'][:60]!r} vs {ref['stdout'][:60]!r})")
    issues += C.hookit_meta_issues(got)
    ok, summary, lines, stats = C.compare(expected, got["procs"])
    if not ok:
        issues.insert(0, summary)
    what = f"({stats['paths']:,} paths, {stats['calls']:,} calls, {stats['procs']} process" \
           f"{'es' if stats['procs'] != 1 else ''}; reference: {ref_kind}" \
           + (f"; {'; '.join(n for n in notes if n)}" if any(notes) else "") + ")"
    if issues:
        return "FAIL", f"FAIL {label} {what}: {'; '.join(issues)}", lines
    return "PASS", f"PASS {label} {what}", []


def witness(expected, ref, name):
    if ref["hung"]:
        return f"{name}: did not finish"
    ok, summary, _, _ = C.compare([dict(p) for p in expected], ref["procs"])
    return f"{name} agrees" if ok else f"{name} differs: {summary.split(';')[0]}"


def uftrace_witness(expected, exe, args, outdir, timeout):
    try:
        trees = C.uftrace_trees(exe, args, outdir, timeout)
    except C.Unavailable as e:
        return f"uftrace: {e}"
    got = [{"label": "uftrace", "threads": [{"tree": t} for t in trees], "meta": {}}]
    single = [{"label": p["label"], "meta": {},
               "threads": [{"tree": {tuple(map(C.strip_parens, k)): v for k, v in t["tree"].items()}}
                           for t in p["threads"]]} for p in expected]
    if len(single) != 1:
        return None
    ok, summary, _, _ = C.compare(single, got)
    return "uftrace agrees" if ok else f"uftrace differs: {summary.split(';')[0]}"


def select(names=(), quick=False):
    out = []
    for case in CASES:
        if quick and not case.quick:
            continue
        builds = [b for b in case.builds if not quick or b in QUICK_BUILDS]
        if quick and case.quick_builds:
            builds = case.quick_builds
        for comp, opt in builds:
            cid = f"{case.name}-{comp}-{opt}"
            if names and not any(n in cid for n in names):
                continue
            out.append((case, comp, opt))
    return out
