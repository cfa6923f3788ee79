"""The conformance corpus's machinery (docs/conformance.md): build a program,
run it under the reference (refstack.c, preloaded) and under hookit, read both
trees and compare them path by path with exact counts.

A tree here is {path: calls}, path the tuple of function names from the root,
only the paths with calls > 0 (a fork child's inherited frames are context
with 0 calls: they appear as prefixes of the child's own paths).  A process is
{"label", "threads": [tree, ...], "meta": {...}}.
"""
import glob, hashlib, json, os, re, select, shutil, signal, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import hk  # noqa: E402

BUILD = hk.BUILD
HOOKIT = hk.BIN
WORK = os.path.join(BUILD, "conformance")
PROGS = os.path.join(HERE, "progs")

COMPILERS = {"c": {"gcc": "gcc", "clang": "clang"}, "cxx": {"gcc": "g++", "clang": "clang++"}}
OPTS = {"O0": ["-O0"], "O2": ["-O2"], "O3": ["-O3"], "O2-lto": ["-O2", "-flto"],
        "O3-lto": ["-O3", "-flto"]}


class Unavailable(Exception):
    """A build that cannot be done here (a -flto that does not link):
    reported as SKIP with the reason."""


class FetchFailed(Exception):
    """Third-party sources that cannot be fetched here: FAIL with the reason
    in the full run, SKIP with the reason in the quick subset (make check
    must not depend on the network)."""


# ---- building ----------------------------------------------------------------

def sh(cmd, cwd=None, timeout=1800, env=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{(p.stderr or p.stdout)[-3000:]}")
    return p


def _stamp_ok(out, key, inputs):
    st = out + ".stamp"
    if not os.path.exists(out) or not os.path.exists(st):
        return False
    if open(st).read() != key:
        return False
    t = os.path.getmtime(out)
    return all(os.path.getmtime(i) <= t for i in inputs)


_LOCK = threading.Lock()
_LOCKS = {}


def cached(out, cmds, inputs):
    """Run cmds (a list of argv) to make out unless out is newer than inputs
    and was made by the same commands (one builder per output at a time)."""
    with _LOCK:
        lock = _LOCKS.setdefault(out, threading.Lock())
    with lock:
        return _cached(out, cmds, inputs)


def _cached(out, cmds, inputs):
    key = hashlib.sha1(json.dumps(cmds).encode()).hexdigest()
    if _stamp_ok(out, key, inputs):
        return out
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for c in cmds:
        sh(c, cwd=os.path.dirname(out))
    with open(out + ".stamp", "w") as f:
        f.write(key)
    return out


def refstack():
    """The reference hook library, built once per build directory."""
    src = os.path.join(HERE, "refstack.c")
    out = os.path.join(WORK, "librefstack.so")
    return cached(out, [["gcc", "-std=gnu11", "-O2", "-g", "-Wall", "-fPIC", "-shared",
                         "-fno-omit-frame-pointer", "-fno-instrument-functions",
                         "-o", out, src, "-ldl"]], [src, __file__])


# ---- running -----------------------------------------------------------------

def run_program(argv, env, cwd, timeout):
    """Run argv in its own session and wait for it and for every process
    that inherited a "hold" pipe from it (forked children, daemons, exec'ed
    programs), at most timeout seconds in all.  Returns (rc, stdout, stderr,
    hung)."""
    r, w = os.pipe()
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, pass_fds=(w,), start_new_session=True)
    os.close(w)
    hung = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        _kill(p.pid)
        out, err = p.communicate()
    rc = p.returncode
    while not hung:
        left = timeout - (time.monotonic() - t0)
        if left <= 0:
            hung = True
            _kill(p.pid)
            break
        ready, _, _ = select.select([r], [], [], left)
        if ready and not os.read(r, 4096):
            break
    os.close(r)
    return rc, out.decode(errors="replace"), err.decode(errors="replace"), hung


