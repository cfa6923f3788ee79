"""Source lines read by the tools from the binary after the run, never by
the profiled process: `hookit export --format=callgrind` and `pprof`, and
`hookit report --lines`.  The lines are checked against binutils
(nm + addr2line on the binary), against what valgrind's callgrind_annotate
and `go tool pprof` make of the export, and against the profiler's own
in-process resolution (JPROFOPTS=lines).  A binary that is gone or is not
the one that ran gives one line on stderr and an export without lines."""
import os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import test_pprof  # noqa: E402

SOURCE = """\
#include <stdio.h>
static int leaf(int x) { return x + 1; }
int mid(int n) { return n < 2 ? leaf(n) : mid(n - 1) + leaf(n); }
int main(void) { printf("%d\\n", mid(12)); return 0; }
"""
# Calls of each function in that program.
CALLS = {"main": 1, "mid": 12, "leaf": 12}


def build(tmp, source=SOURCE, name="lines", flags=()):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    return hk.cc(tmp, [src], name, flags=["-O0"] + list(flags))


def profiled(tmp, env=None, flags=()):
    exe = build(tmp, flags=flags)
    hk.run(tmp, [exe], env=env)
    return exe, hk.one_profile(tmp, "lines")


def binutils_lines(exe, names):
    """{function: (file, line)} from nm's address and addr2line."""
    syms = {}
    for line in subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTW" and parts[2] in names:
            syms[parts[2]] = parts[0]
    assert set(syms) == set(names), syms
    out = subprocess.run(["addr2line", "-e", exe] + [syms[n] for n in names],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res = {}
    for n, fl in zip(names, out):
        f, l = fl.rsplit(":", 1)
        res[n] = (f, int(l.split()[0]))
    return res


def callgrind_lines(tmp, cg):
    """{source line number: Calls} of callgrind_annotate's annotated source,
    and the file:function list (`???` when no file)."""
    if not hk.have("callgrind_annotate"):
        hk.skip("callgrind_annotate (valgrind) not installed")
    p = subprocess.run(["callgrind_annotate", "--auto=yes", "--show=Calls", "--threshold=100",
                        "--context=1000", cg], capture_output=True, text=True, cwd="/")
    assert p.returncode == 0, p.stderr
    counts, functions, section, lineno = {}, {}, None, 0
    for line in p.stdout.splitlines():
        if line.startswith("-- Auto-annotated source:"):
            section, lineno = line.split(":", 1)[1].strip(), 0
            continue
        if line.startswith("-----") or line.startswith("@") or not line.strip():
            continue
        m = re.match(r"\s*([\d,]+|\.)\s+(?:\([^)]*\)\s+)?(.*)$", line)
        if not m or m.group(2).startswith("Calls"):
            continue
        what = m.group(2)
        if section is None:
            if ":" in what and "[" in what:
                file, fn = what.split(" [")[0].split(":", 1)
                functions[fn] = file
            continue
        if what.startswith("=>"):
            continue
        lineno += 1
        if m.group(1) != ".":
            counts[(section, lineno)] = int(m.group(1).replace(",", ""))
    return counts, functions, p.stdout


def test_callgrind_has_the_binarys_lines(tmp):
    exe, prof = profiled(tmp)
    want = binutils_lines(exe, list(CALLS))
    cg = os.path.join(tmp, "out.cg")
    p = hk.hookit(tmp, "export", "--format=callgrind", "-o", cg, prof)
    assert p.stderr == "", p.stderr
    counts, functions, text = callgrind_lines(tmp, cg)
    for fn, (file, line) in want.items():
        assert functions[fn] == file, (fn, functions)
        # the function's own calls are on its line of the annotated source
        assert counts.get((file, line)) == CALLS[fn], (fn, line, text)


def test_pprof_lines(tmp):
    exe, prof = profiled(tmp)
    want = binutils_lines(exe, list(CALLS))
    pb = test_pprof.export(tmp, prof)
    text = test_pprof.pprof(tmp, "-lines", "-top", "-sample_index=calls", pb)
    got = {}
    for line in text.splitlines():
        m = re.match(r"\s*\d+\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S+) (\S+):(\d+)$", line)
        if m:
            got[m.group(1)] = (m.group(2), int(m.group(3)))
    assert got == want, text
    listing = test_pprof.pprof(tmp, "-list", "^mid$", "-sample_index=calls", pb)
    assert re.search(r"^\s*%d\s+\d+\s+%d:int mid" % (CALLS["mid"], want["mid"][1]), listing, re.M), listing


def report_lines(tmp, prof, *args):
    p = hk.hookit(tmp, "report", "--flat", "--lines", "--no-pager", *args, prof)
    got = {}
    for line in p.stdout.splitlines():
        m = re.search(r"\.(\w+)\(\) \((.*):(\d+)\)$", line)
        if m:
            got[m.group(1)] = (m.group(2), int(m.group(3)))
    return got, p


def test_report_lines_equal_addr2line_and_in_process_lines(tmp):
    exe, prof = profiled(tmp)
    want = binutils_lines(exe, list(CALLS))
    got, p = report_lines(tmp, prof)
    assert got == want, p.stdout
    assert p.stderr == "", p.stderr
    # the same as the profiler's own (paid for at exit) resolution
    os.unlink(prof)
    hk.run(tmp, [exe], env={"JPROFOPTS": "lines"})
    doc = hk.export_json(tmp, hk.one_profile(tmp, "lines"))
    inproc = {n["name"]: (n["file"], n["line"]) for th in doc["threads"]
              for _, n in hk.walk(th["roots"])}
    assert inproc == want, inproc


def test_library_next_to_the_program(tmp):
    hk.cc(tmp, ["shlib.c"], "libshlib.so", shared=True, link_hookit=False, flags=["-O0"])
    exe = hk.cc(tmp, ["shlib_main.c"], "shlib_main", flags=["-O0"],
                libs=["-L" + tmp, "-lshlib", "-Wl,-rpath," + tmp])
    hk.run(tmp, [exe])
    prof = hk.one_profile(tmp, "shlib_main")
    got, p = report_lines(tmp, prof)
    assert p.stderr == "", p.stderr
    lib = os.path.join(tmp, "libshlib.so")
    want = binutils_lines(lib, ["shlib_entry", "shlib_hidden", "shlib_leaf"])
    want.update(binutils_lines(exe, ["main", "back_in_main"]))
    assert got == want, p.stdout


def exported_files(tmp, prof):
    """The fl= file names of a callgrind export, and its stderr."""
    p = hk.hookit(tmp, "export", "--format=callgrind", prof)
    files = set(re.findall(r"^fl=\(\d+\) (.*)$", p.stdout, re.M))
    return files, p


def test_deleted_binary_one_line_no_lines(tmp):
    exe, prof = profiled(tmp)
    os.unlink(exe)
    files, p = exported_files(tmp, prof)
    assert files == {"???"}, files
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and exe in lines[0] and "gone" in lines[0], p.stderr
    got, r = report_lines(tmp, prof)
    assert got == {} and len(r.stderr.splitlines()) == 1, r.stderr
    # --no-lines: nothing looked up, nothing said
    q = hk.hookit(tmp, "export", "--format=callgrind", "--no-lines", prof)
    assert q.stderr == "", q.stderr


def test_rebuilt_binary_one_line_no_lines(tmp):
    """Without build-ids (linked with --build-id=none, or a profile older
    than format 1.1) the date and the functions' places tell."""
    nobid = ["-Wl,--build-id=none"]
    exe, prof = profiled(tmp, flags=nobid)
    assert "lines" not in hk.export_json(tmp, prof)["process"]["build_ids"]
    # The source changed: a function before the others moves them all.
    build(tmp, SOURCE.replace("static int leaf", "int extra(int x) { return x * 3 + 2; }\n"
                              "static int leaf"), flags=nobid)
    files, p = exported_files(tmp, prof)
    assert files == {"???"}, files
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and exe in lines[0] and "modified after the run" in lines[0], p.stderr
    # The same binary given an old time stamp (cp -p of an older build, a
    # profile read on another machine): its addresses tell.
    old = time.time() - 3600
    os.utime(exe, (old, old))
    files, p = exported_files(tmp, prof)
    assert files == {"???"}, files
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "not the binary that ran" in lines[0], p.stderr


def readelf_build_id(path):
    """The GNU build-id as binutils' readelf -n prints it."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    assert m, out
    return m.group(1)


def nm_addresses(exe, names):
    return {n: a for n, a in ((l.split()[2], l.split()[0]) for l in subprocess.run(
        ["nm", exe], capture_output=True, text=True, check=True).stdout.splitlines()
        if len(l.split()) == 3) if n in names}


def test_build_id_recorded_as_readelf_reads_it(tmp):
    """The profile's build-id of the program is the one readelf -n prints,
    in the JSON and in pprof's Mapping.build_id (go tool pprof -raw)."""
    exe, prof = profiled(tmp)
    want = readelf_build_id(exe)
    assert len(want) == 40, want
    doc = hk.export_json(tmp, prof)
    assert doc["process"]["build_ids"] == {"lines": want}
    assert not [k for k in doc["process"]["meta"] if k.startswith("build_id")], doc["process"]["meta"]
    raw = test_pprof.pprof(tmp, "-raw", test_pprof.export(tmp, prof))
    mappings = raw.split("Mappings\n", 1)[1].splitlines()
    assert any(re.match(r"\d+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ lines %s " % want, m)
               for m in mappings), raw


def test_rebuilt_binary_same_layout_older_date_caught_by_build_id(tmp):
    """A rebuild that changed code but moved no function, given a date
    older than the run: neither the date nor the places tell it from the
    binary that ran; the build-id does."""
    exe, prof = profiled(tmp)
    ran = readelf_build_id(exe)
    places = nm_addresses(exe, CALLS)
    build(tmp, SOURCE.replace("return x + 1;", "return x + 2;"))
    assert nm_addresses(exe, CALLS) == places, "the rebuild moved functions: not the case tested"
    now = readelf_build_id(exe)
    assert now != ran
    old = time.time() - 3600
    os.utime(exe, (old, old))
    files, p = exported_files(tmp, prof)
    assert files == {"???"}, files
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and exe in lines[0] and "not the binary that ran" in lines[0], p.stderr
    assert f"build-id {now}, the profile's is {ran}" in lines[0], p.stderr
    got, r = report_lines(tmp, prof)
    assert got == {} and len(r.stderr.splitlines()) == 1, r.stderr
    # The binary that ran, back in place (same bytes, a new date): lines again.
    build(tmp)
    assert readelf_build_id(exe) == ran
    files, p = exported_files(tmp, prof)
    assert p.stderr == "" and os.path.join(tmp, "lines.c") in files, (files, p.stderr)


def test_older_copy_of_the_same_binary_still_gives_lines(tmp):
    """An unchanged binary with an old time stamp is the one that ran."""
    exe, prof = profiled(tmp)
    old = time.time() - 3600
    os.utime(exe, (old, old))
    files, p = exported_files(tmp, prof)
    assert p.stderr == "", p.stderr
    assert os.path.join(tmp, "lines.c") in files, files


def test_two_static_functions_of_one_name(tmp):
    """helper() in two files: each of the profile's two functions gets its
    own file, told apart by its address."""
    for name, body in (("one.c", "static int helper(int x) { return x + 1; }\n"
                                  "int one(int x) { return helper(x) * 2; }\n"),
                       ("two.c", "\n\nstatic int helper(int x) { return x - 1; }\n"
                                 "int two(int x) { return helper(x) * 3; }\n"),
                       ("both.c", "int one(int), two(int);\n"
                                  "int main(void) { return one(1) + two(2) == 7 ? 0 : 1; }\n")):
        with open(os.path.join(tmp, name), "w") as f:
            f.write(body)
    exe = hk.cc(tmp, [os.path.join(tmp, n) for n in ("both.c", "one.c", "two.c")], "both",
                flags=["-O0"])
    hk.run(tmp, [exe])
    prof = hk.one_profile(tmp, "both")
    got = set()
    p = hk.hookit(tmp, "report", "--lines", "--no-pager", prof)
    for line in p.stdout.splitlines():
        m = re.search(r"F:both\.helper\(\) \((.*):(\d+)\)$", line)
        if m:
            got.add((os.path.basename(m.group(1)), int(m.group(2))))
    assert p.stderr == "", p.stderr
    assert got == {("one.c", 1), ("two.c", 3)}, p.stdout
