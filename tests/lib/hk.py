"""Helpers for hookit's tests: build test programs, run them, read profiles.

Every test function takes `tmp`, its own empty directory.  Tests run in
parallel threads: never chdir, always pass cwd=tmp.
"""
import glob, json, os, shutil, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("HOOKIT_BUILD_DIR") or os.path.join(ROOT, "build")
BIN = os.path.join(BUILD, "bin", "hookit")
LIB = os.path.join(BUILD, "lib")
LIBHOOKIT = os.path.join(LIB, "libhookit.so")
PLUGIN_DIR = os.path.join(LIB, "hookit")
INCLUDE = os.path.join(ROOT, "include")
PROGS = os.path.join(ROOT, "tests", "progs")

# make check-arm64: the build is for another architecture; its programs run
# under qemu-user (tests/lib/cross.py).
TARGET = os.environ.get("HOOKIT_TARGET", "")
if TARGET:
    import cross
    cross.install(TARGET, BUILD)


class Skip(Exception):
    pass


def skip(why):
    raise Skip(why)


# ---- sanitizers (make check SANITIZE=...; see tests/run) ---------------------
SANITIZE = set(filter(None, os.environ.get("HOOKIT_SANITIZE", "").split(",")))


def not_under(*sanitizers, why):
    """Decorator: skip this test when the build uses one of the sanitizers
    (tests/run reads fn.not_under)."""
    def mark(fn):
        fn.not_under = {**getattr(fn, "not_under", {}), **{s: why for s in sanitizers}}
        return fn
    return mark


# What a test must add when it links one of the build's static archives
# (obj/libprofile.a, lib/liba2n.a) into a program of its own: they were
# compiled with the sanitizer, so the program needs its runtime.
SANITIZE_FLAGS = [f"-fsanitize={','.join(sorted(SANITIZE))}"] if SANITIZE else []


def _sanitizer_runtime():
    """The shared runtime a program needs preloaded to load our sanitized
    libraries, or None."""
    lib = {"address": "libasan.so", "thread": "libtsan.so"}
    for san, name in lib.items():
        if san in SANITIZE:
            p = subprocess.run(["gcc", "-print-file-name=" + name], capture_output=True, text=True)
            path = os.path.realpath(p.stdout.strip())
            return path if os.path.isabs(path) and os.path.exists(path) else None
    return None


SANITIZER_RUNTIME = _sanitizer_runtime() if SANITIZE else None

# After -lhookit on a link line: under TSan its runtime, needed right after
# libhookit and before libc (see sanitizer_env).
HOOKIT_LINK_TAIL = (["-Wl,--push-state,--no-as-needed", SANITIZER_RUNTIME, "-Wl,--pop-state"]
                    if "thread" in SANITIZE and SANITIZER_RUNTIME else [])


def sanitizer_env(env):
    """Add what programs under a sanitized build need: the runtime in
    LD_PRELOAD, and options that make any report fail the program (leaks
    are not checked: the programs under test are not built with ASan).

    ASan's runtime goes first.  TSan's goes after the preloaded libraries
    (libhookit's thread trampoline must run before TSan's, which crashes on
    instrumented code in a thread it has not set up) and only when one is
    preloaded: a program linked with -lhookit gets it at link time (cc)."""
    if not SANITIZE:
        return env
    if SANITIZER_RUNTIME:
        old = env.get("LD_PRELOAD", "")
        if SANITIZER_RUNTIME not in old.split(":"):
            if "thread" not in SANITIZE:
                env["LD_PRELOAD"] = SANITIZER_RUNTIME + (":" + old if old else "")
            elif old:
                env["LD_PRELOAD"] = old + ":" + SANITIZER_RUNTIME
    # The programs' own deadly signals stay theirs (a test of a crash sees
    # the same death as natively), not the runtime's report.
    own_signals = "allow_user_segv_handler=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:" \
                  "handle_sigill=0:handle_abort=0"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0:abort_on_error=0:"
                   + own_signals + ":exitcode=86")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1:exitcode=87")
    env.setdefault("TSAN_OPTIONS", "exitcode=88:report_signal_unsafe=0:die_after_fork=0:"
                   + own_signals + ":suppressions=" + os.path.join(ROOT, "tests", "tsan.supp"))
    return env


