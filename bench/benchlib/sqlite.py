"""Workload 2: real third-party C code, the SQLite amalgamation (~270,000
lines), driven by bench/sqlite_driver.c.

SQLite is fetched at bench time from the npm registry (the package
better-sqlite3 ships the amalgamation in deps/sqlite3/), never committed:
`npm pack` puts the tarball in OUT/sqlite/, where it stays as a cache, and
sqlite3.c is compiled there once per set of flags (a minute or more)."""
import glob
import os
import shutil
import subprocess
import sys
import tarfile

from . import config
from .alternate import run_alternating
from .build import INSTRUMENT, LINK_HOOKIT
from .measure import clean_env
from .rows import Row, standard_rows
from .table import Targets, human_bytes, print_table, summarize

DRIVER = os.path.join(config.ROOT, "bench", "sqlite_driver.c")
DIR = os.path.join(config.OUT, "sqlite")
# Ordinary embedded-use settings: one connection, no extension loading.
DEFINES = ["-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION=1"]


class Unavailable(Exception):
    pass


def fetch():
    """The amalgamation's directory, downloading the npm package if needed."""
    src = os.path.join(DIR, "package", "deps", "sqlite3")
    if os.path.exists(os.path.join(src, "sqlite3.c")):
        return src
    os.makedirs(DIR, exist_ok=True)
    tarballs = glob.glob(os.path.join(DIR, "better-sqlite3-*.tgz"))
    if not tarballs:
        if not shutil.which("npm"):
            raise Unavailable("npm is not installed (Debian/Ubuntu: apt-get install npm)")
        print(f"  sqlite: npm pack {config.SQLITE_PACKAGE} (once; cached in {DIR})",
              file=sys.stderr)
        p = subprocess.run(["npm", "pack", config.SQLITE_PACKAGE], cwd=DIR,
                           capture_output=True, text=True)
        tarballs = glob.glob(os.path.join(DIR, "better-sqlite3-*.tgz"))
        if p.returncode != 0 or not tarballs:
            raise Unavailable(f"npm pack {config.SQLITE_PACKAGE} failed: "
                              f"{(p.stderr or p.stdout).strip()[-300:]}")
    os.makedirs(src, exist_ok=True)
    with tarfile.open(sorted(tarballs)[-1]) as tar:
        for name in ("sqlite3.c", "sqlite3.h"):     # only these two, by their known names
            data = tar.extractfile(f"package/deps/sqlite3/{name}").read()
            with open(os.path.join(src, name + ".tmp"), "wb") as f:
                f.write(data)
            os.rename(os.path.join(src, name + ".tmp"), os.path.join(src, name))
    return src


def compile_object(src, name, flags):
    obj = os.path.join(DIR, name)
    if not os.path.exists(obj):
        print(f"  sqlite: compiling {name} (once)", file=sys.stderr)
        subprocess.run([config.CC, "-O2", "-g", "-c", "-o", obj + ".tmp",
                        os.path.join(src, "sqlite3.c")] + DEFINES + flags, check=True)
        os.rename(obj + ".tmp", obj)
    return obj


def link(name, src, obj, flags):
    exe = os.path.join(DIR, name)
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(os.path.getmtime(DRIVER),
                                                              os.path.getmtime(obj)):
        subprocess.run([config.CC, "-O2", "-g", "-I", src, "-o", exe, DRIVER, obj] + flags
                       + ["-lm"], check=True)
    return exe


def builds():
    src = fetch()
    plain_obj = compile_object(src, "sqlite3-plain.o", [])
    instr_obj = compile_object(src, "sqlite3-instr.o", INSTRUMENT)
    return (link("sqlite-plain", src, plain_obj, []),
            link("sqlite-noop", src, instr_obj, INSTRUMENT),
            link("sqlite-hookit", src, instr_obj, INSTRUMENT + LINK_HOOKIT),
            os.path.join(src, "sqlite3.c"))


