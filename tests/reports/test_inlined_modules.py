"""Inlined copies of an uninstrumented library's functions belong to the
module they were inlined into.  std::string's members are instantiated in
libstdc++ (an extern template), which is not built with
-finstrument-functions; at -O2 the program's and an instrumented library's
inlined copies call the hooks with libstdc++'s addresses, and were listed
under libstdc++.so.6.0.30.  Each such node now carries the module of the
code it was inlined into (its caller's): the program's for the program's
copies, the library's for the library's."""
import os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

LIB = """\
#include <string>
std::size_t lib_work(const std::string &s)
{
    std::string t = s + " from the library";
    return t.size() + t.length();
}
"""
MAIN = """\
#include <cstdio>
#include <string>
std::size_t lib_work(const std::string &s);
__attribute__((noinline)) std::size_t work(const std::string &s)
{
    std::string t = s + " from the program";
    return t.size() + t.length();
}
int main()
{
    std::string a = "a string longer than the small string buffer";
    std::size_t n = 0;
    for (int i = 0; i < 3; i++)
        n += work(a) + lib_work(a);
    std::printf("%zu\\n", n);
    return 0;
}
"""


def libstdcxx(exe):
    """The libstdc++ the program loads (as ldd finds it)."""
    out = hk.loaded_objects(exe)
    m = re.search(r"libstdc\+\+\.so\.6 => (\S+)", out)
    assert m, out
    return os.path.realpath(m.group(1))


def names_hook(path):
    out = subprocess.run(["nm", "-D", path], capture_output=True, text=True, check=True).stdout
    return "__cyg_profile_func_enter" in out


def defined(path, dynamic=False):
    """The demangled names of the functions path defines (nm)."""
    out = subprocess.run(["nm", "-C", "--defined-only"] + (["-D"] if dynamic else []) + [path],
                         capture_output=True, text=True, check=True).stdout
    return {re.sub(r"@@?[A-Z][\w.]*$", "", l.split(" ", 2)[2]) for l in out.splitlines()
            if l.count(" ") >= 2 and l.split(" ", 2)[1] in "TtWiu"}     # no @@GLIBCXX_3.4


def test_inlined_string_members_are_the_programs_and_the_librarys(tmp):
    for name, text in (("strlib.cc", LIB), ("strmain.cc", MAIN)):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    hk.cc(tmp, [os.path.join(tmp, "strlib.cc")], "libstrlib.so", compiler="g++", shared=True,
          link_hookit=False, flags=["-O2"])
    exe = hk.cc(tmp, [os.path.join(tmp, "strmain.cc")], "strmain", compiler="g++", flags=["-O2"],
                libs=["-L" + tmp, "-lstrlib", "-Wl,-rpath," + tmp])
    stdcxx, lib = libstdcxx(exe), os.path.join(tmp, "libstrlib.so")
    # the reference: libstdc++ is not instrumented, the program and the library are
    assert not names_hook(stdcxx) and names_hook(exe) and names_hook(lib)
    hk.run(tmp, [exe])
    doc = hk.export_json(tmp, hk.one_profile(tmp, "strmain"))
    th = hk.thread_of(doc, 0)
    # The functions whose only copy is libstdc++'s (by nm) ran in a copy
    # inlined into their caller: the caller's module.  Any other function
    # is where nm finds it: the program (which wins, as the dynamic linker
    # binds the library's calls to the program's copy), else the library.
    only_stdcxx = defined(stdcxx, dynamic=True) - defined(exe) - defined(lib)
    in_exe, in_lib = defined(exe), defined(lib)
    expected, seen, modules, by_module = {}, {"strmain": 0, "libstrlib.so": 0}, set(), {}
    for path, n in hk.walk(th["roots"]):
        modules.add(n["module"])
        if n["name"] in only_stdcxx and len(path) > 1:
            want = expected[path[:-1]]
            seen[want] += n["calls"]
            by_module.setdefault(n["name"], set()).add(n["module"])
        else:
            assert n["name"] in in_exe or n["name"] in in_lib, n["name"]
            want = "strmain" if n["name"] in in_exe else "libstrlib.so"
        expected[path] = want
        assert n["module"] == want, (path, n["module"], want)
    assert not [m for m in modules if m.startswith("libstdc++")], modules
    # both modules ran inlined libstdc++ code (else this test proves nothing)
    assert seen["strmain"] > 0 and seen["libstrlib.so"] > 0, seen
    # a member inlined into both modules is one function per module
    assert any(m == {"strmain", "libstrlib.so"} for m in by_module.values()), by_module
    # the flat profile shows them apart, with their module
    flat = hk.hookit(tmp, "report", "--flat", "--demangle=full", hk.one_profile(tmp, "strmain")).stdout
    assert re.search(r"F:strmain\.std::__cxx11::basic_string<.*>::size\(\) const$", flat, re.M), flat
    assert re.search(r"F:libstrlib\.so\.std::__cxx11::basic_string<.*>::size\(\) const$", flat,
                     re.M), flat
    assert "libstdc++" not in flat, flat


LIVE = """\
#include <cstdio>
#include <string>
__attribute__((noinline)) std::size_t work(const std::string &s)
{
    std::string t = s + " from the program";
    return t.size() + t.length();
}
int main()
{
    std::string a = "a string longer than the small string buffer";
    std::printf("%zu\\n", work(a));
    std::fflush(stdout);
    return std::getchar() == EOF ? 0 : 1;     // until the test closes stdin
}
"""


def test_live_snapshot_attributes_inlined_copies_too(tmp):
    """hookit snapshot names a running process's functions itself
    (tools/live_cli.c): the same module rule applies."""
    import subprocess
    src = os.path.join(tmp, "live.cc")
    with open(src, "w") as f:
        f.write(LIVE)
    exe = hk.cc(tmp, [src], "live", compiler="g++", flags=["-O2"])
    rt = os.path.join(tmp, "rt")
    p = subprocess.Popen([exe], cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt))
    try:
        assert p.stdout.readline().strip().isdigit()      # work() has run
        out = os.path.join(tmp, "snap.prof")
        hk.hookit(tmp, "snapshot", "-o", out, str(p.pid), env={"HOOKIT_RUNTIME_DIR": rt})
    finally:
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    doc = hk.export_json(tmp, out)
    only_stdcxx = defined(libstdcxx(exe), dynamic=True) - defined(exe)
    seen = 0
    for path, n in hk.walk(hk.thread_of(doc, 0)["roots"]):
        assert not n["module"].startswith("libstdc++"), (path, n["module"])
        if n["name"] in only_stdcxx:
            seen += 1
            assert n["module"] == "live", (path, n["module"])
    assert seen, doc
