"""The lifecycle scenarios again, built with `hookit link` (ld --wrap and
libhookit.a): fully static programs (-static), and dynamic programs linked
with the wrappers.  The logging client is linked in together with an
internal lifecycle client (lifecycle_register), whose events must come
before (init) and after (fini) the user's monitor callbacks.  The native
run is the same program built without hookit (dynamically linked)."""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import lcscen  # noqa: E402
import test_scenarios as ts  # noqa: E402

# Scenarios whose expectations involve a program not linked with hookit
# (echo, sh): in a static build nothing is preloaded into those.
NOT_FOLLOWED = {
    "fork_vfork_exec": [("^pre_fork", 1), ("^fini_process how=3", 1)],
    "fork_system": [], "fork_popen": [],
    "exec_echo": [("^fini_process how=3", 1), ("^fini_library", 1)],
    "thr_exec": [("^fini_thread num=1 ", 1), ("^fini_thread num=main", 1), ("^fini_process how=3", 1),
                 ("^fini_library", 1)],
    "exec_nopath": [("^fini_process how=3", 1)],
    "fork_spawn": [("^init_process argc=2 argv0=fork_spawn", 1)],
}
# Needs shared libraries of the test's own: only the dynamic hookit-link variant.
SHARED_ONLY = ("dl_", "mpi_")
SKIP = ("ctor_",)       # a shared library's own calls are not wrapped by hookit link


def link(tmp, s, exe, flags, static):
    out = os.path.join(tmp, exe)
    extra = ["-static"] if static else []
    cmd = [hk.BIN, "link", "-p", "none", "--", "gcc", "-g", "-O1", "-DLC_WITH_INTERNAL", "-I" + hk.INCLUDE,
           "-I" + hk.ROOT] + extra + ["-o", out, os.path.join(lcscen.PROGS, s["src"]),
                                      lcscen.CLIENT_SRC] + list(flags) + ["-pthread"]
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
    assert p.returncode == 0, f"hookit link failed: {' '.join(cmd)}\n{p.stderr}"
    assert "undefined reference" not in p.stderr, p.stderr
    # The native run: the same program linked the ordinary (dynamic) way,
    # which behaves the same and costs one static link less.
    native = lcscen.compile_c(tmp, [s["src"]], exe + ".native", flags=list(flags) + ["-pthread"])
    return out, native


def make_test(s, static):
    variant = "static" if static else "wrap"

    def test(tmp):
        subst = {"tmp": tmp}
        if s.get("prep"):
            subst.update(s["prep"](tmp))
        flags = [f.format(**subst) for f in s.get("cflags", [])]
        args = [a.format(**subst) for a in s.get("args", [])]
        path, native = link(tmp, s, s["src"][:-2], flags, static)
        sc = dict(s)
        if s["name"] in NOT_FOLLOWED:
            sc[variant + "_expect"] = NOT_FOLLOWED[s["name"]]
        events = ts.check_scenario(tmp, sc, path, args, {}, variant, native_path=native)
        problems = lcscen.check_internal_order(events)
        assert not problems, f"[{variant} {s['name']}] internal client order: {problems}"
    test.__name__ = f"test_{variant}_{s['name']}"
    return test


for _s in ts.SCENARIOS:
    if _s["name"].startswith(SKIP):
        continue
    shared = _s["name"].startswith(SHARED_ONLY)
    if not shared:
        globals()[f"test_static_{_s['name']}"] = make_test(_s, True)
    if shared or _s["name"] in ("exit_return", "thr_basic", "fork_basic", "sig_segv_fault",
                                "exec_self", "thr_exit_from_worker", "client_signal"):
        globals()[f"test_wrap_{_s['name']}"] = make_test(_s, False)
