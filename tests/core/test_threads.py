"""Four threads, each with its own tree (tests/progs/threads.c), GCC and Clang."""
import os
import hk

NTHREADS = 4


def worker_tree(k):
    t = hk.CallTree()
    with t.call("worker"):
        with t.call(f"work_{k}"):
            for _ in range((k + 1) * 10):
                with t.call("step"):
                    for _ in range(k + 1):
                        with t.call("leaf"):
                            pass
        for _ in range(k + 1):
            with t.call("common"):
                pass
    return t.calls


def main_tree():
    t = hk.CallTree()
    with t.call("main"):
        with t.call("spawn"):
            pass
        for _ in range(7):
            with t.call("main_only"):
                pass
    return t.calls


def check_threads(tmp, compiler):
    exe = hk.cc(tmp, ["threads.c"], "threads", compiler=compiler, libs=["-lpthread"])
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert rc == 0, (rc, out, err)
    assert out == "threads: done 313\n", out
    doc = hk.export_json(tmp, hk.one_profile(tmp, "threads"))
    threads = doc["threads"]
    assert sorted(t["index"] for t in threads) == list(range(NTHREADS + 1)), \
        [(t["index"], t["tid"]) for t in threads]
    main = hk.thread_of(doc, 0)
    assert main["tid"] == pid, (main["tid"], pid)
    hk.assert_tree(main, main_tree())
    tids = {t["tid"] for t in threads}
    assert len(tids) == NTHREADS + 1, tids

    # Thread k is recognised by the one function only it calls, work_k.
    seen = set()
    for t in threads:
        if t["index"] == 0:
            continue
        names = {p[-1] for p, _ in hk.walk(t["roots"])}
        ks = [k for k in range(NTHREADS) if f"work_{k}" in names]
        assert len(ks) == 1, (t["index"], sorted(names))
        k = ks[0]
        seen.add(k)
        hk.assert_tree(t, worker_tree(k))
        assert t["name"] == f"worker-{k}", (t["index"], t["name"])
    assert seen == set(range(NTHREADS)), seen

    for t in threads:
        hk.check_tree_consistent(t)
        for p, n in hk.walk(t["roots"]):
            assert n["module"] == "threads", (p, n["module"])


def test_threads_gcc(tmp):
    check_threads(tmp, "gcc")


def test_threads_clang(tmp):
    check_threads(tmp, "clang")


def test_thread_index_follows_creation(tmp):
    """index: 0 the main thread, then in order of creation (profile/profile.h),
    not in the order threads first run instrumented code."""
    exe = hk.cc(tmp, ["thread_order.c"], "thread_order", libs=["-lpthread"])
    rc, out, err, pid = hk.popen_run(tmp, [exe])
    assert (rc, out, err) == (0, "thread_order: 2\n", ""), (rc, out, err)
    doc = hk.export_json(tmp, hk.one_profile(tmp, "thread_order"))
    roots = {t["index"]: [r["name"] for r in t["roots"]] for t in doc["threads"]}
    assert roots.get(0) == ["main"], roots
    assert roots.get(1) == ["first_created"] and roots.get(2) == ["second_created"], roots


