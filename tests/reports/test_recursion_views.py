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
ROW = re.compile(r"\s*(\d+)\s+(\d+)ns\s+(\d+)ns  (.*)$")


def profile(tmp):
    exe = hk.cc(tmp, [SRC], "interp", link_hookit=False)
    hk.hookit(tmp, "run", "--", exe, "30")
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
    self_row = re.search(r"^\s+(\d+)ns  \[self[^\]]*\]$", out, re.M)
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
    # taken apart, the nested calls' time is counted again and the rows overshoot
    _, rows2, self2, out2 = view(tmp, prof, "--callees", "execute", "--no-collapse-recursion")
    assert "recursion collapsed" not in out2
    assert any("call()" in n for n in rows2), out2
    assert sum(r[1] for r in rows2.values()) + self2 > incl, out2


def test_callers_collapsed_add_up_to_the_flat_line(tmp):
    prof = profile(tmp)
    head, rows, _, out = view(tmp, prof, "--callers", "execute")
    calls, self_ns, incl = execute_totals(tmp, prof)
    assert set(rows) == {"F:interp.main()", "[within the recursion]"}, out
    assert rows["F:interp.main()"][0] == 50 and rows["F:interp.main()"][1] == incl, out
    assert sum(r[0] for r in rows.values()) == calls
    assert sum(r[2] for r in rows.values()) == self_ns
    assert sum(r[1] for r in rows.values()) == incl
    assert (int(head.group(4)), int(head.group(5)), int(head.group(6))) == (calls, self_ns, incl), out
    flat = hk.hookit(tmp, "report", "--flat", "--units", "ns", prof).stdout
    m = re.search(r"^\s*[\d.]+\s+(\d+)ns\s+\d+ns\s+(\d+)\s.*F:interp\.execute\(\)$", flat, re.M)
    assert m and (int(m.group(1)), int(m.group(2))) == (self_ns, calls), flat


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
    once, about 10 s), running progs/interp.lua under hookit run."""
    import cases                # tests/conformance: Lua's fetch and build
    import conformance as C
    case = next(c for c in cases.CASES if c.name == "lua")
    try:
        exe, _ = cases.build(case, "gcc", "O2", quick=True)
    except (C.FetchFailed, C.Unavailable) as e:
        hk.skip(f"no Lua 5.4 here: {e}")
    plain = subprocess.run([exe, LUA_SCRIPT], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0 and plain.stdout.strip().isdigit(), (plain.stdout, plain.stderr)
    p = hk.hookit(tmp, "run", "--", exe, LUA_SCRIPT)
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
    # Taken apart, the rows do not add up: here luaD_precall, on the stack
    # above every luaV_execute (lua.c's pmain is a C function), counts 0 ns
    # inclusive under the recursion rule, so the C calls' time is missing.
    _, rows2, self2, out2 = view(tmp, prof, "--callees", "luaV_execute", "--no-collapse-recursion")
    assert "recursion collapsed" not in out2
    assert sum(r[1] for r in rows2.values()) + self2 != incl, out2


def test_callers_of_luas_interpreter_loop_add_up_to_the_flat_line(tmp):
    prof = lua_profile(tmp)
    head, rows, _, out = view(tmp, prof, "--callers", "luaV_execute")
    calls, self_ns, incl = execute_totals(tmp, prof, "luaV_execute")
    assert "[within the recursion]" in rows, out
    assert sum(r[0] for r in rows.values()) == calls
    assert sum(r[2] for r in rows.values()) == self_ns
    assert sum(r[1] for r in rows.values()) == incl
    assert (int(head.group(4)), int(head.group(5)), int(head.group(6))) == (calls, self_ns, incl), out
    flat = hk.hookit(tmp, "report", "--flat", "--units", "ns", prof).stdout
    m = re.search(r"^\s*[\d.]+\s+(\d+)ns\s+\d+ns\s+(\d+)\s.*F:lua\.luaV_execute\(\)$", flat, re.M)
    assert m and (int(m.group(1)), int(m.group(2))) == (self_ns, calls), flat