def _kill(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def base_env(**extra):
    env = hk.test_env()
    env.pop("REFSTACK_OUT", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_ref(exe, args, outdir, timeout):
    os.makedirs(outdir, exist_ok=True)
    env = base_env(REFSTACK_OUT=outdir, LD_PRELOAD=refstack())
    rc, out, err, hung = run_program([exe] + list(args), env, outdir, timeout)
    procs = [read_ref(f) for f in sorted(glob.glob(os.path.join(outdir, "ref.*.txt")))]
    return {"rc": rc, "stdout": out, "stderr": err, "hung": hung, "procs": procs}


def run_hookit(exe, args, outdir, timeout, env_extra=None):
    os.makedirs(outdir, exist_ok=True)
    env = base_env(**(env_extra or {}))
    rc, out, err, hung = run_program([HOOKIT, "run", "-o", outdir, "--", exe] + list(args),
                                     env, outdir, timeout)
    procs = read_hookit_dir(outdir)
    return {"rc": rc, "stdout": out, "stderr": err, "hung": hung, "procs": procs,
            "export_errors": procs.export_errors}


def run_chained(exe, args, outdir, timeout, env_extra=None):
    """One run with both: refstack preloaded first with REFSTACK_CHAIN=1 (it
    records, then tail-jumps to the next library's hooks), libhookit after
    it.  For programs whose tree is not the same from run to run.
    env_extra: more settings for the run (JPROFOPTS, say)."""
    refdir, hkdir = os.path.join(outdir, "ref"), os.path.join(outdir, "hookit")
    os.makedirs(refdir, exist_ok=True)
    os.makedirs(hkdir, exist_ok=True)
    env = base_env(REFSTACK_OUT=refdir, REFSTACK_CHAIN=1, HOOKIT_OUTPUT=hkdir,
                   LD_PRELOAD=refstack() + ":" + hk.LIBHOOKIT, **(env_extra or {}))
    rc, out, err, hung = run_program([exe] + list(args), env, outdir, timeout)
    ref = {"rc": rc, "stdout": out, "stderr": err, "hung": hung,
           "procs": [read_ref(f) for f in sorted(glob.glob(os.path.join(refdir, "ref.*.txt")))]}
    got = dict(ref, procs=read_hookit_dir(hkdir))
    got["export_errors"] = got["procs"].export_errors
    return ref, got


class Procs(list):
    export_errors = ()


def read_hookit_dir(outdir):
    files = sorted(glob.glob(os.path.join(outdir, "hookit.*.prof")))
    procs, errors = Procs(), []
    for i in range(0, len(files), 200):
        chunk = files[i:i + 200]
        p = subprocess.run([HOOKIT, "export", "--format=json"] + chunk, capture_output=True,
                           text=True, timeout=600)
        if p.returncode != 0:
            errors.append(p.stderr.strip()[-500:])
            continue
        docs = json.loads(p.stdout)
        if isinstance(docs, dict):
            docs = [docs]
        procs += [read_hookit(d) for d in docs]
    procs.export_errors = errors
    return procs


# ---- names -------------------------------------------------------------------

CLONE = re.compile(r"\.(constprop|isra|part|cold|lto_priv|localalias|llvm|specialized)(\.\d+)*$")


def clean_name(name):
    prev = None
    while prev != name:
        prev, name = name, CLONE.sub("", name)
    return name


_SYMS = {}


def symbols(path):
    """{offset: [names]} for the function symbols of an object (nm -C)."""
    if path in _SYMS:
        return _SYMS[path]
    table = {}
    # The full symbol table, and the dynamic one (all a stripped library
    # such as libstdc++ has: clang passes the address of an inline function
    # that libstdc++ exports, e.g. std::string::size()).
    for dyn in ([], ["-D"]):
        p = subprocess.run(["nm", "-C", "--defined-only"] + dyn + [path], capture_output=True,
                           text=True)
        for line in p.stdout.splitlines():
            parts = line.split(" ", 2)
            if len(parts) != 3 or parts[1] not in "TtWwi":
                continue
            names = table.setdefault(int(parts[0], 16), [])
            name = clean_name(parts[2].split("@")[0])
            if name not in names:
                names.append(name)
    _SYMS[path] = table
    return table


ALIASES = {}     # name -> canonical name, for names that share an address


def note_aliases(names):
    names = sorted(set(names))
    if len(names) > 1:
        for n in names:
            ALIASES.setdefault(n, names[0])


def canon(name):
    return ALIASES.get(clean_name(name), clean_name(name))


def read_ref(path):
    """One refstack output file -> a process."""
    segs, threads, meta = [], [], {}
    cur = None
    lines = open(path).read().splitlines()
    if not lines or lines[-1] != "end":
        return {"label": os.path.basename(path), "threads": [], "meta": {"truncated": 1},
                "pid": 0}
    for line in lines:
        f = line.split(" ")
        if f[0] == "pid":
            meta["pid"], meta["ppid"] = int(f[1]), int(f[3])
        elif f[0] == "segment":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[3], 16), line.split(" ", 4)[4]))
        elif f[0] == "thread":
            cur = {"tid": int(f[1]), "tree_nodes": {}}
            for k in range(2, len(f) - 1, 2):
                cur[f[k]] = int(f[k + 1])
            threads.append(cur)
        elif f[0] == "n":
            cur["tree_nodes"][int(f[1])] = (int(f[2]), int(f[3], 16), int(f[4]))

    def name_of(addr):
        for base, lo, hi, mod in segs:
            if lo <= addr < hi:
                names = symbols(mod).get(addr - base)
                if names:
                    note_aliases(names)
                    return names[0]
                return f"{os.path.basename(mod)}+{addr - base:#x}"
        return f"{addr:#x}"

    out = []
    problems = {}
    for t in threads:
        nodes = t["tree_nodes"]
        paths = {}
        memo = {}

        def path_of(i):
            if i == 0:
                return ()
            if i not in memo:
                parent, fn, _ = nodes[i]
                memo[i] = path_of(parent) + (name_of(fn),)
            return memo[i]
        for i, (_, _, calls) in nodes.items():
            if calls:
                p = path_of(i)
                paths[p] = paths.get(p, 0) + calls
        for k in ("unmatched", "mismatched", "overflow", "lost_longjmps"):
            if t.get(k):
                problems[k] = problems.get(k, 0) + t[k]
        if paths:
            out.append({"tid": t["tid"], "tree": paths})
    return {"label": f"pid {meta.get('pid')}", "pid": meta.get("pid"), "threads": out,
            "meta": meta, "problems": problems}


