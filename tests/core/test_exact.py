"""Exact trees where entries and exits do not simply pair, or where the
program itself is in the way (docs/exactness.md): recursion the compiler
inlines into itself, longjmp back into a loop, C++ exceptions in GCC and
Clang builds, swapcontext coroutines, fork children, a program with its own
instrumented malloc, .preinit_array.  Each test compares every path and
every count with the tree the program guarantees; the conformance corpus
(tests/conformance) compares real third-party code with a reference."""
import collections
import glob
import os
import time

import hk

BUILDS = [(c, o) for c in ("gcc", "clang") for o in ("-O0", "-O2", "-O3")]


def paths_of(calls):
    """{path: calls} from a list of call paths (each a tuple)."""
    return dict(collections.Counter(calls))


def recursion_paths(fn, *args):
    """The call paths a recursive Python twin of the program's function makes."""
    out = []

    def call(name, path, body, *a):
        p = path + (name,)
        out.append(p)
        return body(p, *a)
    fn(call, ("main",), *args)
    return out


def rec(call, path, n):
    return call("rec", path, lambda p, n: 0 if n <= 0 else 1 + rec(call, p, n - 1), n)


def is_even(call, path, n):
    return call("is_even", path, lambda p, n: 1 if n == 0 else is_odd(call, p, n - 1), n)


def is_odd(call, path, n):
    return call("is_odd", path, lambda p, n: 0 if n == 0 else is_even(call, p, n - 1), n)


def fib(call, path, n):
    return call("fib", path, lambda p, n: n if n < 2 else fib(call, p, n - 1) + fib(call, p, n - 2), n)


def ack(call, path, m, n):
    def body(p, m, n):
        if m == 0:
            return n + 1
        if n == 0:
            return ack(call, p, m - 1, 1)
        return ack(call, p, m - 1, ack(call, p, m, n - 1))
    return call("ack", path, body, m, n)


def inline_rec_expected():
    calls = [("main",)]
    for fn, args in ((rec, (10,)), (is_even, (21,)), (fib, (12,)), (ack, (2, 3))):
        calls += recursion_paths(fn, *args)
    return paths_of(calls)


def run_one(tmp, exe, args=(), env=None):
    p = hk.run(tmp, [exe] + list(args), env=env)
    return p


def no_lost_events(doc):
    meta = doc["process"]["meta"]
    assert str(meta["dropped_events"]) == "0" and str(meta["unmatched_exits"]) == "0", meta
    assert "undecided_landing_pads" not in meta, meta


def check_build(tmp, src, name, compiler, opt, expected, args=(), libs=(), env=None):
    cc = compiler if not src.endswith(".cc") else {"gcc": "g++", "clang": "clang++"}[compiler]
    exe = hk.cc(tmp, [src], name, compiler=cc, flags=[opt], libs=libs)
    run_one(tmp, exe, args, env=env)
    prof = hk.one_profile(tmp, name)
    doc = hk.export_json(tmp, prof)
    t = hk.thread_of(doc, 0)
    hk.assert_tree(t, expected)
    hk.check_tree_consistent(t)
    no_lost_events(doc)
    os.unlink(prof)


def test_recursion_inlined_into_itself(tmp):
    expected = inline_rec_expected()
    for compiler, opt in BUILDS:
        check_build(tmp, "inline_rec.c", f"inline_rec_{compiler}{opt}", compiler, opt, expected)


def jump_loop_expected():
    calls = [("main",), ("main", "loop"), ("main", "sigloop")]
    calls += [("main", "loop", "step")] * 4
    for _ in range(4):
        path = ("main", "loop", "step")
        for _ in range(5):
            path += ("dive",)
            calls.append(path)
        calls.append(("main", "loop", "after"))
        path = ("main", "sigloop")
        for _ in range(5):
            path += ("dive",)
            calls.append(path)
    return paths_of(calls)


def test_longjmp_back_into_the_same_call_site(tmp):
    expected = jump_loop_expected()
    for compiler, opt in BUILDS:
        check_build(tmp, "jump_loop.c", f"jump_loop_{compiler}{opt}", compiler, opt, expected)


