"""A2N (liba2n): addresses of real programs to module, function, file:line.

The drivers in this folder are compiled here against $HOOKIT_BUILD/lib/liba2n.a.
Most tests start a target program that prints the addresses of its own
functions and then waits on stdin, and resolve those addresses from another
process by pid, comparing with nm and addr2line.
"""
import os, random, re, shutil, subprocess

import hk

HERE = os.path.dirname(os.path.abspath(__file__))
LIBA2N = os.path.join(hk.LIB, "liba2n.a")
FIELDS = ("addr", "rc", "flags", "module", "module_path", "function", "file", "line",
          "module_offset", "symbol_addr")
FOUND_MODULE, FOUND_SYMBOL, FOUND_LINE = 1, 2, 4


# ---- building ------------------------------------------------------------

def sh(cmd, cwd=None, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, **kw)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def need_compiler(compiler):
    if not hk.have(compiler):
        hk.skip(f"{compiler} not installed")


def driver(tmp, name):
    """A test driver linked with liba2n the way the plugin and tool are."""
    out = os.path.join(tmp, name)
    if not os.path.exists(out):
        sh(["gcc", "-g", "-O1", "-Wall", "-I" + hk.INCLUDE, "-I" + hk.ROOT, "-o", out,
            os.path.join(HERE, name + ".c"), LIBA2N, "-lbfd", "-lz", "-ldl"] + hk.SANITIZE_FLAGS, cwd=tmp)
    return out


def build(tmp, sources, out, compiler="gcc", flags=(), libs=()):
    dst = os.path.join(tmp, out)
    srcs = [s if os.path.isabs(s) else os.path.join(HERE, s) for s in sources]
    sh([compiler, "-g", "-O1"] + list(flags) + ["-o", dst] + srcs + list(libs), cwd=tmp)
    return dst


def shlib(tmp, compiler="gcc", name="libshlib.so", subdir="."):
    d = os.path.join(tmp, subdir)
    os.makedirs(d, exist_ok=True)
    return build(d, ["shlib.c"], name, compiler, ["-fPIC", "-shared"])


def target_with_lib(tmp, compiler="gcc", flags=(), subdir="."):
    lib = shlib(tmp, compiler, subdir=subdir)
    libdir = os.path.dirname(lib)
    exe = build(tmp, ["target.c"], "target", compiler, list(flags) + ["-DWITH_LIB"],
                ["-L" + libdir, "-Wl,-rpath," + libdir, "-lshlib"])
    return exe, lib


# ---- running -------------------------------------------------------------

