"""Lifecycle scenarios (issue 3): each program runs natively and under
LD_PRELOAD=logclient.so:libhookit.so; exit status or death signal, stdout,
stderr and time must match the native run, and the callback log must follow
libmonitor's ordering rules plus the scenario's expectations.  One test per
scenario; tests/lifecycle/test_static.py runs the same table linked with
`hookit link`."""
import os, signal, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import lcscen  # noqa: E402

# The monitored run may take twice the native time plus 5 s: the bound
# catches a spin or a stall before the timeout does.  Under qemu-user each
# process also pays for mapping libjprof's 16 GiB arena reservation, about
# 3 s (strace) and more on a loaded machine.
QEMU_SECS_PER_PROCESS = 8.0 if hk.TARGET else 0.0

SCENARIOS = []


def sc(name, src=None, **kw):
    kw.setdefault("src", src or name + ".c")
    SCENARIOS.append(dict(name=name, **kw))


# ---- builders for scenarios that need libraries ---------------------------------
def dl_libs(tmp):
    lcscen.compile_c(tmp, ["dl_lib.c"], "libdltest.so", shared=True)
    lcscen.compile_c(tmp, ["dl_dep_lib.c"], "libdldep.so", shared=True,
                     flags=["-L" + tmp, "-ldltest", "-Wl,-rpath," + tmp])
    return {"lib": os.path.join(tmp, "libdltest.so"), "dep": os.path.join(tmp, "libdldep.so")}


def runpath_lib(tmp):
    os.makedirs(os.path.join(tmp, "sub"), exist_ok=True)
    lcscen.compile_c(tmp, ["dl_lib.c"], "sub/libdlrun.so", shared=True)
    return {}


def ctor_lib(tmp):
    lcscen.compile_c(tmp, ["ctor_lib.c"], "libctor.so", shared=True, flags=["-pthread", "-ldl"])
    return {}


CTOR_FLAGS = ["-L{tmp}", "-lctor", "-Wl,-rpath,{tmp}"]

# ---- exits ----------------------------------------------------------------------------
sc("exit_return", how=1, expect=[("^at_main", 1), ("^init_process argc=1 argv0=exit_return", 1)])
sc("exit_call", how=1, expect=[("^fini_library", 1)])
sc("exit_atexit_reenter", how=1, expect=[("^fini_process", 1)])
# fini_library once per image, also where no destructor runs (as libmonitor)
sc("exit_underscore", how=1, expect=[("^fini_library", 1)])
sc("exit_Exit", how=1, expect=[("^fini_library", 1)])
sc("exit_quick", how=1)
sc("exit_err", how=1, expect=[("^fini_process how=1", 1)])
sc("exit_error", how=1, expect=[("^fini_process how=1", 1)])
sc("deep_recursion", how=1)
# ---- death by signal --------------------------------------------------------------------
for n in ("sig_abort", "sig_assert", "sig_segv_fault", "sig_raise_segv", "sig_term_self",
          "sig_fpe", "sig_pipe", "sig_resethand", "sig_crash_handler"):
    sc(n, how=2, expect=[("^begin_process_exit how=2", 1), ("^fini_process how=2 data=ok", 1),
                         ("^fini_library", 1)])
sc("sig_term_wait", how=2, ready_signal=signal.SIGTERM)
# main gets fini_thread (with init_process's data) when another thread ends
# the process, as libmonitor gives it
sc("thr_segv_worker", how=2, cflags=["-pthread"],
   expect=[("^init_thread ", 2), ("^fini_thread num=[12] ", 2), ("^fini_thread num=main", 1)])
# ---- signal semantics ---------------------------------------------------------------------
sc("sig_restart", how=1, expect=[("^pre_fork", 2), ("data=fork", 2)])
sc("sig_onstack", how=1)
sc("sig_siginfo", how=1)
sc("sig_ign_exec", expect=[("^fini_process how=3", 1), ("^init_process", 2)])
sc("sig_chld_ign", how=1)
sc("sig_query", how=1)
sc("sig_family", how=1)
sc("sig_exit_in_handler", how=1)
sc("sig_longjmp", how=1)
sc("sig_no_eintr", how=1)
sc("sig_mask_view", how=1)
sc("sig_rt8", how=2, expect=[("^fini_process how=2", 1)])
sc("client_signal", how=1, env={"LC_CLIENT_SIG": "10"}, expect=[("^client_signal 10", 1)])
sc("client_consume", src="client_signal.c", how=1, native=False,
   env={"LC_CLIENT_SIG": "10", "LC_CLIENT_CONSUME": "1"},
   stdout="application handler ran 0 time(s)\nview: h\n", expect=[("^client_signal 10", 1)])