def throw_expected():
    calls = [("main",), ("main", "catcher"), ("main", "outer"), ("main", "outer", "rethrower"),
             ("main", "sorter"), ("main", "sorter", "by_value"), ("main", "sorter", "leaf"),
             ("main", "leaf"), ("main", "outer", "leaf"), ("main", "outer", "rethrower", "leaf")]
    for _ in range(3):
        calls += [("main", "catcher", "middle"), ("main", "catcher", "middle", "thrower"),
                  ("main", "catcher", "middle", "thrower", "thrower"),
                  ("main", "catcher", "middle", "thrower", "thrower", "thrower"),
                  ("main", "catcher", "leaf")]
    r = ("main", "outer", "rethrower", "middle")
    calls += [r, r + ("thrower",), r + ("thrower", "thrower")]
    return paths_of(calls)


def check_throw(tmp, compiler, opt, env=None):
    expected = throw_expected()
    exe = hk.cc(tmp, ["throw_depths.cc"], f"throw_{compiler}{opt}",
                compiler={"gcc": "g++", "clang": "clang++"}[compiler], flags=[opt])
    run_one(tmp, exe, env=env)
    prof = hk.one_profile(tmp, f"throw_{compiler}{opt}")
    doc = hk.export_json(tmp, prof)
    t = hk.thread_of(doc, 0)
    # Names are demangled: compare by the bare function name.
    counts = {}
    for p, n in hk.walk(t["roots"]):
        key = tuple(x.split("(")[0] for x in p)
        counts[key] = counts.get(key, 0) + n["calls"]
    assert counts == expected, (compiler, opt, sorted(set(counts.items()) ^ set(expected.items())))
    no_lost_events(doc)
    os.unlink(prof)


def test_exceptions_gcc_and_clang(tmp):
    for compiler, opt in BUILDS:
        check_throw(tmp, compiler, opt)


def coro_expected():
    return {("main",): 1, ("main", "foo"): 1, ("main", "foo", "coro"): 1,
            ("main", "foo", "coro", "work"): 1, ("main", "baz"): 1, ("main", "baz", "coro"): 0,
            ("main", "baz", "coro", "work"): 1, ("main", "baz", "work"): 1}


def test_swapcontext_coroutines_on_every_kind_of_stack(tmp):
    for compiler, opt in [("gcc", "-O0"), ("gcc", "-O2"), ("clang", "-O2")]:
        for where in ("heap", "static", "frame"):
            check_build(tmp, "coro.c", f"coro_{compiler}{opt}", compiler, opt, coro_expected(),
                        args=[where])


# timer=sample has entry and exit paths of its own (profiler/jprof/tree/tree.c:
# its exit finds the caller's node from the tree, not from the shadow
# stack): the same trees, every count, from a few builds of each kind.
SAMPLE = {"JPROFOPTS": "timer=sample"}


def test_timer_sample_trees_are_exact(tmp):
    for compiler, opt in [("gcc", "-O2"), ("gcc", "-O3"), ("clang", "-O2")]:
        check_build(tmp, "inline_rec.c", f"s_inline_rec_{compiler}{opt}", compiler, opt,
                    inline_rec_expected(), env=SAMPLE)
        check_build(tmp, "jump_loop.c", f"s_jump_loop_{compiler}{opt}", compiler, opt,
                    jump_loop_expected(), env=SAMPLE)
        for where in ("heap", "frame"):
            check_build(tmp, "coro.c", f"s_coro_{compiler}{opt}", compiler, opt, coro_expected(),
                        args=[where], env=SAMPLE)
        check_throw(tmp, compiler, opt, env=SAMPLE)


def test_timer_sample_fork_child_is_the_path_at_the_fork(tmp):
    exe = hk.cc(tmp, ["fork_path.c"], "fork_path", flags=["-O2"])
    run_one(tmp, exe, ["20"], env=SAMPLE)
    parents = check_fork_family(tmp, "fork_path", 20)
    assert len(parents) == 1
    hk.assert_tree(hk.thread_of(parents[0], 0),
                   {("main",): 1, ("main", "outer"): 20, ("main", "outer", "spawn"): 20,
                    ("main", "parent_after"): 400})
    no_lost_events(parents[0])


def profiles_by_pid(tmp, exe):
    out = {}
    for prof in hk.profiles(tmp, exe):
        doc = hk.export_json(tmp, prof)
        out[doc["process"]["pid"]] = doc
    return out


