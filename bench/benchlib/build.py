"""Building the three variants of a workload: uninstrumented, instrumented
with glibc's no-op hooks, instrumented and linked with libhookit."""
import os
import subprocess

from . import config

INSTRUMENT = ["-finstrument-functions"]
LINK_HOOKIT = ["-L" + config.LIB, "-lhookit", "-Wl,-rpath," + config.LIB]


def compile_exe(name, sources, flags, libs=(), cc=None):
    """gcc -O2 -g ... -o OUT/name (cc: another compiler, g++ for C++),
    rebuilt only when a source is newer."""
    exe = os.path.join(config.OUT, name)
    deps = [s for s in sources if os.path.exists(s)] + [os.path.join(config.LIB, "libhookit.so")]
    if os.path.exists(exe) and all(os.path.getmtime(d) <= os.path.getmtime(exe)
                                   for d in deps if os.path.exists(d)):
        return exe
    cmd = [cc or config.CC, "-O2", "-g", "-o", exe] + list(sources) + list(flags) + list(libs)
    subprocess.run(cmd, check=True)
    return exe


def three_builds(stem, sources, libs=(), extra_flags=(), cc=None):
    """(plain, noop, hooked) executables of the same sources."""
    os.makedirs(config.OUT, exist_ok=True)
    plain = compile_exe(stem + "-plain", sources, list(extra_flags), libs, cc)
    return (plain,) + instrumented_builds(stem, sources, libs, extra_flags, cc)


def instrumented_builds(stem, sources, libs=(), extra_flags=(), cc=None):
    """(noop, hooked): the sources with -finstrument-functions, with glibc's
    no-op hooks and linked with libhookit."""
    os.makedirs(config.OUT, exist_ok=True)
    flags = list(extra_flags) + INSTRUMENT
    noop = compile_exe(stem + "-noop", sources, flags, libs, cc)
    hooked = compile_exe(stem + "-hookit", sources, flags + LINK_HOOKIT, libs, cc)
    return noop, hooked


def preload_lib(stem, defines=()):
    """bench/<stem>.c as a preloadable library of compiler hooks, built with
    -D of each of defines (a library of its own per set)."""
    src = os.path.join(config.ROOT, "bench", stem + ".c")
    tag = "".join("-" + d.lower() for d in defines)
    lib = os.path.join(config.OUT, f"lib{stem.replace('_', '')}{tag}.so")
    if not os.path.exists(lib) or os.path.getmtime(src) > os.path.getmtime(lib):
        os.makedirs(config.OUT, exist_ok=True)
        subprocess.run([config.CC, "-O2", "-shared", "-fPIC", "-o", lib, src]
                       + ["-D" + d for d in defines], check=True)
    return lib


def clock_floor_lib():
    """bench/clock_floor.c: hooks that only read the TSC."""
    return preload_lib("clock_floor")


def count_floor_libs():
    """bench/tree_floor.c and bench/key_floor.c: hooks that count calls per
    context and do nothing else, the floors under timer=sample."""
    return preload_lib("tree_floor"), preload_lib("key_floor")


def shared_line_lib():
    """bench/shared_line.c: hooks that write one line every thread shares."""
    return preload_lib("shared_line")


def node_size():
    """sizeof(struct arena_node), the tree node (profile/arena.h)."""
    src = '#include <stdio.h>\n#include "arena.h"\nint main(void){printf("%zu\\n", sizeof(struct arena_node));return 0;}\n'
    exe = os.path.join(config.OUT, "node-size")
    p = subprocess.run([config.CC, "-x", "c", "-", "-I", os.path.join(config.ROOT, "profile"),
                        "-I", os.path.join(config.ROOT, "include"), "-o", exe],
                       input=src, text=True, capture_output=True)
    if p.returncode != 0:
        return None
    return int(subprocess.run([exe], capture_output=True, text=True).stdout)
