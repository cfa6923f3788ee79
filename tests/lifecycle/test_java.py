"""A Java VM under the lifecycle layer (LD_PRELOAD=logclient.so:libhookit.so):
java -version, System.exit(3), NullPointerExceptions caught in Java (the
VM's own SIGSEGV handler must keep working), and SIGTERM giving 143 through
the VM's shutdown hooks.  Each is compared with a native run."""
import os, shutil, signal, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import lcscen  # noqa: E402

JAVA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "java")


def java_case(tmp, argv, ready_signal=None, expect_rc=None, threads=True, main_fini=0):
    if not (hk.have("java") and hk.have("javac")):
        hk.skip("no java/javac")
    if argv[0].endswith(".java"):
        src = os.path.join(JAVA_DIR, argv[0])
        p = subprocess.run(["javac", "-d", tmp, src], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        argv = ["java", "-Xshare:auto", "-cp", tmp, argv[0][:-5]] + argv[1:]
    else:
        argv = ["java"] + argv
    client = lcscen.build_client(tmp)
    base = hk.test_env(HOOKIT_OUTPUT=tmp)
    log = os.path.join(tmp, "lc.log")
    nat = lcscen.execute(tmp, argv, base, 60, ready_signal)
    mon = lcscen.execute(tmp, argv, dict(base, HOOKIT_LC_LOG=log,
                                          LD_PRELOAD=f"{client}:{hk.LIBHOOKIT}"), 60, ready_signal)
    assert mon.rc == nat.rc, f"status {mon.rc} != native {nat.rc}\n{mon.err}"
    if expect_rc is not None:
        assert nat.rc == expect_rc, (nat.rc, nat.err)
    assert mon.out == nat.out, f"stdout:\n{nat.out}---\n{mon.out}"
    assert lcscen.strip_diag(mon.err) == lcscen.strip_diag(nat.err), f"stderr:\n{nat.err}---\n{mon.err}"
    events = lcscen.parse_log(log)
    text = "\n".join(e[3] for e in events)
    problems = lcscen.check_order(events)
    assert not problems, f"{problems}\n{text}"
    assert lcscen.count(events, "^init_process argc=\\d+ argv0=java") == 1, text
    assert lcscen.count(events, "^fini_process how=1") == 1, text
    assert lcscen.count(events, "^dlopen libjvm.so") == 1, text
    if threads:
        n = lcscen.count(events, "^init_thread ")
        assert n >= 5 and lcscen.count(events, "^fini_thread num=[0-9]") == n, text
        # when a JVM thread ends the process while the launcher's main
        # thread waits, main gets its fini_thread too (as libmonitor gives it)
        assert lcscen.count(events, "^fini_thread num=main") == main_fini, text
    return nat, events


def test_java_version(tmp):
    nat, _ = java_case(tmp, ["-version"], expect_rc=0)
    assert "version" in nat.err


def test_java_system_exit_3(tmp):
    nat, _ = java_case(tmp, ["Exit3.java"], expect_rc=3, main_fini=1)
    assert nat.out == "exiting with 3\n"


def test_java_npe_caught(tmp):
    nat, _ = java_case(tmp, ["Npe.java"], expect_rc=0)
    assert nat.out == "caught 10000 NullPointerExceptions\n"


def test_java_sigterm_143(tmp):
    nat, _ = java_case(tmp, ["Term.java"], ready_signal=signal.SIGTERM, expect_rc=143, main_fini=1)
    assert nat.out == "ready\nshutdown hook ran\n"
