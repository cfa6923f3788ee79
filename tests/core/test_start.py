"""The ways of starting hookit, on tests/progs/calls.c, GCC and Clang:
linked with -lhookit (default profiler, and HOOKIT_PROFILER naming libjprof
by bare name and by path), `hookit run` and LD_PRELOAD on a program not
linked with hookit, and glibc's no-op hooks when hookit is absent."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calls_tree  # noqa: E402
import hk  # noqa: E402
from test_calls import check_calls_profile  # noqa: E402

JPROF = os.path.join(hk.PLUGIN_DIR, "libjprof.so")


def linked_with_profiler(tmp, compiler, profiler):
    exe = hk.cc(tmp, ["calls.c"], "calls", compiler=compiler)
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": profiler})
    assert rc == calls_tree.STATUS and out == calls_tree.STDOUT, (rc, out, err)
    assert hk.hookit_lines(err) == [], err
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")), pid)


def test_profiler_bare_name_gcc(tmp):
    linked_with_profiler(tmp, "gcc", "libjprof.so")


def test_profiler_path_clang(tmp):
    linked_with_profiler(tmp, "clang", JPROF)


def test_profiler_bare_name_from_plugin_dir_first(tmp):
    """A bare name is looked up in hookit's plugin directory before the
    loader's search path: a decoy libjprof.so on LD_LIBRARY_PATH is ignored."""
    decoy_dir = os.path.join(tmp, "decoy")
    os.mkdir(decoy_dir)
    with open(os.path.join(decoy_dir, "libjprof.so"), "w") as f:
        f.write("not a library\n")
    exe = hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": "libjprof.so",
                                                      "LD_LIBRARY_PATH": decoy_dir})
    assert rc == calls_tree.STATUS and out == calls_tree.STDOUT and err == "", (rc, out, err)
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")), pid)


def hookit_run(tmp, compiler):
    """`hookit run -o DIR -- PROG ARGS` on a program NOT linked with hookit:
    the program's stdout and exit status pass through, the profile is exact."""
    exe = hk.cc(tmp, ["calls.c"], "calls", compiler=compiler, link_hookit=False)
    out_dir = os.path.join(tmp, "out")
    os.mkdir(out_dir)
    p = hk.hookit(tmp, "run", "-o", out_dir, "--", exe, "exit", check=False)
    assert p.returncode == calls_tree.STATUS, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == calls_tree.EXIT_STDOUT, p.stdout
    assert hk.hookit_lines(p.stderr) == [], p.stderr
    doc = hk.export_json(tmp, hk.one_profile(out_dir, "calls"))
    assert doc["process"]["argv"] == [exe, "exit"], doc["process"]
    check_calls_profile(tmp, doc, leave_through_exit=True)


def test_hookit_run_gcc(tmp):
    hookit_run(tmp, "gcc")


def test_hookit_run_clang(tmp):
    hookit_run(tmp, "clang")


def test_hookit_run_default_output_is_cwd(tmp):
    exe = hk.cc(tmp, ["calls.c"], "calls", link_hookit=False)
    p = hk.hookit(tmp, "run", "--", exe, check=False, env={"HOOKIT_OUTPUT": None})
    assert p.returncode == calls_tree.STATUS, p.stderr
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")))


def test_hookit_run_profiler_option(tmp):
    """-p names the profiler (bare name, found in the plugin directory)."""
    exe = hk.cc(tmp, ["calls.c"], "calls", link_hookit=False)
    p = hk.hookit(tmp, "run", "-o", tmp, "-p", "libjprof.so", "--", exe, check=False)
    assert p.returncode == calls_tree.STATUS, p.stderr
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")))


def test_hookit_run_threads_and_shlib(tmp):
    """hookit run on a non-linked program with threads and a shared library."""
    from test_threads import main_tree
    exe = hk.cc(tmp, ["threads.c"], "threads", link_hookit=False, libs=["-lpthread"])
    p = hk.hookit(tmp, "run", "-o", tmp, "--", exe, check=False)
    assert p.returncode == 0 and p.stdout == "threads: done 313\n", (p.returncode, p.stderr)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "threads"))
    assert len(doc["threads"]) == 5, len(doc["threads"])
    hk.assert_tree(hk.thread_of(doc, 0), main_tree())


def test_ld_preload(tmp):
    """LD_PRELOAD=libhookit.so, what `hookit run` does, by hand."""
    exe = hk.cc(tmp, ["calls.c"], "calls", compiler="clang", link_hookit=False)
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"LD_PRELOAD": hk.LIBHOOKIT})
    assert rc == calls_tree.STATUS and out == calls_tree.STDOUT, (rc, out, err)
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")), pid)


def glibc_noop(tmp, compiler):
    """Instrumented, not linked with hookit, nothing preloaded: glibc's own
    no-op hooks; the program runs as if uninstrumented and writes nothing."""
    exe = hk.cc(tmp, ["calls.c"], "calls", compiler=compiler, link_hookit=False)
    for args, stdout in (([], calls_tree.STDOUT), (["exit"], calls_tree.EXIT_STDOUT)):
        rc, out, err, _ = hk.popen_run(tmp, [exe] + args)
        assert (rc, out, err) == (calls_tree.STATUS, stdout, ""), (rc, out, err)
    assert sorted(os.listdir(tmp)) == ["calls"], os.listdir(tmp)


def test_glibc_noop_gcc(tmp):
    glibc_noop(tmp, "gcc")


def test_glibc_noop_clang(tmp):
    glibc_noop(tmp, "clang")


def test_same_stdout_with_and_without_hookit(tmp):
    """Linked, preloaded, and plain runs print the same and exit the same."""
    linked = hk.cc(tmp, ["calls.c"], "calls", flags=["-O2"])
    plain = hk.cc(tmp, ["calls.c"], "calls_plain", flags=["-O2"], link_hookit=False)
    results = set()
    for argv, env in (([plain], {}), ([linked], {}), ([plain], {"LD_PRELOAD": hk.LIBHOOKIT})):
        rc, out, err, _ = hk.popen_run(tmp, argv, env=env)
        results.add((rc, out))
    assert results == {(calls_tree.STATUS, calls_tree.STDOUT)}, results


def test_profiling_off(tmp):
    """HOOKIT_PROFILING=0: collection starts off; the program runs the same
    and no function of it is in a profile (if one is written at all)."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILING": "0"})
    assert rc == calls_tree.STATUS and out == calls_tree.STDOUT and err == "", (rc, out, err)
    for prof in hk.profiles(tmp):
        doc = hk.export_json(tmp, prof)
        for t in doc["threads"]:
            assert t["roots"] == [], t


def test_hookit_run_on_a_linked_program(tmp):
    """`hookit run` on a program that is linked with -lhookit already: one
    libhookit, one profile, every call counted once."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    p = hk.hookit(tmp, "run", "-o", tmp, "--", exe, check=False)
    assert (p.returncode, p.stdout, p.stderr) == (calls_tree.STATUS, calls_tree.STDOUT, ""), p
    check_calls_profile(tmp, hk.export_json(tmp, hk.one_profile(tmp, "calls")))
