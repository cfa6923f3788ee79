"""Real third-party sources, fetched at run time into a cache directory of the
build (never committed).  The one home of these downloads: the conformance
corpus (tests/conformance/thirdparty.py) and `make bench` (bench/benchlib)
both fetch through here.

  fetch_sqlite(cache)   the SQLite amalgamation from the npm package
                        better-sqlite3 (`npm pack`); returns the directory
                        holding sqlite3.c and sqlite3.h
  fetch_speedscope(cache)
                        speedscope's built web app from the npm package
                        speedscope (`npm pack`); returns the directory
                        holding its index.html
  unpack(package, top, cache)
                        the upstream tarball of a Debian source package
                        (`apt-get source --download-only` with a private
                        sources list and state directory: the system's apt
                        configuration is not touched), unpacked as cache/top

cache may be relative (to the current directory); the paths returned are
absolute.  A fetch that cannot be done raises FetchFailed with the reason.  Callers
that run concurrently hold LOCK around a fetch.
"""
import glob
import os
import shutil
import subprocess
import tarfile
import threading

SQLITE_PACKAGE = os.environ.get("BENCH_SQLITE_PACKAGE") or "better-sqlite3@12"
# Pinned: the tests read the DOM speedscope builds (its sandwich table).
SPEEDSCOPE_PACKAGE = os.environ.get("HOOKIT_SPEEDSCOPE_PACKAGE") or "speedscope@1.25.0"
LOCK = threading.Lock()


class FetchFailed(Exception):
    pass


def _run(cmd, cwd, what):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise FetchFailed(f"{what}: {' '.join(cmd[:3])}... failed: "
                          f"{(p.stderr or p.stdout).strip()[-300:]}")
    return p


def _write_atomically(path, data):
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.rename(path + ".tmp", path)


def fetch_sqlite(cache):
    d = os.path.join(os.path.abspath(cache), "sqlite")
    src = os.path.join(d, "sqlite3")
    if os.path.exists(os.path.join(src, "sqlite3.c")):
        return src
    os.makedirs(src, exist_ok=True)
    with tarfile.open(_npm_pack(SQLITE_PACKAGE, d, "sqlite")) as tar:
        for name in ("sqlite3.h", "sqlite3.c"):     # only these two, by their known names
            _write_atomically(os.path.join(src, name),
                              tar.extractfile(f"package/deps/sqlite3/{name}").read())
    return src


def _npm_pack(package, d, what):
    """The tarball `npm pack PACKAGE` leaves in d (kept there as the cache)."""
    stem = package.split("@")[0]
    tarballs = glob.glob(os.path.join(d, f"{stem}-*.tgz"))
    if not tarballs:
        if not shutil.which("npm"):
            raise FetchFailed("npm is not installed (Debian/Ubuntu: apt-get install npm)")
        os.makedirs(d, exist_ok=True)
        _run(["npm", "pack", package], d, what)
        tarballs = glob.glob(os.path.join(d, f"{stem}-*.tgz"))
        if not tarballs:
            raise FetchFailed(f"npm pack {package} gave no tarball")
    return sorted(tarballs)[-1]


def fetch_speedscope(cache):
    """speedscope's release build (package/dist/release: index.html, its
    script, styles and fonts), unpacked as cache/speedscope/release."""
    d = os.path.join(os.path.abspath(cache), "speedscope")
    out = os.path.join(d, "release")
    if os.path.exists(os.path.join(out, "index.html")):
        return out
    tarball = _npm_pack(SPEEDSCOPE_PACKAGE, d, "speedscope")
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    prefix = "package/dist/release/"
    with tarfile.open(tarball) as tar:
        for m in tar.getmembers():
            name = m.name[len(prefix):]
            # only regular files, by plain names, of the release folder
            if m.isfile() and m.name.startswith(prefix) and name and "/" not in name \
                    and not name.startswith("."):
                _write_atomically(os.path.join(tmp, name), tar.extractfile(m).read())
    if not os.path.exists(os.path.join(tmp, "index.html")):
        raise FetchFailed(f"{os.path.basename(tarball)} has no {prefix}index.html")
    os.rename(tmp, out)
    return out


def _suite():
    try:
        for line in open("/etc/os-release"):
            if line.startswith("VERSION_CODENAME="):
                return line.split("=", 1)[1].strip().strip('"') or "bookworm"
    except OSError:
        pass
    return "bookworm"


def apt_source(package, cache):
    """Download a Debian source package with a private apt state (no deb-src
    line is needed in the system's configuration).  Returns the directory
    holding the downloaded files."""
    # absolute: apt-get runs in d, and the -o paths below name files in it
    cache = os.path.abspath(cache)
    d = os.path.join(cache, "apt")
    os.makedirs(os.path.join(d, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(d, "cache", "archives", "partial"), exist_ok=True)
    out = os.path.join(d, package)
    if glob.glob(os.path.join(out, "*.orig.tar.*")):
        return out
    if not shutil.which("apt-get"):
        raise FetchFailed("apt-get is not available (not a Debian system)")
    sources = os.path.join(d, "sources.list")
    suite = _suite()
    key = "/usr/share/keyrings/debian-archive-keyring.gpg"
    opt = f"[signed-by={key}] " if os.path.exists(key) else ""
    with open(sources, "w") as f:
        f.write(f"deb-src {opt}http://deb.debian.org/debian {suite} main\n"
                f"deb-src {opt}http://deb.debian.org/debian {suite}-updates main\n"
                f"deb-src {opt}http://deb.debian.org/debian-security {suite}-security main\n")
    opts = ["-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={d}/lists", "-o", f"Dir::Cache={d}/cache",
            "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root", "-qq"]
    if not glob.glob(os.path.join(d, "lists", "*Sources*")):
        _run(["apt-get"] + opts + ["update"], d, f"{package} (apt-get update, private state)")
    os.makedirs(out, exist_ok=True)
    _run(["apt-get"] + opts + ["source", "--download-only", package], out, package)
    if not glob.glob(os.path.join(out, "*.orig.tar.*")):
        raise FetchFailed(f"apt-get source {package} gave no orig tarball")
    return out


def unpack(package, top, cache):
    """Unpack the upstream tarball of a Debian source package; returns its
    top directory, cache/top (absolute)."""
    cache = os.path.abspath(cache)
    d = apt_source(package, cache)
    dest = os.path.join(cache, top)
    if os.path.isdir(dest):
        return dest
    tarball = sorted(glob.glob(os.path.join(d, "*.orig.tar.*")))[0]
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with tarfile.open(tarball) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp, filter="data")
        else:
            tar.extractall(tmp)
    inner = [os.path.join(tmp, x) for x in os.listdir(tmp)]
    os.rename(inner[0] if len(inner) == 1 else tmp, dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def lua_sources(cache):
    """Lua 5.4's interpreter sources (Debian's lua5.4): (src dir, the .c files
    of the `lua` program, the flags it builds with)."""
    src = os.path.join(unpack("lua5.4", "lua-5.4", cache), "src")
    files = sorted(f for f in glob.glob(os.path.join(src, "*.c")) if not f.endswith("luac.c"))
    return src, files, ["-DLUA_USE_LINUX", "-Dluai_makeseed(L)=0u", "-lm", "-ldl"]
