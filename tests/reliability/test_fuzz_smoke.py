"""`make check`'s share of the fuzzing: every libFuzzer target of tests/fuzz
is built, replays its kept crashing inputs (tests/fuzz/regressions/), then
fuzzes for a few seconds from the checked-in seeds.  `make fuzz` runs the
same for longer (FUZZ_SECONDS, default 60 each)."""
import os, subprocess

import hk

SECONDS = int(os.environ.get("HOOKIT_FUZZ_SMOKE_SECONDS", "3"))


def test_fuzz_targets_smoke(tmp):
    if not hk.have("clang"):
        hk.skip("clang (libFuzzer) not installed")
    p = subprocess.run([os.path.join(hk.ROOT, "tests", "fuzz", "run"), "--seconds", str(SECONDS),
                        "-j", "2"], cwd=hk.ROOT, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, HOOKIT_BUILD_DIR=hk.BUILD))
    summary = [l for l in p.stdout.splitlines() if l.startswith("fuzz")]
    assert p.returncode == 0, "\n".join(summary) + "\n" + p.stderr[-3000:]
    targets = [l for l in summary if l.startswith("fuzz ") and ": ok," in l]
    assert len(targets) >= 8, summary
    assert all(" 0 executions" not in l for l in targets), summary
