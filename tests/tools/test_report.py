"""hookit report: golden outputs for the fixed profile of mkprof.c, checked
by hand against its numbers (see the comments in mkprof.c)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proftools as pt  # noqa: E402

# Thread 0: children sorted by inclusive time; BASE = exclusive, CUM = inclusive.
TREE_T0 = b"""\
== pid 4242  tid 4242  thread 0 (main)  exe /usr/local/bin/demo app
    LV      CALLS       BASE        CUM  NAME
     0          1    60.00us     1.00ms  F:demo.main()
     1          1   100.00us   600.00us   F:demo.fib()
     2          2   200.00us   500.00us    F:demo.fib()
     3          4   300.00us   300.00us     F:demo.fib()
     1          3   150.00us   300.00us   F:libunits.so.units::operator"" _km()
     2          2   100.00us   100.00us    F:demo.fib()
     2          3    50.00us    50.00us    F:libc.so.6.io_read()
     1          5    40.00us    40.00us   MPI:MPI_Send()
"""

# Control characters escaped, the invalid UTF-8 byte passed through.
TREE_T1 = b"""\
== pid 4242  tid 4243  thread 1 (worker "w1")  exe /usr/local/bin/demo app
    LV      CALLS       BASE        CUM  NAME
     0          1   500.00us     2.00ms  F:demo.worker_loop()
     1          7     1.50ms     1.50ms   F:demo.weird\\name\\t\\x01\xff"end"()
"""

# fib: self 100+200+300+100 = 700us over 9 calls; inclusive counts only its
# outermost activations, main->fib (600us) and main->udl->fib (100us): 700us,
# not the 1.5ms a naive sum of every fib node would give.
FLAT_T0 = b"""\
== pid 4242  tid 4242  thread 0 (main)  exe /usr/local/bin/demo app
  %time       self  cumulative      calls  self/call  total/call  name
  70.00   700.00us    700.00us          9    77.78us     77.78us  F:demo.fib()
  15.00   150.00us    850.00us          3    50.00us    100.00us  F:libunits.so.units::operator"" _km()
   6.00    60.00us    910.00us          1    60.00us      1.00ms  F:demo.main()
   5.00    50.00us    960.00us          3    16.67us     16.67us  F:libc.so.6.io_read()
   4.00    40.00us      1.00ms          5     8.00us      8.00us  MPI:MPI_Send()
"""

FLAT_T1 = b"""\
== pid 4242  tid 4243  thread 1 (worker "w1")  exe /usr/local/bin/demo app
  %time       self  cumulative      calls  self/call  total/call  name
  75.00     1.50ms      1.50ms          7   214.29us    214.29us  F:demo.weird\\name\\t\\x01\xff"end"()
  25.00   500.00us      2.00ms          1   500.00us      2.00ms  F:demo.worker_loop()
"""


def report(tmp, *args):
    p = pt.hookit_raw(tmp, "report", *args)
    assert p.returncode == 0 and p.stderr == b"", p
    return p.stdout


def test_tree_golden(tmp):
    assert report(tmp, pt.fixed(tmp)) == TREE_T0 + b"\n" + TREE_T1


def test_flat_golden_with_recursion(tmp):
    path = pt.fixed(tmp)
    assert report(tmp, "--flat", path) == FLAT_T0 + b"\n" + FLAT_T1
    assert report(tmp, "-f", path) == FLAT_T0 + b"\n" + FLAT_T1


def test_thread_filter(tmp):
    path = pt.fixed(tmp)
    assert report(tmp, "--thread", "4243", path) == TREE_T1
    assert report(tmp, "--thread=4242", "--flat", path) == FLAT_T0
    assert report(tmp, path, "-t", "4242") == TREE_T0     # options after operands too
    p = pt.hookit_raw(tmp, "report", "--thread", "77", path)
    assert p.returncode == 1 and p.stderr == f"hookit: no thread with tid 77 in {path}\n".encode()


def test_several_profiles(tmp):
    a = pt.fixed(tmp, "a.prof")
    pt.mkprof(tmp, "variant", tmp, "b.prof", 2)     # pid 5002, every time doubled
    b = os.path.join(tmp, "b.prof")
    out = report(tmp, a, b)
    parts = out.split(b"\n\n==> ")
    assert len(parts) == 2, out
    assert parts[0] == f"==> {a} <==\n".encode() + TREE_T0 + b"\n" + TREE_T1.rstrip(b"\n")
    second = parts[1]
    assert second.startswith(f"{b} <==\n== pid 5002  tid 5002  thread 0 (main)".encode()), second
    assert b"     0          1   120.00us     2.00ms  F:demo.main()\n" in second
    # --thread picks the matching thread in each profile that has it
    out = report(tmp, "--thread", "5003", a, b)
    assert out.count(b"== pid") == 1 and b"tid 5003  thread 1" in out


def test_unreadable_profile_fails_before_output(tmp):
    a = pt.fixed(tmp)
    p = pt.hookit_raw(tmp, "report", a, os.path.join(tmp, "missing.prof"))
    assert p.returncode == 1 and p.stdout == b""
    assert p.stderr.decode() == f"hookit: {tmp}/missing.prof: cannot open: No such file or directory\n"