def canon_tree(tree):
    out = {}
    for p, c in tree.items():
        q = tuple(canon(n) for n in p)
        out[q] = out.get(q, 0) + c
    return out


def read_hookit(doc):
    """A thread's paths from the export's flat node table (schema 2: every
    node after its parent), without recursion whatever the depth."""
    threads = []
    for t in doc["threads"]:
        paths = {}
        path_of = []
        for n in t["nodes"]:
            p = (path_of[n["parent"]] if n["parent"] is not None else ()) + (n["name"],)
            path_of.append(p)
            if n["calls"]:
                paths[p] = paths.get(p, 0) + n["calls"]
        if paths:
            threads.append({"tid": t["tid"], "index": t["index"], "tree": paths})
    pr = doc["process"]
    return {"label": f"pid {pr['pid']}", "pid": pr["pid"], "threads": threads,
            "meta": pr.get("meta", {})}


# ---- comparing -----------------------------------------------------------------

def tree_calls(tree):
    return sum(tree.values())


def distance(a, b):
    return sum(abs(a.get(p, 0) - b.get(p, 0)) for p in set(a) | set(b))


def _key(tree):
    return tuple(sorted(tree.items()))


def pair_up(xs, ys, dist):
    """Pair two lists: identical items first (by dist == 0), then greedily by
    distance.  Returns (pairs, left over xs, left over ys)."""
    xs, ys = list(xs), list(ys)
    pairs = []
    for x in list(xs):
        for y in ys:
            if dist(x, y) == 0:
                pairs.append((x, y))
                xs.remove(x)
                ys.remove(y)
                break
    if xs and ys:
        if len(xs) * len(ys) <= 40000:
            cand = sorted(((dist(x, y), i, j) for i, x in enumerate(xs) for j, y in enumerate(ys)),
                          key=lambda c: c[0])
            ux, uy = set(), set()
            for _, i, j in cand:
                if i not in ux and j not in uy:
                    ux.add(i)
                    uy.add(j)
                    pairs.append((xs[i], ys[j]))
            xs = [x for i, x in enumerate(xs) if i not in ux]
            ys = [y for j, y in enumerate(ys) if j not in uy]
        else:
            n = min(len(xs), len(ys))
            pairs += list(zip(xs[:n], ys[:n]))
            xs, ys = xs[n:], ys[n:]
    return pairs, xs, ys


