"""C++ names a person can read: the simple form by default (no return type,
template arguments or parameters, unless needed to tell two functions
apart), --demangle=full|simple|no, signatures ending in const, static
initialisers, and the full name always in the JSON."""
import gzip, os, re, subprocess, sys

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
    # (CALLS INCL EXCL, and CPU WAIT: the profile has wait time)
    assert re.search(r"^\s+2\s+\S+\s+\S+(\s+\S+\s+\S+)?\s+F:names\.main\(\)$", out, re.M), out
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
        # the outer template arguments tell them apart: no parameters needed
        # (and the names inside them short, without their scope)
        assert "nested.pick<map>()" in simple, (compiler, simple)
        assert "nested.pick<vector>()" in simple, (compiler, simple)
        full = names(d, prof, "--demangle=full")
        assert [n for n in full if n.startswith("nested.int pick<std::map<std::__cxx11::basic_string<char")], full


def cxxfilt_static_initializers(exe):
    """{symbol: reference} for the program's _GLOBAL__sub_I_X: c++filt's
    reading of the older form of the same symbol, _GLOBAL__I_X (c++filt and
    nm -C leave _GLOBAL__sub_I_X as it is)."""
    syms = [l.split()[-1] for l in subprocess.run(["nm", exe], capture_output=True, text=True,
                                                   check=True).stdout.splitlines()
            if l.split()[-1].startswith("_GLOBAL__sub_I_")]
    old = [s.replace("_GLOBAL__sub_", "_GLOBAL__", 1) for s in syms]
    out = subprocess.run(["c++filt"], input="\n".join(old) + "\n", capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert len(out) == len(syms) and all(o.startswith("global constructors keyed to ") for o in out), out
    return dict(zip(syms, out))


def test_static_initializers_read_alike_in_every_output(tmp):
    """GCC's static initialisers, keyed to a definition and to a file name,
    read as c++filt reads them (see above) in the JSON, the report, a
    trace's listing, and the pprof, callgrind, folded, SVG and Chrome
    exports; the symbol itself only with --demangle=no (report and export)."""
    if not hk.have("c++filt"):
        hk.skip("c++filt (binutils) not installed")
    progs = os.path.dirname(SRC)
    exe = hk.cc(tmp, [os.path.join(progs, "static_init.cc"), os.path.join(progs, "static_init2.cc")],
                "sinit", compiler="g++", flags=["-O0"], link_hookit=False)
    want = cxxfilt_static_initializers(exe)
    assert sorted(want.values()) == ["global constructors keyed to keyed_obj",
                                     "global constructors keyed to static_init2.cc"], want
    assert hk.hookit(tmp, "run", "--", exe).stdout == "keyed\nsecond\nmain\n"
    prof = hk.one_profile(tmp, "sinit")
    doc = hk.export_json(tmp, prof)
    json_names = {n["name"] for _, n in hk.walk(doc["threads"][0]["roots"])}
    out = {"json": "\n".join(sorted(json_names))}
    for fmt in ("folded", "callgrind", "svg"):
        out[fmt] = hk.hookit(tmp, "export", "--format=" + fmt, prof).stdout
    pb = os.path.join(tmp, "sinit.pb.gz")
    hk.hookit(tmp, "export", "--format=pprof", "-o", pb, prof)
    out["pprof"] = gzip.open(pb).read().decode("latin-1")       # its string table
    hk.run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so", "LD_PRELOAD": hk.LIBHOOKIT})
    trace = [f for f in os.listdir(tmp) if f.endswith(".trace")]
    assert len(trace) == 1, os.listdir(tmp)
    out["chrome"] = hk.hookit(tmp, "export", "--format=chrome", os.path.join(tmp, trace[0])).stdout
    out["trace listing"] = hk.hookit(tmp, "report", os.path.join(tmp, trace[0])).stdout
    for mode in ("simple", "full"):
        out["report " + mode] = "\n".join(names(tmp, prof, "--demangle=" + mode))
    raw = names(tmp, prof, "--demangle=no")
    for sym, readable in want.items():
        assert readable in json_names, (readable, json_names)
        for what, text in out.items():
            assert readable in text and sym not in text, (what, sym, readable, text[:2000])
        assert f"sinit.{readable}()" in out["report simple"].splitlines(), out["report simple"]
        assert f"sinit.{sym}" in raw, raw
    assert re.search(r"^fn=\(\d+\) global constructors keyed to keyed_obj$", out["callgrind"], re.M), \
        out["callgrind"]
    # export --demangle=no: the symbols as the profile stores them, in the
    # JSON and in the other formats; the other names unchanged
    raw_doc = hk.export_json(tmp, prof, "--demangle=no")
    raw_json = {n["name"] for _, n in hk.walk(raw_doc["threads"][0]["roots"])}
    assert raw_json == (json_names - set(want.values())) | set(want), (raw_json, json_names)
    raw_folded = hk.hookit(tmp, "export", "--format=folded", "--demangle=no", prof).stdout
    assert all(sym in raw_folded for sym in want), raw_folded
    assert hk.hookit(tmp, "export", "--format=json", "--demangle=full", prof).stdout == \
        hk.hookit(tmp, "export", "--format=json", prof).stdout
    # --demangle=simple (issue 30): the names report shows, initialisers too
    simple = hk.hookit(tmp, "export", "--format=folded", "--demangle=simple", prof).stdout
    for readable in want.values():
        assert readable in simple, (readable, simple)
    p = hk.hookit(tmp, "export", "--format=json", "--demangle=short", prof, check=False)
    assert p.returncode == 2 and "--demangle is full, simple or no" in p.stderr, p.stderr
