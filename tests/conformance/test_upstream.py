"""tests/lib/upstream.py's Debian source fetch with a relative cache folder:
apt-get runs in the cache, so every path it is given must be absolute.  A
stand-in apt-get (first on PATH, in a child Python so the suite's own PATH
is not touched) fails, as the real one does, when a file it is told about
is not there, and otherwise writes a small orig tarball."""
import os, subprocess, sys

import hk

FAKE_APT = r'''#!/usr/bin/env python3
import io, os, sys, tarfile
opts = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a and a.startswith("Dir::"))
for key in ("Dir::Etc::SourceList", "Dir::State::Lists", "Dir::Cache"):
    if not os.path.exists(opts[key]):
        sys.exit(f"E: {key} {opts[key]} does not exist (cwd {os.getcwd()})")
if "update" in sys.argv:
    open(os.path.join(opts["Dir::State::Lists"], "deb_Sources"), "w").close()
elif "source" in sys.argv:
    with tarfile.open("demo_1.0.orig.tar.gz", "w:gz") as tar:
        data = b"hello\n"
        info = tarfile.TarInfo("demo-1.0/README")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
'''

CHILD = r'''
import os, sys
sys.path.insert(0, sys.argv[1])
import upstream
top = upstream.unpack("demo", "demo", "cache")
assert os.path.isabs(top), top
print(open(os.path.join(top, "README")).read().strip())
'''


def test_unpack_with_a_relative_cache(tmp):
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    apt = os.path.join(bindir, "apt-get")
    with open(apt, "w") as f:
        f.write(FAKE_APT)
    os.chmod(apt, 0o755)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    lib = os.path.join(hk.ROOT, "tests", "lib")
    p = subprocess.run([sys.executable, "-c", CHILD, lib], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "hello", (p.stdout, p.stderr)
    assert os.path.exists(os.path.join(tmp, "cache", "demo", "README"))
