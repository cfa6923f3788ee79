"""Finding a function by a part of its name (issue 30): --callers and
--callees take a C++ name's last components ("Iterate" for
Walker::Iterate, "Version::Get" for leveldb::Version::Get) or a glob
("*::_M_data*"); a suffix that fits functions of several names is refused
with the candidates listed; a name that fits nothing gets the closest
names.  --thread takes a thread name or a glob as well as a tid
(tools/find_fn.c).  On tests/reports/progs/names.cc (C++, the standard
library's vector and string) and split.c (named threads)."""
import os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import hk  # noqa: E402
from test_names import profile  # noqa: E402


def callers(tmp, prof, fn, check=True):
    return hk.hookit(tmp, "report", "--no-pager", "--callers", fn, prof, check=check)


def test_suffix_finds_the_qualified_name(tmp):
    prof = profile(tmp)
    # "Iterate" is Walker::Iterate(int) const; "Walker::Iterate" too
    for fn in ("Iterate", "Walker::Iterate"):
        out = callers(tmp, prof, fn).stdout
        assert re.search(rf"callers of {fn}: 1 calling context, 1 calls", out), out
        assert re.search(r"\s1\s.*F:names\.main\(\)$", out, re.M), out
    # a suffix is at a "::": "terate" is no name
    r = callers(tmp, prof, "terate", check=False)
    assert r.returncode == 1 and "no function named 'terate'" in r.stderr, r.stderr


def test_glob_counts_every_match_as_one(tmp):
    prof = profile(tmp)
    out = callers(tmp, prof, "std::_Destroy*").stdout
    m = re.search(r"callers of std::_Destroy\*: (\d+) calling contexts?, (\d+) calls", out)
    # as many calls as the flat profile gives std::_Destroy(...) in its two
    # overloads and std::_Destroy_aux::__destroy
    flat = hk.hookit(tmp, "report", "--flat", "--no-pager", prof).stdout
    rows = re.findall(r"\s(\d+)\s+\S+\s+\S+(?:\s+\S+\s+\S+)?\s+F:names\.std::_Destroy", flat)
    assert len(rows) == 3, flat
    assert m and int(m.group(2)) == sum(int(x) for x in rows), (out, rows)


def test_ambiguous_suffix_lists_the_candidates(tmp):
    prof = profile(tmp)
    r = callers(tmp, prof, "deallocate", check=False)
    assert r.returncode == 1 and r.stdout == "", r
    line = r.stderr.strip()
    assert re.fullmatch(r"hookit: 'deallocate' ends (\d+) function names in \S+: "
                        r"(std::\S+::deallocate, )+std::\S+::deallocate; give more of the name "
                        r"\(A::deallocate\), module:name, or a glob \('\*::deallocate'\) for all "
                        r"of them", line), line
    assert "std::__new_allocator::deallocate" in line, line
    # the glob takes them all, more of the name picks one
    assert callers(tmp, prof, "*::deallocate").returncode == 0
    assert callers(tmp, prof, "__new_allocator::deallocate").returncode == 0


def test_missing_name_suggests_the_closest(tmp):
    prof = profile(tmp)
    r = callers(tmp, prof, "Iterat", check=False)
    assert r.returncode == 1 and r.stdout == "", r
    assert re.fullmatch(r"hookit: no function named 'Iterat' in \S+; the closest: Walker::Iterate"
                        r"(, [^,]+){0,2}", r.stderr.strip()), r.stderr
    r = callers(tmp, prof, "qqqqqqqq", check=False)
    assert r.returncode == 1 and r.stderr.strip().endswith("no function named 'qqqqqqqq' in " + prof)


