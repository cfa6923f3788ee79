"""The lifecycle layer's commands: `hookit run --client X.so` and
`hookit link` (options, usage errors, pass-through of non-link commands)."""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import lcscen  # noqa: E402


def test_run_client_gets_callbacks(tmp):
    client = lcscen.build_client(tmp)
    exe = lcscen.compile_c(tmp, ["thr_basic.c"], "thr_basic", flags=["-pthread"])
    log = os.path.join(tmp, "lc.log")
    p = hk.hookit(tmp, "run", "--client", client, "--", exe, env={"HOOKIT_LC_LOG": log})
    assert p.stdout.startswith("sum=")
    events = lcscen.parse_log(log)
    assert lcscen.count(events, "^init_process argc=1 argv0=thr_basic") == 1
    assert lcscen.count(events, "^init_thread ") == 4 == lcscen.count(events, "^fini_thread")
    assert not lcscen.check_order(events)


def test_run_client_missing(tmp):
    p = hk.hookit(tmp, "run", "--client", "nope.so", "--", "/bin/true", check=False)
    assert p.returncode == 1 and "nope.so" in p.stderr


def test_link_usage_errors(tmp):
    p = hk.hookit(tmp, "link", "gcc", "x.c", check=False)
    assert p.returncode == 2 and "--" in p.stderr
    p = hk.hookit(tmp, "link", "--", check=False)
    assert p.returncode == 2
    p = hk.hookit(tmp, "link", "-u", check=False)
    assert p.returncode == 2
    p = hk.hookit(tmp, "link", "--help")
    assert "--wrap" in p.stdout and "-static" in p.stdout


def test_link_compile_only_is_unchanged(tmp):
    src = os.path.join(lcscen.PROGS, "exit_return.c")
    p = hk.hookit(tmp, "link", "-v", "--", "gcc", "-c", "-o", os.path.join(tmp, "x.o"), src)
    assert "--wrap" not in p.stderr and os.path.exists(os.path.join(tmp, "x.o"))


def test_link_wraps_and_undefined(tmp):
    src = os.path.join(lcscen.PROGS, "exit_call.c")
    out = os.path.join(tmp, "exit_call")
    p = hk.hookit(tmp, "link", "-v", "-p", "none", "-u", "monitor_init_process", "--",
                  "gcc", "-o", out, src)
    for flag in ("-Wl,--wrap=main", "-Wl,--wrap=exit", "-Wl,--undefined=__wrap_exit",
                 "-Wl,--undefined=monitor_init_process", "libhookit.a"):
        assert flag in p.stderr, flag
    nm = subprocess.run(["nm", out], capture_output=True, text=True).stdout
    assert "__wrap_exit" in nm and "__wrap_pthread_create" in nm
    r = hk.run(tmp, [out], check=False)
    assert r.returncode == 3 and r.stdout == "leaving 3\n"


def link_wraps(tmp, *cc_args):
    """The names `hookit link -v` passes as -Wl,--wrap=NAME (the command is
    `true`: only the printed command matters)."""
    p = hk.hookit(tmp, "link", "-v", "-p", "none", "--", "true", *cc_args)
    words = p.stderr.splitlines()[0].split()
    return {w[len("-Wl,--wrap="):] for w in words if w.startswith("-Wl,--wrap=")}


def test_link_wraps_exactly_what_libhookit_a_defines(tmp):
    """hookit link's list (lifecycle/wrapped.h) against the archive it
    links, read by nm: a --wrap=NAME for every __wrap_NAME libhookit.a
    defines, and none without one (the list cannot drift from the
    wrappers); a -static link leaves out dlopen and dlclose only."""
    nm = subprocess.run(["nm", "--defined-only", os.path.join(hk.LIB, "libhookit.a")],
                        capture_output=True, text=True, check=True).stdout
    defined = {f[2][len("__wrap_"):] for f in (l.split() for l in nm.splitlines())
               if len(f) == 3 and f[1] in "TW" and f[2].startswith("__wrap_")}
    assert "exit" in defined and "setjmp" in defined and "MPI_Init" in defined, sorted(defined)
    assert link_wraps(tmp, "-o", "x", "x.c") == defined
    assert link_wraps(tmp, "-static", "-o", "x", "x.c") == defined - {"dlopen", "dlclose"}


def test_link_fails_like_the_compiler(tmp):
    p = hk.hookit(tmp, "link", "-p", "none", "--", "gcc", "-o", os.path.join(tmp, "x"),
                  os.path.join(tmp, "missing.c"), check=False)
    assert p.returncode != 0 and "missing.c" in p.stderr


