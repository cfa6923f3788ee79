"""make install: the layout of the design, a program built with pkg-config
against the installed tree, profiled by the installed plugin and read by the
installed hookit (so an installation works wherever it is put)."""
import os
import subprocess

import hk


def install(tmp):
    prefix = os.path.join(tmp, "prefix")
    p = subprocess.run(["make", "-s", "install", f"B={hk.BUILD}", f"PREFIX={prefix}", "DESTDIR="],
                       cwd=hk.ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return prefix


def test_install_layout(tmp):
    prefix = install(tmp)
    for rel in ["bin/hookit", "lib/libhookit.so", "lib/libhookit.a", "lib/liba2n.a",
                "lib/hookit/libjprof.so", "lib/hookit/libjprof.a", "lib/hookit/libhktrace.so",
                "include/hookit/hookit.h", "include/hookit/profiler.h", "include/hookit/a2n.h",
                "include/monitor.h", "lib/pkgconfig/hookit.pc", "share/man/man1/hookit.1",
                "share/doc/hookit/README.md", "share/doc/hookit/docs/json-schema.md",
                "share/doc/hookit/docs/reports.md", "share/bash-completion/completions/hookit"]:
        assert os.path.exists(os.path.join(prefix, rel)), rel
    assert os.access(os.path.join(prefix, "bin/hookit"), os.X_OK)


def test_pkg_config_build_and_profile(tmp):
    if not hk.have("pkg-config"):
        hk.skip("pkg-config is not installed (make deps installs it)")
    prefix = install(tmp)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hookit"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    assert "-finstrument-functions" in flags and "-lhookit" in flags, flags
    exe = os.path.join(tmp, "calls")
    subprocess.run(["gcc", "-g", "-O1", "-o", exe, os.path.join(hk.PROGS, "calls.c")] + flags,
                   check=True, cwd=tmp)
    out = os.path.join(tmp, "out")
    os.mkdir(out)
    p = hk.run(tmp, [exe], env={"HOOKIT_OUTPUT": out}, check=False)
    assert p.stderr == "", p.stderr
    prof = hk.one_profile(out, "calls")
    rep = subprocess.run([os.path.join(prefix, "bin/hookit"), "report", prof],
                         capture_output=True, text=True)
    assert rep.returncode == 0 and "F:calls.main()" in rep.stdout, rep.stdout + rep.stderr
    # The installed libhookit found its plugin next to itself, not in the build tree.
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
    assert os.path.join(prefix, "lib/libhookit.so") in ldd, ldd


def test_installed_docs_are_the_ones_the_man_page_names(tmp):
    """Every docs/X.md the man page points to is installed."""
    prefix = install(tmp)
    man = open(os.path.join(prefix, "share/man/man1/hookit.1")).read()
    import re
    named = set(re.findall(r"docs/([a-z0-9-]+\.md)", man))
    assert named, "the man page names no document"
    for doc in named:
        assert os.path.exists(os.path.join(prefix, "share/doc/hookit/docs", doc)), doc