class Target:
    """A running target: .pid, .addr[name] for every "name address" line it printed."""

    def __init__(self, tmp, argv, env=None):
        e = hk.test_env()
        e.update(env or {})
        self.p = subprocess.Popen(list(argv) + ["wait"], cwd=tmp, env=e, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.pid = self.p.pid
        self.addr = {}
        for line in self.p.stdout:
            sep = "|" if "|" in line else " "
            key, _, value = line.rstrip("\n").rpartition(sep)
            if line.startswith("ready"):
                break
            if value.startswith("0x"):       # "(nil)": not available there
                self.addr[key] = int(value, 16)
        else:
            raise AssertionError(f"target exited early: {self.p.stderr.read()}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(timeout=30)
        self.p.stdout.close()
        self.p.stderr.close()


def resolve(tmp, addrs, pid=None, lines=False):
    """Resolve addresses with the resolve driver; a list of dicts."""
    cmd = [driver(tmp, "resolve")] + (["-l"] if lines else [])
    if pid is not None:
        cmd += ["-p", str(pid)]
    out = sh(cmd + ["-"], cwd=tmp, input="".join(f"{a:x}\n" for a in addrs))
    rows = []
    for line in out.splitlines():
        r = dict(zip(FIELDS, line.split("\t")))
        for k in ("addr", "module_offset", "symbol_addr"):
            r[k] = int(r[k], 16)
        for k in ("rc", "flags", "line"):
            r[k] = int(r[k])
        rows.append(r)
    assert len(rows) == len(addrs), out
    return rows


def resolve_one(tmp, addr, pid=None, lines=False):
    return resolve(tmp, [addr], pid, lines)[0]


def nm(binary, dynamic=False):
    out = sh(["nm", "--defined-only"] + (["-D"] if dynamic else []) + [binary])
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return syms


def addr2line(binary, offset):
    out = sh(["addr2line", "-e", binary, f"0x{offset:x}"]).strip()
    file, _, line = out.rpartition(":")
    return os.path.basename(file), int(re.match(r"\d+", line).group(0))


def assert_named(r, function, module, binary=None, want_line=False):
    assert r["rc"] == 0 and r["flags"] & FOUND_SYMBOL, r
    assert r["function"] == function, (function, r)
    assert r["module"] == module, (module, r)
    if binary:
        assert r["module_path"] == os.path.realpath(binary) or r["module_path"] == binary, r
        assert r["module_offset"] == nm(binary)[function], (hex(nm(binary)[function]), r)
        assert r["symbol_addr"] == r["addr"], r
    if want_line:
        assert r["flags"] & FOUND_LINE, r
        file, line = addr2line(binary, r["module_offset"])
        assert (os.path.basename(r["file"]), r["line"]) == (file, line), (file, line, r)


# ---- executables: PIE, non-PIE, gcc, clang --------------------------------

def check_executable(tmp, compiler, flags):
    need_compiler(compiler)
    exe, lib = target_with_lib(tmp, compiler, flags)
    with Target(tmp, [exe]) as t:
        names = ["static_helper", "static_second", "exported_fn", "main"]
        rows = resolve(tmp, [t.addr[n] for n in names], t.pid, lines=True)
        for n, r in zip(names, rows):
            assert_named(r, n, "target", exe, want_line=True)
        # inside a function: its name, its start
        r = resolve_one(tmp, t.addr["exported_fn+1"], t.pid)
        assert r["function"] == "exported_fn" and r["symbol_addr"] == t.addr["exported_fn"], r
        assert r["module_offset"] == nm(exe)["exported_fn"] + 1, r
        # the shared library's static and exported functions, with lines
        for n in ("lib_static", "lib_exported"):
            assert_named(resolve_one(tmp, t.addr[n], t.pid, lines=True), n, "libshlib.so", lib,
                         want_line=True)
        # libc, by pid, through whatever symbols it has (.dynsym at least)
        r = resolve_one(tmp, t.addr["getpid"], t.pid)
        assert r["module"].startswith("libc.so") and r["function"] == "getpid", r
        # without want_lines no file:line
        r = resolve_one(tmp, t.addr["main"], t.pid)
        assert r["file"] == "-" and r["line"] == 0 and not r["flags"] & FOUND_LINE, r
    return exe


def test_pie_gcc(tmp):
    check_executable(tmp, "gcc", ["-fPIE", "-pie"])


def test_pie_clang(tmp):
    check_executable(tmp, "clang", ["-fPIE", "-pie"])


def test_nopie_gcc(tmp):
    exe = check_executable(tmp, "gcc", ["-fno-pie", "-no-pie"])
    assert "EXEC" in sh(["readelf", "-h", exe]), "expected a non-PIE executable"


def test_nopie_clang(tmp):
    check_executable(tmp, "clang", ["-fno-pie", "-no-pie"])


LAYOUTS = [
    ["-Wl,-z,noseparate-code"],                 # segments share pages
    ["-Wl,-z,max-page-size=0x200000"],          # 2 MiB aligned segments
    ["-fno-pie", "-no-pie", "-Wl,-z,noseparate-code"],
    ["-fuse-ld=gold"],
    ["-fuse-ld=lld"],
    ["-static-pie"],
    ["-static"],
]


def test_linker_layouts(tmp):
    """The load bias from the program headers, whatever the linker made of them."""
    tried = 0
    for i, flags in enumerate(LAYOUTS):
        try:
            exe = build(tmp, ["target.c"], f"layout{i}", "gcc", flags)
        except AssertionError:
            continue            # that linker or libc variant is not installed
        tried += 1
        syms = nm(exe)
        with Target(tmp, [exe]) as t:
            names = ["static_helper", "exported_fn", "main"]
            rows = resolve(tmp, [t.addr[n] for n in names], t.pid)
        for n, r in zip(names, rows):
            assert (r["function"], r["module"], r["module_offset"]) == (n, f"layout{i}", syms[n]), \
                (flags, n, hex(syms[n]), r)
    assert tried >= 3, "too few layouts could be built"


# ---- stripped objects and separate debug info --------------------------------

def test_stripped(tmp):
    """Stripped: exported functions from .dynsym, static ones get MODULE+0xOFF."""
    for compiler in ("gcc", "clang"):
        if not hk.have(compiler):
            continue
        d = os.path.join(tmp, compiler)
        os.makedirs(d)
        exe, lib = target_with_lib(d, compiler, ["-rdynamic"])
        full_exe, full_lib = nm(exe), nm(lib)
        sh(["strip", exe, lib])
        with Target(d, [exe]) as t:
            names = ["exported_fn", "static_helper", "lib_exported", "lib_static"]
            rows = dict(zip(names, resolve(d, [t.addr[n] for n in names], t.pid, lines=True)))
        r = rows["exported_fn"]
        assert r["rc"] == 0 and r["function"] == "exported_fn" and r["module"] == "target", r
        r = rows["lib_exported"]
        assert r["rc"] == 0 and r["function"] == "lib_exported" and r["module"] == "libshlib.so", r
        for n, mod, full in (("static_helper", "target", full_exe), ("lib_static", "libshlib.so", full_lib)):
            r = rows[n]
            assert r["rc"] == -1 and r["flags"] == FOUND_MODULE, r
            assert r["function"] == f"{mod}+0x{full[n]:x}", (hex(full[n]), r)
            assert r["module_offset"] == full[n] and r["symbol_addr"] == 0, r


def test_debuglink(tmp):
    """A stripped program whose symbols and DWARF are in a .gnu_debuglink file."""
    exe = build(tmp, ["target.c"], "target", "gcc", ["-fPIE", "-pie"])
    full = nm(exe)
    sh(["objcopy", "--only-keep-debug", exe, exe + ".debug"], cwd=tmp)
    sh(["strip", "--strip-all", exe], cwd=tmp)
    sh(["objcopy", "--add-gnu-debuglink=target.debug", "target"], cwd=tmp)
    with Target(tmp, [exe]) as t:
        r = resolve_one(tmp, t.addr["static_helper"], t.pid, lines=True)
    assert r["rc"] == 0 and r["function"] == "static_helper", r
    assert r["module_offset"] == full["static_helper"], r
    assert r["flags"] & FOUND_LINE and os.path.basename(r["file"]) == "target.c", r


# ---- C++ -----------------------------------------------------------------

def check_cxx(tmp, compiler):
    need_compiler(compiler)
    exe = build(tmp, ["cxx_target.cpp"], "cxx_target", compiler)
    with Target(tmp, [exe]) as t:
        names = list(t.addr)
        rows = resolve(tmp, [t.addr[n] for n in names], t.pid)
    assert len(names) >= 9
    for n, r in zip(names, rows):
        assert r["rc"] == 0 and r["function"] == n and r["module"] == "cxx_target", (n, r)


def test_cxx_gcc(tmp):
    check_cxx(tmp, "g++")


def test_cxx_clang(tmp):
    check_cxx(tmp, "clang++")


def test_demangle(tmp):
    out = sh([driver(tmp, "unit"), "demangle", "_ZNK2ns6WidgetIiE3getEi", "main",
              "_ZN12_GLOBAL__N_16hiddenEi", "_Z5twiceIiET_S0_", "_Z", "not_mangled",
              "_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_"]).splitlines()
    assert out == ["ns::Widget<int>::get(int) const", "(null)",
                   "(anonymous namespace)::hidden(int)", "int twice<int>(int)", "(null)",
                   "(null)",
                   "std::basic_ostream<char, std::char_traits<char> >& "
                   "std::endl<char, std::char_traits<char> >"
                   "(std::basic_ostream<char, std::char_traits<char> >&)"], out


# ---- shared libraries: dlopen, dlclose, deleted, memfd -------------------------

def dl(tmp, lib, mode):
    out = sh([driver(tmp, "dl"), lib, mode], cwd=tmp)
    rows = {}
    for line in out.splitlines():
        f = line.split("\t")
        rows[f[0]] = f[1:]
    return rows


def test_dlopen_then_dlclose(tmp):
    """A library dlopen'ed after a2n_open is found (the failed lookup reloads);
    after dlclose it is unmapped, and its addresses still resolve."""
    lib = shlib(tmp)
    rows = dl(tmp, lib, "reopen")
    for label, fn in (("open.exported", "lib_exported"), ("open.static", "lib_static"),
                      ("closed.exported", "lib_exported"), ("closed.static", "lib_static"),
                      ("again.exported", "lib_exported")):
        addr, rc, flags, module, function, symaddr = rows[label]
        assert (rc, module, function) == ("0", "libshlib.so", fn), (label, rows[label])
        assert int(symaddr, 16) == int(addr, 16), rows[label]
    assert rows["closed.mapped"] == ["0"], "the library stayed mapped after dlclose"


def test_deleted_library(tmp):
    """Symbols of a library deleted from disk while mapped ("(deleted)")."""
    lib = shlib(tmp, name="libgone.so")
    rows = dl(tmp, lib, "deleted")
    assert not os.path.exists(lib)
    assert rows["deleted.exported"][1:4] == ["0", "3", "libgone.so"], rows
    assert rows["deleted.exported"][4] == "lib_exported", rows
    assert rows["deleted.static"][4] == "lib_static", rows


def test_deleted_then_closed(tmp):
    """A library deleted while mapped, then dlclose'd before any lookup:
    its symbols were read while it could still be read."""
    lib = shlib(tmp, name="libgone.so")
    rows = dl(tmp, lib, "gone")
    assert rows["gone.mapped"] == ["0"], rows
    assert rows["gone.exported"][1:5] == ["0", "3", "libgone.so", "lib_exported"], rows
    assert rows["gone.static"][1:5] == ["0", "3", "libgone.so", "lib_static"], rows


def test_memfd_library(tmp):
    """A library loaded from a memfd (/memfd:NAME (deleted), with spaces)."""
    lib = shlib(tmp)
    rows = dl(tmp, lib, "memfd")
    assert rows["memfd.exported"][1:5] == ["0", "3", "memfd:a2n test lib", "lib_exported"], rows
    assert rows["memfd.static"][4] == "lib_static", rows


def test_paths_with_spaces(tmp):
    exe, lib = target_with_lib(tmp, "gcc", [], subdir="dir with spaces")
    data = os.path.join(tmp, "data file.bin")
    with open(data, "wb") as f:
        f.write(b"not an ELF file\n" * 512)
    with Target(tmp, [exe], env={"A2N_MAP_FILE": data}) as t:
        r = resolve_one(tmp, t.addr["lib_static"], t.pid, lines=True)
        assert_named(r, "lib_static", "libshlib.so", lib, want_line=True)
        assert r["module_path"] == lib, r
        # a mapped file that is not ELF: the module, and MODULE+0xOFF
        r = resolve_one(tmp, t.addr["mapped_file"], t.pid)
        assert (r["rc"], r["module"], r["module_path"]) == (-1, "data file.bin", data), r
        assert r["function"] == "data file.bin+0x10" and r["module_offset"] == 0x10, r


# ---- fallbacks ------------------------------------------------------------

def test_fallbacks_anon_unknown(tmp):
    exe = build(tmp, ["target.c"], "target")
    with Target(tmp, [exe]) as t:
        anon, unknown = t.addr["anon"], 0x10
        ra, ru = resolve(tmp, [anon, unknown], t.pid)
    assert (ra["rc"], ra["flags"], ra["module"]) == (-1, 0, "[anon]"), ra
    assert ra["function"] == f"[anon]+0x{anon:x}" and ra["module_offset"] == 0x10, ra
    assert (ru["rc"], ru["flags"], ru["module"], ru["function"]) == (-1, 0, "[unknown]", "0x10"), ru


def test_vdso_this_process(tmp):
    out = sh([driver(tmp, "unit"), "vdso"]).splitlines()
    if out == ["no vdso"]:
        hk.skip("no vdso")
    first = out[0].split("\t")
    assert first == ["-1", "[vdso]", "[vdso]", "[vdso]+0x0", "0x0"], first
    named = [line.split("\t")[3] for line in out[1:]]
    assert "clock_gettime" in named and "gettimeofday" in named, out
    assert all(line.split("\t")[1] == "[vdso]" for line in out[1:]), out


def test_vdso_other_process(tmp):
    exe = build(tmp, ["target.c"], "target")
    with Target(tmp, [exe]) as t:
        with open(f"/proc/{t.pid}/maps") as f:
            vdso = [line for line in f if line.rstrip().endswith("[vdso]")]
        if not vdso:
            hk.skip("no vdso")
        start, end = (int(x, 16) for x in vdso[0].split()[0].split("-"))
        rows = resolve(tmp, list(range(start, end, 4)), t.pid)
    assert rows[0]["module"] == "[vdso]" and rows[0]["function"] == "[vdso]+0x0", rows[0]
    names = {r["function"] for r in rows if r["rc"] == 0}
    assert "clock_gettime" in names, sorted(names)[:20]
    assert all(r["module"] == "[vdso]" for r in rows)


def without_proc(tmp, argv):
    """Run argv in a mount namespace where /proc is not mounted."""
    if os.getuid() != 0 or not hk.have("unshare"):
        hk.skip("needs root and unshare")
    script = 'umount -l /proc || exit 77; exec "$@"'
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                        "sh"] + argv, capture_output=True, text=True, cwd=tmp)
    if p.returncode == 77 or "unshare failed" in p.stderr:
        hk.skip("cannot unmount /proc here: " + p.stderr.strip())
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return p.stdout


