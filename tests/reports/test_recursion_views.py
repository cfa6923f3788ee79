"""--callers/--callees with the recursion collapsed (the default), on an
interpreter loop shaped like Lua's luaV_execute -> luaD_call ->
luaD_precall -> luaV_execute, and on the real one (Lua 5.4, the conformance
corpus's cached build): the callees and the self time add up exactly to the
function's inclusive time, and the callers to its --flat line."""
import os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "conformance"))
import hk  # noqa: E402

SRC = os.path.join(HERE, "progs", "interp.c")
LUA_SCRIPT = os.path.join(HERE, "progs", "interp.lua")
HEAD = re.compile(r"(callers|callees) of (\w+): (\d+) calling contexts?, (\d+) calls, "
                  r"self (\d+)ns, total (\d+)ns")
# CALLS INCL EXCL, then CPU WAIT when the profile has wait time
ROW = re.compile(r"\s*(\d+)\s+(\d+)ns\s+(\d+)ns(?:\s+\d+ns\s+\d+ns)?  (.*)$")


def profile(tmp):
    exe = hk.cc(tmp, [SRC], "interp", link_hookit=False)
    # Every call timed: the views' sums are checked to the nanosecond.
    hk.run(tmp, [exe, "30"], env={"LD_PRELOAD": hk.LIBHOOKIT, "JPROFOPTS": "timer=exact"})
    return hk.one_profile(tmp, "interp")


def view(tmp, prof, *args):
    out = hk.hookit(tmp, "report", "--units", "ns", *args, prof).stdout
    head = [HEAD.search(l) for l in out.splitlines() if HEAD.search(l)]
    assert len(head) == 1, out
    rows = {}
    for l in out.splitlines():
        m = ROW.match(l)
        if m:
            rows[m.group(4)] = tuple(int(m.group(i)) for i in (1, 2, 3))
    self_row = re.search(r"^\s+(\d+)ns(?:\s+\d+ns\s+\d+ns)?  \[self[^\]]*\]$", out, re.M)
    return head[0], rows, (int(self_row.group(1)) if self_row else None), out


def execute_totals(tmp, prof, fn="execute"):
    """fn's calls, self and inclusive time (outermost activations) from the JSON."""
    doc = hk.export_json(tmp, prof)
    calls = self_ns = incl = 0
    for path, n in hk.walk(hk.thread_of(doc, 0)["roots"]):
        if path[-1] == fn:
            calls += n["calls"]
            self_ns += n["excl_ns"]
            if fn not in path[:-1]:
                incl += n["incl_ns"]
    return calls, self_ns, incl


def stacks(thread):
    """Every node with the nodes above it: [root, ..., node], in preorder.
    Iterative: trees may be thousands deep."""
    todo = [[n] for n in reversed(thread["roots"])]
    while todo:
        path = todo.pop()
        yield path
        todo.extend(path + [c] for c in reversed(path[-1].get("children", [])))


def label(n):
    return "[thread start]" if n is None else f"F:{n['module']}.{n['name']}()"


def apart_reference(tmp, prof, fn, callees):
    """What --callers/--callees FN --no-collapse-recursion must print,
    worked out path by path from the JSON export's tree: ({row name: [calls,
    incl, excl]}, calls, self, total).  An activation of FN nested in
    another (on its path) belongs to the outermost: --callers counts its
    calls on its caller's row and its exclusive time on the row of the
    caller that entered the outermost; --callees counts for a call out of FN
    its inclusive time less that of the FN activations below it that no
    other FN separates from it (gprof: time in calls back into FN is FN's)."""
    rows = {}
    calls = self_ns = total = 0
    for path in stacks(hk.thread_of(hk.export_json(tmp, prof), 0)):
        n = path[-1]
        at = [i for i, x in enumerate(path) if x["name"] == fn]   # FN on the path
        if callees and len(path) > 1 and path[-2]["name"] == fn:
            r = rows.setdefault(label(n), [0, 0, 0])
            r[0] += n["calls"]
            r[1] += n["incl_ns"]
            r[2] += 0 if n["name"] == fn else n["excl_ns"]
        if n["name"] != fn:
            continue
        calls += n["calls"]
        self_ns += n["excl_ns"]
        total += n["incl_ns"] if len(at) == 1 else 0
        if callees and len(at) > 1:             # inside the call out of the FN above
            rows[label(path[at[-2] + 1])][1] -= n["incl_ns"]
        elif not callees:
            caller = label(path[-2] if len(path) > 1 else None)
            entry = label(path[at[0] - 1] if at[0] > 0 else None)
            rows.setdefault(caller, [0, 0, 0])[0] += n["calls"]
            rows[caller][1] += n["incl_ns"] if len(at) == 1 else 0
            rows.setdefault(entry, [0, 0, 0])[2] += n["excl_ns"]
    return rows, calls, self_ns, total