def proc_trees(proc):
    return [canon_tree(t["tree"]) for t in proc["threads"]]


def proc_distance(a, b):
    ta, tb = a["_trees"], b["_trees"]
    if sorted(map(_key, ta)) == sorted(map(_key, tb)):
        return 0
    pairs, lx, ly = pair_up(ta, tb, distance)
    return (sum(distance(x, y) for x, y in pairs) + sum(map(tree_calls, lx))
            + sum(map(tree_calls, ly)))


def fmt_path(p):
    """Path names joined by ' > ', a run of one name written once with its
    count (recursion): main > fib*4 > leaf."""
    out = []
    for n in p:
        if out and out[-1][0] == n:
            out[-1][1] += 1
        else:
            out.append([n, 1])
    return " > ".join(n if k == 1 else f"{n}*{k}" for n, k in out) if p else "(root)"


def compare(expected, got, max_lines=12):
    """Compare processes.  Returns (ok, summary, detail lines, stats)."""
    for p in expected + got:
        p["_trees"] = proc_trees(p)
    # A process that made no call at all (a vfork child that only exec'ed,
    # a fork child that only held inherited context) is nothing to compare.
    expected = [p for p in expected if p["_trees"]]
    got = [p for p in got if p["_trees"]]
    diffs = []           # (path, expected calls, got calls, where)
    issues = []
    total = sum(tree_calls(t) for p in expected for t in p["_trees"])
    paths = sum(len(t) for p in expected for t in p["_trees"])
    pairs, miss, extra = pair_up(expected, got, proc_distance)
    if miss or extra:
        issues.append(f"{len(expected)} processes expected, {len(got)} profiled"
                      + (f" ({len(miss)} missing)" if miss else "")
                      + (f" ({len(extra)} unexpected)" if extra else ""))
    right = 0
    for e, g in pairs:
        tp, tm, tx = pair_up(e["_trees"], g["_trees"], distance)
        if tm or tx:
            issues.append(f"{e['label']}: {len(e['_trees'])} threads expected, "
                          f"{len(g['_trees'])} profiled")
        for a, b in tp:
            for p in sorted(set(a) | set(b)):
                if a.get(p, 0) != b.get(p, 0):
                    diffs.append((p, a.get(p, 0), b.get(p, 0)))
                right += min(a.get(p, 0), b.get(p, 0))
        for a in tm:
            diffs += [(p, c, 0) for p, c in sorted(a.items())]
        for b in tx:
            diffs += [(p, 0, c) for p, c in sorted(b.items())]
    for e in miss:
        diffs += [(p, c, 0) for t in e["_trees"] for p, c in sorted(t.items())]
    for g in extra:
        diffs += [(p, 0, c) for t in g["_trees"] for p, c in sorted(t.items())]
    got_total = sum(tree_calls(t) for p in got for t in p["_trees"])
    wrong = max(total, got_total) - right
    lines = []
    if diffs:
        frac = wrong / max(total, got_total, 1)
        issues.insert(0, f"{len(diffs)} paths differ, {wrong:,} of {max(total, got_total):,} calls "
                         f"({frac:.1%}) on wrong paths")
        diffs.sort(key=lambda d: -abs(d[1] - d[2]))
        for p, a, b in diffs[:max_lines]:
            lines.append(f"expected {a:>8,}  hookit {b:>8,}  {fmt_path(p)}")
        if len(diffs) > max_lines:
            lines.append(f"... {len(diffs) - max_lines} more")
    stats = {"paths": paths, "calls": total, "procs": len(expected)}
    return (not issues), "; ".join(issues), lines, stats


