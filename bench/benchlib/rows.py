"""The rows of a table: how one variant of a workload is run.

Every workload is built three ways (uninstrumented, instrumented with
glibc's no-op hooks, instrumented and linked with libhookit), and the rows
run those binaries plainly, with hookit's options, or under uftrace and
callgrind."""
import os
import re
import shutil

KINDS = ("plain", "hookit", "uftrace", "callgrind")


class Row:
    def __init__(self, key, label, argv, kind="plain", env=None):
        self.key = key          # short stable id (JSON, targets)
        self.label = label
        self.argv = argv        # the binary (and the tool before it)
        self.kind = kind
        self.env = env or {}
        self.copies = 1         # processes of it run at once (the thread table's "2 proc")
        self.tool_args = []     # options of the tool (uftrace record's)

    def command(self, work):
        if self.kind == "uftrace":
            return (["uftrace", "record", "-d", os.path.join(work, "uftrace.data")]
                    + self.tool_args + self.argv)
        if self.kind == "callgrind":
            return ["valgrind", "--tool=callgrind", "-q",
                    "--callgrind-out-file=" + os.path.join(work, "callgrind.out")] + self.argv
        return list(self.argv)

    def outputs(self, work):
        """What this row wrote: the profile, the trace directory, callgrind.out."""
        if self.kind == "hookit":
            return [f for f in os.listdir(work) if f.endswith(".prof")]
        if self.kind == "uftrace":
            return ["uftrace.data"] if os.path.exists(os.path.join(work, "uftrace.data")) else []
        if self.kind == "callgrind":
            return [f for f in os.listdir(work) if f.startswith("callgrind.out")]
        return []


def missing_tool_notes(want_others):
    """Which comparison tools are missing, with how to install them."""
    notes = []
    if not want_others:
        return notes
    if not shutil.which("uftrace"):
        notes.append("uftrace is not installed: no `uftrace record` row "
                     "(Debian/Ubuntu: apt-get install uftrace)")
    if not shutil.which("valgrind"):
        notes.append("valgrind is not installed: no callgrind row "
                     "(Debian/Ubuntu: apt-get install valgrind)")
    return notes


def standard_rows(plain, noop, hooked, want_others, extra=(), with_compensate=True,
                  with_off=False, floor_lib=None, count_floors=None, uftrace_args=()):
    """The rows of issue 5, in table order ("hookit": every call timed,
    timer=exact; "sample": the default, timer=sample).  plain, noop, hooked: the three builds;
    floor_lib: bench/clock_floor.c built, for a "TSC floor" row; count_floors:
    bench/tree_floor.c and key_floor.c built, for the rows of the floors under
    timer=sample (count_floor_libs()); uftrace_args: options uftrace record needs
    on this workload (in the row's label)."""
    rows = [Row("uninstrumented", "uninstrumented", [plain]),
            Row("noop", "glibc no-op hooks", [noop])]
    if floor_lib:
        rows.append(Row("floor", "TSC floor (hooks: rdtsc only)", [noop],
                        env={"LD_PRELOAD": floor_lib}))
    if count_floors:
        tree, key = count_floors
        rows += [tree_floor_row(noop, tree),
                 Row("keyfloor", "key floor (context keys)", [noop],
                     env={"LD_PRELOAD": key})]
    if with_off:
        rows.append(Row("off", "hookit off (HOOKIT_PROFILING=0)", [hooked],
                        env={"HOOKIT_PROFILING": "0"}))
    rows += [Row("hookit", "hookit JPROFOPTS=timer=exact", [hooked], "hookit",
                 {"JPROFOPTS": "timer=exact"}),
             Row("sample", "hookit default (timer=sample)", [hooked], "hookit"),
             Row("throttle", "hookit JPROFOPTS=throttle (docs/filters.md)", [hooked], "hookit",
                 {"JPROFOPTS": "throttle"})]
    if with_compensate:
        rows.append(Row("compensate", "hookit JPROFOPTS=timer=exact,compensate", [hooked], "hookit",
                        {"JPROFOPTS": "timer=exact,compensate"}))
    rows.append(Row("alloc", "hookit I/O + JPROFOPTS=alloc", [hooked], "hookit",
                    {"JPROFOPTS": "alloc"}))
    rows += list(extra)
    if want_others and shutil.which("uftrace"):
        label = " ".join(["uftrace record"] + list(uftrace_args)) + " (no-op build)"
        rows.append(Row("uftrace", label, [noop], "uftrace"))
        rows[-1].tool_args = list(uftrace_args)
    if want_others and shutil.which("valgrind"):
        rows.append(Row("callgrind", "callgrind (uninstrumented)", [plain], "callgrind"))
    return rows


def tree_floor_row(noop, lib, key="treefloor", label="tree floor (bare tree)"):
    """The no-op build with bench/tree_floor.c (lib, built with some of its
    options) preloaded, asked to report what it counted."""
    return Row(key, label, [noop], env={"LD_PRELOAD": lib, "TREE_FLOOR_REPORT": "1"})


TREE_FLOOR_SAID = re.compile(r"tree floor: (\d+) contexts, (\d+) calls")


def tree_floor_count(summary):
    """(contexts, calls) a tree floor row's report gave, or None."""
    for line in summary["stderr"]:
        m = TREE_FLOOR_SAID.match(line)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None
