"""Security: file modes under the user's umask, the per-user runtime
directory, set-user-ID programs (hookit run says LD_PRELOAD is ignored; a
linked setuid program neither loads a profiler nor writes into a directory
named by the environment that the real user does not own), and environment
values that try to be format strings or huge sizes.
"""
import os, stat, subprocess

import hk

PROG = os.path.join(hk.ROOT, "tests", "reliability", "progs", "fault_app.c")
EXPECT = "fault_app 285\n"
NOBODY = 65534


def app(tmp, link_hookit=True):
    return hk.cc(tmp, [PROG], "fault_app", libs=["-lpthread"], link_hookit=link_hookit)


def run_with_umask(tmp, mask, env=None):
    e = hk.test_env(**{"HOOKIT_OUTPUT": tmp, **(env or {})})
    p = subprocess.run([os.path.join(tmp, "fault_app")], cwd=tmp, env=e, capture_output=True,
                       text=True, timeout=60, preexec_fn=lambda: os.umask(mask))
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stderr)
    return p


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_profile_mode_follows_umask(tmp):
    app(tmp)
    for mask, want in ((0o077, 0o600), (0o022, 0o644), (0o027, 0o640)):
        for p in hk.profiles(tmp):
            os.unlink(p)
        run_with_umask(tmp, mask)
        got = mode_of(hk.one_profile(tmp, "fault_app"))
        assert got == want, f"umask {mask:03o}: mode {got:03o}, expected {want:03o}"


def test_never_world_writable_even_under_umask_0(tmp):
    app(tmp)
    for plugin, pattern in (("libjprof.so", "hookit.fault_app.*.prof"),
                            ("libhktrace.so", "hookit.fault_app.*.trace")):
        run_with_umask(tmp, 0, env={"HOOKIT_PROFILER": plugin})
        import glob
        files = glob.glob(os.path.join(tmp, pattern))
        assert files, (plugin, os.listdir(tmp))
        for f in files:
            assert not mode_of(f) & 0o002, f"{f} is world-writable: {mode_of(f):03o}"


def test_runtime_dir_private(tmp):
    """The live-view registry (/dev/shm/hookit-UID or HOOKIT_RUNTIME_DIR) and
    its arena files: owned by the user, mode 0700 / no access for others;
    a directory open to others, or a symlink, is refused (the program runs
    on)."""
    app(tmp)
    rt = os.path.join(tmp, "rt")
    run_with_umask(tmp, 0, env={"HOOKIT_RUNTIME_DIR": rt})
    if os.path.isdir(rt):
        st = os.lstat(rt)
        assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0, \
            f"{rt}: mode {stat.S_IMODE(st.st_mode):03o}"
        for f in os.listdir(rt):
            assert mode_of(os.path.join(rt, f)) & 0o077 == 0, (f, oct(mode_of(os.path.join(rt, f))))
    open_dir = os.path.join(tmp, "open")
    os.makedirs(open_dir)
    os.chmod(open_dir, 0o777)
    p = run_with_umask(tmp, 0o022, env={"HOOKIT_RUNTIME_DIR": open_dir})
    assert os.listdir(open_dir) == [], os.listdir(open_dir)
    assert any("refused" in l for l in hk.hookit_lines(p.stderr)), p.stderr
    link = os.path.join(tmp, "link")
    os.symlink(rt if os.path.isdir(rt) else open_dir, link)
    p = run_with_umask(tmp, 0o022, env={"HOOKIT_RUNTIME_DIR": link})
    assert any("symbolic link" in l for l in hk.hookit_lines(p.stderr)), p.stderr


def need_setuid_setup(tmp):
    if os.getuid() != 0 or not hk.have("setpriv"):
        hk.skip("needs root and setpriv (a setuid program run by another user)")
    os.chmod(tmp, 0o755)


def test_hookit_run_setuid_says_preload_is_ignored(tmp):
    """Run by nobody, the loader ignores LD_PRELOAD for a setuid-root
    program: hookit run says so, the program runs as usual, no profile."""
    need_setuid_setup(tmp)
    exe = app(tmp, link_hookit=False)
    os.chmod(exe, 0o4755)
    out = os.path.join(tmp, "out")
    os.makedirs(out)
    os.chown(out, NOBODY, NOBODY)
    p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        hk.BIN, "run", "-o", out, "--", exe], cwd=out, env=hk.test_env(),
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stderr)
    assert "LD_PRELOAD" in p.stderr and "set-user-ID" in p.stderr, p.stderr
    assert os.listdir(out) == [], os.listdir(out)