def test_this_process_without_proc(tmp):
    """pid 0 without /proc: the dynamic loader's list of objects stands in
    for the maps (same names and offsets; anonymous memory is unknown)."""
    unit = driver(tmp, "unit")
    normal = [line.split("\t") for line in sh([unit, "self"]).splitlines()]
    noproc = [line.split("\t") for line in without_proc(tmp, [unit, "self"]).splitlines()]
    assert [r[0] for r in normal] == ["static_in_unit", "main", "getpid", "vdso", "heap"], normal
    for a, b in zip(normal[:4], noproc[:4]):
        assert a == b, (a, b)
    assert normal[0][1:5] == ["0", "unit", unit, "static_in_unit"], normal[0]
    assert normal[3][4] == "[vdso]+0x0", normal[3]
    assert normal[4][2] == "[anon]" and noproc[4][2] == "[unknown]", (normal[4], noproc[4])
    lib = shlib(tmp)
    rows = {}
    for line in without_proc(tmp, [driver(tmp, "dl"), lib, "reopen"]).splitlines():
        f = line.split("\t")
        rows[f[0]] = f[1:]
    assert rows["open.static"][1:5] == ["0", "3", "libshlib.so", "lib_static"], rows
    assert rows["closed.static"][1:5] == ["0", "3", "libshlib.so", "lib_static"], rows