sc("client_segv", src="sig_segv_fault.c", how=2, env={"LC_CLIENT_SIG": "11"},
   expect=[("^client_signal 11", 1)])
# The same semantics while a client's monitor_sigaction handler stands in
# front of the application's disposition.
sc("client_onstack", src="sig_onstack.c", how=1, env={"LC_CLIENT_SIG": "11"},
   expect=[("^client_signal 11", 1)])
sc("client_siginfo", src="sig_siginfo.c", how=1, env={"LC_CLIENT_SIG": "12"},
   expect=[("^client_signal 12", 1)])
sc("client_restart", src="sig_restart.c", how=1, env={"LC_CLIENT_SIG": "14"},
   expect=[("^client_signal 14", (2, 9))])
sc("client_chld_ign", src="sig_chld_ign.c", how=1, env={"LC_CLIENT_SIG": "17"})
sc("client_ign_exec", src="sig_ign_exec.c", env={"LC_CLIENT_SIG": "10"},
   expect=[("^fini_process how=3", 1)])
sc("client_resethand", src="sig_resethand.c", how=2, env={"LC_CLIENT_SIG": "10"},
   expect=[("^client_signal 10", 2)])
sc("client_family", src="sig_family.c", how=1, env={"LC_CLIENT_SIG": "10"})
# ---- threads ---------------------------------------------------------------------------------
PT = ["-pthread"]
sc("thr_basic", how=1, cflags=PT,
   expect=[("^init_thread_support", 1), ("^init_thread num=[1-4] data=ok", 4), ("^fini_thread", 4)])
sc("thr_exit_from_worker", how=1, cflags=PT,
   expect=[("^init_thread ", 3), ("^fini_thread num=[0-9]", 3), ("^fini_thread num=main", 1)])
sc("thr_many_exit", how=1, cflags=PT,
   expect=[("^init_thread ", 8), ("^fini_thread num=[0-9]", 8), ("^fini_thread num=main", 1)])
sc("thr_1000", how=1, cflags=PT, expect=[("^init_thread ", 1000), ("^fini_thread", 1000)])
sc("thr_cancel", how=1, cflags=PT, expect=[("^fini_thread num=1", 1)])
# cancelled before they ran: init_thread and fini_thread all the same, and
# no exit shoot-down waiting for threads that are gone
sc("thr_cancel_early", how=1, cflags=PT,
   expect=[("^init_thread num=[0-9]+ data=ok", 200), ("^fini_thread num=[0-9]+ ", 200)])
sc("thr_pthread_exit", how=1, cflags=PT, expect=[("^fini_thread num=1", 1)])
sc("thr_main_pthread_exit", how=1, cflags=PT,
   expect=[("^fini_thread num=[12] ", 2), ("^fini_thread num=main", 1)])
sc("thr_block_all", how=1, cflags=PT, expect=[("^fini_thread num=1", 1)])
sc("thr_unreachable", how=1, cflags=PT, unfinished=1, env={"HOOKIT_SHOOTDOWN_TIMEOUT": "300"},
   stderr_has="did not run fini_thread within 300 ms", expect=[("^fini_thread", 0)])
sc("thr_sigwait", how=1, cflags=PT, expect=[("^fini_thread num=1", 1)])
sc("thr_ignored", src="thr_basic.c", how=1, cflags=PT, env={"LC_IGNORE_THREADS": "1"},
   expect=[("^init_thread ", 0), ("^fini_thread", 0)])
# ---- fork and friends --------------------------------------------------------------------------
FORKED = [("^pre_fork", 1), ("^post_fork child=pid data=ok", 1),
          ("^init_process .*data=fork", 1), ("^fini_process", 2)]
sc("fork_basic", how=1, expect=FORKED)
sc("fork_threaded", how=1, cflags=PT, expect=FORKED)
sc("fork_in_handler", how=1, expect=FORKED)
sc("fork_vfork_exec", how=1, expect=[("^pre_fork", 1), ("^fini_process how=3", 1),
                                     ("^init_process argc=2 argv0=echo", 1)])
sc("fork_system", how=1, expect=[("^init_process argc=3 argv0=sh", 1), ("^pre_fork", 1),
                                 ("^post_fork child=pid data=ok", 1)])
