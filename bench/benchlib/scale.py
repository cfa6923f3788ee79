"""Workload 6: scale.  bench/contexts.c makes WIDTH^3 distinct calling
contexts over THREADS threads (100^3 = 1,000,000 leaf contexts over 8
threads), once and then PASSES times.  Figures for docs/performance.md:

  bytes per node   the resident set at the end of main (the tree in memory,
                   before exit) over the no-op build's, per node
  ns per call      first pass (every call makes its node) and later passes
                   (every node exists), CPU over the no-op build's
  exit             CPU for names and writing, per 100,000 nodes

Checked: the tree is the one the program guarantees (every context, every
count: a node count and a calls total are not enough, so each thread's
paths are compared with the expected set), and memory grows with contexts,
not calls (PASSES runs take no more memory than one)."""
import os
import subprocess

from . import config
from .alternate import run_alternating
from .build import three_builds
from .measure import RunFailed, profiles_in
from .rows import Row
from .table import Targets, med

SRC = os.path.join(config.ROOT, "bench", "contexts.c")
# The tree's memory (hookit's RSS over the no-op build's) after all passes
# over after one.  Memory that grew with calls would give about PASSES x;
# the slack covers page-fault noise, a few hundred KB whatever the size,
# which is several percent of the quick run's 7 MB tree.
LINEAR_SLACK = 1.10


def expected_paths(width, threads, passes):
    """[{path: calls}] of the worker threads, as contexts.c guarantees: each
    context is called once per pass."""
    out = []
    for t in range(threads):
        paths = {("worker",): 1}
        for i in range(t, width, threads):
            a = f"a{i:02d}"
            paths[("worker", a)] = passes
            for j in range(width):
                b = f"b{j:02d}"
                paths[("worker", a, b)] = passes
                for k in range(width):
                    paths[("worker", a, b, f"c{k:02d}")] = passes
        out.append(paths)
    return out


def tree_problems(prof, width, threads, passes):
    """What differs between the profile and the guaranteed tree ([] if nothing)."""
    want = expected_paths(width, threads, passes)
    got = [t for t in read_paths(prof) if any(p[0] == "worker" for p in t)]
    problems = []
    if len(got) != threads:
        problems.append(f"{len(got)} worker threads profiled, {threads} ran")
    for paths in got:
        # The thread's first a_i says which worker it was.
        firsts = sorted(p[1] for p in paths if len(p) == 2 and p[0] == "worker")
        t = int(firsts[0][1:]) if firsts else -1
        if not 0 <= t < threads:
            problems.append(f"a thread with no a_i under worker: {sorted(paths)[:3]}")
            continue
        diff = [p for p in set(paths) | set(want[t]) if paths.get(p, 0) != want[t].get(p, 0)]
        if diff:
            p = sorted(diff)[0]
            problems.append(f"worker {t}: {len(diff):,} paths differ, e.g. {' > '.join(p)}: "
                            f"{paths.get(p, 0)} calls, expected {want[t].get(p, 0)}")
    return problems