def test_open_errors(tmp):
    p = subprocess.run([driver(tmp, "resolve"), "-p", "999999999", "10"], capture_output=True,
                       text=True)
    assert p.returncode == 1 and p.stdout.startswith("open failed"), p.stdout


def test_permission_denied(tmp):
    """An unreadable object file gets MODULE+0xOFF names; an unreadable
    process fails a2n_open with EACCES."""
    if os.getuid() != 0 or not hk.have("setpriv"):
        hk.skip("needs root and setpriv to run as another user")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    os.chmod(tmp, 0o755)
    exe = build(tmp, ["target.c"], "target", "gcc", ["-fPIE", "-pie"])
    resolver = driver(tmp, "resolve")
    syms = nm(exe)
    with Target(tmp, nobody + [exe]) as t:
        os.chmod(exe, 0)
        out = sh(nobody + [resolver, "-p", str(t.pid), "%x" % t.addr["static_helper"]], cwd=tmp)
        r = dict(zip(FIELDS, out.rstrip("\n").split("\t")))
        assert (r["rc"], r["flags"], r["module"]) == ("-1", "1", "target"), r
        assert r["function"] == "target+0x%x" % syms["static_helper"], (hex(syms["static_helper"]), r)
        p = subprocess.run(nobody + [resolver, "-p", "1", "10"], capture_output=True, text=True)
        assert p.returncode == 1 and "Permission denied" in p.stdout, p.stdout


