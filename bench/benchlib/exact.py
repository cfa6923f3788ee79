"""The exactness gate of every bench workload (issue 17: speed is never
bought with exactness).  The workload's no-op build runs once with the
reference hook library of the conformance corpus (tests/conformance/
refstack.c, a plain shadow stack) and libhookit both preloaded, chained in
the same run; the two trees are compared path by path, every count.  A
difference, or a profile that reports unmatched exits or dropped events,
fails the bench: a fast wrong tree is no result."""
import os
import shutil
import sys

from . import config

sys.path.insert(0, os.path.join(config.ROOT, "tests", "conformance"))
import conformance as C  # noqa: E402

TIMEOUT = 600


def check(name, exe, args, opts=None):
    """Compares; prints one line; returns {"ok", "summary", "paths", "calls"}.
    opts: JPROFOPTS of the hookit side (timer=sample has hot paths of its
    own, so it passes the gate on its own account)."""
    work = os.path.join(config.OUT, name + "-exact" + ("-" + opts.replace("=", "-") if opts else ""))
    shutil.rmtree(work, ignore_errors=True)
    ref, got = C.run_chained(exe, [str(a) for a in args], work, TIMEOUT,
                             {"JPROFOPTS": opts} if opts else None)
    problems = []
    if ref["hung"] or ref["rc"] != 0:
        problems.append(f"the run failed (exit {ref['rc']}{', hung' if ref['hung'] else ''}): "
                        f"{ref['stderr'].strip()[-300:]}")
    ok, summary, lines, stats = C.compare(ref["procs"], got["procs"])
    if not ok:
        problems.append(summary)
    problems += C.hookit_meta_issues(got)
    verdict = "PASS" if not problems else "FAIL"
    print(f"exactness ({name}{', JPROFOPTS=' + opts if opts else ''}): hookit's tree against the reference, path by path: "
          f"{stats['paths']:,} paths, {stats['calls']:,} calls: {verdict}"
          + (f": {'; '.join(problems)}" if problems else ""))
    for line in lines[:8]:
        print("    " + line)
    if not problems:
        shutil.rmtree(work, ignore_errors=True)
    return {"ok": not problems, "summary": "; ".join(problems), "paths": stats["paths"],
            "calls": stats["calls"]}