def test_hookit_run_setgid_says_preload_is_ignored(tmp):
    need_setuid_setup(tmp)
    exe = app(tmp, link_hookit=False)
    os.chmod(exe, 0o2755)
    p = hk.hookit(tmp, "run", "--", exe, check=False)
    assert p.returncode == 3, p.stderr
    assert "LD_PRELOAD" in p.stderr and "set-group-ID" in p.stderr, p.stderr


@hk.not_under("address", "thread", why="a setuid program ignores LD_PRELOAD, so the sanitizer "
              "runtime libhookit needs is not loaded first")
def test_linked_setuid_program_ignores_env_profiler_and_foreign_output(tmp):
    """A setuid-root program linked with libhookit, run by nobody: a
    HOOKIT_PROFILER path would run code as root; a root-owned HOOKIT_OUTPUT
    is not the real user's to write into."""
    need_setuid_setup(tmp)
    exe = app(tmp)
    os.chmod(exe, 0o4755)
    marker = os.path.join(tmp, "EVIL_RAN")
    evil_src = os.path.join(tmp, "evil.c")
    with open(evil_src, "w") as f:
        f.write('#include <fcntl.h>\n#include <unistd.h>\n'
                '__attribute__((constructor)) static void evil(void)\n'
                '{ int fd = open("%s", O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }\n'
                % marker)
    evil = hk.cc(tmp, [evil_src], "evil.so", link_hookit=False, instrument=False, shared=True)
    rootdir = os.path.join(tmp, "rootdir")
    os.makedirs(rootdir, mode=0o755)
    e = hk.test_env(HOOKIT_PROFILER=evil, HOOKIT_OUTPUT=rootdir)
    p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", exe],
                       cwd=tmp, env=e, capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stderr)
    assert not os.path.exists(marker), "the setuid program loaded HOOKIT_PROFILER's library"
    assert os.listdir(rootdir) == [], "the setuid program wrote into a directory nobody does not own"
    lines = hk.hookit_lines(p.stderr)
    assert any("HOOKIT_PROFILER" in l and "ignored" in l for l in lines), p.stderr
    assert any("HOOKIT_OUTPUT" in l and "ignored" in l for l in lines), p.stderr
    # a directory the real user owns is used
    mine = os.path.join(tmp, "mine")
    os.makedirs(mine)
    os.chown(mine, NOBODY, NOBODY)
    e = hk.test_env(HOOKIT_OUTPUT=mine)
    p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", exe],
                       cwd=tmp, env=e, capture_output=True, text=True, timeout=60)
    assert p.returncode == 3 and not hk.hookit_lines(p.stderr), p.stderr
    assert hk.profiles(mine), os.listdir(mine)


FORMATS = "%s%s%s%n%n%x%p%999999999d%%"


def test_env_values_are_never_format_strings(tmp):
    """printf directives in every variable hookit reads come back literally
    (or the program would crash on %n); the program is unaffected."""
    app(tmp)
    cases = {
        # under a file, so the directory cannot be made and is reported
        "HOOKIT_OUTPUT": os.path.join(tmp, "fault_app", FORMATS),
        "HOOKIT_PROFILER": FORMATS,
        "HOOKIT_PROFILING": FORMATS,
        "HOOKIT_DEBUG": FORMATS,
        "HOOKIT_FOLLOW": FORMATS,
        "HOOKIT_SHOOTDOWN_TIMEOUT": FORMATS,
        "JPROFOPTS": FORMATS + "," + "clock=" + FORMATS,
        "HKTRACEOPTS": "depth=" + FORMATS,
    }
    for var, value in cases.items():
        env = {var: value}
        if var == "HKTRACEOPTS":
            env["HOOKIT_PROFILER"] = "libhktrace.so"
        p = run_with_umask(tmp, 0o022, env=env)
        lines = hk.hookit_lines(p.stderr)
        assert lines, f"{var}: no diagnostic for {value!r}"
        assert any("%s%s%s%n" in l or "%s%s%s%n"[:4] in l for l in lines), (var, lines)


def test_huge_env_values_are_bounded(tmp):
    """120 KB in each variable: the program runs as usual, every
    diagnostic stays one line of bounded length."""
    app(tmp)
    huge = "x" * 120000              # near the kernel's limit for one string (128 KiB)
    for var in ("HOOKIT_OUTPUT", "HOOKIT_PROFILER", "HOOKIT_PROFILING", "HOOKIT_SHOOTDOWN_TIMEOUT",
                "JPROFOPTS"):
        p = run_with_umask(tmp, 0o022, env={var: huge})
        for line in p.stderr.splitlines():
            assert line.startswith("hookit["), (var, line[:200])
            assert len(line) < 1100, (var, len(line))