def test_huge_maps(tmp):
    """Tens of thousands of mappings: still found, quickly enough to not time out."""
    exe = build(tmp, ["target.c"], "target")
    with Target(tmp, [exe], env={"A2N_MANY_MAPS": "40000"}) as t:
        with open(f"/proc/{t.pid}/maps") as f:
            assert sum(1 for _ in f) > 30000
        r = resolve_one(tmp, t.addr["static_helper"], t.pid)
    assert r["function"] == "static_helper" and r["module"] == "target", r


def test_many_functions(tmp):
    """Every one of 1500 functions (half static) by its start and by an inner
    address, resolved in one run, plus libc's exported functions."""
    n = 1500
    src = os.path.join(tmp, "many.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\n#include <string.h>\n")
        for i in range(n):
            f.write(f"{'static ' if i % 2 else ''}int __attribute__((noinline)) "
                    f"f{i}(int x) {{ return x * {i + 3} + x / {i + 1}; }}\n")
        f.write("int (*volatile table[])(int) = {" + ",".join(f"f{i}" for i in range(n)) + "};\n")
        f.write("int main(int argc, char **argv) { printf(\"main %p\\nready\\n\", (void *)main);"
                " fflush(stdout); if (argc > 1) while (getchar() != EOF) ; return table[1](argc); }\n")
    exe = build(tmp, [src], "many", flags=["-O0"])
    syms = nm(exe)
    with Target(tmp, [exe]) as t:
        bias = t.addr["main"] - syms["main"]
        names = [f"f{i}" for i in range(n)]
        rows = resolve(tmp, [syms[x] + bias for x in names] + [syms[x] + bias + 2 for x in names],
                       t.pid)
    for name, r in zip(names + names, rows):
        assert r["function"] == name and r["module"] == "many", (name, r)


