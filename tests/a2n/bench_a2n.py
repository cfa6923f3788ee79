#!/usr/bin/env python3
"""Measure A2N: resolve N addresses (half in a generated program of many
functions, half in libc) in a running process, cold (a2n_open, maps,
symbol tables) and all lookups included.  Not part of `make check`.

    HOOKIT_BUILD_DIR=build-x python3 tests/a2n/bench_a2n.py [N] [FUNCS]
"""
import os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import hk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def gen_program(path, nfuncs):
    with open(path, "w") as f:
        f.write("#include <stdio.h>\n#include <string.h>\n")
        for i in range(nfuncs):
            kind = "static " if i % 2 else ""
            f.write(f"{kind}int __attribute__((noinline)) f{i}(int x) {{ return x * {i} + 1; }}\n")
        f.write("int (*volatile table[])(int) = {" + ",".join(f"f{i}" for i in range(nfuncs)) + "};\n")
        f.write("int main(int argc, char **argv) {\n"
                "  printf(\"main %p\\n\", (void *)main); fflush(stdout);\n"
                "  if (argc > 1) while (getchar() != EOF) ;\n"
                "  return table[0](argc);\n}\n")


def nm_functions(path, dynamic=False):
    args = ["nm", "--defined-only"] + (["-D"] if dynamic else []) + [path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWwi":
            syms.setdefault(int(parts[0], 16), parts[2])
    return syms


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    nfuncs = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    tmp = tempfile.mkdtemp(prefix="a2n-bench-")
    src, app, resolver = (os.path.join(tmp, x) for x in ("app.c", "app", "resolve"))
    gen_program(src, nfuncs)
    subprocess.run(["gcc", "-g", "-O1", "-o", app, src], check=True)
    subprocess.run(["gcc", "-O2", "-I" + hk.INCLUDE, "-o", resolver, os.path.join(HERE, "resolve.c"),
                    os.path.join(hk.LIB, "liba2n.a"), "-lbfd", "-lz", "-ldl"], check=True)
    child = subprocess.Popen([app, "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        main_addr = int(child.stdout.readline().split()[1], 16)
        app_syms = nm_functions(app)
        bias = main_addr - next(a for a, s in app_syms.items() if s == "main")
        libc_path, libc_base = None, None
        with open(f"/proc/{child.pid}/maps") as m:
            for line in m:
                f = line.split()
                if len(f) >= 6 and "libc.so" in f[5] and int(f[2], 16) == 0:
                    libc_path, libc_base = f[5], int(f[0].split("-")[0], 16)
                    break
        libc_syms = sorted(nm_functions(libc_path, dynamic=True))
        addrs = [a + bias for a in sorted(app_syms)][: n // 2]
        i = 0
        while len(addrs) < n:
            addrs.append(libc_base + libc_syms[i % len(libc_syms)] + 4 * (i // len(libc_syms)))
            i += 1
        text = "".join(f"{a:x}\n" for a in addrs)
        for flags, what in (([], "names"), (["-l"], "names + file:line")):
            t0 = time.monotonic()
            p = subprocess.run([resolver, "-q", "-p", str(child.pid)] + flags + ["-"], input=text,
                               capture_output=True, text=True, check=True)
            wall = (time.monotonic() - t0) * 1e3
            print(f"{what:18s} {p.stdout.strip()}  (whole resolver run {wall:.1f} ms)")
    finally:
        child.stdin.close()
        child.wait()


if __name__ == "__main__":
    main()
