"""Readable C++ names by default (issue 30): the simple form drops return
types, template arguments, parameter lists (also those of enclosing
functions, in local classes and lambdas) and an operator template's
arguments; functions that would then read alike take the shortest form
that tells them apart.  --fold-frames folds wrapper frames into their
callers, by default the standard library's thread and invoke wrappers
(--no-fold-frames: none).  On tests/reports/progs/cxx_wrappers.cc, on
{fmt} (Debian's libfmt-dev, bench/fmt_driver.cc) and on leveldb (Debian's
source package, fetched and built once into $BUILD/upstream, about two
minutes the first time): no name over 80 characters unless another
function reads alike without its template arguments and parameters."""
import glob, os, re, subprocess, sys, threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hk  # noqa: E402
import upstream  # noqa: E402

OPS = r"<=>|<<=|>>=|->\*|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|\+=|-=|\*=|/=|%=|&=|\|=|\^=|->|\(\)|\[\]|[<>+\-*/%^&|~!=,]"


def core(name):
    """A C++ name without template arguments, parameter lists and return
    type: what two functions that collide in the simple form share."""
    out, depth, i = [], 0, 0
    while i < len(name):
        m = re.match(r"operator(" + OPS + ")?", name[i:])
        if m and (i == 0 or not (name[i - 1].isalnum() or name[i - 1] == "_")):
            if depth == 0:
                out.append(m.group(0))
            i += len(m.group(0))
            continue
        c = name[i]
        if c in "<(":
            depth += 1
        elif c in ">)" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out).strip().split(" ")[-1]


def flat_names(tmp, prof, module, *args):
    text = hk.hookit(tmp, "report", "--flat", "--no-pager", *args, prof).stdout
    names = re.findall(r"  F:" + re.escape(module) + r"\.(.*)$", text, re.M)
    assert names, text
    return [n[:-2] if n.endswith("()") else n for n in names]


def check_short(names, what):
    """No name over 80 characters unless another reads alike without its
    template arguments and parameters (then it keeps what tells them apart)."""
    cores = {}
    for n in names:
        cores.setdefault(core(n), []).append(n)
    long_alone = [n for n in names if len(n) > 80 and len(cores[core(n)]) < 2]
    assert not long_alone, (what, long_alone)


def wrappers_profile(tmp):
    exe = hk.cc(tmp, [os.path.join(HERE, "progs", "cxx_wrappers.cc")], "cxx", compiler="g++",
                flags=["-O0", "-pthread"], link_hookit=False)
    # Every call timed, so that every frame has time and shows in the
    # time-weighted views (a sampled frame of a few ns has none).
    p = hk.hookit(tmp, "run", "--", exe, env={"JPROFOPTS": "timer=exact"})
    assert p.stdout == "5\n", p.stdout
    return hk.one_profile(tmp, "cxx")


def thread_roots(tmp, prof, *args):
    text = hk.hookit(tmp, "report", "--no-pager", "--depth", "1", *args, prof).stdout
    block = text.split("thread 1 (")[1]
    return re.findall(r"^\s+0\s+\d+\s+.*?F:cxx\.(.*)$", block, re.M)


def test_simple_names_of_local_classes_lambdas_and_operators(tmp):
    prof = wrappers_profile(tmp)
    names = flat_names(tmp, prof, "cxx")
    # the enclosing function's parameters go, in a local class and a lambda
    assert "find_in::State::Match" in names, names
    assert "work::{lambda#1}::operator" in names, names        # (its "()" cut above)
    # an operator template reads as the operator, with no return type
    assert "__gnu_cxx::operator<" in names, names
    assert not [n for n in names if n.startswith(("bool ", "void ", "int "))], names
    check_short(names, "cxx_wrappers")
    full = flat_names(tmp, prof, "cxx", "--demangle=full")
    assert [n for n in full if n.startswith("find_in(std::vector<int")], full


