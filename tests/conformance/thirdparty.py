"""Real third-party code for the conformance corpus, fetched at test time
(tests/lib/upstream.py) into $BUILD/conformance/src (a cache, never
committed) and built with -finstrument-functions by the harness:

  sqlite  the SQLite amalgamation from the npm package better-sqlite3 (`npm
          pack`, as bench/benchlib/sqlite.py does), driven by progs/sqlite_work.c
  lua     Lua 5.4 from the Debian source package lua5.4 (`apt-get source`
          with a private sources list and state directory: the system's apt
          configuration is not touched), running progs/work.lua (pcall and
          error, which are _setjmp/_longjmp in Lua)
  zstd    zstd from the Debian source package libzstd (`apt-get source
          zstd`), compressing a generated file with -T2
  (fmt, header-only from Debian's libfmt-dev, is the case fmt_loop)

A fetch that cannot be done raises C.FetchFailed with the reason: the case is
then reported as FAIL with that reason (no reference, no pass).
"""
import glob, os

import conformance as C
import upstream as T        # tests/lib/upstream.py: the fetches themselves

SRC = os.path.join(C.WORK, "src")


def guarded(fetch):
    def prepare(*a):
        with T.LOCK:
            try:
                return fetch(*a)
            except T.FetchFailed as e:
                raise C.FetchFailed(str(e)) from None
    return prepare


@guarded
def prepare_sqlite(d, comp, opt):
    src = T.fetch_sqlite(SRC)
    driver = os.path.join(C.PROGS, "sqlite_work.c")
    return src, [os.path.join(src, "sqlite3.c"), driver], \
        ["-I" + src, "-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION=1", "-lm"], [driver]


@guarded
def prepare_lua(d, comp, opt):
    src, files, flags = T.lua_sources(SRC)
    return src, files, flags, []


@guarded
def prepare_zstd(d, comp, opt):
    top = T.unpack("zstd", "zstd", SRC)
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

