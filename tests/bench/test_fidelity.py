"""The fidelity gate of issue 26 in its quick size: bench/phases.c, each
phase's share in the default mode against the uninstrumented build's own
timing (bench/run's fidelity workload, BENCH_QUICK: scale 2, 3 rounds, the
default mode and timer=exact; no uftrace, gprof or perf, which stay in make
bench: docs/performance.md says why).

The issue's gate is 3 points, and the bench holds the default to it (and
prints FAIL: it is not met, docs/performance.md says why: the program's
instructions around a ~1 ns call retire in the shadow of the hooks').  What
make check holds is what the default reaches today, so that a change that
loses it fails: at most 15 points off, and at most a quarter of
timer=exact's error on the same runs (66 points on this VM)."""
import os
import sys

import hk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_bench_quick import NOT_UNDER, run_quick  # noqa: E402,F401  (tests/run reads NOT_UNDER)

# The truth must be the program's: its three phases are ~20%, ~38% and ~40%
# of its CPU time (docs/performance.md); a build that no longer has that
# shape would make the gate meaningless.
SHAPE = {"tiny": (10, 35), "mid": (25, 50), "slow": (25, 55)}


def test_phases_gate(tmp):
    text, doc = run_quick(tmp, BENCH_WORKLOADS="fidelity", BENCH_FIDELITY_PROGRAMS=",",
                          BENCH_FIDELITY_MODES="default,exact",
                          BENCH_OUT=os.path.join(hk.BUILD, "bench-quick"))
    ph = doc["fidelity"]["phases"]
    assert "== fidelity 1: bench/phases.c 2:" in text and "targets (issue 26, phases):" in text, text
    assert ph["reps"] == 3 and len(ph["plain_cpu"]) == 3 and len(ph["modes"]["default"]) == 3
    for run in ph["plain_cpu"] + ph["modes"]["default"]:
        assert abs(sum(run.values()) - 100) < 1e-6, run
    truth = ph["truth"]             # per-phase medians: their sum is near 100
    for phase, (lo, hi) in SHAPE.items():
        assert lo <= truth[phase] <= hi, (phase, truth, text)
    # The comparison sees a wrong profile: timer=exact charges the hooks'
    # cost to the phase that calls most (tens of points off).
    assert ph["errors"]["exact"] > 10, (ph["errors"], text)
    gate = [t for t in doc["fidelity"]["targets"] if t["target"] == "phases_default"]
    assert len(gate) == 1 and gate[0]["value"] == ph["errors"]["default"], gate
    assert gate[0]["ok"] is (gate[0]["value"] <= 3), gate
    off = ph["errors"]["default"]
    assert off <= 15 and off <= ph["errors"]["exact"] / 4, \
        f"the default mode is {off:.1f} points off (timer=exact: {ph['errors']['exact']:.1f}):\n{text}"


SCRIPT = """\
 8288     100000 
\t           13a14 sqlite3GetVarint+0x14 (/b/sqlite-noop)
\t           13a99 sqlite3VdbeExec.constprop.0+0x99 (/b/sqlite-noop)

29560     100000 
\t    7f0000001000 __memmove_avx_unaligned_erms+0x20 (/usr/lib/libc.so.6)
\t    7f0000002000 memcpy (inlined)
\t           13b00 sqlite3VdbeExec+0x10 (/b/sqlite-noop)
\t           13c00 main+0x10 (/b/sqlite-noop)

29560     100000 
\t           13d00 __cyg_profile_func_enter@plt+0x0 (/b/sqlite-noop)
\t           13b00 sqlite3VdbeExec+0x20 (/b/sqlite-noop)

29560     100000 
\t    7f0000003000 __cyg_profile_func_enter+0x0 (/usr/lib/libc.so.6)
\t           13b00 sqlite3VdbeExec+0x20 (/b/sqlite-noop)

29560     100000 
\t    7f0000004000 _dl_start+0x10 (/usr/lib/ld-linux-x86-64.so.2)

29560     100000 
\tffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])
\t           13c00 main+0x10 (/b/sqlite-noop)
"""


