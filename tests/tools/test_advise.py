"""The hooks' cost made visible (issue 29, items 1 and 4): `hookit report`'s
"overhead" line, and `hookit advise` end to end on a small program: its
flags rebuild the program so that exactly the calls it predicts are left,
GCC's substring matching does not take a function on a top path with it
(a naive list would: shown), and the top paths keep their exact counts.
The full runs on zstd and SQLite are `make bench-advise` (docs/cost.md)."""
import json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

HEADER = r"""
struct box { int v; };
static inline int acc_get(const struct box *b) { return b->v; }
static inline void acc_set(struct box *b, int v) { b->v = v; }
"""

# mix is hot and tiny, and its name is part of mix_all's, which is on a
# top path: "mix" in GCC's list would drop mix_all too.  scale's is part of
# scale_once's, called once and on no top path: both go, and advise says so.
APP = r"""
#include <stdio.h>
#include <stdlib.h>
#include "acc.h"
static volatile long sink;
int step(int x) { return x * 3 + 1; }
int mix(int x) { return x ^ (x >> 3); }
int scale(int x) { return x * 2; }
int scale_once(int x) { return x + 1; }
void busy(int n) { for (long i = 0; i < n * 100000L; i++) sink += i; }
long mix_all(int n)
{
    long s = 0;
    struct box b = { 1 };
    for (int i = 0; i < n; i++) {
        s += mix(i) + step(acc_get(&b)) + scale(i);
        acc_set(&b, i & 7);
    }
    busy(90);
    return s;
}
void stage_one(void) { busy(60); }
void stage_two(void) { busy(60); }
void stage_three(void) { busy(60); }
void stage_four(void) { busy(60); }
void stage_five(void) { busy(60); }
void stage_six(void) { busy(60); }
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long s = mix_all(n);
    stage_one();
    stage_two();
    stage_three();
    stage_four();
    stage_five();
    stage_six();
    printf("%ld\n", s + scale_once(1));
    return 0;
}
"""

CALLS = 1500000
# Enough calls that the hooks are well over a third of the run however
# loaded the machine (35-45% at CALLS, 60-75% at this).
MANY = 4 * CALLS


def build(tmp, name, flags=()):
    d = os.path.join(tmp, "src")
    os.makedirs(d, exist_ok=True)
    for fname, text in (("acc.h", HEADER), ("app.c", APP)):
        with open(os.path.join(d, fname), "w") as f:
            f.write(text)
    return hk.cc(tmp, [os.path.join(d, "app.c")], name, link_hookit=False,
                 flags=["-O2", "-I" + d] + list(flags))


def profile_of(tmp, exe, *args):
    out = os.path.join(tmp, "out-" + os.path.basename(exe))
    p = hk.hookit(tmp, "run", "-o", out, "--", exe, *args)
    return hk.one_profile(out), p


def counts(tmp, prof):
    """{path of names: calls} of the main thread."""
    doc = hk.export_json(tmp, prof)
    nodes = hk.thread_of(doc)["nodes"]
    by_id = {n["id"]: n for n in nodes}
    paths = {}
    for n in nodes:
        path, k = [], n
        while k:
            path.append(k["name"])
            k = by_id.get(k["parent"])
        paths[tuple(reversed(path))] = paths.get(tuple(reversed(path)), 0) + n["calls"]
    return paths


def names_in(paths):
    return {name for path in paths for name in path}


def test_report_says_overhead_for_many_tiny_calls_only(tmp):
    exe = build(tmp, "app")
    prof, _ = profile_of(tmp, exe, str(MANY))
    report = hk.hookit(tmp, "report", prof).stdout
    lines = [l for l in report.splitlines() if "overhead" in l]
    assert len(lines) == 1 and "hookit advise" in lines[0], report[:2000]
    m = re.search(r"\((\d+)%: (\d+) calls x", lines[0])
    assert m and int(m.group(1)) >= 33 and int(m.group(2)) == sum(counts(tmp, prof).values()), lines[0]
    # a few calls doing real work: the hooks cost nothing worth a line
    few, _ = profile_of(tmp, build(tmp, "few"), "10")
    report = hk.hookit(tmp, "report", few).stdout
    assert "overhead" not in report and "hookit advise" not in report, report
    # a merge of runs has one run's figures over every run's calls: no estimate
    merged = os.path.join(tmp, "merged.prof")
    hk.hookit(tmp, "merge", "-o", merged, prof, prof)
    assert "overhead" not in hk.hookit(tmp, "report", merged).stdout
    assert "overhead" not in hk.hookit(tmp, "report", "--merge", prof, prof).stdout
    p = hk.hookit(tmp, "advise", merged, check=False)
    assert p.returncode == 1 and "no measured per-call cost" in p.stderr, p.stderr