def test_thread_by_name(tmp):
    exe = hk.cc(tmp, [os.path.join(HERE, "progs", "split.c")], "split", libs=["-lpthread"])
    hk.run(tmp, [exe])
    prof = hk.one_profile(tmp, "split")
    out = hk.hookit(tmp, "report", "--no-pager", "--thread", "idl*", prof).stdout
    heads = re.findall(r"^== pid \d+  tid \d+  thread \d+ \((\w+)\)", out, re.M)
    assert heads == ["idler", "idler"], out
    folded = hk.hookit(tmp, "export", "--format=folded", "--thread", "cruncher", prof).stdout
    assert folded and all(l.startswith("[thread ") and "cruncher" in l.split(";")[0]
                          for l in folded.splitlines()), folded
    r = hk.hookit(tmp, "report", "--thread", "nobody", prof, check=False)
    assert r.returncode == 1 and "no thread named 'nobody'" in r.stderr, r.stderr


def test_diff_function_by_suffix(tmp):
    """diff --function FN: FN found as --callers finds it; only its rows."""
    prof = profile(tmp)
    out = hk.hookit(tmp, "diff", "--all", "--function", "Iterate", prof, prof).stdout
    fns = re.findall(r"^\s*\d+ .*\s(\S+)$", out.split("== call paths")[0], re.M)
    assert fns == ["names:Walker::Iterate"], out
    paths = [l for l in out.split("== call paths")[1].splitlines()[2:] if l.strip()
             and not l.startswith("...")]
    assert paths and all(l.endswith("Walker::Iterate") for l in paths), out
    # a glob takes every match; an ambiguous suffix and a missing name are refused
    out = hk.hookit(tmp, "diff", "--all", "-F", "-f", "*::deallocate", prof, prof).stdout
    fns = re.findall(r"^\s*\d+ .*\s(\S+)$", out, re.M)
    assert len(fns) >= 2 and all(f.endswith("::deallocate") for f in fns), out
    r = hk.hookit(tmp, "diff", "--function", "deallocate", prof, prof, check=False)
    assert r.returncode == 1 and r.stdout == "", r
    assert re.fullmatch(r"hookit: --function: 'deallocate' ends \d+ function names in A or B: "
                        r"std::.*; give more of the name .*", r.stderr.strip()), r.stderr
    r = hk.hookit(tmp, "diff", "--function", "Iterat", prof, prof, check=False)
    assert r.returncode == 1 and re.fullmatch(
        r"hookit: --function: no function named 'Iterat' in A or B; the closest: "
        r"Walker::Iterate(, [^,]+){0,2}", r.stderr.strip()), r.stderr


def test_fold_frames_finds_functions_like_callers(tmp):
    """--fold-frames takes a suffix (report, export, diff); a pattern that
    names nothing is refused with the closest names, not ignored."""
    prof = profile(tmp)
    flat = hk.hookit(tmp, "report", "--flat", "--no-pager", prof).stdout
    assert "Walker::Iterate" in flat, flat
    folded = hk.hookit(tmp, "report", "--flat", "--no-pager", "--fold-frames", "Iterate", prof).stdout
    assert "Walker::Iterate" not in folded and "names.main()" in folded, folded
    stacks = hk.hookit(tmp, "export", "--format=folded", "--fold-frames", "Walker::Iterate",
                       prof).stdout
    assert stacks and "Iterate" not in stacks, stacks
    out = hk.hookit(tmp, "diff", "--all", "-F", "--fold-frames", "Iterate", prof, prof).stdout
    assert "Iterate" not in out and "names:main" in out, out
    for cmd in (["report", "--no-pager"], ["export", "--format=folded"], ["diff"]):
        args = [prof, prof] if cmd == ["diff"] else [prof]
        r = hk.hookit(tmp, *cmd, "--fold-frames", "Iterat", *args, check=False)
        assert r.returncode == 1 and r.stdout == "", (cmd, r)
        assert re.search(r"^hookit: --fold-frames: no function named 'Iterat' in .*; the closest: "
                         r"Walker::Iterate", r.stderr), (cmd, r.stderr)
        r = hk.hookit(tmp, *cmd, "--fold-frames", "deallocate", *args, check=False)
        assert r.returncode == 1 and "--fold-frames: 'deallocate' ends" in r.stderr, (cmd, r.stderr)