def check_fork_family(tmp, exe, children, parent_expected=True):
    docs = profiles_by_pid(tmp, exe)
    kids = [d for d in docs.values() if d["process"]["ppid"] in docs or not parent_expected]
    parents = [d for d in docs.values() if d not in kids]
    child_tree = {("main",): 0, ("main", "outer"): 0, ("main", "outer", "spawn"): 0,
                  ("main", "outer", "spawn", "child_work"): 1}
    assert len(kids) == children, (len(kids), sorted(docs))
    for d in kids:
        hk.assert_tree(hk.thread_of(d, 0), child_tree)
        no_lost_events(d)
    return parents


def test_fork_child_is_the_path_at_the_fork(tmp):
    exe = hk.cc(tmp, ["fork_path.c"], "fork_path", flags=["-O2"])
    run_one(tmp, exe, ["200"])
    parents = check_fork_family(tmp, "fork_path", 200)
    assert len(parents) == 1
    hk.assert_tree(hk.thread_of(parents[0], 0),
                   {("main",): 1, ("main", "outer"): 200, ("main", "outer", "spawn"): 200,
                    ("main", "parent_after"): 4000})
    # Merged, the family counts every call once.
    profs = hk.profiles(tmp, "fork_path")
    merged = os.path.join(tmp, "merged.prof")
    hk.hookit(tmp, "merge", "-o", merged, *profs)
    doc = hk.export_json(tmp, merged)
    counts = collections.Counter()
    for t in doc["threads"]:
        for p, n in hk.walk(t["roots"]):
            counts[p[-1]] += n["calls"]
    assert counts["main"] == 1 and counts["spawn"] == 200 and counts["child_work"] == 200, counts


def test_daemon_child_keeps_its_path(tmp):
    exe = hk.cc(tmp, ["fork_path.c"], "fork_path", flags=["-O2"])
    run_one(tmp, exe, ["1", "daemon"])
    deadline = time.time() + 10
    while len(hk.profiles(tmp, "fork_path")) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.1)
    docs = profiles_by_pid(tmp, "fork_path")
    assert len(docs) == 2, sorted(docs)
    child = [d for d in docs.values() if d["process"]["ppid"] in docs or
             d["process"]["pid"] != min(docs)]
    child = max(docs.values(), key=lambda d: d["process"]["pid"])
    hk.assert_tree(hk.thread_of(child, 0),
                   {("main",): 0, ("main", "outer"): 0, ("main", "outer", "spawn"): 0,
                    ("main", "outer", "spawn", "child_work"): 1})


@hk.not_under("address", "thread", why="the sanitizer runtime owns malloc; a program that brings its own cannot run with it")
def test_program_with_its_own_malloc(tmp):
    for compiler in ("gcc", "clang"):
        exe = hk.cc(tmp, ["own_malloc.c"], f"own_malloc_{compiler}", compiler=compiler,
                    flags=["-O2"], libs=["-lpthread", "-ldl"])
        p = hk.run(tmp, [exe], timeout=60)
        assert p.stdout == "own_malloc: 5\n", p
        docs = profiles_by_pid(tmp, f"own_malloc_{compiler}")
        assert len(docs) == 2, sorted(docs)
        # the child is the one whose parent is the other (pids wrap around)
        child = [d for d in docs.values() if d["process"]["ppid"] in docs][0]
        parent = docs[child["process"]["ppid"]]
        main = hk.thread_of(parent, 0)
        assert hk.node(main, "main", "work")["calls"] == 1
        # hookit's own set-up (threads, names, files) ran the program's
        # malloc through libc: none of it is in the tree or under main.
        for p_, n in hk.walk(main["roots"]):
            assert not p_[-1].startswith(("hk_", "jp_", "lc_")), p_
        threads = [t for t in parent["threads"] if t["index"] != 0]
        assert len(threads) == 4, [t["index"] for t in parent["threads"]]
        for t in threads:
            assert hk.node(t, "thr", "work")["calls"] == 1
        hk.assert_tree(hk.thread_of(child, 0), {("main",): 0, ("main", "work"): 1}, exact=False)
        for d in docs.values():
            no_lost_events(d)
        for f in hk.profiles(tmp, f"own_malloc_{compiler}"):
            os.unlink(f)


