"""A short description of the machine and of how busy it is."""
import os
import platform
import subprocess

from . import config
from .build import compile_exe


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def memory_gb():
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1 << 20)
    except OSError:
        pass
    return 0.0


def first_line(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return "?"


def commit():
    rev = first_line(["git", "-C", config.ROOT, "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", config.ROOT, "diff", "--quiet", "HEAD", "--",
                            "profiler", "hookit", "lifecycle", "profile"],
                           capture_output=True).returncode
    return rev + (" + uncommitted changes in the profiler" if dirty == 1 else "")


# How long bench/cores runs two threads, seconds.
CORES_SECONDS = 1 if config.QUICK else 2


def cores_check():
    """bench/cores.c: {"rate": one thread's register-only additions per us,
    "slices": 20 ms slices of two threads, "both_slow": slices in which both
    ran under 65% of that, "one_slow": ... one of them}, or None."""
    exe = compile_exe("cores", [os.path.join(config.ROOT, "bench", "cores.c")], [], ["-pthread"])
    p = subprocess.run([exe, str(CORES_SECONDS)], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    fields = dict(kv.split("=", 1) for kv in p.stdout.split())
    return {k: int(v) for k, v in fields.items()}


def print_cores(before, after):
    """What the cores check said before and after a table: whether the
    machine gave the table's code a core of its own (one thread's rate: it
    drops when something else runs on the core's other hardware thread)
    and two threads two cores (both slow at once: our two virtual CPUs on
    one core)."""
    print("The machine around this table (bench/cores: a loop of register additions, no")
    print("memory; one thread's rate drops when something else uses its core; both of two")
    print("threads slow at once: the two virtual CPUs on one core):")
    for when, c in (("before", before), ("after", after)):
        if c:
            print(f"  {when}: 1 thread {c['rate']:,} adds/us; 2 threads: both under 65% of that in"
                  f" {c['both_slow']} of {c['slices']} 20 ms slices, one of them in {c['one_slow']}")
    print()


def load():
    return os.getloadavg()


def load_text():
    l1, l5, l15 = load()
    return f"load average {l1:.1f} {l5:.1f} {l15:.1f} on {os.cpu_count()} CPUs"


def busy():
    return load()[0] > (os.cpu_count() or 1)


def describe():
    u = platform.uname()
    return {
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gb": round(memory_gb(), 1),
        "kernel": f"{u.system} {u.release}",
        "cc": first_line([config.CC, "--version"]),
        "uftrace": first_line(["uftrace", "--version"]) if config.WITH_OTHERS else None,
        "valgrind": first_line(["valgrind", "--version"]) if config.WITH_OTHERS else None,
        "commit": commit(),
    }


def print_description(d):
    print(f"machine: {d['cpu']}, {d['cpus']} CPUs, {d['memory_gb']:.0f} GB; {d['kernel']}")
    print(f"compiler: {d['cc']}, -O2 -g; hookit {d['commit']}")
    tools = [t for t in (d.get("uftrace"), d.get("valgrind")) if t and t != "?"]
    if tools:
        print("compared with: " + "; ".join(tools))
