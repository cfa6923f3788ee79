"""`make stress`: libmonitor's exit race (issue 18) at full size: 4 threads
calling exit at once, 100 runs, each checked as tests/lifecycle/test_contract
checks its 10 (one begin_process_exit, every fini_thread after it and before
the one fini_process, one fini_library)."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lifecycle"))
import test_contract  # noqa: E402


def test_exit_race_4_threads_100_runs(tmp):
    test_contract.exit_race(tmp, 100)