def test_fold_frames_hides_the_thread_wrappers(tmp):
    prof = wrappers_profile(tmp)
    # by default the thread starts in work(): std::thread's _State_impl,
    # _Invoker and std::__invoke are folded away (the helpers they called,
    # std::get, std::forward, are roots of their own)
    roots = thread_roots(tmp, prof)
    assert roots[0] == "work()", roots
    assert not [r for r in roots if "_Invoker" in r or "__invoke" in r or "_M_run" in r], roots
    raw = thread_roots(tmp, prof, "--no-fold-frames")
    assert raw[0] == "std::thread::_State_impl::_M_run()", raw
    tree = hk.hookit(tmp, "report", "--no-pager", "--no-fold-frames", prof).stdout
    assert "std::__invoke_impl()" in tree and "std::thread::_Invoker::_M_invoke()" in tree, tree
    flat = flat_names(tmp, prof, "cxx")
    assert not [n for n in flat if "_Invoker" in n or n.startswith("std::__invoke")], flat
    # a pattern of one's own, on the simple name: the comparator lambda
    # folded into std::sort's helpers, its time with them
    mine = flat_names(tmp, prof, "cxx", "--fold-frames", "work::{lambda*")
    assert "work::{lambda#1}::operator" not in mine, mine
    # the time stays: the thread's total is its work(), wrappers or not
    def total(*args):
        t = hk.hookit(tmp, "report", "--no-pager", "--units", "ns", "--thread", "cxx", *args,
                      prof).stdout
        return sum(int(x) for x in re.findall(r"^\s+0\s+\d+\s+\d+ns\s+(\d+)ns", t, re.M))
    assert 0 < total() <= total("--no-fold-frames"), (total(), total("--no-fold-frames"))
    # the exports fold the same way
    folded = hk.hookit(tmp, "export", "--format=folded", prof).stdout
    wrappers = r"::_M_invoke<|__invoke_impl<|::_M_run\(\)"
    assert not re.search(wrappers, folded) and re.search(r"^\[thread 1 cxx\];work\(", folded, re.M), \
        folded[:2000]
    raw = hk.hookit(tmp, "export", "--format=folded", "--no-fold-frames", prof).stdout
    assert len(re.findall(wrappers, raw)) >= 3, raw[:2000]


_fmt_lock = threading.Lock()


def fmt_binary():
    """bench/fmt_driver.cc instrumented at -O2, built once into $BUILD."""
    if not glob.glob("/usr/include/fmt/format.h"):
        hk.skip("libfmt-dev is not installed (make deps installs it)")
    src = os.path.join(hk.ROOT, "bench", "fmt_driver.cc")
    d = os.path.join(hk.BUILD, "upstream", "cxx-names")
    exe = os.path.join(d, "fmtd")
    with _fmt_lock:
        if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
            os.makedirs(d, exist_ok=True)
            p = subprocess.run(["g++", "-O2", "-finstrument-functions", "-o", exe + ".tmp", src,
                                "-lfmt"], capture_output=True, text=True)
            assert p.returncode == 0, p.stderr[-3000:]
            os.rename(exe + ".tmp", exe)
    return exe


def test_fmt_names_fit(tmp):
    exe = fmt_binary()
    hk.hookit(tmp, "run", "--", exe, "300")
    prof = hk.one_profile(tmp, "fmtd")
    names = flat_names(tmp, prof, "fmtd")
    assert len(names) > 200, len(names)
    check_short(names, "fmt")
    # the simple form's short lists: no scope inside them when that is enough
    assert [n for n in names if re.fullmatch(r"fmt::v\d+::detail::write\(appender, .*\)", n)], \
        [n for n in names if "::write(" in n]


# ---- leveldb ----------------------------------------------------------------------------

_ldb_lock = threading.Lock()
LDB_FLAGS = ["-O1", "-finstrument-functions", "-std=c++11", "-DLEVELDB_PLATFORM_POSIX=1",
             "-DLEVELDB_IS_BIG_ENDIAN=0"]
PORT_CONFIG = """#ifndef STORAGE_LEVELDB_PORT_PORT_CONFIG_H_
#define STORAGE_LEVELDB_PORT_PORT_CONFIG_H_
#define HAVE_FDATASYNC 1
#define HAVE_FULLFSYNC 0
#define HAVE_O_CLOEXEC 1
#define HAVE_CRC32C 0
#define HAVE_SNAPPY 0
#endif
"""


