"""A short description of the machine and of how busy it is."""
import os
import platform
import subprocess

from . import config


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