def check_apart(tmp, prof, fn, callees):
    """The view apart equals the reference, row by row, every row's
    inclusive time at least its exclusive, and the sums hold."""
    want, calls, self_ns, total = apart_reference(tmp, prof, fn, callees)
    head, got, self_row, out = view(tmp, prof, "--callees" if callees else "--callers", fn,
                                    "--no-collapse-recursion")
    assert "recursion collapsed" not in out, out
    assert (int(head.group(4)), int(head.group(5)), int(head.group(6))) == \
        (calls, self_ns, total), (out, calls, self_ns, total)
    got = {k.replace(" (recursive)", ""): list(v) for k, v in got.items()}
    want = {k: v for k, v in want.items() if any(v)}
    assert got == want, (out, want)
    assert all(incl >= excl for _, incl, excl in got.values()), out
    if callees:
        assert self_row == self_ns and sum(r[1] for r in got.values()) + self_ns == total, out
    else:
        assert [sum(r[i] for r in got.values()) for i in range(3)] == \
            [calls, total, self_ns], out
    return got


def test_callees_of_an_interpreter_loop_add_up_to_its_inclusive_time(tmp):
    prof = profile(tmp)
    head, rows, self_ns, out = view(tmp, prof, "--callees", "execute")
    calls, _, incl = execute_totals(tmp, prof)
    assert int(head.group(6)) == incl and int(head.group(4)) == calls, (out, calls, incl)
    assert "recursion collapsed: execute and call precall as one" in out, out
    names = {n.replace("F:interp.", "").replace("()", "") for n in rows}
    assert names == {"get", "set", "arith"}, out          # calls out of the cycle
    assert sum(r[1] for r in rows.values()) + self_ns == incl, out
    assert self_ns == int(head.group(5))
    # taken apart: call() is a row, its time less execute's below it
    apart = check_apart(tmp, prof, "execute", callees=True)
    assert apart["F:interp.call()"][1] >= apart["F:interp.call()"][2] > 0, apart
    check_apart(tmp, prof, "execute", callees=False)


def check_callers_collapsed(tmp, prof, fn, label):
    """--callers FN with recursion collapsed: the rows add up to FN's
    totals from the JSON export and to its --flat line.  Returns the rows."""
    head, rows, _, out = view(tmp, prof, "--callers", fn)
    calls, self_ns, incl = execute_totals(tmp, prof, fn)
    assert "[within the recursion]" in rows, out
    assert sum(r[0] for r in rows.values()) == calls
    assert sum(r[2] for r in rows.values()) == self_ns
    # the inner activations' time is inside their entry's: on its row
    assert rows["[within the recursion]"][1:] == (0, 0), out
    assert all(incl >= excl for _, incl, excl in rows.values()), out
    assert sum(r[1] for r in rows.values()) == incl
    assert (int(head.group(4)), int(head.group(5)), int(head.group(6))) == (calls, self_ns, incl), out
    flat = hk.hookit(tmp, "report", "--flat", "--units", "ns", prof).stdout
    m = re.search(r"^\s*[\d.]+\s+(\d+)ns\s+\d+ns\s+(\d+)\s.*" + re.escape(label) + "$", flat, re.M)
    assert m and (int(m.group(1)), int(m.group(2))) == (self_ns, calls), flat
    return rows, incl, out


def test_callers_collapsed_add_up_to_the_flat_line(tmp):
    prof = profile(tmp)
    rows, incl, out = check_callers_collapsed(tmp, prof, "execute", "F:interp.execute()")
    assert set(rows) == {"F:interp.main()", "[within the recursion]"}, out
    assert rows["F:interp.main()"][0] == 50 and rows["F:interp.main()"][1] == incl, out


