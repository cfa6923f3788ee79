"""hookit export --format=json: the stable schema, key by key."""
import json, os, re, stat, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import proftools as pt  # noqa: E402

NODE_KEYS = ["id", "parent", "depth", "name", "module", "calls", "incl_ns", "excl_ns"]


def export(tmp, *args):
    p = pt.hookit_raw(tmp, "export", *args)
    assert p.returncode == 0 and p.stderr == b"", p
    return json.loads(p.stdout)


def n(name, module, calls, incl, excl, children=(), file=None, line=None, **metrics):
    d = {"name": name, "module": module, "calls": calls, "incl_ns": incl, "excl_ns": excl}
    if file is not None:
        d.update(file=file, line=line)
    d.update(metrics)
    d["children"] = list(children)
    return d


UDL = 'units::operator"" _km(unsigned long long)'
WEIRD = 'weird\\name\t\x01\ufffd"end"'

NESTED = {
    "schema": 2,
    "process": {
        "pid": 4242, "ppid": 1, "exe": "/usr/local/bin/demo app",
        "argv": ["demo", "--n=3", 'quote"d arg'],
        "start_ns": 1700000000123456789, "duration_ns": 5000000,
        "build_ids": {},
        "meta": {"hostname": "testhost", "clock": "CLOCK_MONOTONIC"},
    },
    "threads": [
        {"tid": 4242, "index": 0, "name": "main", "metrics": ["io_bytes_read"], "roots": [
            n("main", "demo", 1, 1000000, 60000, file="demo.c", line=10, io_bytes_read=0, children=[
                n("fib", "demo", 1, 600000, 100000, file="demo.c", line=20, io_bytes_read=0, children=[
                    n("fib", "demo", 2, 500000, 200000, file="demo.c", line=20, io_bytes_read=0, children=[
                        n("fib", "demo", 4, 300000, 300000, file="demo.c", line=20, io_bytes_read=0)])]),
                n(UDL, "libunits.so", 3, 300000, 150000, file="units.cc", line=5, io_bytes_read=4096,
                  children=[n("io_read", "libc.so.6", 3, 50000, 50000, io_bytes_read=4096),
                            n("fib", "demo", 2, 100000, 100000, file="demo.c", line=20, io_bytes_read=0)]),
                n("MPI:MPI_Send", "", 5, 40000, 40000, io_bytes_read=0)])]},
        {"tid": 4243, "index": 1, "name": 'worker "w1"', "metrics": ["alloc_bytes"], "roots": [
            n("worker_loop", "demo", 1, 2000000, 500000, file="demo.c", line=30, alloc_bytes=128,
              children=[n(WEIRD, "demo", 7, 1500000, 1500000, alloc_bytes=64)])]},
    ],
}


def with_ids(doc):
    """NESTED with each node's id (preorder, the profile's node order),
    parent id and depth put first, as the export writes them."""
    import copy
    doc = copy.deepcopy(doc)
    for t in doc["threads"]:
        ids = iter(range(1 << 30))
        stack = [(None, 0, r) for r in reversed(t["roots"])]
        while stack:
            parent, depth, n = stack.pop()
            fields = dict(n)
            n.clear()
            n.update(id=next(ids), parent=parent, depth=depth)
            n.update(fields)
            stack.extend((n["id"], depth + 1, c) for c in reversed(n["children"]))
    return doc


def flat(doc):
    """The schema-2 flat document: each thread's nodes in one table."""
    import copy
    doc = copy.deepcopy(with_ids(doc))
    for t in doc["threads"]:
        nodes = [n for _, n in hk.walk(t.pop("roots"))]
        for n in nodes:
            del n["children"]
        t["nodes"] = nodes
    return doc


EXPECTED = flat(NESTED)


def test_json_key_by_key(tmp):
    doc = export(tmp, "--format=json", pt.fixed(tmp))
    assert doc == EXPECTED
    # key order as documented: the fixed keys first
    for t in doc["threads"]:
        assert list(t) == ["tid", "index", "name", "metrics", "nodes"]
        for i, node in enumerate(t["nodes"]):
            assert list(node)[:8] == NODE_KEYS and node["id"] == i
            assert node["parent"] is None or node["parent"] < i
    assert list(doc) == ["schema", "process", "threads"]
    assert list(doc["process"])[:4] == ["pid", "ppid", "exe", "argv"]
    assert "rank" not in doc["process"]
    hk.check_tree_consistent(hk.nest(doc)["threads"][0])


