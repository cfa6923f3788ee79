"""JSON schema 2 read by the tools people script with: jq 1.6 (Debian's,
which stops at 256 levels of nesting) and Python's json with its default
limits, on a recursion 5,000 deep; I/O files, series and numeric metadata
as JSON values, not text."""
import json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

DEPTH = 5000

DEEP_C = r"""
#include <stdio.h>
__attribute__((noinline)) long down(long n) { return n ? 1 + down(n - 1) : 0; }
int main(void) {
    FILE *f = fopen("out.txt", "w");
    fputs("x", f);
    fclose(f);
    printf("%ld\n", down(%DEPTH% - 1));
    return 0;
}
"""


def deep_profile(tmp):
    src = os.path.join(tmp, "deep.c")
    with open(src, "w") as f:
        f.write(DEEP_C.replace("%DEPTH%", str(DEPTH)))
    exe = hk.cc(tmp, [src], "deep", flags=["-O0"])
    p = hk.run(tmp, [exe], env={"JPROFOPTS": "alloc"})
    assert p.stdout == f"{DEPTH - 1}\n", p.stdout
    js = os.path.join(tmp, "deep.json")
    hk.hookit(tmp, "export", "--format=json", "-o", js, hk.one_profile(tmp, "deep"))
    return js


def jq(tmp, expr, path):
    if not hk.have("jq"):
        hk.skip("jq not installed (make deps installs it)")
    p = subprocess.run(["jq", "-c", expr, path], capture_output=True, text=True, cwd=tmp)
    assert p.returncode == 0, (expr, p.stderr)
    return json.loads(p.stdout)


def test_deep_recursion_loads_in_jq(tmp):
    js = deep_profile(tmp)
    assert jq(tmp, ".schema", js) == 2
    downs = jq(tmp, '[.threads[0].nodes[] | select(.name == "down")] | length', js)
    assert downs == DEPTH, downs
    assert jq(tmp, "[.threads[0].nodes[].depth] | max", js) == DEPTH
    # parent ids lead from the deepest node back to main
    chain = jq(tmp, '.threads[0].nodes as $n | [$n[-1] | recurse(if .parent == null then empty '
                    'else $n[.parent] end) | .name] | length', js)
    assert chain == DEPTH + 1, chain


def test_deep_recursion_loads_in_python_json_default_limits(tmp):
    js = deep_profile(tmp)
    script = ("import json, sys\n"
              "assert sys.getrecursionlimit() == 1000\n"
              "doc = json.load(open(sys.argv[1]))\n"
              "nodes = doc['threads'][0]['nodes']\n"
              "print(len(nodes), max(n['depth'] for n in nodes), nodes[-1]['parent'])\n")
    p = subprocess.run([sys.executable, "-c", script, js], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    n, depth, parent = p.stdout.split()
    assert (int(n), int(depth), int(parent)) == (DEPTH + 1, DEPTH, DEPTH - 1), p.stdout


def test_files_series_and_numbers_are_json_values(tmp):
    js = deep_profile(tmp)
    doc = json.load(open(js))
    meta = doc["process"]["meta"]
    for key in ("sample_period_ns", "hookit_samples", "hookit_sampled_ns", "io_calls",
                "io_bytes_written", "alloc_calls", "dropped_events"):
        assert isinstance(meta[key], int), (key, meta[key])
    assert isinstance(meta["ticks_per_ns"], (int, float)) or meta["clock"] != "tsc", meta
    assert isinstance(meta["hostname"], str) and isinstance(meta["clock"], str)
    assert not [k for k, v in meta.items() if isinstance(v, str) and re.fullmatch(r"-?\d+", v)], meta
    assert not {"io_files", "io_series", "alloc_series"} & set(meta), meta
    out = [f for f in doc["io_files"] if f["path"].endswith("/out.txt")]
    assert len(out) == 1, doc["io_files"]
    f = out[0]
    assert (f["opens"], f["writes"], f["bytes_written"]) == (1, 1, 1), f
    assert f["write_hist"] == [1] + [0] * 9 and f["max_byte_read"] == -1, f
    assert sum(s["bytes_written"] for s in doc["io_series"]) == meta["io_bytes_written"]
    assert all(isinstance(s["live_max_bytes"], int) for s in doc["alloc_series"]), doc["alloc_series"]
    # jq reaches them too
    assert jq(tmp, '[.io_files[] | select(.path | endswith("/out.txt")) | .bytes_written] | add',
              js) == 1


def readme_jq_examples():
    text = open(os.path.join(hk.ROOT, "README.md")).read()
    return re.findall(r"hookit export --format=json (\S+) \| jq (-\w+ )?'([^']+)'", text)


def test_readme_jq_examples_work_on_a_recursive_program(tmp):
    examples = readme_jq_examples()
    assert len(examples) >= 2, examples
    js = deep_profile(tmp)
    for _, flag, expr in examples:
        out = jq(tmp, expr, js) if not flag else None
        assert out is not None and out != [], (expr, out)
