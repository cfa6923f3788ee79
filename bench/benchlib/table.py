"""Medians, the printed tables, and the targets of issue 5 next to them."""
import statistics


def med(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def span(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return (min(vals), max(vals)) if vals else (None, None)


def human_bytes(n):
    if n is None:
        return "-"
    if n == 0:
        return "0"
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def summarize(rows, runs, calls):
    """Per row: the medians and ratios the table prints (also the JSON)."""
    base = runs["uninstrumented"]
    noop = runs.get("noop")
    base_cpu = med(base, "cpu_ns")
    noop_cpu = med(noop, "cpu_ns") if noop else None
    out = {}
    for row in rows:
        rs = runs[row.key]
        cpu = med(rs, "cpu_ns")
        s = {
            "label": row.label,
            "kind": row.kind,
            "reps": len(rs),
            "wall_s": med(rs, "wall_ns") / 1e9,
            "wall_s_range": [v / 1e9 for v in span(rs, "wall_ns")],
            "cpu_s": cpu / 1e9,
            "cpu_s_range": [v / 1e9 for v in span(rs, "cpu_ns")],
            "ns_per_call": cpu / calls,
            "loop_ns_per_call": med(rs, "loop_cpu_ns") / calls,
            "loop_wall_ns": med(rs, "loop_ns"),
            "loop_cpu_ns": med(rs, "loop_cpu_ns"),
            "added_ns_per_call_over_noop": (cpu - noop_cpu) / calls if noop_cpu else None,
            "x_uninstrumented": cpu / base_cpu,
            "maxrss_mb": med(rs, "maxrss_kb") / 1024,
            "output_bytes": med(rs, "output_bytes"),
            "stderr": sorted({r["stderr"].splitlines()[0] for r in rs if r.get("stderr")}),
            "exit_ms": med(rs, "exit_ns") / 1e6 if med(rs, "exit_ns") is not None else None,
            "exit_cpu_ms": (med(rs, "exit_cpu_ns") / 1e6
                            if med(rs, "exit_cpu_ns") is not None and row.kind != "uftrace"
                            else None),
        }
        if row.kind == "hookit":
            s["profile_written"] = all(r.get("profile") for r in rs)
            s["main_incl_ns"] = med(rs, "main_incl_ns")
            equiv = [r["main_incl_ns"] - r["loop_ns"] + r["loop_cpu_ns"] for r in rs
                     if r.get("main_incl_ns") is not None]
            s["compensated_cpu_equiv_ns"] = statistics.median(equiv) if equiv else None
            s["profile_calls"] = med(rs, "profile_calls")
            s["profile_nodes"] = med(rs, "profile_nodes")
            builds = [int(r["meta"]["build_ns"]) for r in rs
                      if r.get("meta") and "build_ns" in r["meta"]]
            writes = [int(r["meta"]["write_ns"]) for r in rs
                      if r.get("meta") and "write_ns" in r["meta"]]
            s["build_ms"] = statistics.median(builds) / 1e6 if builds else None
            s["write_ms"] = statistics.median(writes) / 1e6 if writes else None
            for key in ("unmatched_exits", "dropped_events"):
                vals = [int(r["meta"][key]) for r in rs if r.get("meta") and key in r["meta"]]
                s[key] = max(vals) if vals else None
            over = [int(r["meta"]["overhead_ns_per_call"]) for r in rs
                    if r.get("meta") and "overhead_ns_per_call" in r["meta"]]
            s["meta_overhead_ns_per_call"] = statistics.median(over) if over else None
        out[row.key] = s
    return out


HEAD = (f"{'variant':31} {'wall s':>6} {'(min-max)':>13} {'CPU s':>6} {'(min-max)':>13} "
        f"{'ns/call':>8} {'loop':>6} {'+ns/call':>8} {'x':>6} {'RSS':>6} {'output':>9} "
        f"{'exit':>7} {'exit':>7}")
HEAD2 = (f"{'':31} {'':>6} {'':>13} {'':>6} {'':>13} "
         f"{'(CPU)':>8} {'ns/cal':>6} {'/no-op':>8} {'uninst':>6} {'MB':>6} {'':>9} "
         f"{'ms':>7} {'CPU ms':>7}")


def fmt_range(lo, hi):
    return f"{lo:.2f}-{hi:.2f}"


def print_table(rows, summary):
    print(HEAD)
    print(HEAD2)
    print("-" * len(HEAD))
    for row in rows:
        s = summary[row.key]
        added = s["added_ns_per_call_over_noop"]
        note = ""
        if s.get("profile_written") is False:
            note = "  (no profile written!)"
        exit_ms = f"{s['exit_ms']:7.1f}" if s["exit_ms"] is not None else f"{'-':>7}"
        exit_ms += f" {s['exit_cpu_ms']:7.1f}" if s["exit_cpu_ms"] is not None else f" {'-':>7}"
        print(f"{s['label']:31} {s['wall_s']:6.2f} {fmt_range(*s['wall_s_range']):>13} "
              f"{s['cpu_s']:6.2f} {fmt_range(*s['cpu_s_range']):>13} "
              f"{s['ns_per_call']:8.2f} {s['loop_ns_per_call']:6.2f} "
              f"{added if added is not None else 0:8.2f} {s['x_uninstrumented']:6.2f} "
              f"{s['maxrss_mb']:6.1f} {human_bytes(s['output_bytes']):>9} {exit_ms}{note}")
    for row in rows:
        s = summary[row.key]
        for key in ("unmatched_exits", "dropped_events"):
            if s.get(key):
                print(f"note: {s['label']}: the profile reports {key} = {s[key]:,}")
        for line in summary[row.key]["stderr"][:2]:
            print(f"note: {summary[row.key]['label']} said on stderr: {line[:150]}")


LEGEND = """\
wall s, CPU s: the whole process (start-up and exit included), median and
  (min-max) of the runs; CPU = user + system time from wait4's rusage, which
  includes waited-for children (uftrace's recorder and its target both count).
ns/call (CPU): median CPU / calls.  loop ns/cal: the program's own CPU time of
  the work alone (no start-up, no exit; for uftrace the target's share only).
+ns/call /no-op: CPU per call added over glibc's no-op hooks.
x uninst: CPU time / the uninstrumented build's.  RSS MB: peak resident set.
output: the profile / uftrace.data directory / callgrind.out.
exit ms: from the end of main (the program prints CLOCK_MONOTONIC) until the
  process is reaped: writing the profile, trace or callgrind.out, plus the
  bare exit the first rows show.  exit CPU ms: the CPU time spent in that
  span (total CPU - the CPU clock at the end of main; not for uftrace, whose
  recorder works all along)."""


def verdict(ok):
    return "shown" if ok is None else "PASS" if ok else "FAIL"


def target_line(text, value, ok, unit="", note=""):
    shown = f"{value:.2f}{unit}" if isinstance(value, float) else f"{value}{unit}"
    return f"  {text:58} {shown:>12}  {verdict(ok)}{('  ' + note) if note else ''}"


class Targets:
    """The targets of one table (issue 5's, or issue 17's on real code):
    each printed as it is checked and kept (results) for the JSON and the
    list of missed ones."""

    def __init__(self, issue="issue 5"):
        self.results = []
        print(f"targets ({issue}):")

    def add(self, key, text, value, ok, unit="", note=""):
        print(target_line(text, value, ok, unit, note))
        self.results.append({"target": key, "value": value, "ok": ok, "note": note})

    def show(self, key, text, value, unit="", note=""):
        """A figure the issue asks to show, without a threshold: kept in the
        JSON with ok None, never among the missed targets."""
        self.add(key, text, value, None, unit, note)
