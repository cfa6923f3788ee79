"""Third-party sources of the bench workloads, fetched at bench time into
OUT (a cache, never committed) through tests/lib/upstream.py, the one home
of these downloads (the conformance corpus uses it too)."""
import os
import sys

from . import config

sys.path.insert(0, os.path.join(config.ROOT, "tests", "lib"))
import upstream  # noqa: E402


class Unavailable(Exception):
    """A workload that cannot be built here: its table says skipped, and why."""


def fetch(fn, *args):
    """fn(*args, cache) from upstream, its failure as Unavailable."""
    try:
        with upstream.LOCK:
            return fn(*args, config.OUT)
    except upstream.FetchFailed as e:
        raise Unavailable(str(e)) from None
