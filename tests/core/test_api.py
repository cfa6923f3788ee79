"""The application API (include/hookit/hookit.h): hookit_stop/start/flush
and hookit_collecting, with collection starting on and off
(tests/progs/api.c)."""
import os
import hk


def tree(start_on, after_flush):
    t = hk.CallTree()

    def body():
        if start_on:
            with t.call("setup"):
                pass
        for _ in range(2):
            with t.call("solve"):
                for _ in range(3):
                    with t.call("step"):
                        pass
        if after_flush:
            with t.call("after_flush"):
                pass

    if start_on:                # main's entry is seen only when collection starts on
        with t.call("main"):
            body()
    else:
        body()
    return t.calls


def check(tmp, start_on):
    exe = hk.cc(tmp, ["api.c"], "api")
    env = {} if start_on else {"HOOKIT_PROFILING": "0"}
    rc, out, err, pid = hk.popen_run(tmp, [exe], env=env)
    assert (rc, err) == (0, ""), (rc, out, err)
    assert out == f"api: {1 if start_on else 0} 0 1\n", out
    profs = hk.profiles(tmp, "api")
    # hookit_flush() wrote one, the end of the process another (never over it).
    assert len(profs) == 2, profs
    assert all(os.path.basename(p).startswith(f"hookit.api.{pid}") for p in profs), profs
    docs = [hk.export_json(tmp, p) for p in profs]
    final = [d for d in docs if any(p[-1] == "after_flush" for p, _ in
                                    hk.walk(hk.thread_of(d, 0)["roots"]))]
    assert len(final) == 1, "exactly one profile has the calls after the flush"
    flushed = docs[1 - docs.index(final[0])]
    hk.assert_tree(hk.thread_of(flushed, 0), tree(start_on, after_flush=False))
    hk.assert_tree(hk.thread_of(final[0], 0), tree(start_on, after_flush=True))
    for d in docs:
        hk.check_tree_consistent(hk.thread_of(d, 0))


def test_stop_start_flush(tmp):
    check(tmp, start_on=True)


def test_start_off_then_hookit_start(tmp):
    check(tmp, start_on=False)