# ---- the maps parser ----------------------------------------------------------

MAPS_CASES = [
    # (line, expected "OK\t..." or "ERR")
    ("55d4a3a1c000-55d4a3a1d000 r--p 00000000 fe:00 1319167                    /usr/bin/cat",
     "OK\t55d4a3a1c000\t55d4a3a1d000\tr--p\t0\t1319167\t/usr/bin/cat|"),
    ("7f0e5c200000-7f0e5c228000 r-xp 00028000 08:01 5 /lib/x86_64-linux-gnu/libc.so.6\n",
     "OK\t7f0e5c200000\t7f0e5c228000\tr-xp\t28000\t5\t/lib/x86_64-linux-gnu/libc.so.6|"),
    ("7ffd3c9f1000-7ffd3c9f3000 r-xp 00000000 00:00 0                          [vdso]",
     "OK\t7ffd3c9f1000\t7ffd3c9f3000\tr-xp\t0\t0\t[vdso]|"),
    ("7f0e5c000000-7f0e5c021000 rw-p 00000000 00:00 0 ",
     "OK\t7f0e5c000000\t7f0e5c021000\trw-p\t0\t0\t|"),
    ("7f0e5c000000-7f0e5c021000 rw-p 00000000 00:00 0",
     "OK\t7f0e5c000000\t7f0e5c021000\trw-p\t0\t0\t|"),
    ("1000-2000 rw-s 00000000 00:05 1234   /memfd:my buf (deleted)",
     "OK\t1000\t2000\trw-s\t0\t1234\t/memfd:my buf (deleted)|"),
    ("1000-2000 r-xp 00001000 103:02 99 /path with  two  spaces/lib x.so",
     "OK\t1000\t2000\tr-xp\t1000\t99\t/path with  two  spaces/lib x.so|"),
    ("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
     "OK\tffffffffff600000\tffffffffff601000\t--xp\t0\t0\t[vsyscall]|"),
    ("1000-2000 ---p 00000000 00:00 0   [anon:glibc malloc]",
     "OK\t1000\t2000\t---p\t0\t0\t[anon:glibc malloc]|"),
    ("ABCD000-ABCE000 r-xp 0000000A FE:0A 7 /x", "OK\tabcd000\tabce000\tr-xp\ta\t7\t/x|"),
    # malformed
    ("", "ERR"),
    ("garbage", "ERR"),
    ("1000-2000", "ERR"),
    ("1000 2000 r-xp 00000000 00:00 0", "ERR"),
    ("1000-2000 r-xp", "ERR"),
    ("1000-2000 rxp 00000000 00:00 0", "ERR"),
    ("1000-2000 r-xq 00000000 00:00 0", "ERR"),
    ("1000-2000 rwxpp 00000000 00:00 0", "ERR"),
    ("1000-2000 r-xp 0000000g 00:00 0", "ERR"),
    ("1000-2000 r-xp 00000000 0000 0", "ERR"),
    ("1000-2000 r-xp 00000000 00:00 x /a", "ERR"),
    ("1000-2000 r-xp 00000000 00:00 12x /a", "ERR"),
    ("2000-1000 r-xp 00000000 00:00 0", "ERR"),        # end before start
    ("1000-1000 r-xp 00000000 00:00 0", "ERR"),        # empty
    ("10000000000000000-10000000000000001 r-xp 00000000 00:00 0", "ERR"),  # 17 digits
    ("1000-2000 r-xp 00000000 00:00 99999999999999999999999 /a", "ERR"),    # inode overflow
    ("-2000 r-xp 00000000 00:00 0", "ERR"),
    ("1000-2000  r-xp 00000000 00:00 0", "ERR"),
    ("1000-2000 r-xp 00000000 00:00 0 /a\\x0a/b", "ERR"),    # two lines in one
    ("1000-2000 r-xp 00000000 00:00 0\\x00 /a", "OK\t1000\t2000\tr-xp\t0\t0\t|"),  # NUL ends it
]


