"""make bench's quick mode (BENCH_QUICK=1): the tables come out and the
numbers are sane.  Only the quick mode, and without the SQLite workload,
uftrace and callgrind: timings are never asserted beyond orderings that
hold by a wide margin (a no-op hook pair costs ~6x a bare call; hookit's
tree costs several times the no-op hooks)."""
import json
import os
import subprocess

import hk

NOT_UNDER = {s: "timings of sanitized libraries mean nothing, and bench/run does not "
                "preload the sanitizer runtime" for s in ("address", "thread", "undefined")}

MICRO_ROWS = ("uninstrumented", "noop", "floor", "off", "hookit", "sample", "compensate", "alloc",
              "throttle")
HOOKIT_ROWS = ("hookit", "sample", "compensate", "alloc")


def run_quick(tmp, **extra):
    out = os.path.join(tmp, "bench.json")
    env = hk.test_env(BENCH_QUICK="1", BENCH_OUT=os.path.join(tmp, "build"), BENCH_JSON=out,
                      HOOKIT_BUILD_DIR=hk.BUILD)
    for k in [k for k in env if k.startswith("BENCH_") and k not in
              ("BENCH_QUICK", "BENCH_OUT", "BENCH_JSON")]:
        del env[k]
    env.update(extra)
    p = subprocess.run([os.path.join(hk.ROOT, "bench", "run")], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"bench/run failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    with open(out) as f:
        return p.stdout, json.load(f)


def positive(summary, *keys):
    for k in keys:
        assert summary[k] is not None and summary[k] > 0, f"{summary['label']}: {k} = {summary[k]}"


def test_quick_bench(tmp):
    """One quick run (about 15 s on 2 busy CPUs), both tables checked."""
    text, doc = run_quick(tmp)
    check_micro(text, doc)
    check_threads(doc)
    check_ab(tmp)


def check_ab(tmp):
    """bench/ab on the program the quick run built: a line per plugin, in
    the order given, with R figures; a missing plugin is refused."""
    ab = os.path.join(hk.ROOT, "bench", "ab")
    lib = os.path.join(hk.LIB, "hookit", "libjprof.so")
    env = hk.test_env(R="2", N="18", BIN=os.path.join(tmp, "build", "recurse-hookit"))
    p = subprocess.run([ab, lib, lib], cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(lib) for line in lines), p.stdout
    for line in lines:
        assert float(line.split("median")[1].split()[0]) > 0 and len(line.split("(")[1].split()) == 3, line
    p = subprocess.run([ab, os.path.join(tmp, "missing.so")], cwd=tmp, env=env, capture_output=True, text=True)
    assert p.returncode == 2 and "missing.so: no such plugin" in p.stderr, p


def check_micro(text, doc):
    assert doc["quick"] is True
    # The two quick workloads and their tables; no SQLite, uftrace or callgrind.
    assert "== 1. recursive microbenchmark: fib(30) = 2,692,537 calls" in text, text
    assert "== 3. threads:" in text, text
    assert "sqlite" not in doc and "== 2. SQLite" not in text
    assert "targets (issue 5):" in text and "targets missed:" in text
    micro = doc["micro"]
    assert micro["calls"] == 2692537
    rows = micro["rows"]
    assert sorted(rows) == sorted(MICRO_ROWS), sorted(rows)
    for key in MICRO_ROWS:
        assert rows[key]["label"] in text, rows[key]["label"]
        positive(rows[key], "wall_s", "cpu_s", "ns_per_call", "loop_ns_per_call",
                 "x_uninstrumented", "maxrss_mb")
        assert rows[key]["reps"] == 3
        lo, hi = rows[key]["cpu_s_range"]
        assert lo <= rows[key]["cpu_s"] <= hi
    # Orderings that hold by a wide margin even on a busy machine (CPU time).
    cpu = {k: rows[k]["loop_ns_per_call"] for k in MICRO_ROWS}
    assert cpu["uninstrumented"] < cpu["noop"] < cpu["hookit"], cpu
    # The TSC floor reads the clock in its hooks: dearer than no-ops.
    assert cpu["noop"] < cpu["floor"], cpu
    assert cpu["sample"] < cpu["hookit"], cpu
    assert rows["uninstrumented"]["x_uninstrumented"] == 1.0
    assert rows["noop"]["added_ns_per_call_over_noop"] == 0.0
    # Every hookit row wrote a profile that counted every fib call (and main).
    for key in HOOKIT_ROWS:
        assert rows[key]["profile_written"], key
        assert rows[key]["output_bytes"] > 0, key
        assert rows[key]["profile_calls"] == micro["calls"] + 1, (key, rows[key]["profile_calls"])
        assert rows[key]["exit_ms"] is not None and rows[key]["exit_ms"] >= 0
    for key in ("uninstrumented", "noop", "off", "floor"):
        assert rows[key]["output_bytes"] == 0, key
    # Throttled (docs/filters.md): a profile, fewer calls counted than made
    # (fib's deep contexts stop counting), and cheaper than counting them all.
    assert rows["throttle"]["profile_written"] and 0 < rows["throttle"]["profile_calls"] < micro["calls"]
    assert cpu["throttle"] < cpu["sample"], cpu
    # The profile tells its measured overhead; compensation is reported.
    assert rows["hookit"]["meta_overhead_ns_per_call"] > 0
    check_cores(micro)
    targets = {t["target"] for t in micro["targets"]}
    assert {"default_ns_per_call", "sample_vs_noop", "node_bytes", "compensate",
            "exact_over_floor"} <= targets
    assert "targets (issue 17):" in text and "timer=exact over the TSC floor" in text, text


def check_threads(doc):
    th = doc["threads"]
    assert th["per_thread_calls"] == 1028457          # fib(28)
    rows = th["rows"]
    for variant in ("uninstrumented", "noop", "floor", "hookit", "sample"):
        one, two, procs, four = (rows[f"{variant}-{s}"] for s in ("1", "2", "2p", "4"))
        for s in (one, two, procs, four):
            positive(s, "loop_wall_ms", "cpu_ms", "cpu_ns_per_call", "mcalls_per_s",
                     "best_throughput_x_1")
        assert one["throughput_x_1"] == 1.0 and one["best_throughput_x_1"] == 1.0
        assert (two["threads"], two["processes"]) == (2, 1) and (procs["threads"], procs["processes"]) == (1, 2)
        positive(two, "threads_x_processes", "best_threads_x_processes")
        # Twice and four times the work: more CPU time in all (by a wide margin).
        assert one["cpu_ms"] < four["cpu_ms"], (variant, one, four)
        assert one["cpu_ms"] < procs["cpu_ms"], (variant, one, procs)
    # The control has no 4-thread row; it has the other three.
    assert {k for k in rows if k.startswith("control-")} == {"control-1", "control-2", "control-2p"}
    assert rows["noop-1"]["cpu_ns_per_call"] < rows["hookit-1"]["cpu_ns_per_call"]
    assert {t["target"] for t in th["targets"]} == {"threads2_throughput", "threads2_shared_nothing"}
    check_cores(th)


def check_cores(table):
    """The machine check ran before and after the table: a rate, slices counted."""
    for when in ("before", "after"):
        c = table["cores_check"][when]
        assert c["rate"] > 0 and c["slices"] == 50, c
        assert 0 <= c["both_slow"] + c["one_slow"] <= c["slices"], c


def test_quick_real_code(tmp):
    """The C++ (fmt) and scale workloads in their quick sizes: issue 26's
    cost gates are printed and kept, and each passes its exactness gate (the
    tree against the reference hook library, or against the structure the
    scale program guarantees).  Lua and SQLite need a download, so they
    are left to make bench."""
    if not os.path.exists("/usr/include/fmt/format.h"):
        hk.skip("libfmt-dev is not installed (make deps installs it)")
    # The builds are cached in the build directory: fmt compiles slowly.
    text, doc = run_quick(tmp, BENCH_WORKLOADS="fmt,scale,floors",
                          BENCH_OUT=os.path.join(hk.BUILD, "bench-quick"))
    assert "targets (issue 26):" in text and "targets (issue 17, scale):" in text, text
    for name in ("fmt", "scale"):
        gate = [t for t in doc[name]["targets"] if t["target"] == "exact_tree"]
        assert len(gate) == 1 and gate[0]["ok"] is True, (name, gate, text)
        assert "PASS" in text
    assert "exactness (scale):" in text, text
    fmt = doc["fmt"]
    # The default (timer=sample) and timer=exact have entries and exits of
    # their own: each passes a gate of its own.
    gate = [t for t in fmt["targets"] if t["target"] == "exact_tree_sample"]
    assert len(gate) == 1 and gate[0]["ok"] is True, (gate, text)
    assert "exactness (fmt):" in text and "exactness (fmt, JPROFOPTS=timer=exact):" in text, text
    assert fmt["calls"] > 1000000, fmt["calls"]
    keys = {t["target"] for t in fmt["targets"]}
    assert {"exact_vs_tsc_floor", "default_vs_tree_floor", "sample_vs_tree_floor", "rss_added",
            "write_ms", "treefloor_vs_noop", "keyfloor_vs_noop"} <= keys, keys
    check_tree_floor(fmt, text)
    check_floors(doc, text)
    scale = doc["scale"]
    assert scale["contexts"] == 40 ** 3 + 40 ** 2 + 40
    assert 64 <= scale["bytes_per_node"] < 1000, scale["bytes_per_node"]
    linear = [t for t in scale["targets"] if t["target"] == "linear"][0]
    assert linear["ok"], linear


def check_tree_floor(fmt, text):
    """The tree floor under timer=sample is a floor only if it did the work:
    it counted every call, in as many contexts as the reference tree has
    paths (fmt does not longjmp, so its bare tree is the exact one)."""
    counted = [t for t in fmt["targets"] if t["target"] == "tree_floor_counted"]
    assert len(counted) == 1 and counted[0]["ok"] is True, (counted, text)
    assert counted[0]["value"] == fmt["calls"], counted
    paths = [t for t in fmt["targets"] if t["target"] == "exact_tree"][0]["value"]
    assert f"; {paths:,} contexts)" in counted[0]["note"], (counted, paths)
    rows = fmt["rows"]
    for key in ("treefloor", "keyfloor"):
        assert rows[key]["output_bytes"] == 0 and rows[key]["cpu_s"] > 0, rows[key]
        # Counting per context costs more than the no-op hooks (by a wide margin).
        assert rows[key]["loop_ns_per_call"] > rows["noop"]["loop_ns_per_call"], rows


def check_floors(doc, text):
    """The floors table (fmt in quick mode): the bare tree and each of
    hookit's duties added to it, every one counting every call in as many
    contexts as the reference tree has paths, beside timer=sample."""
    assert "== 7. floors, fmt:" in text and "targets (issue 17, floors):" in text, text
    fmt = doc["floors"]["programs"]["fmt"]
    assert fmt["calls"] == doc["fmt"]["calls"]
    assert {"treefloor", "frames", "busy", "switch", "sample", "noop"} <= set(fmt["rows"])
    paths = [t for t in doc["fmt"]["targets"] if t["target"] == "exact_tree"][0]["value"]
    counted = {t["target"]: t for t in doc["floors"]["targets"] if t["target"].endswith("_counted")}
    assert sorted(counted) == ["fmt:busy_counted", "fmt:frames_counted", "fmt:switch_counted",
                               "fmt:treefloor_counted"], counted
    for t in counted.values():
        assert t["ok"] is True and t["value"] == fmt["calls"], t
        assert t["note"] == f"({paths:,} contexts)", (t, paths)


def test_scale_check_can_fail(tmp):
    """The scale workload's tree check is a real comparison: the same
    profile against the tree of another pass count, or of another thread
    count, is refused, naming a path."""
    import sys
    sys.path.insert(0, os.path.join(hk.ROOT, "bench"))
    from benchlib import scale
    exe = hk.cc(tmp, [scale.SRC], "contexts", flags=["-O2", "-pthread"])
    hk.run(tmp, [exe, "6", "2", "2"])
    prof = hk.one_profile(tmp, "contexts")
    assert scale.tree_problems(prof, 6, 2, 2) == []
    wrong = scale.tree_problems(prof, 6, 2, 3)
    assert wrong and "paths differ" in wrong[0] and "expected 3" in wrong[0], wrong
    assert scale.tree_problems(prof, 6, 3, 2), "a missing worker thread was not noticed"
