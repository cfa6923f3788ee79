"""Shared by the report tests: the fixed profiles (tests/reports/mkfixed.c,
built against the build's libprofile.a) and golden-file comparison.

HOOKIT_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing."""
import difflib, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")


def fixed_profiles(tmp):
    """Write a.prof and b.prof into tmp; returns their paths."""
    exe = os.path.join(tmp, "mkfixed")
    cmd = ["gcc", "-std=gnu11", "-O1", "-I" + hk.ROOT, os.path.join(HERE, "mkfixed.c"),
           os.path.join(hk.BUILD, "obj", "libprofile.a"), "-lz", "-o", exe] + hk.SANITIZE_FLAGS
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = []
    for which in ("a", "b"):
        path = os.path.join(tmp, which + ".prof")
        hk.run(tmp, [exe, which, path])
        out.append(path)
    return out


def check_golden(name, text):
    path = os.path.join(GOLDEN, name)
    if os.environ.get("HOOKIT_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
        return
    with open(path) as f:
        want = f.read()
    if text != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                            "golden/" + name, "output"))
        raise AssertionError(f"output differs from golden/{name} "
                             f"(HOOKIT_UPDATE_GOLDEN=1 to accept):\n{diff}")
