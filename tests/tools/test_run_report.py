"""hookit run and hookit report around what a new user trips on: a program
not built with -finstrument-functions, `hookit run -- sh -c ...` (the
shell runs none of the code), `report --merge` of such a family, and
`hookit report` with no file (the newest profile here, as gprof reads
gmon.out)."""
import os, re, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

APP = r"""
#include <stdio.h>
#include <stdlib.h>
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i % 7; return s; }
int main(int argc, char **argv) { printf("%d\n", work(argc > 1 ? atoi(argv[1]) : 10)); return 0; }
"""


def build(tmp, name, instrument=True):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(APP)
    return hk.cc(tmp, [src], name, link_hookit=False, instrument=instrument)


def test_run_uninstrumented_program_says_so(tmp):
    plain = build(tmp, "plain", instrument=False)
    p = hk.hookit(tmp, "run", "--", plain, "5")
    assert p.stdout == "10\n"
    lines = hk.hookit_lines(p.stderr)
    assert len(lines) == 1 and lines[0].endswith(
        "no instrumented function ran: was plain built with -finstrument-functions? "
        "(no profile written)"), p.stderr
    assert hk.profiles(tmp) == []


def test_run_sh_c_writes_only_processes_that_ran_code(tmp):
    plain, app = build(tmp, "plain", instrument=False), build(tmp, "app")
    script = f"{plain} 5; {app} 5; true"
    p = hk.hookit(tmp, "run", "--", "sh", "-c", script)
    assert p.stdout == "10\n10\n" and hk.hookit_lines(p.stderr) == [], p.stderr
    assert [os.path.basename(f).split(".")[1] for f in hk.profiles(tmp)] == ["app"]
    # --all-processes: the shells and plain write theirs too
    d = os.path.join(tmp, "all")
    p = hk.hookit(tmp, "run", "--all-processes", "-o", d, "--", "sh", "-c", script)
    names = sorted(os.path.basename(f).split(".")[1] for f in hk.profiles(d))
    assert "app" in names and "plain" in names and len(names) >= 3, names


def test_report_of_an_empty_profile_says_so(tmp):
    plain = build(tmp, "plain", instrument=False)
    hk.hookit(tmp, "run", "--all-processes", "--", plain)
    prof = hk.one_profile(tmp, "plain")
    p = hk.hookit(tmp, "report", prof, check=False)
    assert p.returncode == 1 and p.stdout == "", p
    assert p.stderr == (f"hookit: report: {prof}: no instrumented function ran: was plain built "
                        "with -finstrument-functions?\n"), p.stderr


FORK_APP = r"""
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
volatile int x;
__attribute__((noinline)) void g(void) { x++; }
__attribute__((noinline)) void f(void) { g(); pid_t p = fork(); if (p == 0) exit(0); waitpid(p, 0, 0); }
int main(void) { g(); f(); return 0; }
"""


def test_report_of_a_fork_child_that_made_no_call(tmp):
    """A fork child that completes no call has a tree (the frames open in
    its parent at the fork, main > f, context with no calls): its function
    ran, so the report says what is true, not "no instrumented function
    ran"; among the family it is left out with that reason."""
    src = os.path.join(tmp, "forky.c")
    with open(src, "w") as f:
        f.write(FORK_APP)
    exe = hk.cc(tmp, [src], "forky")
    hk.run(tmp, [exe])
    profs = hk.profiles(tmp, "forky")
    assert len(profs) == 2, profs
    docs = {f: hk.export_json(tmp, f) for f in profs}
    pids = {d["process"]["pid"]: f for f, d in docs.items()}
    child = [f for f, d in docs.items() if d["process"]["ppid"] in pids][0]
    doc = docs[child]
    assert [(n["name"], n["calls"]) for _, n in hk.walk(hk.thread_of(doc, 0)["roots"])] == \
        [("main", 0), ("f", 0)], doc
    r = hk.hookit(tmp, "report", child, check=False)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == (f"hookit: report: {child}: no call completed in process {doc['process']['pid']}: its "
                        "tree holds only the 2 frames open in its parent when it forked\n"), r.stderr
    parent = [f for f in profs if f != child][0]
    r = hk.hookit(tmp, "report", parent, child)
    assert r.stderr == ("hookit: report: left out, no call completed (only frames inherited at "
                        f"fork) in: {child}\n"), r.stderr
    assert "F:forky.g()" in r.stdout, r.stdout


def test_report_merge_is_headed_by_a_process_that_ran_code(tmp):
    plain, app = build(tmp, "plain", instrument=False), build(tmp, "app")
    hk.hookit(tmp, "run", "--all-processes", "--", "sh", "-c", f"{plain}; {app} 7; true")
    profs = hk.profiles(tmp)
    first = [f for f in profs if ".dash." in f or ".sh." in f or ".bash." in f]
    assert first, profs
    order = first[:1] + [f for f in profs if f != first[0]]    # the shell's profile first
    p = hk.hookit(tmp, "report", "--merge", *order)
    head = [l for l in p.stdout.splitlines() if l.startswith("== ")]
    assert len(head) == 1 and head[0].endswith("exe " + app), p.stdout
    assert "left out, no instrumented function ran in:" in p.stderr
    out = os.path.join(tmp, "m.prof")
    hk.hookit(tmp, "merge", "-o", out, *order)
    doc = hk.export_json(tmp, out)
    assert doc["process"]["exe"] == app, doc["process"]


def test_report_without_a_file_reads_the_newest(tmp):
    old, new = build(tmp, "older"), build(tmp, "newer")
    hk.run(tmp, [old])
    time.sleep(0.05)
    hk.run(tmp, [new], env={"LD_PRELOAD": hk.LIBHOOKIT})
    hk.hookit(tmp, "run", "--", new)
    newest = max(hk.profiles(tmp), key=os.path.getmtime)
    p = hk.hookit(tmp, "report")
    assert p.stderr == (f"hookit: report: reading {os.path.basename(newest)}, the newest profile "
                        "in the current directory\n"), p.stderr
    assert "exe " + new in p.stdout and "F:newer.work()" in p.stdout, p.stdout
    assert hk.hookit(tmp, "report", "--flat").stdout == \
        hk.hookit(tmp, "report", "--flat", newest).stdout


def test_report_without_a_file_reads_the_fork_family(tmp):
    app = build(tmp, "app")
    hk.hookit(tmp, "run", "--all-processes", "--", "sh", "-c", f"{app} 3; {app} 4; true")
    family = hk.profiles(tmp)
    p = hk.hookit(tmp, "report")
    m = re.match(r"hookit: report: reading (\S+), the newest profile in the current directory, "
                 r"and its fork family: (\d+) profiles \(([^)]*)\)\n", p.stderr)
    assert m, p.stderr
    assert int(m.group(2)) == len(family) and sorted(m.group(3).split()) == \
        sorted(os.path.basename(f) for f in family), (p.stderr, family)
    assert p.stdout.count("F:app.work()") == 2, p.stdout


def test_report_without_a_file_and_none_here(tmp):
    p = hk.hookit(tmp, "report", check=False)
    assert p.returncode == 1 and "no hookit.*.prof in the current directory" in p.stderr, p