@hk.not_under("address", "thread", why="the sanitizer runtime is not set up yet when .preinit_array runs our instrumented libraries")
def test_preinit_array_and_constructors(tmp):
    sub = os.path.join(tmp, "out")
    os.mkdir(sub)
    exe = hk.cc(tmp, ["preinit.c"], "preinit", flags=["-O2"])
    p = hk.run(tmp, [exe], env={"HOOKIT_OUTPUT": sub, "HOOKIT_DEBUG": "1"})
    assert p.stdout == "preinit: 3\n", p
    assert any("wrote" in l for l in hk.hookit_lines(p.stderr)), p.stderr
    assert not glob.glob(os.path.join(tmp, "*.prof")), os.listdir(tmp)
    doc = hk.export_json(tmp, hk.one_profile(sub, "preinit"))
    hk.assert_tree(hk.thread_of(doc, 0), {("preinit",): 1, ("preinit", "early"): 1, ("ctor",): 1,
                                           ("ctor", "early"): 1, ("main",): 1, ("main", "early"): 1})


def jump_nest_counts(levels):
    """{(depth, name): calls} of jump_nest's chain (tests/progs/jump_nest.c)."""
    want = {(0, "main"): 1}
    for n in range(levels):
        want[(n + 1, "level")] = 1
        want[(n + 2, "leaf")] = 1
        throws = (n > 0) + (n == levels - 1)
        if throws:
            want[(n + 2, "thrower")] = throws
    return want


def chain_counts(thread):
    """{(depth, name): calls} of a tree that is one chain of `level` frames
    with leaves: each (depth, name) names one path, checked to be one node
    under the level above it (paths 10,000 deep are not spelled out)."""
    nodes = {n["id"]: n for n in thread["nodes"]}
    got = {}
    for n in thread["nodes"]:
        key = (n["depth"], n["name"].split("(")[0])
        parent = nodes.get(n["parent"])
        assert key not in got, ("two nodes for one path", key)
        assert n["depth"] == 0 or parent["name"].split("(")[0] in ("main", "level"), (key, parent)
        got[key] = n["calls"]
    return got


def test_setjmp_nesting_at_any_depth(tmp):
    """10,000 nested levels, each with a live jmp_buf (sigjmp_buf with
    `sig`), every one jumped to while the deeper ones are still kept: no
    mark is ever evicted, so every jump closes exactly its frames."""
    for compiler, opt in (("gcc", "-O2"), ("clang", "-O0")):
        exe = hk.cc(tmp, ["jump_nest.c"], f"jump_nest_{compiler}{opt}", compiler=compiler, flags=[opt])
        for args in (["10000"], ["10000", "sig"], ["300"]):
            run_one(tmp, exe, args)
            prof = hk.one_profile(tmp, f"jump_nest_{compiler}{opt}")
            doc = hk.export_json(tmp, prof)
            os.unlink(prof)
            got, want = chain_counts(hk.thread_of(doc, 0)), jump_nest_counts(int(args[0]))
            diff = sorted(set(got.items()) ^ set(want.items()))
            assert not diff, (compiler, opt, args, len(diff), diff[:10])
            no_lost_events(doc)


def test_report_says_when_a_tree_is_not_exact(tmp):
    exe = hk.cc(tmp, ["jump_loop.c"], "jump_loop", flags=["-O2"])
    run_one(tmp, exe)
    out = hk.hookit(tmp, "report", hk.one_profile(tmp, "jump_loop")).stdout
    assert "not exact" not in out, out
    # Collection starts off and is turned on inside main: main's exit
    # matches no open frame (tests/progs/api.c).
    exe = hk.cc(tmp, ["api.c"], "api", flags=["-O2"])
    hk.run(tmp, [exe], env={"HOOKIT_PROFILING": "0"})
    docs = [(f, hk.export_json(tmp, f)) for f in hk.profiles(tmp, "api")]
    prof, doc = [(f, d) for f, d in docs if d["process"]["meta"]["end"] == "exit"][0]
    unmatched = int(doc["process"]["meta"]["unmatched_exits"])
    assert unmatched >= 1, doc["process"]["meta"]
    out = hk.hookit(tmp, "report", prof).stdout
    line = [l for l in out.splitlines() if "not exact" in l]
    assert len(line) == 1 and f"{unmatched} unmatched exit" in line[0], out
    assert out.index(line[0]) < out.index("== pid"), out