def test_parse_maps_lines(tmp):
    text = "".join(line + "\n" if not line.endswith("\n") else line for line, _ in MAPS_CASES)
    out = sh([driver(tmp, "unit"), "parse"], input=text).splitlines()
    assert len(out) == len(MAPS_CASES), out
    for (line, want), got in zip(MAPS_CASES, out):
        assert got == want, (line, want, got)


def test_parse_maps_long_path(tmp):
    """A path longer than the buffer is cut, not overflowed."""
    line = "1000-2000 r-xp 00000000 00:00 1 /" + "a" * 9000
    out = sh([driver(tmp, "unit"), "parse"], input=line + "\n").splitlines()
    assert len(out) == 1 and out[0].startswith("OK\t1000\t2000") and len(out[0]) < 4200, out[0][:80]


def test_parse_maps_random(tmp):
    """Mutated and random lines: no crash, and OK lines are self-consistent."""
    rnd = random.Random(1234)
    base = [c for c, want in MAPS_CASES if want != "ERR"]
    lines = []
    for _ in range(20000):
        s = list(rnd.choice(base).rstrip("\n"))
        for _ in range(rnd.randint(1, 4)):
            op = rnd.randrange(3)
            pos = rnd.randrange(len(s) + 1)
            ch = "\\x%02x" % rnd.randrange(1, 256) if rnd.random() < 0.3 else rnd.choice("0af-: pxrw/\t")
            if op == 0:
                s.insert(pos, ch)
            elif op == 1 and s:
                del s[min(pos, len(s) - 1)]
            elif s:
                s[min(pos, len(s) - 1)] = ch
        lines.append("".join(s))
    p = subprocess.run([driver(tmp, "unit"), "parse"], input=("\n".join(lines) + "\n").encode(),
                       capture_output=True)
    assert p.returncode == 0, p
    out = p.stdout.decode("latin-1").split("\n")[:-1]
    assert len(out) == len(lines)
    for got in out:
        if got.startswith("OK"):
            f = got.split("\t")
            assert int(f[1], 16) < int(f[2], 16), got