sc("fork_popen", how=1, expect=[("^init_process argc=3 argv0=sh", 1)])
sc("fork_spawn", how=1, expect=[("^init_process argc=2 argv0=fork_spawn", 2)])
sc("fork_spawn_nofollow", src="fork_spawn.c", how=1, env={"HOOKIT_FOLLOW": "0"},
   expect=[("^init_process", 1)])
sc("fork_raw", how=1, expect=[("^pre_fork", 0), ("^init_process", 2), ("^fini_process how=1", 2)])
sc("fork_daemon", how=1, expect=[("^pre_fork", 1), ("^fini_process how=1", 2)])
# ---- exec ----------------------------------------------------------------------------------------
sc("exec_echo", expect=[("^fini_process how=3", 1), ("^init_process argc=2 argv0=echo", 1),
                        ("^fini_library", 2)])     # one per image
# a worker thread execs: it and main get fini_thread, then fini_process(exec)
sc("thr_exec", cflags=["-pthread"], expect=[("^fini_thread num=1 ", 1), ("^fini_thread num=main", 1),
                                            ("^fini_process how=3", 1), ("^fini_library", 2),
                                            ("^init_process argc=2 argv0=echo", 1)])
sc("exec_self", expect=[("^init_process argc=1 argv0=exec_self", 1),
                        ("^init_process argc=2 argv0=exec_self", 1),
                        ("^fini_process how=3", 1), ("^fini_process how=1", 1)])
# only the bad interpreter gets past libmonitor's check that the file is
# executable: the image ends and resumes once; the others end nothing
sc("exec_fail", how=1, expect=[("^fini_process how=3", 1), ("^init_process", 2)])
sc("exec_nopath", expect=[("^fini_process how=3", 1), ("^init_process argc=2 argv0=echo", 1)])
sc("exec_env", expect=[("^init_process", 4), ("^fini_process how=3", 3)])
sc("exec_env_nofollow", src="exec_env.c", env={"HOOKIT_FOLLOW": "0"},
   expect=[("^init_process", 1), ("^fini_process how=3", 1)])
# ---- dlopen ---------------------------------------------------------------------------------------
DL = ["-ldl"]
sc("dl_basic", how=1, cflags=DL, prep=dl_libs, args=["{lib}"],
   expect=[("^pre_dlopen libdltest.so", 1), ("^dlopen libdltest.so", 1),
           ("^pre_dlopen libdoes-not-exist.so", 1), ("^dlopen libdoes-not-exist.so handle=null", 1),
           ("^post_dlclose ret=0", 1)])
sc("dl_deps", how=1, cflags=DL, prep=dl_libs, args=["{dep}"], expect=[("^dlopen libdldep.so", 1)])
sc("dl_reopen", how=1, cflags=DL, prep=dl_libs, args=["{lib}", "{dep}"],
   expect=[("^dlopen ", 2), ("^post_dlclose ret=0", 2)])
sc("dl_concurrent", how=1, cflags=DL + PT, prep=dl_libs, args=["{lib}"],
   expect=[("^dlopen libdltest.so", 400), ("^post_dlclose", 400)])
sc("dl_runpath", how=1, cflags=DL + ["-Wl,--enable-new-dtags,-rpath,$ORIGIN/sub"],
   prep=runpath_lib, expect=[("^dlopen libdlrun.so", 1)])
# ---- MPI (a stand-in MPI library built here) -----------------------------------------------------
def fake_mpi(tmp):
    lcscen.compile_c(tmp, ["fakempi.c"], "libfakempi.so", shared=True)
    return {}


MPI_FLAGS = ["-L{tmp}", "-lfakempi", "-Wl,-rpath,{tmp}"]
MPI_EVENTS = [("^mpi_pre_init", 1), ("^init_mpi rank=-1", 1), ("^fini_mpi rank=3 size=8", 1),
              ("^mpi_post_fini", 1)]
MPI_ENV = {"FAKE_RANK": "3", "FAKE_SIZE": "8"}
sc("mpi_c", how=1, prep=fake_mpi, cflags=MPI_FLAGS, env=MPI_ENV, expect=MPI_EVENTS)
sc("mpi_c_thread", src="mpi_c.c", args=["thread"], how=1, prep=fake_mpi, cflags=MPI_FLAGS,
   env=MPI_ENV, expect=MPI_EVENTS)
sc("mpi_fortran", how=1, prep=fake_mpi, cflags=MPI_FLAGS, env=MPI_ENV, expect=MPI_EVENTS)
# ---- a library constructor acts before main --------------------------------------------------------
sc("ctor_thread", src="ctor_main.c", how=1, prep=ctor_lib, cflags=CTOR_FLAGS,
   env={"CTOR_DO": "thread"}, expect=[("^init_thread ", 1), ("^fini_thread", 1), ("^at_main", 1)])