@hk.not_under("address", "thread", why="the program brings its own malloc, which the sanitizer runtime owns")
def test_fork_child_after_retired_threads_has_its_thread(tmp):
    """threads_kept=1: four threads end and are merged away before the fork;
    the child's record must still be published."""
    exe = hk.cc(tmp, ["own_malloc.c"], "own_malloc", flags=["-O2"], libs=["-lpthread", "-ldl"])
    hk.run(tmp, [exe], env={"JPROFOPTS": "threads_kept=1"}, timeout=60)
    docs = profiles_by_pid(tmp, "own_malloc")
    child = max(docs.values(), key=lambda d: d["process"]["pid"])
    assert child["threads"], child
    assert hk.node(hk.thread_of(child, 0), "main", "work")["calls"] == 1


def static_build(tmp, src, name, compiler, flags=()):
    """src built fully static with `hookit link` (ld --wrap: the flow
    interposers are linked in where the program calls them)."""
    out = os.path.join(tmp, name)
    p = hk.run(tmp, [hk.BIN, "link", "--", compiler, "-static", "-O2", "-finstrument-functions", *flags,
                     "-I" + os.path.join(hk.PROGS), "-o", out, os.path.join(hk.PROGS, src)], check=False)
    if p.returncode != 0 and "cannot find -l" in p.stderr:
        hk.skip("static libraries missing: " + p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr
    return out


@hk.not_under("address", "thread", why="the sanitized variant builds no static archives")
def test_static_link_longjmp_and_exceptions(tmp):
    exe = static_build(tmp, "jump_loop.c", "jump_loop_static", "gcc")
    run_one(tmp, exe)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "jump_loop_static"))
    hk.assert_tree(hk.thread_of(doc, 0), jump_loop_expected())
    no_lost_events(doc)
    exe = static_build(tmp, "throw_depths.cc", "throw_static", "clang++")
    run_one(tmp, exe)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "throw_static"))
    counts = {}
    for p, n in hk.walk(hk.thread_of(doc, 0)["roots"]):
        key = tuple(x.split("(")[0] for x in p)
        counts[key] = counts.get(key, 0) + n["calls"]
    assert counts == throw_expected(), sorted(set(counts.items()) ^ set(throw_expected().items()))
    no_lost_events(doc)
    # The landing pad's owner among inlined frames, with the hooks linked in.
    exe = static_build(tmp, "inlined_landing.cc", "inlined_landing_static", "clang++", ["-DOWNER=0"])
    run_one(tmp, exe)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "inlined_landing_static"))
    assert bare_counts(hk.thread_of(doc, 0)) == inlined_landing_expected(0)
    no_lost_events(doc)


def test_atexit_handlers_and_destructors_are_profiled(tmp):
    exe = hk.cc(tmp, ["exit_late.c"], "exit_late", flags=["-O2"])
    p = hk.run(tmp, [exe])
    doc = hk.export_json(tmp, hk.one_profile(tmp, "exit_late"))
    hk.assert_tree(hk.thread_of(doc, 0), {("main",): 1, ("main", "work"): 1, ("handler",): 1,
                                          ("handler", "work"): 1, ("fini",): 1, ("fini", "work"): 1})
    assert doc["process"]["meta"]["end"] == "exit", doc["process"]["meta"]
    assert hk.hookit_lines(p.stderr) == [], p.stderr
    # Leaving from the handler by _exit or dying there: the profile written
    # when exit() began stands.
    for how, status in (("_exit", 3), ("abort", -6)):
        for f in hk.profiles(tmp, "exit_late"):
            os.unlink(f)
        p = hk.run(tmp, [exe, how], check=False)
        assert p.returncode == status, (how, p)
        doc = hk.export_json(tmp, hk.one_profile(tmp, "exit_late"))
        hk.assert_tree(hk.thread_of(doc, 0), {("main",): 1, ("main", "work"): 1}, exact=False)


def test_trace_plugin_closes_what_a_longjmp_leaves(tmp):
    """hktrace (the call-flow trace) takes marks and jumps too: the calls a
    longjmp leaves end at the jump, not at the next exit that finds no
    match, so the trace's tree is the program's."""
    exe = hk.cc(tmp, ["jump_loop.c"], "jump_loop", flags=["-O2"])
    hk.run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so"})
    traces = glob.glob(os.path.join(tmp, "hookit.jump_loop.*.trace"))
    assert len(traces) == 1, os.listdir(tmp)
    doc = hk.export_json(tmp, traces[0])
    hk.assert_tree(hk.thread_of(doc, 0), jump_loop_expected())
    assert doc["process"]["meta"]["unmatched_exits"] in (0, "0"), doc["process"]["meta"]


