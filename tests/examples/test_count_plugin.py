"""examples/count_plugin.c (built as $B/examples/libcount.so): exact flat
call counts, selected with HOOKIT_PROFILER, for one thread and for four."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "core"))
import calls_tree  # noqa: E402
import hk  # noqa: E402

PLUGIN = os.path.join(hk.BUILD, "examples", "libcount.so")


def nm_functions(exe):
    """{offset in the file: name} of the executable's functions (PIE: the
    offset from the load base the plugin prints for unnamed functions)."""
    out = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            syms[int(parts[0], 16)] = parts[2]
    return syms


def read_counts(tmp, exe, pid):
    """{function name: calls} from count.<exe>.<pid>.txt, checking its form:
    `calls address name` lines, most calls first."""
    path = os.path.join(tmp, f"count.{os.path.basename(exe)}.{pid}.txt")
    assert os.path.exists(path), os.listdir(tmp)
    syms = nm_functions(exe)
    counts, previous = {}, None
    for line in open(path):
        calls, address, name = line.split()
        calls = int(calls)
        assert address.startswith("0x"), line
        assert previous is None or calls <= previous, "not sorted by calls: " + line
        previous = calls
        base = os.path.basename(exe) + "+0x"
        if name.startswith(base):             # no dynamic symbol: module+offset
            name = syms[int(name[len(base):], 16)]
        assert name not in counts, "function listed twice: " + line
        counts[name] = calls
    return counts


def test_count_plugin_calls(tmp):
    # -rdynamic: global functions get names from dladdr, static ones do not.
    exe = hk.cc(tmp, ["calls.c"], "calls", flags=["-rdynamic"])
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": PLUGIN})
    assert rc == calls_tree.STATUS, (rc, out, err)
    assert out == calls_tree.STDOUT, out
    assert hk.hookit_lines(err) == [], err
    assert hk.profiles(tmp) == [], "the count plugin replaces libjprof: no .prof"
    counts = read_counts(tmp, exe, pid)
    assert counts == calls_tree.flat_counts(), counts
    assert counts["fib"] == 465 and counts["level_c"] == 24


def test_count_plugin_names(tmp):
    """With -rdynamic the exported functions are named, the static ones are
    module+offset."""
    exe = hk.cc(tmp, ["calls.c"], "calls", flags=["-rdynamic"])
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": PLUGIN})
    text = open(os.path.join(tmp, f"count.calls.{pid}.txt")).read()
    names = [line.split()[2] for line in text.splitlines()]
    assert "fib" in names and "main" in names, names
    assert not any(n in ("static_inner", "static_outer") for n in names), names
    assert sum(n.startswith("calls+0x") for n in names) == 2, names


def test_count_plugin_threads(tmp):
    """Four threads counting into one lock-free table: totals are exact."""
    exe = hk.cc(tmp, ["threads.c"], "threads", libs=["-lpthread"])
    for _ in range(3):
        rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": PLUGIN})
        assert rc == 0, (rc, out, err)
        counts = read_counts(tmp, exe, pid)
        assert counts == {"main": 1, "spawn": 1, "main_only": 7, "worker": 4,
                          "work_0": 1, "work_1": 1, "work_2": 1, "work_3": 1,
                          "step": 10 + 20 + 30 + 40,
                          "leaf": 10 * 1 + 20 * 2 + 30 * 3 + 40 * 4,
                          "common": 1 + 2 + 3 + 4}, counts


def test_count_plugin_output_dir(tmp):
    """The file goes to HOOKIT_OUTPUT."""
    exe = hk.cc(tmp, ["calls.c"], "calls")
    out_dir = os.path.join(tmp, "out")
    os.mkdir(out_dir)
    rc, out, err, pid = hk.popen_run(tmp, [exe], env={"HOOKIT_PROFILER": PLUGIN,
                                                      "HOOKIT_OUTPUT": out_dir})
    assert rc == calls_tree.STATUS, err
    assert os.listdir(out_dir) == [f"count.calls.{pid}.txt"], os.listdir(out_dir)
    assert read_counts(out_dir, exe, pid) == calls_tree.flat_counts()


def test_count_plugin_hookit_run(tmp):
    """`hookit run -p` with the example plugin on a program not linked with hookit."""
    exe = hk.cc(tmp, ["calls.c"], "calls", link_hookit=False)
    out_dir = os.path.join(tmp, "out")
    os.mkdir(out_dir)
    p = hk.hookit(tmp, "run", "-o", out_dir, "-p", PLUGIN, "--", exe, check=False)
    assert p.returncode == calls_tree.STATUS, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == calls_tree.STDOUT, p.stdout
    files = os.listdir(out_dir)
    assert len(files) == 1 and files[0].startswith("count.calls."), files
    pid = int(files[0].split(".")[2])
    assert read_counts(out_dir, exe, pid) == calls_tree.flat_counts()