def test_detached_threads_still_running_at_exit(tmp):
    """Eight threads busy in instrumented code when main returns: the exit
    status is main's, every thread's tree is consistent, counts exact up to
    the call each thread was in (tests/progs/detached.c; 12 runs, as a
    thread is stopped inside a hook only some of the time)."""
    exe = hk.cc(tmp, ["detached.c"], "detached", libs=["-lpthread"])
    bad = []
    for run in range(12):
        for p in hk.profiles(tmp):
            os.unlink(p)
        rc, out, err, pid = hk.popen_run(tmp, [exe], timeout=30)
        assert (rc, out, err) == (5, "detached: exiting\n", ""), (rc, out, err)
        doc = hk.export_json(tmp, hk.one_profile(tmp, "detached"))
        # Threads are numbered in order of creation; one the scheduler had
        # not yet run when main returned (a loaded machine) never started and
        # has no tree, leaving a gap.
        indexes = sorted(t["index"] for t in doc["threads"])
        assert indexes[0] == 0 and len(set(indexes)) == len(indexes) <= 9, indexes
        hk.assert_tree(hk.thread_of(doc, 0), {("main",): 1, ("main", "main_work"): 1})
        assert hk.node(hk.thread_of(doc, 0), "main_work")["incl_ns"] >= 19_000_000
        for index in indexes[1:]:
            t = hk.thread_of(doc, index)
            try:
                hk.check_tree_consistent(t)
                got = hk.call_counts(t)
                if not got:     # never scheduled before the exit (a loaded machine): no calls yet
                    continue
                assert set(got) <= {("spinner",), ("spinner", "spin_mid"),
                                    ("spinner", "spin_mid", "spin_leaf")}, sorted(got)
                assert got[("spinner",)] == 1, got
                mids = got.get(("spinner", "spin_mid"), 0)
                leaves = got.get(("spinner", "spin_mid", "spin_leaf"), 0)
                done = sum(k % 64 for k in range(max(mids - 1, 0)))  # spin_mid calls that returned
                last = (mids - 1) % 64 if mids else 0                 # the one it may be inside
                assert done <= leaves <= done + last, (mids, leaves, done, last)
            except AssertionError as e:
                bad.append(f"run {run} thread {index}: {e}")
    assert not bad, f"{len(bad)} bad thread trees in 12 runs:\n" + "\n".join(bad[:6])


def test_hooks_after_the_thread_ended_are_ignored(tmp):
    """Four threads run instrumented pthread-key destructors at once, after
    the profiler ended them (tests/progs/ended_hooks.c): their hooks are
    dropped, the program's output and status are its own, each thread's
    tree holds what ran before its end.  (Once all ended threads shared one
    state whose busy word they raced on: now and then one went on into a
    NULL shadow stack.)"""
    exe = hk.cc(tmp, ["ended_hooks.c"], "ended_hooks", libs=["-lpthread"])
    for run in range(5):
        for p in hk.profiles(tmp):
            os.unlink(p)
        r = hk.run(tmp, [exe], check=False)
        assert (r.returncode, r.stdout, r.stderr) == (0, "ended_hooks: 140032\n", ""), (run, r)
        doc = hk.export_json(tmp, hk.one_profile(tmp, "ended_hooks"))
        workers = [t for t in doc["threads"] if t["index"] != 0]
        assert len(workers) == 4, [t["index"] for t in doc["threads"]]
        for t in workers:
            hk.assert_tree(t, {("worker",): 1, ("worker", "step"): 1})


def test_merged_tree_grows_from_chunks_given_back(tmp):
    """threads_kept=1 (tests/progs/merge_grow.c): the merged tree needs a
    chunk of a size a merged thread gave back, in the middle of a merge.
    (When the free lists shared retire.c's lock, the merge waited for
    itself: the program hung in its next pthread_create.)  Every call is
    still counted once, in the merged thread or in a kept one."""
    exe = hk.cc(tmp, ["merge_grow.c"], "merge_grow", libs=["-lpthread"])
    r = hk.run(tmp, [exe], env={"JPROFOPTS": "threads_kept=1"}, timeout=60, check=False)
    assert (r.returncode, r.stdout) == (0, "merge_grow: 9500\n"), r
    doc = hk.export_json(tmp, hk.one_profile(tmp, "merge_grow"))
    calls = {}
    for t in doc["threads"]:
        for _, n in hk.walk(t["roots"]):
            calls[n["name"]] = calls.get(n["name"], 0) + n["calls"]
    assert (calls.get("deep"), calls.get("other")) == (5001, 300 + 600 + 900 + 1200 + 1500 + 5), calls
    assert any(t["name"] == "(merged)" for t in doc["threads"]), [t["name"] for t in doc["threads"]]