def leveldb_binary():
    """Debian's leveldb (apt-get source) and tests/reports/progs/
    leveldb_driver.cc, instrumented, built once into $BUILD/upstream."""
    cache = os.path.join(hk.BUILD, "upstream")
    driver = os.path.join(HERE, "progs", "leveldb_driver.cc")
    exe = os.path.join(cache, "leveldb-driver")
    with _ldb_lock:
        if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(driver):
            return exe
        try:
            with upstream.LOCK:
                top = upstream.unpack("leveldb", "leveldb", cache)
        except upstream.FetchFailed as e:
            hk.skip(f"cannot fetch leveldb's Debian source here: {e}")
        with open(os.path.join(top, "port", "port_config.h"), "w") as f:
            f.write(PORT_CONFIG)
        srcs = [s for s in glob.glob(os.path.join(top, "*", "*.cc"))
                if os.path.basename(os.path.dirname(s)) in ("db", "table", "util")
                and not re.search(r"_test|_bench|env_windows|testutil|leveldbutil|benchmark", s)]
        objdir = os.path.join(cache, "leveldb-obj")
        os.makedirs(objdir, exist_ok=True)
        inc = ["-I" + os.path.join(top, "include"), "-I" + top]
        procs, objs = [], []
        for s in sorted(srcs) + [driver]:
            o = os.path.join(objdir, os.path.basename(s)[:-3] + ".o")
            objs.append(o)
            if os.path.exists(o) and s != driver:
                continue
            procs.append(subprocess.Popen(["nice", "g++", "-c"] + LDB_FLAGS + inc + ["-o", o, s],
                                          stderr=subprocess.PIPE, text=True))
            if len(procs) >= 2:
                p = procs.pop(0)
                assert p.wait() == 0, p.stderr.read()[-3000:]
        for p in procs:
            assert p.wait() == 0, p.stderr.read()[-3000:]
        p = subprocess.run(["g++", "-o", exe + ".tmp"] + objs + ["-pthread"], capture_output=True,
                           text=True)
        assert p.returncode == 0, p.stderr[-3000:]
        os.rename(exe + ".tmp", exe)
    return exe


def test_leveldb_names_fit_and_find(tmp):
    exe = leveldb_binary()
    r = hk.hookit(tmp, "run", "--", exe, os.path.join(tmp, "db"))
    assert r.stdout == "found 429 of 429, 6000 keys\n", r.stdout
    prof = [p for p in hk.profiles(tmp, "leveldb-driver")][0]
    names = flat_names(tmp, prof, "leveldb-driver", "--merge-threads")
    assert len(names) > 300, len(names)
    check_short(names, "leveldb")
    # the threads start in their own function, not in std::thread's wrappers
    tree = hk.hookit(tmp, "report", "--no-pager", "--depth", "1", prof).stdout
    assert "_Invoker" not in tree and "std::__invoke" not in tree, tree
    assert re.search(r"F:leveldb-driver\.writer\(", tree), tree
    # found by its last component, as the user looked for it
    out = hk.hookit(tmp, "report", "--no-pager", "--merge-threads", "--callers", "ExtractUserKey",
                    prof).stdout
    assert re.search(r"callers of ExtractUserKey: \d+ calling contexts?, \d+ calls", out), out
    r = hk.hookit(tmp, "report", "--merge-threads", "--callers", "ExtractUserKy", prof,
                  check=False)
    assert r.returncode == 1 and "the closest: leveldb::ExtractUserKey" in r.stderr, r.stderr


def test_export_simple_names_on_request(tmp):
    """The exports keep full names for the tools that read them (JSON,
    pprof, callgrind); --demangle=simple gives a flame graph the names
    hookit report shows."""
    prof = wrappers_profile(tmp)
    full = hk.hookit(tmp, "export", "--format=folded", prof).stdout
    simple = hk.hookit(tmp, "export", "--format=folded", "--demangle=simple", prof).stdout
    assert "find_in(std::vector<int" in full and ";find_in;find_in::State::Match " in simple, simple
    assert max(len(l) for l in simple.splitlines()) < max(len(l) for l in full.splitlines())
    r = hk.hookit(tmp, "export", "--format=folded", "--demangle=short", prof, check=False)
    assert r.returncode == 2 and "full, simple or no" in r.stderr, r.stderr