def unwind_guards_expected():
    """tests/progs/unwind_guards.cc: every destructor under the frame that
    owned its object, by bare function name."""
    chain = ("main", "run", "depth1", "depth2", "depth3", "thrower")
    calls = [("main",)]
    for _ in range(3):
        calls += [chain[:i] for i in range(2, len(chain) + 1)]
        calls += [chain[:i] + ("~Guard",) for i in range(3, len(chain) + 1)]
        calls += [("main", "run", "handled"), ("main", "run", "~Guard")]
    return paths_of(calls)


def bare_counts(thread):
    counts = {}
    for p, n in hk.walk(thread["roots"]):
        key = tuple(x.split("(")[0].split("::")[-1] for x in p)
        counts[key] = counts.get(key, 0) + n["calls"]
    return counts


def test_trace_plugin_closes_what_the_unwinder_leaves(tmp):
    """hktrace takes the unwinder's report too (HOOKIT_FLOW_UNWIND): under
    Clang, which runs no exit hook while it unwinds, each destructor a
    cleanup runs is traced in the frame that owned its object, not under
    the frames already gone; jprof's tree of the same run is the check."""
    for compiler, opt in (("clang++", "-O0"), ("clang++", "-O2"), ("g++", "-O2")):
        name = f"unwind_guards_{compiler[:-2]}{opt}"
        exe = hk.cc(tmp, ["unwind_guards.cc"], name, compiler=compiler, flags=[opt])
        run_one(tmp, exe)
        doc = hk.export_json(tmp, hk.one_profile(tmp, name))
        assert bare_counts(hk.thread_of(doc, 0)) == unwind_guards_expected(), (compiler, opt)
        no_lost_events(doc)
        hk.run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so"})
        traces = glob.glob(os.path.join(tmp, f"hookit.{name}.*.trace"))
        assert len(traces) == 1, os.listdir(tmp)
        got = bare_counts(hk.thread_of(hk.export_json(tmp, traces[0]), 0))
        want = unwind_guards_expected()
        assert got == want, (compiler, opt, sorted(set(got.items()) ^ set(want.items())))


def inlined_landing_expected(owner):
    """tests/progs/inlined_landing.cc's tree for OWNER=owner, by bare
    function name: each path 3 times but main."""
    paths = {0: [("host",), ("host", "inner_throws"), ("host", "handled")],
             1: [("host",), ("host", "inner_catches"), ("host", "inner_catches", "handled")],
             2: [("host",), ("host", "inner_tries"), ("host", "inner_tries", "throws_far"),
                 ("host", "inner_tries", "handled")],
             3: [("host",), ("host", "first"), ("host", "second"), ("host", "handled")],
             4: [("host",), ("host", "inner_catches"), ("host", "inner_catches", "handled"), ("host", "after")],
             5: [("host",), ("host", "inner_throws"), ("host", "~Guard"), ("handled",)],
             6: [("host",), ("host", "maybe_throws"), ("host", "maybe_throws"), ("host", "~Guard"),
                 ("handled",)]}[owner]
    want = {("main",): 1}
    for p in paths:
        want[("main",) + p] = want.get(("main",) + p, 0) + 3
    return want


def undecided_said(tmp, doc, path, callee):
    """The landing pad's owner could not be decided, 3 times, and the
    profile and `hookit report` say so on the frame it kept open."""
    meta = doc["process"]["meta"]
    assert int(meta.get("undecided_landing_pads", 0)) == 3, meta
    assert hk.node(hk.thread_of(doc, 0), "main", "host()", callee)["undecided_landing_pads"] == 3
    out = hk.hookit(tmp, "report", path).stdout
    assert "3 C++ landing pads whose owner hookit could not decide" in out, out
    assert f"!!   3 at thread 0: main > host > {callee.split('(')[0]}" in out, out


