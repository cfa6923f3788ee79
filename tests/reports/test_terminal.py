"""hookit report on a terminal: colour only on a tty (NO_COLOR, --no-color,
--color), and a pager like git's ($HOOKIT_PAGER, $PAGER, less -FRX,
--no-pager).  A pseudo-terminal comes from util-linux's script(1)."""
import os, shlex, stat, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixed  # noqa: E402
import hk  # noqa: E402

ESC = "\x1b["


def on_tty(tmp, argv, env):
    if not hk.have("script"):
        hk.skip("script (util-linux) not installed: no pseudo-terminal")
    cmd = " ".join(shlex.quote(a) for a in argv)
    e = {k: None for k in ("PAGER", "HOOKIT_PAGER", "NO_COLOR", "LESS")}
    e.update(env)
    p = hk.run(tmp, ["script", "-qec", cmd, "/dev/null"], env=e)
    return p.stdout.replace("\r\n", "\n")


def test_colour_and_pager_on_a_terminal(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    pager = {"PAGER": "sed s/^/PAGED:/"}
    out = on_tty(tmp, [hk.BIN, "report", a], pager)
    lines = [l for l in out.splitlines() if l]
    assert lines and all(l.startswith("PAGED:") for l in lines), out[:500]
    assert ESC in out, "no colour on a terminal"
    # the hot path is red: main has 100% of thread 0
    assert any(ESC + "31m" in l and "F:app.main()" in l for l in lines), out[:800]
    out = on_tty(tmp, [hk.BIN, "report", "--no-pager", a], pager)
    assert "PAGED:" not in out and ESC in out
    out = on_tty(tmp, [hk.BIN, "report", a], dict(pager, NO_COLOR="1"))
    assert "PAGED:" in out and ESC not in out
    out = on_tty(tmp, [hk.BIN, "report", "--no-color", "--flat", a], pager)
    assert ESC not in out and "PAGED:" in out
    out = on_tty(tmp, [hk.BIN, "report", a], {"HOOKIT_PAGER": "sed s/^/HK:/", "PAGER": "false"})
    assert out.startswith("HK:"), out[:200]
    out = on_tty(tmp, [hk.BIN, "report", a], {"PAGER": ""})
    assert out.startswith(ESC + "1m== pid"), out[:200]


def test_default_pager_is_less_frx(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    fake = os.path.join(bindir, "less")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\necho "fake less args=$* LESS=$LESS"\ncat\n')
    os.chmod(fake, stat.S_IRWXU)
    out = on_tty(tmp, [hk.BIN, "report", a], {"PATH": bindir + ":" + os.environ["PATH"]})
    assert out.startswith("fake less args=-FRX LESS=FRX"), out[:200]


def test_no_colour_or_pager_in_a_pipe(tmp):
    a, _ = fixed.fixed_profiles(tmp)
    p = hk.hookit(tmp, "report", a, env={"PAGER": "sed s/^/PAGED:/"})
    assert ESC not in p.stdout and "PAGED:" not in p.stdout
    p = hk.hookit(tmp, "report", "--color", a)
    assert ESC + "1m" in p.stdout
