"""Helpers for the tools tests: build mkprof / readfuzz once, write the fixed
profile, rewrite profile files (see docs/profile-format.md)."""
import os, struct, subprocess, sys, threading, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LIBPROFILE = os.path.join(hk.BUILD, "obj", "libprofile.a")
_lock = threading.Lock()
_built = {}


def _build(name, sources, flags):
    """Compile tests/tools/<sources> into BUILD/tests/tools/<name>, once per run."""
    with _lock:
        if name in _built:
            return _built[name]
        outdir = os.path.join(hk.BUILD, "tests", "tools")
        os.makedirs(outdir, exist_ok=True)
        out = os.path.join(outdir, name)
        tmp = f"{out}.{os.getpid()}.tmp"
        cmd = ["gcc", "-std=gnu11", "-g", "-O1", "-Wall", "-I" + hk.ROOT,
               "-I" + hk.INCLUDE, "-o", tmp] + \
              [os.path.join(hk.ROOT, s) for s in sources] + list(flags)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(f"compile failed: {' '.join(cmd)}\n{p.stderr}")
        os.replace(tmp, out)
        _built[name] = out
        return out


def mkprof_bin():
    if not os.path.exists(LIBPROFILE):
        raise AssertionError(f"{LIBPROFILE} is not built")
    return _build("mkprof", ["tests/tools/mkprof.c"], [LIBPROFILE, "-lz"] + hk.SANITIZE_FLAGS)


def readfuzz_bin():
    """readfuzz built from the profile sources with ASan and UBSan."""
    srcs = ["tests/tools/readfuzz.c"] + sorted(
        os.path.join("profile", f) for f in os.listdir(os.path.join(hk.ROOT, "profile"))
        if f.endswith(".c"))
    return _build("readfuzz", srcs, ["-fsanitize=address,undefined",
                                     "-fno-sanitize-recover=all", "-lz"])


def mkprof(tmp, *args, check=True):
    p = subprocess.run([mkprof_bin()] + [str(a) for a in args], cwd=tmp,
                       capture_output=True, env=hk.test_env())
    if check and p.returncode != 0:
        raise AssertionError(f"mkprof {args} exited {p.returncode}: {p.stdout!r} {p.stderr!r}")
    return p


def fixed(tmp, name="fixed.prof"):
    """The fixed profile of mkprof.c, written to tmp/name; returns its path."""
    mkprof(tmp, "write", tmp, name)
    return os.path.join(tmp, name)


def hookit_raw(tmp, *args, env=None):
    """Run hookit, bytes out (profiles may hold any bytes)."""
    e = hk.test_env(**(env or {}))
    return subprocess.run([hk.BIN] + [str(a) for a in args], cwd=tmp, env=e,
                          capture_output=True, timeout=60)


# ---- the file format, for tests that rewrite files ----

HEADER = 32


def sections(data):
    """[(type, body)] of a profile file's bytes."""
    out, pos = [], HEADER
    while pos < len(data):
        typ, length = struct.unpack_from("<IQ", data, pos)
        pos += 12
        out.append((typ, data[pos:pos + length]))
        pos += length
    return out


def assemble(header, secs):
    """A file from a header (its first 32 bytes are reused: magic, version)
    and sections, with the file size and crc recomputed."""
    body = b"".join(struct.pack("<IQ", t, len(b)) + b for t, b in secs)
    size = HEADER + len(body)
    hdr = bytearray(header[:HEADER])
    struct.pack_into("<Q", hdr, 16, size)
    crc = zlib.crc32(bytes(hdr[:24]))
    crc = zlib.crc32(bytes(hdr[28:32]) + body, crc)
    struct.pack_into("<I", hdr, 24, crc)
    return bytes(hdr) + body