def test_perf_samples_charged_as_hookit_charges(tmp):
    """perf script's text, as the fidelity workload reads it: every header
    (right-aligned tids too), the innermost instrumented frame owns the
    sample (a library frame folds into it; a clone is its function), a hook
    leaf and a stack without the program are left out."""
    sys.path.insert(0, os.path.join(hk.ROOT, "bench"))
    from benchlib import selfshares
    samples = list(selfshares.parse_script(SCRIPT.splitlines(keepends=True)))
    assert len(samples) == 6, samples
    counts, tally = selfshares.charge(samples, {"sqlite3GetVarint", "sqlite3VdbeExec", "main"})
    assert counts == {"sqlite3GetVarint": 1, "sqlite3VdbeExec": 1, "main": 1}, counts
    assert tally == {"samples": 6, "kept": 3, "kept_in_kernel": 1, "in_hooks": 2,
                     "no_instrumented_frame": 1}, tally


HOOKIT_SCRIPT = """\
 8288     100000 
\t    7f0000001000 enter (inlined)
\t    7f0000001000 jp_enter_counted+0x14 (/b/lib/hookit/libjprof.so)
\t           13a14 sqlite3GetVarint+0x14 (/b/sqlite-hookit)

 8288     100000 
\t           13a14 sqlite3GetVarint+0x18 (/b/sqlite-hookit)

 8288     100000 
\t    7f0000002000 realloc+0x10 (/b/lib/libhookit.so)
\t           13a14 sqlite3GetVarint+0x20 (/b/sqlite-hookit)
"""


def test_perf_on_hookits_build_leaves_hookit_out(tmp):
    """perf on hookit's own build (the placement witness): a sample whose
    innermost real object is libjprof or libhookit is hookit's, an inlined
    frame there included."""
    sys.path.insert(0, os.path.join(hk.ROOT, "bench"))
    from benchlib import selfshares
    samples = list(selfshares.parse_script(HOOKIT_SCRIPT.splitlines(keepends=True)))
    counts, tally = selfshares.charge(samples, {"sqlite3GetVarint"}, selfshares.OWN_DSOS)
    assert counts == {"sqlite3GetVarint": 1} and tally["in_hookit"] == 2, (counts, tally)
    counts, _ = selfshares.charge(samples, {"sqlite3GetVarint"})
    assert counts == {"sqlite3GetVarint": 3}, counts


INLINING_SCRIPT = """\
 8288     100000 
\t           13a14 sqlite3GetVarint+0x14 (inlined)
\t           13a99 sqlite3VdbeExec.constprop.0+0x99 (/b/sqlite-noop)

 8288     100000 
\t    7f0000001000 __memmove_avx_unaligned_erms+0x20 (/usr/lib/libc.so.6)
\t           13b10 sqlite3GetVarint+0x10 (/b/sqlite-noop)
\t           13c00 main+0x10 (/b/sqlite-noop)

 8288     100000 
\t           13a20 pcacheFetch+0x8 (inlined)
\t           13a20 helper+0x8 (/b/sqlite-noop)
\t           13c00 main+0x10 (/b/sqlite-noop)

 8288     100000 
\t           13a30 sqlite3GetVarint+0x4 (inlined)
\t           13d00 _start+0x10 (/b/sqlite-noop)
"""


def test_perf_samples_charged_out_of_line_for_the_view_as_compiled(tmp):
    """The inlining build against hookit's view as compiled: a frame perf
    shows as inlined is its host's code, even when the inlined function is
    instrumented and also has an out-of-line copy (sqlite3GetVarint here);
    the out-of-line copy's own samples stay its own, and a host that is not
    instrumented passes the sample on to the next instrumented frame.  The
    -fno-inline comparison's rule charges the same samples to the inlined
    frames."""
    sys.path.insert(0, os.path.join(hk.ROOT, "bench"))
    from benchlib import selfshares
    samples = list(selfshares.parse_script(INLINING_SCRIPT.splitlines(keepends=True)))
    assert len(samples) == 4, samples
    instrumented = {"sqlite3GetVarint", "sqlite3VdbeExec", "pcacheFetch", "main"}
    counts, tally = selfshares.charge(samples, instrumented, out_of_line=True)
    assert counts == {"sqlite3VdbeExec": 1, "sqlite3GetVarint": 1, "main": 1}, counts
    assert tally == {"samples": 4, "kept": 3, "no_instrumented_frame": 1}, tally
    counts, _ = selfshares.charge(samples, instrumented)
    assert counts == {"sqlite3GetVarint": 3, "pcacheFetch": 1}, counts
