"""Bad input never changes what the program does: a plugin that cannot be
loaded or is not a profiler, an unknown JPROFOPTS option, an output
directory that cannot be written.  Each gets ONE line on stderr prefixed
`hookit[PID]: `; stdout and the exit status stay the program's."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calls_tree  # noqa: E402
import hk  # noqa: E402


def run_calls(tmp, env, exe=None):
    """Run `calls` (linked with -lhookit) with env; check that its stdout and
    exit status are untouched and that hookit wrote exactly one line on
    stderr, the only thing there.  Returns (that line, pid)."""
    exe = exe or hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env=env)
    assert rc == calls_tree.STATUS, (rc, out, err)
    assert out == calls_tree.STDOUT, out
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert lines[0].startswith(f"hookit[{pid}]: "), lines[0]
    return lines[0], pid


def no_profile(tmp):
    assert hk.profiles(tmp) == [], os.listdir(tmp)


def test_missing_plugin_path(tmp):
    path = os.path.join(tmp, "nowhere", "libnope.so")
    line, _ = run_calls(tmp, {"HOOKIT_PROFILER": path})
    assert path in line, line
    assert "No such file or directory" in line, line      # the loader's error
    no_profile(tmp)


def test_missing_plugin_bare_name(tmp):
    line, _ = run_calls(tmp, {"HOOKIT_PROFILER": "libnope.so"})
    assert "libnope.so" in line, line
    assert "cannot open shared object file" in line, line
    no_profile(tmp)


def test_plugin_not_elf(tmp):
    path = os.path.join(tmp, "libtext.so")
    with open(path, "w") as f:
        f.write("this is not a shared object\n" * 20)
    line, _ = run_calls(tmp, {"HOOKIT_PROFILER": path})
    assert path in line, line
    assert "invalid ELF header" in line, line
    no_profile(tmp)


def test_plugin_wrong_abi(tmp):
    """Refused before any of its code runs (its entry points abort)."""
    path = hk.cc(tmp, ["plugin_badabi.c"], "libbadabi.so", shared=True,
                 instrument=False, link_hookit=False)
    line, _ = run_calls(tmp, {"HOOKIT_PROFILER": path})
    assert path in line and "ABI" in line, line
    no_profile(tmp)


def test_plugin_without_entry_points(tmp):
    path = hk.cc(tmp, ["plugin_noentry.c"], "libnoentry.so", shared=True,
                 instrument=False, link_hookit=False)
    line, _ = run_calls(tmp, {"HOOKIT_PROFILER": path})
    assert path in line and "HookitStart" in line, line
    no_profile(tmp)


def test_plugin_refuses_to_start(tmp):
    path = hk.cc(tmp, ["plugin_refuse.c"], "librefuse.so", shared=True,
                 instrument=False, link_hookit=False)
    line, _ = run_calls(tmp, {"HOOKIT_PROFILER": path})
    assert path in line, line
    no_profile(tmp)


def test_missing_plugin_with_hookit_run(tmp):
    """`hookit run -p` with a plugin that is not there: the command refuses
    it before starting anything (a typo would otherwise run the program
    unprofiled, issue 30), naming the path; the program does not run."""
    exe = hk.cc(tmp, ["calls.c"], "calls", link_hookit=False)
    path = os.path.join(tmp, "libnope.so")
    p = hk.hookit(tmp, "run", "-o", tmp, "-p", path, "--", exe, check=False)
    assert p.returncode == 1 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hookit: run: -p ") and path in lines[0], p.stderr
    no_profile(tmp)


def test_unknown_jprofopts_option(tmp):
    """One line naming the option and listing the valid ones; the profile
    is still written, with the defaults, and exact."""
    line, pid = run_calls(tmp, {"JPROFOPTS": "bogus"})
    assert line.startswith(f"hookit[{pid}]: jprof: unknown option 'bogus'"), line
    assert "help" in line, line                         # the valid options are listed
    doc = hk.export_json(tmp, hk.one_profile(tmp, "calls"))
    hk.assert_tree(hk.thread_of(doc, 0), calls_tree.expected())


def test_unknown_jprofopts_among_valid(tmp):
    """A valid option, an unknown one, a valid one: one line for the unknown
    one, the valid ones still work, the profile is exact."""
    line, pid = run_calls(tmp, {"JPROFOPTS": "nolines,bogus=1,clock=monotonic"})
    assert "unknown option 'bogus=1'" in line or "unknown option 'bogus'" in line, line
    doc = hk.export_json(tmp, hk.one_profile(tmp, "calls"))
    hk.assert_tree(hk.thread_of(doc, 0), calls_tree.expected())
    hk.check_tree_consistent(hk.thread_of(doc, 0))


def test_jprofopts_help(tmp):
    """help lists the options on stderr, every line prefixed, and ends the
    program before it runs (exit status 0, nothing on stdout, no profile),
    saying so in the last line: asked for the options, the user wants them,
    not a run that buries them (before, the whole program ran)."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"JPROFOPTS": "help"})
    assert rc == 0 and out == "" and not hk.profiles(tmp), (rc, out, err)
    lines = err.splitlines()
    assert len(lines) >= 2, err
    assert all(l.startswith(f"hookit[{pid}]: ") for l in lines), err
    assert lines[-1] == (f"hookit[{pid}]: jprof: JPROFOPTS=help lists the options and ends the "
                         "program before it runs (exit status 0); leave help out to profile it"), err
    # the other options are read first: their own complaints come before the list
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"JPROFOPTS": "clock=bogus,help"})
    assert rc == 0 and out == "" and "bad value in JPROFOPTS option 'clock=bogus'" in err.splitlines()[0]
    # Every option the "unknown option" line names is explained by help.
    line, _ = run_calls(tmp, {"JPROFOPTS": "bogus"}, exe=exe)
    valid = line.split("valid options:")[-1]
    for opt in [o.strip().rstrip("=") for o in valid.split(",") if o.strip() != "help"]:
        assert any(re.search(rf"\b{re.escape(opt)}\b", l) for l in lines), (opt, err)