def read_paths(prof):
    """Each thread's {path: calls} from hookit's JSON export, by thread."""
    import json
    p = subprocess.run([config.HOOKIT, "export", "--format=json", prof], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RunFailed(f"hookit export: {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    threads = []
    for t in doc["threads"]:
        by_id, paths = {}, {}
        for n in t["nodes"]:
            path = (by_id[n["parent"]] if n["parent"] is not None else ()) + (n["name"],)
            by_id[n["id"]] = path
            paths[path] = paths.get(path, 0) + n["calls"]
        threads.append(paths)
    return threads


def check_tree(hooked, width, threads, passes):
    """One run of hookit's build, its tree compared with the guaranteed one."""
    work = os.path.join(config.OUT, "scale-tree")
    os.makedirs(work, exist_ok=True)
    for f in profiles_in(work):
        os.unlink(os.path.join(work, f))
    env = dict(os.environ, HOOKIT_OUTPUT=work)
    subprocess.run([hooked, str(width), str(threads), str(passes)], env=env, cwd=work,
                   check=True, capture_output=True)
    profs = profiles_in(work)
    if len(profs) != 1:
        return [f"{len(profs)} profiles written"]
    problems = tree_problems(os.path.join(work, profs[0]), width, threads, passes)
    os.unlink(os.path.join(work, profs[0]))
    return problems


def run(reps):
    width, threads, passes = config.SCALE_WIDTH, config.SCALE_THREADS, config.SCALE_PASSES
    _, noop, hooked = three_builds("contexts", [SRC], libs=["-pthread"])
    rows = [Row(f"{kind}{p}", f"{label}, {p} pass{'es' if p > 1 else ''}", [exe], kind)
            for p in (1, passes)
            for kind, label, exe in (("plain", "glibc no-op hooks", noop),
                                     ("hookit", "hookit default (linked)", hooked))]
    runs = run_alternating(rows, lambda row: [width, threads, int(row.key.lstrip("plainhookt"))],
                           reps, "scale")
    contexts = width ** 3 + width ** 2 + width
    nodes = contexts + threads + 1                  # + each worker, + main
    calls_per_pass = contexts

    def m(key, field):
        return med([{"v": r["fields"][field]} for r in runs[key]], "v")

    print(f"== 6. scale: bench/contexts.c {width}^3 = {width ** 3:,} leaf contexts "
          f"({contexts:,} in all) over {threads} threads, 1 and {passes} passes, "
          f"{reps} alternating rounds ==")
    print(f"{'variant':40} {'CPU s':>7} {'RSS at end MB':>14} {'peak RSS MB':>12} {'exit CPU ms':>12}")
    for row in rows:
        rs = runs[row.key]
        exit_cpu = med(rs, "exit_cpu_ns")
        print(f"{row.label:40} {med(rs, 'cpu_ns') / 1e9:7.2f} {m(row.key, 'rss_kb') / 1024:14.1f} "
              f"{med(rs, 'maxrss_kb') / 1024:12.1f} "
              f"{exit_cpu / 1e6 if exit_cpu is not None else 0:12.1f}")
    print()
    targets = Targets("issue 17, scale")
    h1, hp, n1, np_ = "hookit1", f"hookit{passes}", "plain1", f"plain{passes}"
    per_node = (m(h1, "rss_kb") - m(n1, "rss_kb")) * 1024 / nodes
    targets.show("bytes_per_node", "bytes per node (resident at the end of main, over no-op)",
                 per_node, " B", f"({nodes:,} nodes)")
    first = (med(runs[h1], "loop_cpu_ns") - med(runs[n1], "loop_cpu_ns")) / calls_per_pass
    later = ((med(runs[hp], "loop_cpu_ns") - med(runs[np_], "loop_cpu_ns"))
             - (med(runs[h1], "loop_cpu_ns") - med(runs[n1], "loop_cpu_ns"))) \
        / max(calls_per_pass * (passes - 1), 1)
    targets.show("ns_per_call_first", "ns per call, first pass (each call makes its node)",
                 first, " ns")
    targets.show("ns_per_call_later", "ns per call, later passes (the nodes exist)", later, " ns")
    grow = (m(hp, "rss_kb") - m(np_, "rss_kb")) / (m(h1, "rss_kb") - m(n1, "rss_kb"))
    targets.add("linear", f"memory with contexts, not calls: tree RSS (over no-op) {passes} "
                f"passes / 1 pass <= {LINEAR_SLACK}", grow, grow <= LINEAR_SLACK, "x")
    spent = (med(runs[h1], "exit_cpu_ns") - med(runs[n1], "exit_cpu_ns")) / 1e6
    per = spent * 100000 / nodes
    targets.add("write_ms", "profile at exit (names + write), CPU ms per 100,000 nodes <= 20",
                per, per <= 20, " ms", f"({spent:.0f} ms for {nodes:,} nodes)")
    problems = check_tree(hooked, width, threads, passes)
    targets.results.append({"target": "exact_tree", "value": nodes, "ok": not problems,
                            "note": "; ".join(problems)})
    print(f"exactness (scale): every worker's {contexts // threads:,}-odd paths against the "
          f"structure contexts.c guarantees: {'PASS' if not problems else 'FAIL: ' + '; '.join(problems)}")
    print()
    return {"contexts": contexts, "nodes": nodes, "reps": reps, "targets": targets.results,
            "bytes_per_node": per_node, "ns_per_call_first": first, "ns_per_call_later": later,
            "exit_ms_per_100k": per}