def test_example_monitor_client(tmp):
    """examples/monitor_client.c (the papiex-style skeleton) builds with
    -Wall -Werror and reports every thread, and a death by a signal."""
    src = os.path.join(hk.ROOT, "examples", "monitor_client.c")
    client = os.path.join(tmp, "libmc.so")
    p = subprocess.run(["gcc", "-Wall", "-Werror", "-shared", "-fPIC", "-I" + hk.INCLUDE, "-o",
                        client, src], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = os.path.join(tmp, "report")
    exe = lcscen.compile_c(tmp, ["thr_basic.c"], "thr_basic", flags=["-pthread"])
    hk.hookit(tmp, "run", "--client", client, "--", exe, env={"MONITOR_CLIENT_OUTPUT": out})
    exe2 = lcscen.compile_c(tmp, ["sig_term_self.c"], "sig_term_self")
    r = hk.hookit(tmp, "run", "--client", client, "--", exe2, check=False)
    assert r.returncode == -15
    assert "killed by a signal" in r.stderr, r.stderr
    reports = [f for f in os.listdir(tmp) if f.startswith("report.")]
    assert len(reports) == 1, reports
    text = open(os.path.join(tmp, reports[0])).read()
    assert "exited; 5 thread(s)" in text, text
    for n in range(5):
        assert f"thread {n}: cpu" in text, text


def test_monitor_h_is_complete(tmp):
    """Every function include/monitor.h declares is exported by libhookit.so
    and by libhookit.a, and a client using the whole header compiles as C
    and as C++."""
    import re
    names = [n for n in re.findall(r"\b(monitor_\w+)\(", open(os.path.join(hk.INCLUDE, "monitor.h")).read())
             if n != "monitor_sighandler_t"]
    assert len(names) > 40, names
    for lib in (hk.LIBHOOKIT, os.path.join(hk.LIB, "libhookit.a")):
        nm = subprocess.run(["nm", "--defined-only"] + (["-D"] if lib.endswith(".so") else []) + [lib],
                            capture_output=True, text=True).stdout
        defined = set(l.split()[-1] for l in nm.splitlines() if len(l.split()) == 3)
        missing = [n for n in names if n not in defined]
        assert not missing, (lib, missing)
    src = os.path.join(tmp, "all.c")
    with open(src, "w") as f:
        f.write('#include "monitor.h"\nint main(void) { return MONITOR_EXIT_NORMAL + '
                'MONITOR_EXIT_SIGNAL + MONITOR_EXIT_EXEC - 6 + (MONITOR_IGNORE_NEW_THREAD != 0) - 1; }\n')
    for cc in ("gcc", "g++"):
        out = os.path.join(tmp, "all-" + cc)
        p = subprocess.run([cc, "-x", "c" if cc == "gcc" else "c++", "-Wall", "-Werror", "-I" + hk.INCLUDE,
                            "-o", out, src], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert subprocess.run([out]).returncode == 0


def test_support_functions_linked(tmp):
    """A program linked with -lhookit (no preload) calls the support
    functions: start-function ranges, stack bottom, main, thread numbers."""
    exe = hk.cc(tmp, [os.path.join(lcscen.PROGS, "support_funcs.c")], "support_funcs",
                instrument=False, flags=["-O0", "-pthread"])
    p = hk.run(tmp, [exe])
    assert p.stdout == ("main: narrow=1 wide=1 here=0 bottom=1\naddr_main=1 num=0\n"
                        "thread: narrow=1 wide=1\n"), p.stdout


def test_bad_lifecycle_variables_one_line_each(tmp):
    """A bad HOOKIT_FOLLOW / HOOKIT_SHOOTDOWN_TIMEOUT is named on stderr in
    one line with the valid values; the program runs on unchanged."""
    exe = lcscen.compile_c(tmp, ["exit_call.c"], "exit_call")
    p = hk.run(tmp, [exe], check=False, env={"LD_PRELOAD": hk.LIBHOOKIT, "HOOKIT_FOLLOW": "maybe",
                                             "HOOKIT_SHOOTDOWN_TIMEOUT": "-5"})
    assert p.returncode == 3 and p.stdout == "leaving 3\n"
    lines = [l for l in p.stderr.splitlines() if "HOOKIT_FOLLOW" in l or "HOOKIT_SHOOTDOWN" in l]
    assert len(lines) == 2, p.stderr
    assert lines[0].startswith("hookit[") and "HOOKIT_FOLLOW=maybe" in lines[0] and "0 or 1" in lines[0]
    assert "HOOKIT_SHOOTDOWN_TIMEOUT=-5" in lines[1] and "milliseconds" in lines[1]


def test_client_linked_into_program(tmp):
    """A client linked into the program itself (gcc app.c client.c -lhookit)
    overrides libhookit's weak defaults: no preload at all."""
    exe = hk.cc(tmp, [os.path.join(lcscen.PROGS, "thr_basic.c"), lcscen.CLIENT_SRC], "thr_linked",
                instrument=False, flags=["-pthread"])
    log = os.path.join(tmp, "lc.log")
    p = hk.run(tmp, [exe], env={"HOOKIT_LC_LOG": log})
    assert p.stdout.startswith("sum=")
    events = lcscen.parse_log(log)
    assert lcscen.count(events, "^init_process argc=1 argv0=thr_linked") == 1
    assert lcscen.count(events, "^init_thread ") == 4 == lcscen.count(events, "^fini_thread")
    assert lcscen.count(events, "^fini_process how=1 data=ok") == 1
    assert not lcscen.check_order(events)