def test_landing_pad_in_an_inlined_frame_is_exact(tmp):
    """tests/progs/inlined_landing.cc: a landing pad in a machine frame
    that holds inlined callees, owned by the host (OWNER=0, 3, 5: the
    callee entered inside the host's try or cleanup scope is closed) or by
    the callee (OWNER=1, 2, 4: it stays open, though in 4 it was entered
    inside another try of the host).  Clang gives 0 and 1 the same machine
    code up to the end of the handler and the same unwinder context; the
    landing pad's call-site ranges and where the callee's entry hook is
    called tell them apart (docs/exactness.md).  The trace plugin makes the
    same decision (common/inlined_pad.h).  Only x86-64 looks for the entry
    hook's calls: elsewhere (HOOKIT_TARGET) clang's 0 and 3 keep the
    callee open and their exits come unmatched, and 5's landing pad is
    said to be undecided.  OWNER=6 (the callee inlined twice, outside and
    inside the host's cleanup scope) cannot be decided anywhere: at clang
    the destructor goes under the callee, and is said (g++ is exact)."""
    for compiler, opt in (("clang++", "-O0"), ("clang++", "-O2"), ("g++", "-O2")):
        for owner in range(7):
            name = f"inlined_landing{owner}_{compiler[:-2]}{opt}"
            exe = hk.cc(tmp, ["inlined_landing.cc"], name, compiler=compiler,
                        flags=[opt, f"-DOWNER={owner}"])
            run_one(tmp, exe)
            path = hk.one_profile(tmp, name)
            doc = hk.export_json(tmp, path)
            got, want = bare_counts(hk.thread_of(doc, 0)), inlined_landing_expected(owner)
            if compiler == "clang++" and owner == 6:
                undecided_said(tmp, doc, path, "maybe_throws(int)")
                trace_says_undecided(tmp, exe, name)
                continue
            if hk.TARGET and compiler == "clang++" and owner in (0, 3, 5):
                if owner == 5:
                    undecided_said(tmp, doc, path, "inner_throws()")
                else:
                    callee = {0: "inner_throws()", 3: "second()"}[owner]
                    assert int(doc["process"]["meta"]["unmatched_exits"]) == 3, (opt, owner, doc["process"]["meta"])
                    assert hk.node(hk.thread_of(doc, 0), "main", "host()", callee)["unmatched_exits"] == 3
                continue
            assert got == want, (compiler, opt, owner, sorted(set(got.items()) ^ set(want.items())))
            no_lost_events(doc)
            if compiler != "clang++" or opt != "-O2":
                continue
            traces = trace_of(tmp, exe, name)
            got = bare_counts(hk.thread_of(hk.export_json(tmp, traces), 0))
            assert got == want, ("trace", owner, sorted(set(got.items()) ^ set(want.items())))


def trace_of(tmp, exe, name):
    hk.run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so"})
    traces = glob.glob(os.path.join(tmp, f"hookit.{name}.*.trace"))
    assert len(traces) == 1, os.listdir(tmp)
    return traces[0]


def trace_says_undecided(tmp, exe, name):
    """libhktrace counts the undecided landing pads too (a trace names no
    context: the count alone)."""
    path = trace_of(tmp, exe, name)
    meta = hk.export_json(tmp, path)["process"]["meta"]
    assert int(meta.get("undecided_landing_pads", 0)) == 3, meta
    out = hk.hookit(tmp, "report", path).stdout
    assert "3 C++ landing pads whose owner hookit could not decide" in out, out


def test_a_jump_nobody_reports_is_repaired_and_said(tmp):
    """__builtin_longjmp calls nothing hookit could interpose: the fallback
    closes the abandoned frames at the next entry, and the profile and the
    report say the tree had to be repaired."""
    exe = hk.cc(tmp, ["builtin_jump.c"], "builtin_jump", flags=["-O1"])
    hk.run(tmp, [exe])
    prof = hk.one_profile(tmp, "builtin_jump")
    doc = hk.export_json(tmp, prof)
    hk.assert_tree(hk.thread_of(doc, 0), {("main",): 1, ("main", "loop"): 1, ("main", "loop", "dive"): 1,
                                          ("main", "loop", "dive", "dive"): 1,
                                          ("main", "loop", "dive", "dive", "dive"): 1,
                                          ("main", "loop", "after"): 1})
    assert int(doc["process"]["meta"]["unmatched_exits"]) == 3, doc["process"]["meta"]
    # Counted on the context repaired: the outermost frame the jump left.
    assert hk.node(hk.thread_of(doc, 0), "main", "loop", "dive")["unmatched_exits"] == 3
    out = hk.hookit(tmp, "report", prof).stdout
    assert "!! not exact" in out and "3 unmatched exits" in out, out
    assert "\n!!   3 at thread 0: main > loop > dive\n" in out, out