def count_calls(hooked, work):
    """Instrumented calls of one session, from the example count plugin."""
    os.makedirs(work, exist_ok=True)
    env = clean_env({"HOOKIT_PROFILER": config.COUNT_PLUGIN, "HOOKIT_OUTPUT": work})
    subprocess.run([hooked, str(config.SQLITE_ORDERS)], env=env, cwd=work, check=True,
                   capture_output=True)
    total = 0
    for f in glob.glob(os.path.join(work, "count.*.txt")):
        for line in open(f):
            first = line.split(None, 1)[0] if line.strip() else ""
            if first.isdigit():
                total += int(first)
    shutil.rmtree(work, ignore_errors=True)
    return total


def run(reps):
    try:
        plain, noop, hooked, source = builds()
    except Unavailable as e:
        print(f"== 2. SQLite: skipped: {e} ==\n")
        return {"skipped": str(e)}
    lines = sum(1 for _ in open(source, errors="replace"))
    calls = count_calls(hooked, os.path.join(DIR, "count-run"))
    # One diagnostic row more: what reading the debug line info at exit costs.
    nolines = Row("nolines", "hookit JPROFOPTS=nolines", [hooked], "hookit",
                  {"JPROFOPTS": "nolines"})
    rows = standard_rows(plain, noop, hooked, config.WITH_OTHERS, with_compensate=False,
                         extra=[nolines])
    runs = run_alternating(rows, lambda row: [config.SQLITE_ORDERS], reps, "sqlite")
    sums = {r["fields"].get("checksum") for rs in runs.values() for r in rs}
    if len(sums) != 1:
        raise SystemExit(f"bench: the SQLite builds computed different results: {sums}")
    summary = summarize(rows, runs, calls)
    print(f"== 2. SQLite {lines:,} lines (npm {config.SQLITE_PACKAGE}), bench/sqlite_driver.c "
          f"{config.SQLITE_ORDERS:,} orders: {calls:,} instrumented calls per run "
          f"(count plugin), {reps} alternating rounds ==")
    print_table(rows, summary)
    print()
    targets = check_targets(summary, calls)
    return {"calls": calls, "orders": config.SQLITE_ORDERS, "lines": lines, "reps": reps,
            "rows": summary, "targets": targets}


def check_targets(s, calls):
    targets = Targets()
    add = targets.add

    hk, base, noop = s["hookit"], s["uninstrumented"], s["noop"]
    add("calls", "instrumented calls per run >= 20 million", calls / 1e6, calls >= 20e6, " M")
    if hk.get("profile_calls") is not None:
        print(f"  {'':58} (hookit's profile counts {hk['profile_calls']:,.0f} calls)")
    if "uftrace" in s:
        uf = s["uftrace"]
        ratio = (uf["cpu_s"] - base["cpu_s"]) / max(hk["cpu_s"] - base["cpu_s"], 1e-9)
        add("vs_uftrace", "default vs uftrace record: uftrace's added CPU / ours >= 4",
            ratio, ratio >= 4, "x", f"(total CPU ratio {uf['cpu_s'] / hk['cpu_s']:.2f}x)")
    rss = hk["maxrss_mb"] - noop["maxrss_mb"]
    add("rss_added", "peak RSS added over no-op hooks <= 20 MB", rss, rss <= 20, " MB")
    size = hk["output_bytes"] or 0
    add("profile_size", "profile file <= 1 MB", human_bytes(size), size <= 1 << 20)
    # CPU time after main: on a busy machine the wall time of the exit is
    # mostly waiting for a CPU.
    exit_cpu = hk["exit_cpu_ms"]
    note = f"(wall {hk['exit_ms']:.1f} ms"
    if hk.get("build_ms") is not None:
        note += f"; the profile's build_ns: {hk['build_ms']:.1f} ms wall"
    if hk.get("write_ms") is not None:
        note += f"; write_ns: {hk['write_ms']:.1f} ms"
    add("exit_ms", "names + writing the profile at exit, CPU < 100 ms", exit_cpu,
        exit_cpu < 100, " ms", note + ")")
    nl = s.get("nolines")
    if nl:
        print(f"  (JPROFOPTS=nolines, no source lines: peak RSS added "
              f"{nl['maxrss_mb'] - noop['maxrss_mb']:.1f} MB, exit CPU {nl['exit_cpu_ms']:.1f} ms,"
              f" profile {human_bytes(nl['output_bytes'])})")
    print()
    return targets.results