def test_advise_flags_rebuild_to_the_predicted_calls(tmp):
    exe = build(tmp, "app")
    prof, _ = profile_of(tmp, exe, str(CALLS))
    # a low target: every function that can go goes, however the machine
    # timed the program's own work
    out = hk.hookit(tmp, "advise", "--target", "1", prof).stdout
    lines = out.splitlines()
    flags = lines[-1].split()
    assert flags and all(f.startswith("-finstrument-functions-exclude-") for f in flags), out
    lists = dict(f.split("=", 1) for f in flags)
    files = lists.get("-finstrument-functions-exclude-file-list", "").split(",")
    funcs = lists.get("-finstrument-functions-exclude-function-list", "").split(",")
    # the header by its file, the rest by name; "mix" is never written
    assert files == ["acc.h"] and sorted(funcs) == ["scale", "step"], out
    assert re.search(r"keep: no flag can\s+mix\b.*part of the name of, on a top path, mix_all", out), out
    assert re.search(r"drop: by scale\s+scale_once", out), out
    calls_left = int(re.search(r"Expected without the \d+ dropped: (\d+) calls", out).group(1))
    # what bench/advise reads: the whole expected cost
    assert re.search(r"in all about [0-9.]+(ns|us|ms|s) over the program's own time", out), out

    before = counts(tmp, prof)
    advised, p = profile_of(tmp, build(tmp, "advised", lines[-1].split()), str(CALLS))
    after = counts(tmp, advised)
    assert p.stdout == hk.run(tmp, [exe, str(CALLS)]).stdout
    assert sum(after.values()) == calls_left, (calls_left, after)
    assert not names_in(after) & {"step", "scale", "scale_once", "acc_get", "acc_set"}, after
    # every context left, top paths and mix among them, with its exact count
    for path, calls in after.items():
        assert before.get(path) == calls, (path, calls, before.get(path))
    assert after[("main", "mix_all", "mix")] == CALLS, after
    for stage in ("stage_one", "stage_two", "stage_three", "stage_four", "stage_five", "stage_six"):
        assert after[("main", stage, "busy")] == 1, after


def test_a_naive_function_list_drops_a_function_on_a_top_path(tmp):
    """Why advise does not write "mix": GCC matches it inside mix_all."""
    naive = build(tmp, "naive", ["-finstrument-functions-exclude-function-list=mix"])
    prof, _ = profile_of(tmp, naive, "1000")
    names = names_in(counts(tmp, prof))
    assert "mix_all" not in names and "mix" not in names and "step" in names, names


def test_advise_clang_and_usage(tmp):
    prof, _ = profile_of(tmp, build(tmp, "app"), str(CALLS))
    out = hk.hookit(tmp, "advise", "--clang", prof).stdout.splitlines()
    assert out[-1] == "-finstrument-functions-after-inlining", out
    assert any("Clang 14 refuses them" in l for l in out), out
    p = hk.hookit(tmp, "advise", check=False)
    assert p.returncode == 2 and "give one profile" in p.stderr, p.stderr
    p = hk.hookit(tmp, "advise", "--target", "x", prof, check=False)
    assert p.returncode == 2 and "--target" in p.stderr, p.stderr


def test_run_says_overhead_at_the_end(tmp):
    """hookit run's process says it too, once, on stderr (stdout is the
    program's), naming the profile it wrote."""
    exe = build(tmp, "app")
    prof, p = profile_of(tmp, exe, str(MANY))
    lines = [l for l in hk.hookit_lines(p.stderr) if "overhead" in l]
    assert len(lines) == 1 and f"hookit advise {prof}" in lines[0], p.stderr
    assert p.stdout == hk.run(tmp, [exe, str(MANY)]).stdout
    _, p = profile_of(tmp, build(tmp, "few"), "10")
    assert "overhead" not in p.stderr, p.stderr
