"""C++ names as c++filt prints them: namespaces, a class's constructors and
virtual methods, templates, overloads, an anonymous namespace, a lambda
(tests/progs/cxx.cc), with g++ and clang++."""
import subprocess
import hk

# The two compilers name the lambda differently (both demangle as shown).
LAMBDA = {"g++": "main::{lambda(int)#1}", "clang++": "main::$_0"}


def expected(compiler):
    lam = LAMBDA[compiler]
    t = hk.CallTree()
    c = t.call
    with c("main"):
        with c("geo::Circle::Circle(double)"):
            with c("geo::Shape::Shape()"):
                pass
        for _ in range(2):
            with c("geo::Square::Square(double)"):
                with c("geo::Shape::Shape()"):
                    pass
        with c("geo::area_sum(geo::Shape const* const*, int)"):
            for name in ("geo::Square::area() const", "geo::Circle::area() const",
                         "geo::Square::area() const"):
                with c(name):
                    pass
        for _ in range(3):
            with c("int calc::twice<int>(int)"):
                pass
        for _ in range(2):
            with c("double calc::twice<double>(double)"):
                pass
        with c("calc::f(int)"):
            pass
        for _ in range(2):
            with c("calc::f(double)"):
                pass
        for _ in range(3):
            with c("calc::f(char const*)"):
                pass
        with c("calc::(anonymous namespace)::hidden(long)"):
            pass
        with c(f"void calc::apply_n<{lam}>({lam}, int)"):
            for _ in range(4):
                with c(f"{lam}::operator()(int) const"):
                    pass
    return t.calls


def check_cxx(tmp, compiler, flags=()):
    if not hk.have(compiler):
        hk.skip(f"{compiler} not installed")
    exe = hk.cc(tmp, ["cxx.cc"], "cxx", compiler=compiler, flags=flags)
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert rc == 0, (rc, out, err)
    assert out == "cxx: 16 12 8 341 9 6\n", out
    doc = hk.export_json(tmp, hk.one_profile(tmp, "cxx"))
    t = hk.thread_of(doc, 0)
    want = expected(compiler)
    # Our expectation agrees with the toolchain's own demangler.
    nm = subprocess.run(["nm", "-C", exe], capture_output=True, text=True).stdout
    for path in want:
        assert path[-1] in nm, f"{path[-1]!r} not in nm -C output"
    hk.assert_tree(t, want)
    hk.check_tree_consistent(t)
    for p, n in hk.walk(t["roots"]):
        assert n["module"] == "cxx", (p, n["module"])


def test_cxx_gxx(tmp):
    check_cxx(tmp, "g++")


def test_cxx_clangxx(tmp):
    check_cxx(tmp, "clang++")


def test_cxx_gxx_O2(tmp):
    check_cxx(tmp, "g++", ["-O2"])


def test_cxx_clangxx_O2(tmp):
    check_cxx(tmp, "clang++", ["-O2"])