def hookit_meta_issues(got):
    out = []
    for p in got["procs"]:
        m = p["meta"]
        for k in ("unmatched_exits", "dropped_events"):
            if k not in m:
                out.append(f"{p['label']}: no {k} in process.meta")
            elif str(m[k]) != "0":
                out.append(f"{p['label']}: {k}={m[k]}")
        if str(m.get("undecided_landing_pads", "0")) != "0":
            out.append(f"{p['label']}: undecided_landing_pads={m['undecided_landing_pads']}")
    if got["export_errors"]:
        out.append("hookit export failed: " + " | ".join(got["export_errors"])[:300])
    return out


# ---- uftrace (second witness) ------------------------------------------------

def uftrace_trees(exe, args, outdir, timeout):
    """Per-thread trees from `uftrace record` + `uftrace graph --task`... read
    from `uftrace dump --chrome`-free replay: we use `uftrace replay -f none`
    with depth markers.  Returns [tree] or raises Unavailable."""
    if not shutil.which("uftrace"):
        raise Unavailable("uftrace is not installed")
    os.makedirs(outdir, exist_ok=True)
    data = os.path.join(outdir, "uftrace.data")
    rc, out, err, hung = run_program(["uftrace", "record", "-d", data, exe]
                                     + list(args), base_env(), outdir, timeout)
    if hung or not os.path.isdir(data):
        raise Unavailable(f"uftrace record failed (rc {rc}): {err.strip()[-200:]}")
    p = subprocess.run(["uftrace", "replay", "-d", data, "-f", "none", "--no-comment",
                        "--tid-filter", "0"] if False else
                       ["uftrace", "replay", "-d", data, "-f", "tid", "--no-comment",
                        "--demangle=full"],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Unavailable(f"uftrace replay failed: {p.stderr.strip()[-200:]}")
    # Library calls are recorded too (that is how uftrace sees setjmp and
    # longjmp): keep only the program's own functions, their callees moved up.
    own = {strip_parens(clean_name(n)) for names in symbols(exe).values() for n in names}
    return parse_replay(p.stdout, own)


def strip_parens(name):
    """uftrace writes C functions as "f()": compare names without a final "()"."""
    return name[:-2] if name.endswith("()") else name


REPLAY = re.compile(r"^\s*\[\s*(\d+)\]\s\|(\s*)(.*)$")


def parse_replay(text, own):
    """uftrace replay -f tid: '[ TID] |   name() {' / '}' / 'name();'.
    Depth comes from the braces (per thread)."""
    stacks, trees = {}, {}
    for line in text.splitlines():
        m = REPLAY.match(line)
        if not m:
            continue
        tid, body = int(m.group(1)), m.group(3).strip()
        st = stacks.setdefault(tid, [])
        tree = trees.setdefault(tid, {})
        if body.startswith("}"):
            if st:
                st.pop()
            continue
        if body.endswith("{") or body.endswith(";"):
            name = body.rstrip("{;").strip()
            name = strip_parens(name)
            if name.startswith("/*"):
                continue
            mine = strip_parens(name) in own
            if mine:
                path = tuple(n for n in st if n) + (name,)
                tree[path] = tree.get(path, 0) + 1
            if body.endswith("{"):
                st.append(name if mine else None)
    return [t for t in trees.values() if t]