def test_tree_collapse_recursion_folds_direct_recursion(tmp):
    exe = hk.cc(tmp, ["recurse_fib.c"], "recurse_fib")
    hk.run(tmp, [exe, "15"])
    prof = hk.one_profile(tmp, "recurse_fib")
    plain = hk.hookit(tmp, "report", "--units", "ns", prof).stdout
    folded = hk.hookit(tmp, "report", "--units", "ns", "--collapse-recursion", prof).stdout
    rows = [l.split() for l in folded.splitlines() if re.match(r"\s+\d+\s+\d+\s+\d+ns", l)]
    fib = [r for r in rows if r[-1].endswith(".fib()")]
    doc = hk.export_json(tmp, prof)
    t = hk.thread_of(doc, 0)
    calls = sum(n["calls"] for p, n in hk.walk(t["roots"]) if p[-1] == "fib")
    outer = sum(n["incl_ns"] for p, n in hk.walk(t["roots"]) if p[-1] == "fib" and "fib" not in p[:-1])
    assert len(fib) == 1, folded
    assert int(fib[0][1]) == calls and int(fib[0][3][:-2]) == outer, (fib, calls, outer)
    # the root and the flat profile are unchanged
    assert plain.splitlines()[2] == folded.splitlines()[2], (plain[:300], folded[:300])
    assert hk.hookit(tmp, "report", "--flat", "--units", "ns", prof).stdout == \
        hk.hookit(tmp, "report", "--flat", "--units", "ns", "--collapse-recursion", prof).stdout


def lua_profile(tmp):
    """Lua 5.4 (gcc -O2, -finstrument-functions) as the conformance corpus
    builds it, from the same cache ($BUILD/conformance: fetched and built
    once, about 10 s), running progs/interp.lua with libhookit preloaded
    (as hookit run does; preloaded directly, the test also runs under
    qemu-user, which cannot exec a target program from hookit run)."""
    import cases                # tests/conformance: Lua's fetch and build
    import conformance as C
    case = next(c for c in cases.CASES if c.name == "lua")
    try:
        exe, _ = cases.build(case, "gcc", "O2", quick=True)
    except (C.FetchFailed, C.Unavailable) as e:
        hk.skip(f"no Lua 5.4 here: {e}")
    plain = subprocess.run([exe, LUA_SCRIPT], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0 and plain.stdout.strip().isdigit(), (plain.stdout, plain.stderr)
    # Every call timed: the views' sums are checked to the nanosecond, and
    # luaD_precall's own time is asserted non-zero.
    p = hk.run(tmp, [exe, LUA_SCRIPT], env={"LD_PRELOAD": hk.LIBHOOKIT, "JPROFOPTS": "timer=exact"},
               timeout=120)
    assert p.stdout == plain.stdout, (p.stdout, plain.stdout)
    return hk.one_profile(tmp, "lua")


def test_callees_of_luas_interpreter_loop_add_up_to_its_inclusive_time(tmp):
    """luaV_execute re-entered through pcall, table.sort, string.gsub and
    metamethods: one cycle through luaD_call and the C functions between."""
    prof = lua_profile(tmp)
    calls, _, incl = execute_totals(tmp, prof, "luaV_execute")
    assert calls > 40, calls                    # re-entered, not once per chunk
    head, rows, self_ns, out = view(tmp, prof, "--callees", "luaV_execute")
    assert int(head.group(6)) == incl and int(head.group(4)) == calls, (out, calls, incl)
    m = re.search(r"^recursion collapsed: luaV_execute and (.*) as one", out, re.M)
    assert m and ("luaD_call" in m.group(1) or "ccall" in m.group(1)), out
    assert not [n for n in rows if n.endswith(".luaV_execute()")], out
    assert sum(r[1] for r in rows.values()) + self_ns == incl, out
    assert self_ns == int(head.group(5))
    # Taken apart: luaD_precall is on the stack above every luaV_execute
    # (lua.c's pmain is a C function), and its calls from luaV_execute
    # (C functions: pcall, sort, gsub) carry their time less the
    # luaV_execute below them, never less than their exclusive time.
    apart = check_apart(tmp, prof, "luaV_execute", callees=True)
    precall = apart["F:lua.luaD_precall()"]
    assert precall[1] >= precall[2] > 0, apart


def test_callers_of_luas_interpreter_loop_add_up_to_the_flat_line(tmp):
    prof = lua_profile(tmp)
    check_callers_collapsed(tmp, prof, "luaV_execute", "F:lua.luaV_execute()")
    check_apart(tmp, prof, "luaV_execute", callees=False)
