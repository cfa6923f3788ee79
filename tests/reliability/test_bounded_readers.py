"""Readers of outside input allocate in proportion to the input: a tiny
file whose numbers claim a huge range (a function id near the trace
format's limit, an I/O event time stamp years after the start) must not
make `hookit` allocate and clear tables up to that number.  The pages the
reading process touches (its minor page faults) are compared with the same
reader on a file without the huge number."""
import glob, os, struct, subprocess

import hk

FLOW = os.path.join(hk.ROOT, "tests", "reports", "progs", "flow.c")
TR_HEADER_SIZE, TR_SECTION_HDR, TR_THREAD_HDR = 64, 12, 64
TR_SEC_THREAD, TR_SEC_IDMAP = 1, 3
TR_MAX_ID = (1 << 22) - 1


def touched_kb(tmp, argv):
    """(exit status, stdout, KB of memory touched: minor page faults) of
    argv alone (wait4)."""
    out_path = os.path.join(tmp, "out.txt")
    with open(out_path, "w") as out, open(os.path.join(tmp, "err.txt"), "w") as err:
        p = subprocess.Popen(argv, cwd=tmp, env=hk.test_env(), stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, open(out_path).read(), usage.ru_minflt * os.sysconf("SC_PAGE_SIZE") // 1024


def sections(data):
    """[(type, body offset, body length)] of a trace file."""
    out, off = [], struct.unpack_from("<I", data, 12)[0]
    while off < len(data):
        kind, length = struct.unpack_from("<IQ", data, off)
        out.append((kind, off + TR_SECTION_HDR, length))
        off += TR_SECTION_HDR + length
    return out


def with_ids(data, new_id):
    """The trace with every function id replaced by new_id(position in the
    id map), in the map and in every record (still a valid trace)."""
    data = bytearray(data)
    secs = sections(data)
    _, idmap, _ = next(s for s in secs if s[0] == TR_SEC_IDMAP)
    count = struct.unpack_from("<I", data, idmap)[0]
    renamed = {}
    for i in range(count):
        old = struct.unpack_from("<I", data, idmap + 4 + 4 * i)[0]
        renamed[old] = new_id(i)
        struct.pack_into("<I", data, idmap + 4 + 4 * i, renamed[old])
    for kind, body, length in secs:
        if kind != TR_SEC_THREAD:
            continue
        for off in range(body + TR_THREAD_HDR, body + length, 8):
            rec = struct.unpack_from("<Q", data, off)[0]
            if rec & 3 in (0, 1):
                rid = renamed[(rec >> 2) & TR_MAX_ID]
                struct.pack_into("<Q", data, off, rec & ~(TR_MAX_ID << 2) | rid << 2)
    return bytes(data)


def test_trace_with_a_sparse_function_id(tmp):
    exe = hk.cc(tmp, [FLOW], "flow", libs=["-lpthread"])
    hk.run(tmp, [exe], env={"HOOKIT_PROFILER": "libhktrace.so"})
    [trace] = glob.glob(os.path.join(tmp, "hookit.flow.*.trace"))
    data = open(trace, "rb").read()
    dense, sparse = os.path.join(tmp, "dense.trace"), os.path.join(tmp, "sparse.trace")
    with open(dense, "wb") as f:
        f.write(with_ids(data, lambda i: i))
    with open(sparse, "wb") as f:        # the first function at the largest id
        f.write(with_ids(data, lambda i: TR_MAX_ID if i == 0 else i))
    rc0, flat0, kb0 = touched_kb(tmp, [hk.BIN, "report", "--flat", dense])
    rc1, flat1, kb1 = touched_kb(tmp, [hk.BIN, "report", "--flat", sparse])
    assert rc0 == 0 and rc1 == 0, open(os.path.join(tmp, "err.txt")).read()
    assert flat1 == flat0 and "fib" in flat0, (flat0, flat1)     # same names and counts
    # a table indexed by id would be 16 MiB, written in full
    assert kb1 < kb0 + 4096, (kb0, kb1)


def test_ioprof_log_with_a_far_time_stamp(tmp):
    log = os.path.join(tmp, "app.ioprof.log")
    start, tps = 1000, 1e9
    far = start + int(3e7 * tps)        # a year later: 30 million 1-second intervals
    with open(log, "w") as f:
        f.write("# ioprof log 1\nstart_wall_ns 0\nstart_ticks %d\nticks_per_sec %.1f\n"
                "exe /bin/app\nargs app\npid 7\nppid 1\n"
                "columns op func tid t0 t1 result fd file bytes offset errno path\n" % (start, tps))
        f.write("open fopen 7 1100 1200 3 3 1 0 -1 0 /tmp/data\n")
        f.write("write fwrite 7 1300 1400 10 3 1 10 0 0 -\n")
        f.write("write fwrite 7 %d %d 10 3 1 10 10 0 -\n" % (far, far + 100))
    small = os.path.join(tmp, "small.ioprof.log")
    with open(log) as f, open(small, "w") as g:
        g.write("".join(f.readlines()[:-1]))
    svg = os.path.join(tmp, "io.svg")
    rc0, _, kb0 = touched_kb(tmp, [hk.BIN, "io", "--plot", svg, small])
    rc1, out, kb1 = touched_kb(tmp, [hk.BIN, "io", "--plot", svg, log])
    assert rc0 == 0 and rc1 == 0, open(os.path.join(tmp, "err.txt")).read()
    assert "/tmp/data" in out, out
    text = open(svg).read()
    assert text.count("bytes written</title>") == 2, text   # the first and the far interval
    # two tables of 16 million intervals would be 256 MiB
    assert kb1 < kb0 + 4096, (kb0, kb1)