def test_hktraceopts_help(tmp):
    """The trace profiler's HKTRACEOPTS=help does the same."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so",
                                                      "HKTRACEOPTS": "help"})
    assert rc == 0 and out == "", (rc, out, err)
    assert not [f for f in os.listdir(tmp) if f.endswith(".trace")], os.listdir(tmp)
    assert "hktrace: HKTRACEOPTS options" in err and err.splitlines()[-1].endswith(
        "hktrace: HKTRACEOPTS=help lists the options and ends the program before it runs (exit "
        "status 0); leave help out to profile it"), err


def run_calls_fallback(tmp, bad, reason):
    """An unusable HOOKIT_OUTPUT: one line at start naming it, why, and the
    fallback (the current directory, TMPDIR unset), the profile there, a
    last line naming it; stdout and exit status untouched."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_OUTPUT": bad, "TMPDIR": None})
    assert rc == calls_tree.STATUS and out == calls_tree.STDOUT, (rc, out, err)
    lines = err.splitlines()
    assert len(lines) == 2 and all(l.startswith(f"hookit[{pid}]: ") for l in lines), err
    assert bad in lines[0] and reason in lines[0] and f"profiles go to {tmp} instead" in lines[0], err
    assert lines[1] == f"hookit[{pid}]: jprof: wrote {tmp}/hookit.calls.{pid}.prof", err
    assert hk.profiles(tmp) == [f"{tmp}/hookit.calls.{pid}.prof"]


def test_output_dir_missing_is_created(tmp):
    missing = os.path.join(tmp, "no", "such", "dir")
    exe = hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_OUTPUT": missing})
    assert (rc, out, err) == (calls_tree.STATUS, calls_tree.STDOUT, ""), (rc, out, err)
    assert hk.profiles(missing) == [f"{missing}/hookit.calls.{pid}.prof"]
    no_profile(tmp)


def test_output_dir_is_a_file(tmp):
    path = os.path.join(tmp, "afile")
    open(path, "w").close()
    run_calls_fallback(tmp, path, "Not a directory")
    assert os.path.getsize(path) == 0


def test_output_dir_read_only_fs(tmp):
    """/proc/self cannot take new files, even for root."""
    run_calls_fallback(tmp, "/proc/self", "/proc/self")


def test_truncated_real_profile(tmp):
    """A profile from a real run, cut short: report and export fail with
    exit status 1 and a message naming the file, never crash or print a tree."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    hk.run(tmp, [exe], check=False)
    data = open(hk.one_profile(tmp, "calls"), "rb").read()
    for size in (0, 1, 7, 16, len(data) // 3, len(data) // 2, len(data) - 1):
        cut = os.path.join(tmp, f"cut{size}.prof")
        with open(cut, "wb") as f:
            f.write(data[:size])
        for cmd in (["report"], ["report", "--flat"], ["export", "--format=json"]):
            p = hk.hookit(tmp, *cmd, cut, check=False)
            assert p.returncode == 1, (cmd, size, p.returncode, p.stderr)
            assert cut in p.stderr, (cmd, size, p.stderr)
            assert "main" not in p.stdout and p.stderr.count("\n") == 1, (cmd, size, p.stdout, p.stderr)
