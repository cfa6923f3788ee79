"""C++ names a person can read: the simple form by default (no return type,
template arguments or parameters, unless needed to tell two functions
apart), --demangle=full|simple|no, signatures ending in const, static
initialisers, and the full name always in the JSON."""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "progs", "names.cc")


def profile(tmp, compiler="g++"):
    exe = hk.cc(tmp, [SRC], "names", compiler=compiler, flags=["-O0"], link_hookit=False)
    p = hk.hookit(tmp, "run", "--", exe)
    assert p.stdout == "init\n12 40 6 5\n", p.stdout
    return hk.one_profile(tmp, "names")


def names(tmp, prof, *args):
    out = hk.hookit(tmp, "report", "--flat", *args, prof).stdout
    return [l.split("  F:", 1)[1] for l in out.splitlines() if "  F:" in l]


def test_simple_names_by_default(tmp):
    prof = profile(tmp)
    simple = names(tmp, prof)
    assert "names.Walker::Iterate()" in simple, simple
    assert "names.main()" in simple and "names.make()" in simple
    # instantiations the simple form would make equal keep their parameters
    assert "names.twice(int)" in simple and "names.twice(double)" in simple, simple
    assert not [n for n in simple if "<" in n and "operator<" not in n], simple
    assert max(len(n) for n in simple) < 160, max(simple, key=len)
    assert len(set(simple)) == len(simple), "two functions shown with one name"
    assert names(tmp, prof, "--demangle=simple") == simple


def test_full_names_and_const(tmp):
    prof = profile(tmp)
    full = names(tmp, prof, "--demangle=full")
    assert "names.Walker::Iterate(int) const" in full, full
    assert not [n for n in full if n.endswith("const()")], full
    assert "names.int twice<int>(int)" in full, full
    assert any(n.startswith("names.std::vector<int, std::allocator<int> >::") for n in full), full


def test_static_initializer_and_no(tmp):
    prof = profile(tmp)
    assert "names.global constructors keyed to init_obj()" in names(tmp, prof)
    raw = names(tmp, prof, "--demangle=no")
    assert "names._GLOBAL__sub_I_init_obj" in raw and "names.main" in raw, raw
    p = hk.hookit(tmp, "report", "--demangle=short", prof, check=False)
    assert p.returncode == 2 and "--demangle is full, simple or no" in p.stderr


def test_json_keeps_the_full_name(tmp):
    prof = profile(tmp)
    doc = hk.export_json(tmp, prof)
    allnames = {n["name"] for _, n in hk.walk(doc["threads"][0]["roots"])}
    assert "Walker::Iterate(int) const" in allnames and "int twice<int>(int)" in allnames, allnames


def diff_names(tmp, prof, *args):
    """The FUNCTION column and the CALL PATH column of hookit diff."""
    out = hk.hookit(tmp, "diff", "--all", "--limit", "0", *args, prof, prof).stdout
    fns, paths, table = [], [], None
    for line in out.splitlines():
        if line.startswith("== functions"):
            table = fns
        elif line.startswith("== call paths"):
            table = paths
        elif table is not None and re.match(r"\s+\d+\s+\d+\s+\+0\s", line):
            table.append(re.split(r"\s{2,}", line.strip())[-1])
    assert fns and paths, out
    return fns, paths


def test_diff_names_follow_demangle(tmp):
    prof = profile(tmp)
    fns, paths = diff_names(tmp, prof)
    assert "names:Walker::Iterate" in fns, fns
    assert "names:twice(int)" in fns and "names:twice(double)" in fns, fns
    assert "names:global constructors keyed to init_obj" in fns, fns
    assert not [n for n in fns + paths if "<" in n and "operator<" not in n], fns + paths
    assert "main > Walker::Iterate" in paths, paths
    full, fpaths = diff_names(tmp, prof, "--demangle=full")
    assert "names:Walker::Iterate(int) const" in full and "names:int twice<int>(int)" in full, full
    assert "main > Walker::Iterate(int) const" in fpaths, fpaths
    raw, _ = diff_names(tmp, prof, "--demangle=no")
    assert "names:_GLOBAL__sub_I_init_obj" in raw, raw
    p = hk.hookit(tmp, "diff", "--demangle=short", prof, prof, check=False)
    assert p.returncode == 2 and "--demangle is full, simple or no" in p.stderr


def test_callers_by_the_name_shown(tmp):
    prof = profile(tmp)
    # "twice" is what the views show for int twice<int>(int) and double twice<double>(double)
    out = hk.hookit(tmp, "report", "--callers", "twice", prof).stdout
    assert re.search(r"callers of twice: 2 calling contexts, 2 calls", out), out
    assert re.search(r"^\s+2\s+\S+\s+\S+\s+F:names\.main\(\)$", out, re.M), out
    out = hk.hookit(tmp, "report", "--callees", "main", prof).stdout
    assert "F:names.Walker::Iterate()" in out and "F:names.twice(int)" in out, out
    full = hk.hookit(tmp, "report", "--callees", "main", "--demangle=full", prof).stdout
    assert "F:names.Walker::Iterate(int) const" in full and "F:names.int twice<int>(int)" in full


def test_instantiations_told_apart_by_outer_template_arguments(tmp):
    """pick<std::map<std::string, int>> and pick<std::vector<std::string>>
    have one parameter list once templates are dropped (Tag*): the simple
    form keeps the outer template arguments, not the full names (over 200
    characters each, as std::forward's instantiations in any STL program)."""
    src = os.path.join(os.path.dirname(SRC), "names_nested.cc")
    for compiler in ("g++", "clang++"):
        if not hk.have(compiler):
            continue
        d = os.path.join(tmp, compiler)
        os.makedirs(d)
        exe = hk.cc(d, [src], "nested", compiler=compiler, flags=["-O2"], link_hookit=False)
        p = hk.hookit(d, "run", "--", exe)
        assert p.stdout == "1\n", p.stdout
        prof = hk.one_profile(d, "nested")
        simple = names(d, prof)
        assert "nested.pick<std::map>(Tag<std::map>*)" in simple, (compiler, simple)
        assert "nested.pick<std::vector>(Tag<std::vector>*)" in simple, (compiler, simple)
        full = names(d, prof, "--demangle=full")
        assert [n for n in full if n.startswith("nested.int pick<std::map<std::__cxx11::basic_string<char")], full