sc("ctor_fork", src="ctor_main.c", how=1, prep=ctor_lib, cflags=CTOR_FLAGS,
   env={"CTOR_DO": "fork"}, expect=FORKED)
sc("ctor_dlopen", src="ctor_main.c", how=1, prep=ctor_lib, cflags=CTOR_FLAGS,
   env={"CTOR_DO": "dlopen"}, expect=[("^dlopen libm.so.6", 1)])
sc("ctor_exit", src="ctor_main.c", how=1, prep=ctor_lib, cflags=CTOR_FLAGS,
   env={"CTOR_DO": "exit"}, expect=[("^at_main", 0), ("^fini_process how=1", 1)])


def build(tmp, s, variant="dynamic"):
    subst = {"tmp": tmp}
    if s.get("prep"):
        subst.update(s["prep"](tmp))
    flags = [f.format(**subst) for f in s.get("cflags", [])]
    exe = s["src"][:-2]
    if variant == "dynamic":
        path = lcscen.compile_c(tmp, [s["src"]], exe, flags=flags)
    else:
        path = variant(tmp, s, exe, flags)
    args = [a.format(**subst) for a in s.get("args", [])]
    return path, args


def check_scenario(tmp, s, path, args, monitored_env, variant_name="dynamic", native_path=None):
    base = hk.test_env(HOOKIT_OUTPUT=tmp, **s.get("env", {}))
    timeout = s.get("timeout", 30)
    argv = [path] + args
    log = os.path.join(tmp, "lc.log")
    # a sanitizer runtime (make check SANITIZE=...) stays first in LD_PRELOAD
    mon_env = hk.sanitizer_env(dict(base, HOOKIT_LC_LOG=log, **monitored_env))
    mon = lcscen.execute(tmp, argv, mon_env, timeout, s.get("ready_signal"))
    ctx = f"[{variant_name} {s['name']}]"
    if s.get("native", True):
        nat = lcscen.execute(tmp, argv, base, timeout, s.get("ready_signal"),
                             executable=native_path)
        assert mon.rc == nat.rc, f"{ctx} status {mon.rc} != native {nat.rc}\n{mon.err}"
        assert mon.out == nat.out, f"{ctx} stdout differs:\n--- native\n{nat.out}--- monitored\n{mon.out}"
        assert lcscen.strip_diag(mon.err) == lcscen.strip_diag(nat.err), \
            f"{ctx} stderr differs:\n--- native\n{nat.err}--- monitored\n{mon.err}"
    else:
        assert mon.out == s["stdout"], f"{ctx} stdout:\n{mon.out}"
    if s.get("stderr_has"):
        assert s["stderr_has"] in mon.err, f"{ctx} stderr lacks {s['stderr_has']!r}:\n{mon.err}"
    events = lcscen.parse_log(log)
    text = "\n".join(e[3] for e in events)
    assert events, f"{ctx} no callbacks logged\n{mon.err}"
    if s.get("native", True):
        processes = len({e[0] for e in events})
        bound = nat.secs * 2 + 5.0 + QEMU_SECS_PER_PROCESS * processes
        assert mon.secs < bound, f"{ctx} took {mon.secs:.1f}s, native {nat.secs:.1f}s, {processes} processes"
    problems = lcscen.check_order(events, s.get("unfinished", 0))
    assert not problems, f"{ctx} ordering: {problems}\n{text}"
    if s.get("how") is not None:
        assert lcscen.final_how(events) == s["how"], f"{ctx} final how != {s['how']}\n{text}"
    for pat, want in s.get(variant_name + "_expect", s.get("expect", [])):
        n = lcscen.count(events, pat)
        ok = want[0] <= n <= want[1] if isinstance(want, tuple) else n == want
        assert ok, f"{ctx} {pat!r}: {n} lines, want {want}\n{text[:3000]}"
    return events


def make_test(s):
    def test(tmp):
        client = lcscen.build_client(tmp)
        path, args = build(tmp, s)
        check_scenario(tmp, s, path, args, {"LD_PRELOAD": f"{client}:{hk.LIBHOOKIT}"})
    test.__name__ = "test_" + s["name"]
    return test


for _s in SCENARIOS:
    globals()["test_" + _s["name"]] = make_test(_s)


def test_enough_scenarios(tmp):
    assert len(SCENARIOS) >= 40, len(SCENARIOS)
