"""Native code under a Java VM (JNI), and Java methods in the same call tree.

App.java has native methods implemented in libNative.so (native.c), built
here with -finstrument-functions -lhookit.  Checked through the JSON export:
native counts with LD_PRELOAD, the warning for a library left unconnected,
automatic connection without LD_PRELOAD, mixed Java/native trees with the
JVMTI agent (-agentpath:libjprof.so) and its filters, the JVM's exit codes
and NullPointerException handling, and `hookit run -- java`.

The classes and the library are built once per test session (a shared
cache directory); every test runs in its own tmp."""
import atexit, os, re, shutil, signal, subprocess, sys, tempfile, threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(hk.PLUGIN_DIR, "libjprof.so")
NOT_UNDER = {"thread": "the JVM is not built for a preloaded TSan runtime"}

_lock = threading.Lock()
_cache = {}


def jdk_include():
    javac = shutil.which("javac")
    if not javac:
        return None
    home = os.path.dirname(os.path.dirname(os.path.realpath(javac)))
    inc = os.path.join(home, "include")
    return inc if os.path.exists(os.path.join(inc, "jni.h")) else None


def built():
    """The session's classes and libNative.so: {'dir': ...}."""
    with _lock:
        if "dir" in _cache:
            return _cache["dir"]
        if not (hk.have("java") and hk.have("javac")) or not jdk_include():
            hk.skip("no JDK (java, javac, jni.h): make deps installs default-jdk-headless")
        d = tempfile.mkdtemp(prefix="hookit-java-")
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        p = subprocess.run(["javac", "-d", d, os.path.join(HERE, "App.java"),
                            os.path.join(HERE, "Pure.java"), os.path.join(HERE, "Idle.java")],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        inc = jdk_include()
        for src, lib in (("native.c", "libNative.so"), ("later.c", "libLater.so")):
            hk.cc(d, [os.path.join(HERE, src)], lib, shared=True,
                  flags=["-I" + inc, "-I" + os.path.join(inc, "linux")])
        _cache["dir"] = d
        return d


class Run:
    def __init__(self, rc, out, err, pid):
        self.rc, self.out, self.err, self.pid = rc, out, err, pid

    def lines(self):
        return hk.hookit_lines(self.err)


def java(tmp, args, env=None, agent=None, preload=None, term_after_ready=False, prefix=()):
    """Run `java -cp CACHE -Djava.library.path=CACHE [agent] args` in tmp."""
    d = built()
    argv = list(prefix) + ["java", "-Xshare:auto", "-cp", d, "-Djava.library.path=" + d]
    if agent is not None:
        argv.append("-agentpath:" + AGENT + ("=" + agent if agent else ""))
    argv += list(args)
    e = hk.test_env(HOOKIT_OUTPUT=tmp)
    if preload:
        e["LD_PRELOAD"] = preload
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    p = subprocess.Popen(argv, cwd=tmp, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = ""
    if term_after_ready:
        first = p.stdout.readline()
        assert first == "ready\n", first
        p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    pid = p.pid
    if prefix:         # hookit run: the JVM is the child's exec, same pid
        m = re.search(r"hookit\.java\.(\d+)\.prof", " ".join(os.listdir(tmp)))
        pid = int(m.group(1)) if m else pid
    perfmap = f"/tmp/perf-{pid}.map"
    if agent is not None and "noperfmap" not in (agent or "") and os.path.exists(perfmap):
        _cache.setdefault("perfmaps", []).append(perfmap)
    return Run(p.returncode, first + out, err, pid)


def cleanup_perfmap(run):
    try:
        os.unlink(f"/tmp/perf-{run.pid}.map")
    except FileNotFoundError:
        pass


def profile(tmp):
    return hk.export_json(tmp, hk.one_profile(tmp, "java"))


def threads_named(doc, name):
    return [t for t in doc["threads"] if t["name"] == name]


def paths(thread):
    return {p: n for p, n in hk.walk(thread["roots"])}


def native_paths(thread):
    """{path of names from the first libNative frame: calls}."""
    out = {}
    for p, n in hk.walk(thread["roots"]):
        if n["module"] == "libNative.so":
            i = next(k for k, q in enumerate(p) if q.startswith("Java_"))
            key = p[i:]
            out[key] = out.get(key, 0) + n["calls"]
    return out


def expect_native(n):
    c = ("Java_Worker_compute",)
    return {c: n, c + ("helper",): n, c + ("helper", "kernel"): 2 * n}


def check_native_counts(doc, main_thread_name, n=5):
    main = threads_named(doc, main_thread_name)
    assert len(main) == 1, [t["name"] for t in doc["threads"]]
    assert native_paths(main[0]) == expect_native(n), native_paths(main[0])
    worker = threads_named(doc, "worker-1")
    assert len(worker) == 1, [t["name"] for t in doc["threads"]]
    assert native_paths(worker[0]) == expect_native(1), native_paths(worker[0])
    total = sum(n["calls"] for t in doc["threads"] for _, n in hk.walk(t["roots"])
                if n["module"] == "libNative.so")
    assert total == 4 * (n + 1), total
    for t in doc["threads"]:
        hk.check_tree_consistent(t)


# ---- native code, no agent ---------------------------------------------------------

def test_ld_preload_native_counts(tmp):
    r = java(tmp, ["App", "run", "5"], preload=os.path.join(built(), "libNative.so"))
    assert r.rc == 0 and r.out == "sum 50\n", (r.rc, r.out, r.err)
    assert r.lines() == [], r.err
    doc = profile(tmp)
    check_native_counts(doc, "java")
    assert doc["process"]["pid"] == r.pid


def test_preloaded_libhookit_and_unlinked_library(tmp):
    """A JNI library built with -finstrument-functions but not linked with
    hookit: its hooks bind to the preloaded libhookit."""
    d = built()
    lib = os.path.join(tmp, "lib")
    os.mkdir(lib)
    inc = jdk_include()
    hk.cc(lib, [os.path.join(HERE, "native.c")], "libNative.so", shared=True, link_hookit=False,
          flags=["-I" + inc, "-I" + os.path.join(inc, "linux")])
    e = hk.test_env(HOOKIT_OUTPUT=tmp, LD_PRELOAD=hk.LIBHOOKIT)
    p = subprocess.run(["java", "-cp", d, "-Djava.library.path=" + lib, "App", "run", "5"],
                       cwd=tmp, env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "sum 50\n", p.stderr
    assert hk.hookit_lines(p.stderr) == [], p.stderr
    check_native_counts(profile(tmp), "java")


def test_unconnected_library_warning(tmp):
    r = java(tmp, ["App", "run", "5"], env={"HOOKIT_CONNECT": "0"})
    assert r.rc == 0 and r.out == "sum 50\n", r.err
    lines = r.lines()
    assert len(lines) == 1, r.err
    lib = os.path.join(built(), "libNative.so")
    assert lines[0].startswith(f"hookit[{r.pid}]: {lib} is instrumented"), lines
    assert "glibc's no-op" in lines[0] and "LD_PRELOAD=" + hk.LIBHOOKIT in lines[0], lines
    doc = profile(tmp)
    assert not any(n["module"] == "libNative.so" for t in doc["threads"]
                   for _, n in hk.walk(t["roots"])), "unconnected library was profiled"


def test_bad_connect_value(tmp):
    r = java(tmp, ["App", "run", "5"], env={"HOOKIT_CONNECT": "yes"})
    assert r.rc == 0, r.err
    assert r.lines() == [f"hookit[{r.pid}]: HOOKIT_CONNECT='yes' is not valid: use 0 or 1 (using 1)"], r.err
    check_native_counts(profile(tmp), "java")


def test_automatic_connection_without_preload(tmp):
    r = java(tmp, ["App", "run", "5"])
    assert r.rc == 0 and r.out == "sum 50\n", (r.rc, r.err)
    assert r.lines() == [], r.err
    check_native_counts(profile(tmp), "java")


def test_automatic_connection_of_a_later_library(tmp):
    """libhookit came in with the first JNI library; the JVM's later
    dlopen of a second one is seen too (its dlopen calls are connected to
    the lifecycle layer's) and the second library is connected."""
    r = java(tmp, ["App", "later", "3"])
    assert r.rc == 0 and r.out == "later 6\n", (r.rc, r.err)
    assert r.lines() == [], r.err
    t = threads_named(profile(tmp), "java")[0]
    hk.assert_tree(t, {("Java_Worker_compute",): 1, ("Java_Worker_compute", "helper"): 1,
                       ("Java_Worker_compute", "helper", "kernel"): 2,
                       ("Java_Later_compute",): 3, ("Java_Later_compute", "twice"): 3})
    assert hk.node(t, "Java_Later_compute")["module"] == "libLater.so"


def test_automatic_connection_debug_line(tmp):
    r = java(tmp, ["App", "run", "2"], env={"HOOKIT_DEBUG": "1"})
    assert r.rc == 0, r.err
    lib = os.path.join(built(), "libNative.so")
    assert any(l.endswith(f"connected {lib}: its hooks were bound to glibc's no-op, now to hookit's")
               for l in r.lines()), r.err


def test_hookit_run_java(tmp):
    r = java(tmp, ["App", "run", "5"], prefix=(hk.BIN, "run", "--"))
    assert r.rc == 0 and r.out == "sum 50\n", r.err
    check_native_counts(profile(tmp), "java")


# ---- the JVM's behaviour --------------------------------------------------------------

def plain(tmp, args, **kw):
    """The same program without hookit, for comparison."""
    e = hk.test_env()
    d = built()
    p = subprocess.Popen(["java", "-Xshare:auto", "-cp", d, "-Djava.library.path=" + d] + args,
                         cwd=tmp, env={k: v for k, v in e.items() if k != "LD_PRELOAD"},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = ""
    if kw.get("term_after_ready"):
        first = p.stdout.readline()
        p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    return Run(p.returncode, first + out, err, p.pid)


WAYS = {
    "preload": dict(preload="LIBNATIVE"),
    "hookit-run": dict(prefix=(hk.BIN, "run", "--")),   # libhookit preloaded: the lifecycle layer in full
    "connect": dict(),
    "agent": dict(agent="mode=native,noperfmap"),
}


def ways(tmp, args, agent_args=None, **kw):
    """Run args each way (LD_PRELOAD of the library, `hookit run`, automatic
    connection, agent), each in its own dir."""
    out = {}
    for name, how in WAYS.items():
        d = os.path.join(tmp, name)
        os.mkdir(d)
        how = dict(how)
        if how.get("preload") == "LIBNATIVE":
            how["preload"] = os.path.join(built(), "libNative.so")
        out[name] = (d, java(d, agent_args if name == "agent" and agent_args else args, **how, **kw))
    return out


def test_exit_code_3(tmp):
    nat = plain(tmp, ["App", "exit3"])
    assert nat.rc == 3 and nat.out == "exiting with 3\n", nat.err
    for name, (d, r) in ways(tmp, ["App", "exit3"]).items():
        assert (r.rc, r.out) == (3, nat.out), (name, r.rc, r.err)
        assert r.lines() == [], (name, r.err)
        doc = profile(d)
        assert sum(n["calls"] for t in doc["threads"] for _, n in hk.walk(t["roots"])
                   if n["name"] == "kernel") == 2, name


def test_sigterm_143(tmp):
    nat = plain(tmp, ["App", "term"], term_after_ready=True)
    assert nat.rc == 143 and nat.out == "ready\nshutdown hook ran\n", (nat.rc, nat.out)
    for name, (d, r) in ways(tmp, ["App", "term"], term_after_ready=True).items():
        assert (r.rc, r.out) == (143, nat.out), (name, r.rc, r.out, r.err)
        doc = profile(d)
        assert any(n["name"] == "helper" and n["calls"] == 1 for t in doc["threads"]
                   for _, n in hk.walk(t["roots"])), name


def test_npe_caught_unchanged(tmp):
    """NullPointerExceptions raised by compiled code through its implicit
    null check (a SIGSEGV the JVM's handler turns into the exception; some
    thousands per run); under the agent the VM interprets (method events),
    so fewer rounds there."""
    nat = plain(tmp, ["App", "npe"])
    assert nat.rc == 0 and nat.out == "caught 10000 NullPointerExceptions\n", nat.out
    for name, (d, r) in ways(tmp, ["App", "npe"], agent_args=["App", "npe", "1"]).items():
        expect = "caught 1000 NullPointerExceptions\n" if name == "agent" else nat.out
        assert (r.rc, r.out) == (0, expect), (name, r.rc, r.err)
        assert r.lines() == [], (name, r.err)
        doc = profile(d)
        assert any(n["name"] == "helper" and n["calls"] == 1 for t in doc["threads"]
                   for _, n in hk.walk(t["roots"])), name


# ---- Java frames: the JVMTI agent ----------------------------------------------------

def test_agent_mixed_tree(tmp):
    r = java(tmp, ["App", "run", "5"], agent="noperfmap")
    assert r.rc == 0 and r.out == "sum 50\n", r.err
    assert r.lines() == [], r.err
    doc = profile(tmp)
    main = threads_named(doc, "main")
    assert len(main) == 1, [t["name"] for t in doc["threads"]]
    t = main[0]
    base = hk.node(t, "J:App.main", "J:Worker.run")
    assert base["calls"] == 5 and base["module"] == ""
    assert hk.node(t, "J:App.main")["calls"] == 1
    nat = hk.node(t, "J:App.main", "J:Worker.run", "Java_Worker_compute")
    assert nat["calls"] == 5 and nat["module"] == "libNative.so"
    assert hk.node(t, "J:Worker.run", "Java_Worker_compute", "helper", "kernel")["calls"] == 10
    # The native method is its F: frame, never also a J: frame.
    assert not any(p[-1] == "J:Worker.compute" for p in paths(t)), "native method twice"
    w = threads_named(doc, "worker-1")
    assert len(w) == 1
    assert hk.node(w[0], "J:App.lambda$main$0", "J:Worker.run", "Java_Worker_compute", "helper")["calls"] == 1
    # JDK classes are named with their package as the module.
    mods = {n["module"] for _, n in hk.walk(t["roots"]) if n["name"].startswith("J:")}
    assert "java.lang" in mods or any(m.startswith("java.") for m in mods), mods
    for th in doc["threads"]:
        hk.check_tree_consistent(th)
    assert len(hk.profiles(tmp)) == 1


def test_agent_report_names(tmp):
    r = java(tmp, ["App", "run", "2"], agent="exclude=java.*,exclude=jdk.*,exclude=sun.*,noperfmap")
    assert r.rc == 0, r.err
    rep = hk.hookit(tmp, "report", hk.one_profile(tmp, "java")).stdout
    assert re.search(r"J:App\.main\(\)\n.*J:Worker\.run\(\)\n.*F:libNative\.so\.Java_Worker_compute\(\)\n"
                     r".*F:libNative\.so\.helper\(\)\n.*F:libNative\.so\.kernel\(\)", rep), rep


def test_agent_exclude_filter(tmp):
    r = java(tmp, ["App", "run", "3"], agent="exclude=java.*,exclude=jdk.*,exclude=sun.*,noperfmap")
    assert r.rc == 0, r.err
    doc = profile(tmp)
    for t in doc["threads"]:
        for p, n in hk.walk(t["roots"]):
            if n["name"].startswith("J:"):
                assert not re.match(r"(java|jdk|sun)(\.|$)", n["module"]), p
    w = threads_named(doc, "worker-1")[0]
    # Thread.run excluded: the lambda is a root.
    assert [n["name"] for n in w["roots"]] == ["J:App$$Lambda$1.run"] or \
        any(n["name"] == "J:App.lambda$main$0" for n in w["roots"][0].get("children", [])), w["roots"]
    assert hk.node(threads_named(doc, "main")[0], "J:App.main", "J:Worker.run")["calls"] == 3


def test_agent_include_filter_and_signature(tmp):
    r = java(tmp, ["App", "run", "3"], agent="include=Worker,signature,noperfmap")
    assert r.rc == 0, r.err
    doc = profile(tmp)
    t = threads_named(doc, "main")[0]
    assert [n["name"] for n in t["roots"]] == ["J:Worker.<init>()", "J:Worker.run(int)"], \
        [n["name"] for n in t["roots"]]
    run = hk.node(t, "J:Worker.run(int)")
    assert run["calls"] == 3
    assert [c["name"] for c in run["children"]] == ["Java_Worker_compute"]


def test_agent_native_mode(tmp):
    """mode=native: only the Java frames that lead to instrumented native
    code, with exact counts."""
    r = java(tmp, ["App", "run", "4"], agent="mode=native,noperfmap")
    assert r.rc == 0, r.err
    doc = profile(tmp)
    t = threads_named(doc, "main")[0]
    expect = {("J:App.main",): 1, ("J:App.main", "J:Worker.run"): 4}
    for k, v in expect_native(4).items():
        expect[("J:App.main", "J:Worker.run") + k] = v
    hk.assert_tree(t, expect)
    for th in doc["threads"]:
        for p, n in hk.walk(th["roots"]):
            if n["name"].startswith("J:"):
                assert any(m["module"] == "libNative.so" for _, m in hk.walk(n.get("children", []))), \
                    f"Java frame leading to no native code: {p}"


def test_agent_callback_java_native_java(tmp):
    """Native code calling back into Java that calls native code."""
    r = java(tmp, ["App", "callback", "3"], agent="exclude=java.*,exclude=jdk.*,noperfmap")
    assert r.rc == 0 and r.out == "bounced 3\n", r.err
    t = threads_named(profile(tmp), "main")[0]
    n = hk.node(t, "J:App.main", "Java_Worker_bounce", "J:Worker.up", "Java_Worker_compute", "helper")
    assert n["calls"] == 3
    assert hk.node(t, "J:App.main", "Java_Worker_bounce", "helper")["calls"] == 3


def test_agent_with_preloaded_libhookit_is_one_instance(tmp):
    r = java(tmp, ["App", "run", "3"], agent="mode=native,noperfmap", preload=hk.LIBHOOKIT,
             env={"HOOKIT_DEBUG": "1"})
    assert r.rc == 0, r.err
    assert any("jprof agent: joined the jprof libhookit started" in l for l in r.lines()), r.err
    assert not any("started jprof itself" in l for l in r.lines()), r.err
    assert len(hk.profiles(tmp)) == 1, os.listdir(tmp)
    t = threads_named(profile(tmp), "main")[0]
    assert hk.node(t, "J:App.main", "J:Worker.run", "Java_Worker_compute")["calls"] == 3


def test_agent_bootstraps_and_hands_over(tmp):
    """No libhookit at start: the agent loads its installation's libhookit,
    which starts jprof as every start does; libNative, linked with
    -lhookit, gets that same libhookit (one profile, both kinds of
    frames)."""
    r = java(tmp, ["App", "run", "2"], agent="noperfmap", env={"HOOKIT_DEBUG": "1"})
    assert r.rc == 0, r.err
    text = "\n".join(r.lines())
    lib, agent = os.path.realpath(hk.LIBHOOKIT), os.path.realpath(AGENT)
    assert "jprof agent: no libhookit in the process: loaded " + lib in text, text
    assert "profiler " + agent + " loaded (jprof)" in text, text
    assert len(hk.profiles(tmp)) == 1, os.listdir(tmp)
    t = threads_named(profile(tmp), "main")[0]
    assert hk.node(t, "J:App.main", "J:Worker.run", "Java_Worker_compute")["calls"] == 2


def test_agent_alone_reads_the_environment_as_libhookit_does(tmp):
    """The agent's start is libhookit's: HOOKIT_PROFILING is checked by
    hookit/config.c (one line naming the variable, the default kept) and an
    HOOKIT_OUTPUT that cannot be used is reported, and the profile written
    to the fallback directory ($TMPDIR) says where it went."""
    blocker = os.path.join(tmp, "not-a-dir")
    open(blocker, "w").close()
    fallback = os.path.join(tmp, "fallback")
    os.mkdir(fallback)
    r = java(tmp, ["Pure"], agent="include=Pure,noperfmap",
             env={"HOOKIT_PROFILING": "yes", "HOOKIT_OUTPUT": blocker, "TMPDIR": fallback})
    assert r.rc == 0 and r.out == "pure 22\n", r.err
    lines = r.lines()
    assert len(lines) == 3, r.err
    assert "HOOKIT_PROFILING='yes' is not valid: use 0 or 1 (using 1)" in lines[0], r.err
    assert f"HOOKIT_OUTPUT='{blocker}' cannot be used" in lines[1] and fallback in lines[1], r.err
    assert f"wrote {fallback}/hookit.java.{r.pid}.prof" in lines[2], r.err
    t = threads_named(profile(fallback), "main")[0]
    hk.assert_tree(t, {("J:Pure.main",): 1, ("J:Pure.main", "J:Pure.f"): 4,
                       ("J:Pure.main", "J:Pure.f", "J:Pure.g"): 4})


def test_agent_alone_pure_java_exit3(tmp):
    r = java(tmp, ["Pure", "exit3"], agent="include=Pure,noperfmap")
    assert r.rc == 3 and r.out == "pure 22\n", (r.rc, r.err)
    t = threads_named(profile(tmp), "main")[0]
    hk.assert_tree(t, {("J:Pure.main",): 1, ("J:Pure.main", "J:Pure.f"): 4,
                       ("J:Pure.main", "J:Pure.f", "J:Pure.g"): 4})


def test_agent_bad_option(tmp):
    r = java(tmp, ["Pure"], agent="mode=fast,noperfmap")
    assert r.rc == 0 and r.out == "pure 22\n", r.err
    assert len(r.lines()) == 1 and "unknown option 'mode=fast'" in r.lines()[0], r.err


def test_agent_perf_map(tmp):
    r = java(tmp, ["App", "run", "2"], agent="include=App")
    try:
        assert r.rc == 0, r.err
        path = f"/tmp/perf-{r.pid}.map"
        assert os.path.exists(path), "no perf map"
        lines = open(path).read().splitlines()
        assert lines, "empty perf map"
        for l in lines:
            assert re.match(r"^[0-9a-f]+ [0-9a-f]+ \S", l), l
        assert any("Interpreter" in l for l in lines), lines[:20]
    finally:
        cleanup_perfmap(r)
    r2 = java(tmp, ["Pure"], agent="noperfmap")
    assert not os.path.exists(f"/tmp/perf-{r2.pid}.map")


def test_a2n_names_jit_code_from_perf_map(tmp):
    """A2N names addresses in the JVM's generated code (anonymous
    executable memory) from the agent's /tmp/perf-PID.map."""
    d = built()
    resolve = os.path.join(tmp, "resolve")
    p = subprocess.run(["gcc", "-O1", "-I" + hk.INCLUDE, "-I" + hk.ROOT, "-o", resolve,
                        os.path.join(hk.ROOT, "tests", "a2n", "resolve.c"),
                        os.path.join(hk.LIB, "liba2n.a"), "-lbfd", "-lz", "-ldl"] + hk.SANITIZE_FLAGS,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    e = hk.test_env(HOOKIT_OUTPUT=tmp)
    jvm = subprocess.Popen(["java", "-cp", d, "-Djava.library.path=" + d,
                            "-agentpath:" + AGENT + "=include=App", "App", "term"],
                           cwd=tmp, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    path = f"/tmp/perf-{jvm.pid}.map"
    try:
        assert jvm.stdout.readline() == "ready\n"
        entries = []
        for line in open(path).read().splitlines():
            start, size, name = line.split(" ", 2)
            entries.append((int(start, 16), int(size, 16), name))
        # A few of the VM's stubs and the interpreter: the last line for an
        # address wins, as in perf.
        picks = {}
        for start, size, name in entries:
            if size > 2:
                picks[start + size // 2] = name
        for start, size, _ in entries:
            for a in list(picks):
                if start <= a < start + size:
                    picks[a] = [n for s, z, n in entries if s <= a < s + z][-1]
        sample = sorted(picks.items())[:40]
        assert sample, entries[:5]
        out = subprocess.run([resolve, "-p", str(jvm.pid), "-"], input="".join(f"{a:x}\n" for a, _ in sample),
                             capture_output=True, text=True).stdout.splitlines()
        assert len(out) == len(sample), out
        for (addr, name), row in zip(sample, out):
            f = row.split("\t")
            assert f[3] == "[jit]" and f[4] == path and f[5] == name, (hex(addr), name, row)
            assert f[1] == "0", row
    finally:
        jvm.send_signal(signal.SIGTERM)
        jvm.communicate(timeout=60)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def test_agent_other_copy_than_libhookits_profiler(tmp):
    """libhookit preloaded with its own libjprof; an agent from another
    file would be a second profiler writing the same profile: it says so
    and stays out."""
    other = os.path.join(tmp, "copy", "libjprof.so")
    os.makedirs(os.path.dirname(other))
    shutil.copy(AGENT, other)
    d = built()
    e = hk.test_env(HOOKIT_OUTPUT=tmp, LD_PRELOAD=hk.LIBHOOKIT)
    p = subprocess.run(["java", "-cp", d, "-Djava.library.path=" + d,
                        "-agentpath:" + other + "=noperfmap", "App", "run", "2"],
                       cwd=tmp, env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "sum 8\n", p.stderr
    lines = hk.hookit_lines(p.stderr)
    assert len(lines) == 1 and "libhookit is loaded but did not start this libjprof" in lines[0] \
        and other in lines[0], p.stderr
    doc = profile(tmp)
    assert not any(n["name"].startswith("J:") for t in doc["threads"] for _, n in hk.walk(t["roots"]))
    check_native_counts(doc, "java", n=2)


def test_automatic_connection_full_relro_and_no_plt(tmp):
    """The hooks' slots in RELRO pages (-z now: the GOT is read-only after
    relocation) and as GLOB_DAT relocations (-fno-plt) are connected too."""
    if os.uname().machine != "x86_64":
        hk.skip("relocation names checked are x86-64's")
    d = built()
    inc = jdk_include()
    for sub, flags in (("now", ["-Wl,-z,relro,-z,now"]), ("noplt", ["-fno-plt", "-Wl,-z,relro,-z,now"])):
        lib = os.path.join(tmp, sub)
        os.mkdir(lib)
        so = hk.cc(lib, [os.path.join(HERE, "native.c")], "libNative.so", shared=True,
                   flags=["-I" + inc, "-I" + os.path.join(inc, "linux")] + flags)
        relocs = subprocess.run(["readelf", "-rW", so], capture_output=True, text=True).stdout
        kind = "R_X86_64_GLOB_DAT" if sub == "noplt" else "R_X86_64_JUMP_SLO"
        assert any(kind in l and "__cyg_profile_func_enter" in l for l in relocs.splitlines()), relocs
        e = hk.test_env(HOOKIT_OUTPUT=lib)
        p = subprocess.run(["java", "-cp", d, "-Djava.library.path=" + lib, "App", "run", "5"],
                           cwd=lib, env=e, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and p.stdout == "sum 50\n", (sub, p.stderr)
        assert hk.hookit_lines(p.stderr) == [], (sub, p.stderr)
        check_native_counts(profile(lib), "java")


def test_a2n_perf_map_rules(tmp):
    """/tmp/perf-PID.map as A2N reads it: the newest line for an address
    wins, malformed lines are skipped, lines appended later are seen, and a
    file owned by another user is not believed."""
    resolve = os.path.join(tmp, "resolve")
    p = subprocess.run(["gcc", "-O1", "-I" + hk.INCLUDE, "-I" + hk.ROOT, "-o", resolve,
                        os.path.join(hk.ROOT, "tests", "a2n", "resolve.c"),
                        os.path.join(hk.LIB, "liba2n.a"), "-lbfd", "-lz", "-ldl"] + hk.SANITIZE_FLAGS,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    prog = hk.cc(tmp, [os.path.join(HERE, "anon_code.c")], "anon_code", link_hookit=False, instrument=False)
    target = subprocess.Popen([prog], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    path = f"/tmp/perf-{target.pid}.map"
    try:
        base = int(target.stdout.readline(), 16)

        def names(*offsets):
            out = subprocess.run([resolve, "-p", str(target.pid), "-"], capture_output=True, text=True,
                                 input="".join(f"{base + o:x}\n" for o in offsets)).stdout.splitlines()
            return [(r.split("\t")[3], r.split("\t")[5]) for r in out]

        with open(path, "w") as f:
            f.write(f"{base:x} 100 old.Name\n"
                    "not a line\n"
                    f"{base + 0x100:x} zz bad.Size\n"
                    f"{base:x} 80 com.acme.Foo.run\n")
        assert names(0x10, 0x90, 0x200) == [("[jit]", "com.acme.Foo.run"), ("[jit]", "old.Name"),
                                            ("[anon]", f"[anon]+0x{base + 0x200:x}")]
        with open(path, "a") as f:
            f.write(f"{base + 0x200:x} 40 Later.compiled\n")
        assert names(0x210) == [("[jit]", "Later.compiled")]
        if os.geteuid() == 0:           # a file planted by another user (nobody)
            os.chown(path, 65534, 65534)
            assert names(0x10) == [("[anon]", f"[anon]+0x{base + 0x10:x}")]
    finally:
        target.stdin.close()
        target.wait(timeout=30)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def test_agent_alone_gets_the_control_thread(tmp):
    """A JVMTI-only process (no LD_PRELOAD, no instrumented library) is
    started by the libhookit the agent loads, as every start is, so it has
    the control thread too: with every thread of the program blocked
    (Idle.java in System.in.read), `ctl` and `snapshot` are served at once,
    and a reset given then is what the snapshot shows and what the Java
    thread continues from (Idle calls f 3 times before, 2 times after)."""
    d = built()
    rt = os.path.join(tmp, "rt")
    e = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt)
    p = subprocess.Popen(["java", "-Xshare:auto", "-cp", d, "-agentpath:" + AGENT + "=include=Idle,noperfmap",
                          "Idle"], cwd=tmp, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n", p.stderr.read() if p.poll() is not None else ""
        comms = []
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            with open(f"/proc/{p.pid}/task/{tid}/comm") as f:
                comms.append(f.read().strip())
        assert comms.count("hookit-control") == 1, comms
        env = {"HOOKIT_RUNTIME_DIR": rt}
        flushed = []
        for cmd in ("flush", "reset", "flush"):
            # no thread of the program runs a hook: only the control thread
            # can serve these within a second (ctl's default waits 5 s)
            r = hk.hookit(tmp, "ctl", "--timeout", "1", str(p.pid), cmd, env=env, check=False)
            # (a flush names the file it wrote, issue 30)
            assert r.returncode == 0 and r.stdout.strip().startswith(f"process {p.pid}: {cmd} done"), r
            assert cmd != "flush" or re.search(r": wrote \S+/hookit\.java\.\d+(\.\d+)?\.prof$",
                                                r.stdout.strip()), r
            if cmd == "flush":
                new = [f for f in hk.profiles(tmp, "java") if f not in flushed]
                assert len(new) == 1, (flushed, new)
                flushed += new
        # the flushes, written by the process: before and after the reset
        main = threads_named(hk.export_json(tmp, flushed[0]), "main")[0]
        hk.assert_tree(main, {("J:Idle.main",): 1, ("J:Idle.main", "J:Idle.f"): 3})
        main = threads_named(hk.export_json(tmp, flushed[1]), "main")[0]
        hk.assert_tree(main, {("J:Idle.main",): 0})
        # a snapshot is served too (the reader cannot name Java frames: they
        # are the process's own synthetic keys); every count is 0 after the reset
        snap = os.path.join(tmp, "after.snap")
        r = hk.hookit(tmp, "snapshot", "-o", snap, str(p.pid), env=env)
        assert f"wrote {snap}" in r.stdout, r.stdout
        doc = hk.export_json(tmp, snap)
        assert sum(n["calls"] for t in doc["threads"] for _p, n in hk.walk(t["roots"])) == 0, doc
        out, err = p.communicate("go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0 and out == "idle 17\n", (out, err)
    final = [f for f in hk.profiles(tmp, "java") if f not in flushed]
    assert len(final) == 1, (hk.profiles(tmp), flushed)
    main = threads_named(hk.export_json(tmp, final[0]), "main")[0]
    hk.assert_tree(main, {("J:Idle.main",): 0, ("J:Idle.main", "J:Idle.f"): 2})
