"""Lifecycle scenario harness: build a scenario program, run it natively and
under the layer with the logging client (tests/lifecycle/logclient.c), and
compare exit status / death signal, stdout, stderr (minus hookit[PID]: lines)
and time; then check the callback log: generic ordering rules plus the
scenario's own expectations."""
import os, re, signal, subprocess, time

import hk

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
CLIENT_SRC = os.path.join(HERE, "logclient.c")


def compile_c(tmp, srcs, out, flags=(), shared=False, compiler="gcc"):
    cmd = [compiler, "-g", "-O1", "-I" + hk.INCLUDE]
    if shared:
        cmd += ["-shared", "-fPIC"]
    cmd += ["-o", os.path.join(tmp, out)]
    cmd += [s if os.path.isabs(s) else os.path.join(PROGS, s) for s in srcs]
    cmd += list(flags)
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
    assert p.returncode == 0, f"compile failed: {' '.join(cmd)}\n{p.stderr}"
    return os.path.join(tmp, out)


def build_client(tmp):
    return compile_c(tmp, [CLIENT_SRC], "logclient.so", shared=True)


class Run:
    def __init__(self, rc, out, err, secs):
        self.rc, self.out, self.err, self.secs = rc, out, err, secs


def execute(tmp, argv, env, timeout=30, signal_after_ready=None, executable=None):
    """Run argv (the file `executable` if given, with argv[0] unchanged)."""
    t0 = time.monotonic()
    if signal_after_ready:
        p = subprocess.Popen(argv, executable=executable, cwd=tmp, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        first = p.stdout.readline()
        p.send_signal(signal_after_ready)
        out, err = p.communicate(timeout=timeout)
        return Run(p.returncode, first + out, err, time.monotonic() - t0)
    p = subprocess.run(argv, executable=executable, cwd=tmp, env=env, capture_output=True,
                       text=True, timeout=timeout)
    return Run(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)


def strip_diag(text):
    return "".join(l for l in text.splitlines(True) if "hookit[" not in l)


def parse_log(path):
    """[(pid, event, {k: v}, raw)] in file order."""
    events = []
    if not os.path.exists(path):
        return events
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 2:
                continue
            kv = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
            events.append((parts[0], parts[1], kv, line.rstrip("\n")))
    return events


# Events that may legitimately come after fini_process (destructors, atexit).
AFTER_FINI_OK = {"dlclose", "post_dlclose", "pre_dlopen", "dlopen", "client_signal",
                 "lc_fini_process", "lc_fini_thread", "fini_library"}


def check_order(events, unfinished_threads=0):
    """Generic libmonitor ordering rules, per process image."""
    by_pid = {}
    for e in events:
        by_pid.setdefault(e[0], []).append(e)
    problems = []
    for pid, evs in by_pid.items():
        segs, cur, after_exec = [], None, False
        for e in evs:
            if e[1] == "init_process":
                cur = [e]
                segs.append(cur)
                after_exec = False
            elif after_exec:
                continue        # the new image's own start (init_library...)
            elif cur is not None:
                cur.append(e)
                after_exec = e[1] == "fini_process" and e[2].get("how") == "3"
            elif e[1] in ("init_thread", "fini_thread", "fini_process"):
                problems.append(f"{pid}: {e[3]} before init_process")
        for seg in segs:
            finis = [i for i, e in enumerate(seg) if e[1] == "fini_process"]
            if len(finis) > 1:
                problems.append(f"{pid}: {len(finis)} fini_process in one image")
            end = finis[0] if finis else len(seg)
            for e in seg[end + 1:] if finis else []:
                if e[1] not in AFTER_FINI_OK:
                    problems.append(f"{pid}: {e[3]} after fini_process")
            tids = {e[2]["num"]: e[2].get("tid") for e in seg[:end] if e[1] == "init_thread"}
            tids["main"] = pid          # main's fini_thread runs in main
            for e in seg[:end]:
                if e[1] == "fini_thread" and tids.get(e[2]["num"]) != e[2].get("tid"):
                    problems.append(f"{pid}: fini_thread num={e[2]['num']} ran in tid "
                                    f"{e[2].get('tid')}, not in its own thread {tids.get(e[2]['num'])}")
            started = [e[2]["num"] for e in seg[:end] if e[1] == "init_thread"]
            ended = [e[2]["num"] for e in seg[:end] if e[1] == "fini_thread" and e[2]["num"] != "main"]
            if sum(1 for e in seg[:end] if e[1] == "fini_thread" and e[2]["num"] == "main") > 1:
                problems.append(f"{pid}: main got fini_thread twice")
            missing = [n for n in started if n not in ended]
            if finis and len(missing) > unfinished_threads:
                problems.append(f"{pid}: threads {missing} have no fini_thread before fini_process")
            for n in ended:
                if n not in started:
                    problems.append(f"{pid}: fini_thread num={n} without init_thread")
            if len(set(ended)) != len(ended):
                problems.append(f"{pid}: a thread got fini_thread twice")
    return problems


def final_how(events):
    """(how) of the last fini_process of the first process."""
    if not events:
        return None
    first = next((e[0] for e in events if e[1] == "init_process"), None)
    hows = [e[2].get("how") for e in events if e[0] == first and e[1] == "fini_process"]
    return int(hows[-1]) if hows else None


def count(events, pattern):
    """How many log lines (without their pid) match the regex."""
    r = re.compile(pattern)
    return sum(1 for e in events if r.search(e[3].split(" ", 1)[1]))


def check_internal_order(events):
    """The internal client (lifecycle_register) sees init_* before and
    fini_* after the user's monitor callbacks."""
    problems = []
    last = {}
    for pid, ev, kv, raw in events:
        prev = last.get(pid)
        if ev == "init_process" and prev not in ("lc_init_process", "lc_post_fork_child", "lc_exec_failed",
                                                  "init_library", "pre_dlopen", "dlopen"):
            problems.append(f"{pid}: init_process after {prev}")
        if ev == "init_thread" and prev != "lc_init_thread" and prev is not None:
            # another thread's line may come in between; count instead below
            pass
        if prev == "fini_process" and ev not in ("lc_fini_process", "lc_pre_exec"):
            problems.append(f"{pid}: {ev} right after fini_process")
        last[pid] = ev
    n = lambda e: sum(1 for x in events if x[1] == e)
    if n("lc_init_thread") < n("init_thread"):
        problems.append(f"lc_init_thread {n('lc_init_thread')} < init_thread {n('init_thread')}")
    if n("lc_fini_thread") < n("fini_thread"):
        problems.append(f"lc_fini_thread {n('lc_fini_thread')} < fini_thread {n('fini_thread')}")
    return problems
