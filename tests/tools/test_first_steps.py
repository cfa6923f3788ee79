"""The first steps of a new user (issue 30's small traps): `hookit run -o
DIR` then `hookit report DIR`; `hookit run -p` with a plugin's short name,
as `hookit link -p` takes it, and an unknown one refused before the
program runs (it used to run unprofiled and exit 0)."""
import os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import hk  # noqa: E402

SPLIT = os.path.join(hk.ROOT, "tests", "reports", "progs", "split.c")


def exe(tmp):
    return hk.cc(tmp, [SPLIT], "split", link_hookit=False, libs=["-lpthread"])


def test_report_a_directory(tmp):
    prog = exe(tmp)
    out = os.path.join(tmp, "out")
    hk.hookit(tmp, "run", "-o", out, "--", prog)
    r = hk.hookit(tmp, "report", "--flat", "--no-pager", out)
    assert re.fullmatch(rf"hookit: report: reading {re.escape(out)}/hookit\.split\.\d+\.prof, the "
                        rf"newest profile in {re.escape(out)}\n", r.stderr), r.stderr
    assert "F:split.crunch()" in r.stdout, r.stdout
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    r = hk.hookit(tmp, "report", empty, check=False)
    assert r.returncode == 1 and f"no hookit.*.prof in {empty}" in r.stderr, r.stderr


def test_run_profiler_by_short_name(tmp):
    prog = exe(tmp)
    hk.hookit(tmp, "run", "-p", "hktrace", "--", prog)
    traces = [f for f in os.listdir(tmp) if f.endswith(".trace")]
    assert len(traces) == 1, os.listdir(tmp)
    r = hk.hookit(tmp, "run", "-p", "nosuch", "--", prog, check=False)
    assert r.returncode == 2 and r.stdout == "", r
    m = re.match(r"hookit: run: no profiler plugin 'nosuch' in \S+: the plugins are (.*) \(or give "
                 r"a path to a \.so\)\n", r.stderr)
    assert m and {"jprof", "hktrace"} <= set(m.group(1).split(", ")), r.stderr
    # the program did not run: no new profile or trace
    assert len([f for f in os.listdir(tmp) if f.startswith("hookit.")]) == 1, os.listdir(tmp)
