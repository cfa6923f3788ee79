"""One measured run of one row: the process's wall and CPU time, peak RSS,
the program's own numbers, what it wrote, and how long it took to end."""
import glob
import json
import os
import shutil
import subprocess
import time

from . import config


# How far ahead run_copies releases its copies: time for every copy to
# start (hookit's start-up included) on a loaded machine.
COPIES_START_MS = 300


class RunFailed(Exception):
    pass


def clean_env(extra):
    """The caller's environment without hookit's or uftrace's settings, plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HOOKIT_", "BENCH_")) and k not in ("JPROFOPTS", "LD_PRELOAD")}
    env.update(extra)
    return env


def tree_size(path):
    """Bytes of a file, or of every file under a directory."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for top, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(top, f))
            except OSError:
                pass
    return total


def parse_fields(stdout):
    """The program's last line: key=value pairs (numbers where they are)."""
    lines = [l for l in stdout.splitlines() if "=" in l]
    if not lines:
        return None
    fields = {}
    for kv in lines[-1].split():
        k, _, v = kv.partition("=")
        try:
            fields[k] = int(v)
        except ValueError:
            fields[k] = v
    return fields


def launcher():
    """bench/launch.c, built once: runs a command and reports its rusage."""
    from .build import compile_exe
    return compile_exe("launch", [os.path.join(config.ROOT, "bench", "launch.c")], [])


def read_and_remove(path):
    with open(path, errors="replace") as f:
        text = f.read()
    os.unlink(path)
    return text


def run_once(row, args, work):
    """Runs row's command with args in the fresh directory work, through
    bench/launch.c.

    wait4 gives the rusage of the process and of the children it waited
    for (uftrace's recorder and its target both count), so cpu is all the
    CPU time the row cost, start-up and exit included."""
    argv = row.command(work) + [str(a) for a in args]
    env = clean_env(dict(row.env, HOOKIT_OUTPUT=work))
    out_path, err_path = os.path.join(work, ".stdout"), os.path.join(work, ".stderr")
    report_path = os.path.join(work, ".launch")
    with open(out_path, "w") as out_f, open(err_path, "w") as err_f:
        p = subprocess.run([launcher(), report_path] + argv, env=env, cwd=work,
                           stdout=out_f, stderr=err_f)
    out, err = read_and_remove(out_path), read_and_remove(err_path)
    if p.returncode != 0 or not os.path.exists(report_path):
        raise RunFailed(f"{' '.join(argv)} could not be run:\n{err[-2000:]}")
    report = parse_fields(read_and_remove(report_path))
    status = report["status"]
    code = os.waitstatus_to_exitcode(status)
    fields = parse_fields(out)
    if code != 0 or not fields or "ns" not in fields:
        raise RunFailed(f"{' '.join(argv)} failed (exit {code}):\n{out[-2000:]}{err[-2000:]}")
    run = {
        "wall_ns": report["wall_ns"],
        "cpu_ns": report["cpu_ns"],
        "maxrss_kb": report["maxrss_kb"],
        "loop_ns": fields["ns"],
        "loop_cpu_ns": fields["cpu_ns"],
        "exit_ns": max(0, report["reaped_ns"] - fields["end_ns"]) if "end_ns" in fields else None,
        # CPU after main returned (rusage and the CPU clock count the same
        # runtime); for uftrace this is mostly the recorder's whole work.
        "exit_cpu_ns": (max(0, report["cpu_ns"] - fields["end_cpu_ns"])
                        if "end_cpu_ns" in fields else None),
        "fields": fields,
        "stderr": err.strip(),
    }
    run["output_bytes"] = sum(tree_size(os.path.join(work, f)) for f in row.outputs(work))
    if row.kind == "hookit":
        run.update(read_profile(work))
    return run


def run_copies(row, args, work, copies):
    """copies processes of row's command at once, released together (the
    program's START_AT argument, bench/recurse.c): the loop's wall time is
    from the release to the last copy's end, its CPU time all copies'.
    Only what the thread table reads; no profile is checked."""
    start_at = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + COPIES_START_MS * 1000000
    procs = []
    for k in range(copies):
        out = os.path.join(work, f"copy{k}")
        os.mkdir(out)
        procs.append(subprocess.Popen(row.command(out) + [str(a) for a in args] + [str(start_at)],
                                      env=clean_env(dict(row.env, HOOKIT_OUTPUT=out)), cwd=out,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    ends, cpu = [], 0
    for p in procs:
        out, err = p.communicate()
        fields = parse_fields(out)
        if p.returncode != 0 or not fields or "late_ns" not in fields:
            raise RunFailed(f"{' '.join(row.command(work))} (one of {copies} copies) failed "
                            f"(exit {p.returncode}):\n{out[-2000:]}{err[-2000:]}")
        ends.append(fields["late_ns"] + fields["ns"])
        cpu += fields["cpu_ns"]
    return {"loop_ns": max(ends), "loop_cpu_ns": cpu}


def profiles_in(work):
    return sorted(f for f in os.listdir(work) if f.endswith(".prof"))


def read_profile(work):
    """From hookit's profile: metadata, the main thread's `main` inclusive
    time, and the calls of all nodes of all threads."""
    profs = profiles_in(work)
    if not profs:
        return {"profile": None}
    p = subprocess.run([config.HOOKIT, "export", "--format=json", os.path.join(work, profs[0])],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RunFailed(f"hookit export failed: {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    meta = doc["process"].get("meta", {})
    main_incl = None
    for t in doc["threads"]:
        for r in t["nodes"]:
            if r["parent"] is None and r["name"] == "main" and main_incl is None:
                main_incl = r["incl_ns"]
    return {
        "profile": profs[0],
        "meta": meta,
        "main_incl_ns": main_incl,
        "profile_calls": sum(n["calls"] for t in doc["threads"] for n in t["nodes"]),
        "profile_nodes": sum(len(t["nodes"]) for t in doc["threads"]),
    }


def count_calls(hooked, args, work):
    """Instrumented calls of one run, from the example count plugin."""
    os.makedirs(work, exist_ok=True)
    env = clean_env({"HOOKIT_PROFILER": config.COUNT_PLUGIN, "HOOKIT_OUTPUT": work})
    subprocess.run([hooked] + [str(a) for a in args], env=env, cwd=work, check=True,
                   capture_output=True)
    total = 0
    for f in glob.glob(os.path.join(work, "count.*.txt")):
        for line in open(f):
            first = line.split(None, 1)[0] if line.strip() else ""
            if first.isdigit():
                total += int(first)
    shutil.rmtree(work, ignore_errors=True)
    return total