def test_json_nested_option(tmp):
    """--nested: the same nodes, children inside their parent."""
    prof = pt.fixed(tmp)
    doc = export(tmp, "--format=json", "--nested", prof)
    assert doc == with_ids(NESTED)
    for t in doc["threads"]:
        for _, node in hk.walk(t["roots"]):
            assert list(node)[:8] == NODE_KEYS and list(node)[-1] == "children"
    # hk.nest (what the tests use) gives the same tree from the flat table
    flat_doc = hk.nest(export(tmp, "--format=json", prof))
    for a, b in zip(flat_doc["threads"], doc["threads"]):
        assert [(p, n["calls"], n["id"]) for p, n in hk.walk(a["roots"])] == \
               [(p, n["calls"], n["id"]) for p, n in hk.walk(b["roots"])]


def test_json_escaping_is_exact(tmp):
    p = pt.hookit_raw(tmp, "export", "--format", "json", pt.fixed(tmp))
    raw = p.stdout
    assert b'"weird\\\\name\\t\\u0001\\ufffd\\"end\\""' in raw, raw
    assert b'"units::operator\\"\\" _km(unsigned long long)"' in raw
    raw.decode("utf-8")             # valid UTF-8 whatever the profile held
    assert raw.endswith(b"}\n") and raw.count(b"\n") == 1


def test_several_profiles_make_an_array(tmp):
    a = pt.fixed(tmp, "a.prof")
    pt.mkprof(tmp, "variant", tmp, "b.prof", 3)
    docs = export(tmp, "--format=json", a, os.path.join(tmp, "b.prof"))
    assert isinstance(docs, list) and len(docs) == 2
    assert docs[0] == EXPECTED
    assert docs[1]["process"]["pid"] == 5003
    assert hk.node(hk.nest(docs[1])["threads"][0], "main")["incl_ns"] == 3000000


def test_output_file_is_written_atomically(tmp):
    out = os.path.join(tmp, "out.json")
    with open(out, "w") as f:
        f.write("old")
    os.chmod(out, 0o600)
    p = pt.hookit_raw(tmp, "export", "--format=json", "-o", out, pt.fixed(tmp))
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p
    assert json.load(open(out)) == EXPECTED
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~mask    # a new file's mode
    assert sorted(os.listdir(tmp)) == ["fixed.prof", "out.json"]
    p = pt.hookit_raw(tmp, "export", "--format=json", "--output", "rel.json", "fixed.prof")
    assert p.returncode == 0 and json.load(open(os.path.join(tmp, "rel.json"))) == EXPECTED


def test_output_errors(tmp):
    prof = pt.fixed(tmp)
    p = pt.hookit_raw(tmp, "export", "--format=json", "-o", os.path.join(tmp, "no/dir/x.json"), prof)
    assert p.returncode == 1 and p.stderr.startswith(b"hookit: cannot create "), p
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            r = __import__("subprocess").run([hk.BIN, "export", "--format=json", prof],
                                             stdout=full, stderr=-1)
        assert r.returncode == 1 and b"error writing" in r.stderr, r


def test_unknown_format_lists_valid_ones(tmp):
    prof = pt.fixed(tmp)
    p = pt.hookit_raw(tmp, "export", "--format=xml", prof)
    assert p.returncode == 2 and p.stdout == b""
    err = p.stderr.decode()
    m = re.fullmatch(r"hookit: export: unknown format 'xml' \(valid formats: ([a-z, ]+)\)\n"
                     r"Try 'hookit export --help'.\n", err)
    assert m, err
    listed = m.group(1).split(", ")
    assert "json" in listed, listed
    usage = pt.hookit_raw(tmp, "export", "--help").stdout.decode()
    for f in listed:        # every valid format is described in --help
        assert re.search(rf"^\s+{f}\s+\S", usage, re.M), (f, usage)
    p = pt.hookit_raw(tmp, "export", prof)
    assert p.returncode == 2 and b"--format is required" in p.stderr