def test_env(**extra):
    """The environment for a program under test: no inherited HOOKIT_* or
    JPROFOPTS, so the user's settings never leak into a test."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HOOKIT_") and k not in ("JPROFOPTS", "LD_PRELOAD")}
    env["HOOKIT_BUILD"] = BUILD
    env["HOOKIT_ROOT"] = ROOT
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return sanitizer_env(env)


def loaded_objects(exe):
    """What ldd prints for exe, found the way ldd finds it: the program's
    own loader with LD_TRACE_LOADED_OBJECTS.  Unlike the host's ldd, this
    also works for a program of another architecture (under qemu-user)."""
    return subprocess.run([exe], env=dict(os.environ, LD_TRACE_LOADED_OBJECTS="1"),
                          capture_output=True, text=True, check=True).stdout


def have(cmd):
    return shutil.which(cmd) is not None


def cc(tmp, sources, out, compiler="gcc", link_hookit=True, instrument=True,
       flags=(), libs=(), shared=False):
    """Compile sources (paths relative to tests/progs unless absolute) into
    tmp/out.  Returns the output path."""
    srcs = [s if os.path.isabs(s) else os.path.join(PROGS, s) for s in sources]
    dst = os.path.join(tmp, out)
    cmd = [compiler, "-g", "-O1", "-I" + INCLUDE]
    if instrument:
        cmd.append("-finstrument-functions")
    if shared:
        cmd += ["-shared", "-fPIC"]
    cmd += list(flags) + ["-o", dst] + srcs
    if link_hookit:
        cmd += ["-L" + LIB, "-lhookit", "-Wl,-rpath," + LIB] + HOOKIT_LINK_TAIL
    cmd += list(libs)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    if p.returncode != 0:
        raise AssertionError(f"compile failed: {' '.join(cmd)}\n{p.stderr}")
    return dst


def run(tmp, argv, env=None, timeout=120, check=True, input=None):
    """Run argv in tmp with HOOKIT_OUTPUT=tmp (unless env overrides it).
    Returns the CompletedProcess (text mode; bytes that are not UTF-8, as
    a corrupt input's names can be, come back escaped, not as an error)."""
    e = test_env(HOOKIT_OUTPUT=tmp)
    if env:
        for k, v in env.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = str(v)
    sanitizer_env(e)
    p = subprocess.run(argv, cwd=tmp, env=e, capture_output=True, text=True,
                       errors="backslashreplace", timeout=timeout, input=input)
    if check and p.returncode != 0:
        raise AssertionError(f"{argv} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def hookit(tmp, *args, check=True, env=None, input=None):
    """Run the hookit command."""
    return run(tmp, [BIN] + list(args), env=env, check=check, input=input)


def profiles(tmp, exe=None):
    """Profile files in tmp (for exe if given), sorted."""
    pat = f"hookit.{exe}.*.prof" if exe else "hookit.*.prof"
    return sorted(glob.glob(os.path.join(tmp, pat)))


def one_profile(tmp, exe=None):
    ps = profiles(tmp, exe)
    assert len(ps) == 1, f"expected one profile in {tmp}, found {ps}: {os.listdir(tmp)}"
    return ps[0]


def nest(doc):
    """A schema-2 document (or a list of them) with each thread's flat
    "nodes" table also given as "roots", every node holding its
    "children" (in the table's order), so tests can walk paths.  Builds it
    without recursion, whatever the depth."""
    if isinstance(doc, list):
        return [nest(d) for d in doc]
    assert doc.get("schema") == 2, f"not a schema-2 document: {list(doc)[:4]}"
    for t in doc["threads"]:
        if "roots" in t:
            continue
        nodes = t["nodes"]
        for i, n in enumerate(nodes):
            assert n["id"] == i, (i, n["id"])
            n["children"] = []
        roots = []
        for n in nodes:
            (roots if n["parent"] is None else nodes[n["parent"]]["children"]).append(n)
        t["roots"] = roots
    return doc


def export_json(tmp, prof, *args):
    """`hookit export --format=json` of prof, with "roots" added (nest)."""
    p = hookit(tmp, "export", "--format=json", *args, prof)
    return nest(json.loads(p.stdout))


def walk(nodes, path=()):
    """Yield (path, node) for every node, in preorder; path is the tuple of
    names from the root.  Iterative: trees may be thousands deep."""
    stack = [(path, n) for n in reversed(nodes)]
    while stack:
        base, n = stack.pop()
        p = base + (n["name"],)
        yield p, n
        stack.extend((p, c) for c in reversed(n.get("children", [])))


def thread_of(doc, index=0):
    for t in doc["threads"]:
        if t["index"] == index:
            return t
    raise AssertionError(f"no thread with index {index}: {[t['index'] for t in doc['threads']]}")


def node(thread, *names):
    """The node reached from the thread's roots by the path of names; the
    path may start at any depth (the first match of names[0] is taken, in
    preorder)."""
    for p, n in walk(thread["roots"]):
        if p[-len(names):] == tuple(names):
            return n
    raise AssertionError(f"no path {' -> '.join(names)}; have:\n" +
                         "\n".join(" -> ".join(p) for p, _ in walk(thread["roots"])))


def child(n, name):
    for c in n.get("children", []):
        if c["name"] == name:
            return c
    raise AssertionError(f"{n['name']} has no child {name}: {[c['name'] for c in n.get('children', [])]}")


def check_tree_consistent(thread):
    """Inclusive time >= exclusive, and >= the sum of the children's inclusive."""
    for p, n in walk(thread["roots"]):
        assert n["calls"] >= 0 and n["incl_ns"] >= n["excl_ns"] >= 0, (p, n)
        s = sum(c["incl_ns"] for c in n.get("children", []))
        assert n["incl_ns"] >= s, (p, n["incl_ns"], s)


# ---- exact call trees (tests/core) -------------------------------------------

C_COMPILERS = ("gcc", "clang")
CXX_COMPILERS = ("g++", "clang++")


class CallTree:
    """Builds the call tree a test program should produce, by running a
    Python mirror of its C code:

        t = hk.CallTree()
        def fib(n):
            with t.call("fib"):
                return n if n < 2 else fib(n - 1) + fib(n - 2)
        with t.call("main"):
            fib(12)
        hk.assert_tree(thread, t.calls)

    t.calls maps each path (tuple of names from the root) to its call count."""

    def __init__(self):
        self.calls = {}
        self._stack = []

    class _Frame:
        def __init__(self, tree, name):
            self.tree, self.name = tree, name

        def __enter__(self):
            self.tree._stack.append(self.name)
            p = tuple(self.tree._stack)
            self.tree.calls[p] = self.tree.calls.get(p, 0) + 1

        def __exit__(self, *exc):
            self.tree._stack.pop()
            return False

    def call(self, name):
        return CallTree._Frame(self, name)


def call_counts(thread):
    """{path: calls} for every node of a thread; a path appears once (a
    calling-context tree has one node per distinct path)."""
    out = {}
    for p, n in walk(thread["roots"]):
        assert p not in out, f"path {' -> '.join(p)} appears twice in the tree"
        out[p] = n["calls"]
    return out


def assert_tree(thread, expected, exact=True):
    """Every expected path has exactly the expected call count; with exact,
    the thread has no other node either."""
    got = call_counts(thread)
    fmt = lambda p: " -> ".join(p)  # noqa: E731
    errors = []
    for p, c in sorted(expected.items()):
        if p not in got:
            errors.append(f"missing {fmt(p)} (expected {c} calls)")
        elif got[p] != c:
            errors.append(f"{fmt(p)}: {got[p]} calls, expected {c}")
    if exact:
        errors += [f"unexpected {fmt(p)} ({c} calls)" for p, c in sorted(got.items())
                   if p not in expected]
    if errors:
        raise AssertionError(f"thread {thread.get('index')} (tid {thread.get('tid')}):\n  "
                             + "\n  ".join(errors[:40]))


def hookit_lines(stderr, pid=None):
    """The lines hookit wrote on stderr (prefixed `hookit[PID]: `; with pid,
    that PID only)."""
    pre = f"hookit[{pid}]: " if pid is not None else "hookit["
    return [l for l in stderr.splitlines() if l.startswith(pre)]


def popen_run(tmp, argv, env=None, timeout=120):
    """Like run(), but also returns the child's pid (the PID in hookit's
    messages): (returncode, stdout, stderr, pid).  Never raises on status."""
    e = test_env(HOOKIT_OUTPUT=tmp)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    sanitizer_env(e)
    p = subprocess.Popen(argv, cwd=tmp, env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err, p.pid
