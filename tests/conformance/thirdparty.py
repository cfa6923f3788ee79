"""Real third-party code for the conformance corpus, fetched at test time into
$BUILD/conformance/src (a cache, never committed) and built with
-finstrument-functions by the harness:

  sqlite  the SQLite amalgamation from the npm package better-sqlite3 (`npm
          pack`, as bench/benchlib/sqlite.py does), driven by progs/sqlite_work.c
  lua     Lua 5.4 from the Debian source package lua5.4 (`apt-get source`
          with a private sources list and state directory: the system's apt
          configuration is not touched), running progs/work.lua (pcall and
          error, which are _setjmp/_longjmp in Lua)
  zstd    zstd from the Debian source package libzstd (`apt-get source
          zstd`), compressing a generated file with -T2
  (fmt, header-only from Debian's libfmt-dev, is the case fmt_loop)

A fetch that cannot be done raises Unavailable with the reason: the case is
then reported as FAIL with that reason (no reference, no pass).
"""
import glob, os, shutil, subprocess, tarfile, threading

import conformance as C

SRC = os.path.join(C.WORK, "src")
SQLITE_PACKAGE = os.environ.get("BENCH_SQLITE_PACKAGE") or "better-sqlite3@12"
_lock = threading.Lock()


class FetchFailed(Exception):
    pass


def _run(cmd, cwd, what):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise FetchFailed(f"{what}: {' '.join(cmd[:3])}... failed: {(p.stderr or p.stdout).strip()[-300:]}")
    return p


def fetch_sqlite():
    d = os.path.join(SRC, "sqlite")
    src = os.path.join(d, "sqlite3")
    if os.path.exists(os.path.join(src, "sqlite3.c")):
        return src
    os.makedirs(src, exist_ok=True)
    tarballs = glob.glob(os.path.join(d, "better-sqlite3-*.tgz"))
    if not tarballs:
        if not shutil.which("npm"):
            raise FetchFailed("npm is not installed (apt-get install npm)")
        _run(["npm", "pack", SQLITE_PACKAGE], d, "sqlite")
        tarballs = glob.glob(os.path.join(d, "better-sqlite3-*.tgz"))
    with tarfile.open(sorted(tarballs)[-1]) as tar:
        for name in ("sqlite3.c", "sqlite3.h"):
            data = tar.extractfile(f"package/deps/sqlite3/{name}").read()
            with open(os.path.join(src, name + ".tmp"), "wb") as f:
                f.write(data)
            os.rename(os.path.join(src, name + ".tmp"), os.path.join(src, name))
    return src


def apt_source(package):
    """Download a Debian source package with a private apt state (no deb-src
    line is needed in the system's configuration).  Returns the directory
    holding the downloaded files."""
    d = os.path.join(SRC, "apt")
    os.makedirs(os.path.join(d, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(d, "cache", "archives", "partial"), exist_ok=True)
    out = os.path.join(d, package)
    if glob.glob(os.path.join(out, "*.orig.tar.*")):
        return out
    if not shutil.which("apt-get"):
        raise FetchFailed("apt-get is not available (not a Debian system)")
    sources = os.path.join(d, "sources.list")
    suite = "bookworm"
    try:
        for line in open("/etc/os-release"):
            if line.startswith("VERSION_CODENAME="):
                suite = line.split("=", 1)[1].strip().strip('"') or suite
    except OSError:
        pass
    with open(sources, "w") as f:
        key = "/usr/share/keyrings/debian-archive-keyring.gpg"
        opt = f"[signed-by={key}] " if os.path.exists(key) else ""
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


def unpack(package, top):
    """Unpack the upstream tarball of a Debian source package; returns its
    top directory (named top)."""
    d = apt_source(package)
    dest = os.path.join(SRC, top)
    if os.path.isdir(dest):
        return dest
    tarball = sorted(glob.glob(os.path.join(d, "*.orig.tar.*")))[0]
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tmp)
    inner = [os.path.join(tmp, x) for x in os.listdir(tmp)]
    os.rename(inner[0] if len(inner) == 1 else tmp, dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def guarded(fetch):
    def prepare(*a):
        with _lock:
            try:
                return fetch(*a)
            except FetchFailed as e:
                raise C.FetchFailed(str(e)) from None
    return prepare


@guarded
def prepare_sqlite(d, comp, opt):
    src = fetch_sqlite()
    driver = os.path.join(C.PROGS, "sqlite_work.c")
    return src, [os.path.join(src, "sqlite3.c"), driver], \
        ["-I" + src, "-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION=1", "-lm"], [driver]


@guarded
def prepare_lua(d, comp, opt):
    top = unpack("lua5.4", "lua-5.4")
    src = os.path.join(top, "src")
    files = sorted(f for f in glob.glob(os.path.join(src, "*.c")) if not f.endswith("luac.c"))
    return src, files, ["-DLUA_USE_LINUX", "-Dluai_makeseed(L)=0u", "-lm", "-ldl"], []


@guarded
def prepare_zstd(d, comp, opt):
    top = unpack("zstd", "zstd")
    lib = os.path.join(top, "lib")
    files = []
    for sub in ("common", "compress", "decompress", "dictBuilder"):
        files += sorted(glob.glob(os.path.join(lib, sub, "*.c")))
    files += sorted(glob.glob(os.path.join(top, "programs", "*.c")))
    flags = ["-I" + lib, "-I" + os.path.join(lib, "common"), "-DZSTD_MULTITHREAD",
             "-DZSTD_LEGACY_SUPPORT=0", "-DZSTD_DISABLE_ASM", "-DXXH_NAMESPACE=ZSTD_",
             "-pthread"]
    return top, files, flags, []


def zstd_input(d):
    """A deterministic 6 MiB input for zstd (text-like, compressible)."""
    path = os.path.join(d, "input.dat")
    if not os.path.exists(path):
        words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta"]
        x, out = 12345, bytearray()
        while len(out) < 6 << 20:
            x = (x * 1103515245 + 12345) & 0x7fffffff
            out += words[x % 8] + (b" " if x & 0x100 else b"\n") + str(x % 1000).encode()
        with open(path + ".tmp", "wb") as f:
            f.write(out)
        os.rename(path + ".tmp", path)
    return path

