"""The timeline export at size: --min-time, --depth, --thread, --from/--to
leave calls out as the trace is read; a size estimate warns above 200 MB;
and report's trace listing refuses --min-pct and --sort instead of ignoring
them."""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import test_trace as tt  # noqa: E402


def events(tmp, trace, *args):
    p = hk.hookit(tmp, "export", "--format=chrome", *args, trace)
    doc = json.loads(p.stdout)
    return [e for e in doc["traceEvents"] if e["ph"] == "X"], p.stderr


def test_chrome_filters(tmp):
    tt.record(tmp)
    trace = tt.traces(tmp)[0]
    full, err = events(tmp, trace)
    assert err == "" and len(full) > 10, (err, len(full))
    # --depth 2: main and what it calls, nothing deeper
    shallow, _ = events(tmp, trace, "--depth", "2")
    assert {e["name"] for e in shallow} == {"main", "mid", "fib", "slow"}, shallow
    assert len(shallow) == 4
    # --min-time: only calls at least that long, and every such call
    cut = sorted(float(e["dur"]) for e in full)[len(full) // 2]      # microseconds
    longer, _ = events(tmp, trace, "--min-time", f"{cut}us")
    want = [e for e in full if float(e["dur"]) >= cut - 0.0005]
    assert 0 < len(longer) <= len(want) and len(longer) >= len(want) - 1, (len(longer), len(want))
    # --from/--to: the calls overlapping a window
    slow = [e for e in full if e["name"] == "slow"][0]     # ts: us since the process start
    window, _ = events(tmp, trace, "--from", f"{float(slow['ts']) + 0.001:.3f}us")
    assert {e["name"] for e in window} == {"main", "slow", "leaf"}, window
    before, _ = events(tmp, trace, "--to", f"{float(slow['ts']) - 0.001:.3f}us")
    assert "slow" not in {e["name"] for e in before} and "mid" in {e["name"] for e in before}
    p = hk.hookit(tmp, "export", "--format=chrome", "--min-time", "soon", trace, check=False)
    assert p.returncode == 2 and "--min-time needs a time" in p.stderr


def test_listing_refuses_min_pct_and_sort(tmp):
    tt.record(tmp)
    trace = tt.traces(tmp)[0]
    for args, opt in ((["--min-pct", "5"], "--min-pct"), (["--sort", "calls"], "--sort")):
        p = hk.hookit(tmp, "report", *args, trace, check=False)
        assert p.returncode == 2 and f"{opt} does not apply to a trace's listing" in p.stderr, p
        assert hk.hookit(tmp, "report", "--tree", *args, trace).returncode == 0
