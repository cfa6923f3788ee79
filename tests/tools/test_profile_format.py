"""The profile file: round trip, size, atomic write, and a reader that names
the file and offset of any damage and never crashes."""
import os, random, re, stat, struct, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import proftools as pt  # noqa: E402


def test_round_trip_every_field(tmp):
    path = pt.fixed(tmp)
    p = pt.mkprof(tmp, "check", path)
    assert p.stdout.strip() == b"identical", p.stdout


def test_round_trip_through_a_pipe(tmp):
    """profile_write_fd on a pipe gives the same bytes as the file write."""
    path = pt.fixed(tmp)
    p = pt.mkprof(tmp, "stdout")
    with open(path, "rb") as f:
        assert p.stdout == f.read()
    piped = os.path.join(tmp, "piped.prof")
    with open(piped, "wb") as f:
        f.write(p.stdout)
    assert pt.mkprof(tmp, "check", piped).stdout.strip() == b"identical"


def test_header_layout(tmp):
    data = open(pt.fixed(tmp), "rb").read()
    assert data[:8] == b"\x89HOOKIT\n"
    major, minor, hsize, fsize = struct.unpack_from("<HHIQ", data, 8)
    assert (major, minor, hsize, fsize) == (1, 1, 32, len(data))
    assert [t for t, _ in pt.sections(data)] == [1, 2, 3, 4, 4]


def test_20000_nodes_well_under_1mb(tmp):
    pt.mkprof(tmp, "big", tmp, "big.prof", 20000)
    path = os.path.join(tmp, "big.prof")
    size = os.path.getsize(path)
    assert size < 600 * 1024, size
    doc = hk.export_json(tmp, path)
    assert sum(1 for _ in hk.walk(doc["threads"][0]["roots"])) == 20000


def test_file_mode_follows_umask(tmp):
    for mask, mode in ((0o022, 0o644), (0o077, 0o600)):
        name = f"m{mask:o}.prof"
        subprocess.run([pt.mkprof_bin(), "write", tmp, name], check=True,
                       preexec_fn=lambda m=mask: os.umask(m))
        assert stat.S_IMODE(os.stat(os.path.join(tmp, name)).st_mode) == mode


def leftovers(d):
    return [f for f in os.listdir(d) if ".tmp." in f]


def test_existing_file_is_never_replaced(tmp):
    target = os.path.join(tmp, "x.prof")
    with open(target, "w") as f:
        f.write("precious")
    p = pt.mkprof(tmp, "write", tmp, "x.prof", check=False)
    assert p.returncode == 3, p
    assert p.stdout.startswith(b"EEXIST: ") and b"x.prof" in p.stdout, p.stdout
    assert open(target).read() == "precious"
    assert leftovers(tmp) == []


def test_planted_symlink_is_never_followed(tmp):
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("victim data")
    os.symlink(victim, os.path.join(tmp, "a.prof"))
    os.symlink(os.path.join(tmp, "nonexistent"), os.path.join(tmp, "b.prof"))
    for name in ("a.prof", "b.prof"):
        p = pt.mkprof(tmp, "write", tmp, name, check=False)
        assert p.returncode == 3 and p.stdout.startswith(b"EEXIST"), p
        assert os.path.islink(os.path.join(tmp, name))
    assert open(victim).read() == "victim data"
    assert not os.path.exists(os.path.join(tmp, "nonexistent"))
    assert leftovers(tmp) == []


def test_write_errors_are_reported(tmp):
    p = pt.mkprof(tmp, "write", os.path.join(tmp, "nodir"), "x.prof", check=False)
    assert p.returncode == 1 and b"cannot open directory" in p.stdout and b"nodir" in p.stdout, p
    p = pt.mkprof(tmp, "invalid", tmp, "bad.prof", check=False)
    assert p.returncode == 4 and b"parent" in p.stdout, p
    assert os.listdir(tmp) == []


def report_fails(tmp, path, *pattern):
    """hookit report on a damaged file: exit 1, one message naming the file,
    never a crash."""
    p = pt.hookit_raw(tmp, "report", path)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 1, (p.returncode, err)
    assert err.startswith(f"hookit: {path}: ") and err.count("\n") == 1, err
    assert p.stdout == b"", p.stdout
    for pat in pattern:
        assert re.search(pat, err), (pat, err)
    return err


def test_every_truncation_names_file_and_offset(tmp):
    data = open(pt.fixed(tmp), "rb").read()
    cut = os.path.join(tmp, "cut.prof")
    for n in range(len(data)):
        with open(cut, "wb") as f:
            f.write(data[:n])
        err = report_fails(tmp, cut, r"truncated at offset \d+")
        assert f"offset {n}" in err, (n, err)


def test_bit_flips_are_caught(tmp):
    data = open(pt.fixed(tmp), "rb").read()
    flip = os.path.join(tmp, "flip.prof")
    kinds = set()
    for i in range(len(data)):
        b = bytearray(data)
        b[i] ^= 1 << (i % 8)
        with open(flip, "wb") as f:
            f.write(b)
        err = report_fails(tmp, flip, r"offset \d+|bad magic")
        kinds.add("crc" if "checksum mismatch" in err else "other")
    assert "crc" in kinds


def test_checksum_message(tmp):
    data = bytearray(open(pt.fixed(tmp), "rb").read())
    data[200] ^= 0x10
    path = os.path.join(tmp, "bad.prof")
    open(path, "wb").write(data)
    report_fails(tmp, path, r"corrupt at offset 24: checksum mismatch")


def test_random_bytes(tmp):
    rnd = random.Random(7)
    path = os.path.join(tmp, "rnd.prof")
    for i in range(60):
        n = rnd.choice([1, 7, 8, 31, 32, 33, 100, 1000])
        data = bytes(rnd.getrandbits(8) for _ in range(n))
        if i % 2:       # past the magic check, into the header checks
            data = b"\x89HOOKIT\n" + data
        open(path, "wb").write(data)
        report_fails(tmp, path)


def test_reader_under_asan_never_crashes(tmp):
    """Every prefix, every bit flip (with and without the crc check) and
    random mutations, in-process under AddressSanitizer and UBSan."""
    path = pt.fixed(tmp)
    p = subprocess.run([pt.readfuzz_bin(), path, "20000"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 failures" in p.stdout


def test_foreign_files(tmp):
    path = os.path.join(tmp, "x.prof")
    for data in (open("/bin/sh", "rb").read(), b"hello, world\n" * 10, b"{}"):
        open(path, "wb").write(data)
        err = report_fails(tmp, path)
        assert err == f"hookit: {path}: not a hookit profile (bad magic)\n", err
    open(path, "wb").close()
    report_fails(tmp, path, r"truncated at offset 0: empty file")


def test_newer_major_version_refused(tmp):
    pt.mkprof(tmp, "version", tmp, "v2.prof", 2, 0)
    err = report_fails(tmp, os.path.join(tmp, "v2.prof"))
    assert "format version 2.0 is newer than this hookit reads (1.1)" in err, err


def test_newer_minor_version_still_reads(tmp):
    pt.mkprof(tmp, "version", tmp, "v15.prof", 1, 5)
    a = pt.hookit_raw(tmp, "report", os.path.join(tmp, "v15.prof"))
    b = pt.hookit_raw(tmp, "report", pt.fixed(tmp))
    assert a.returncode == 0 and a.stdout == b.stdout, a.stderr


def test_older_minor_version_still_reads(tmp):
    """A 1.0 profile (before build-ids) reads as it did."""
    pt.mkprof(tmp, "version", tmp, "v10.prof", 1, 0)
    a = pt.hookit_raw(tmp, "report", os.path.join(tmp, "v10.prof"))
    b = pt.hookit_raw(tmp, "report", pt.fixed(tmp))
    assert a.returncode == 0 and a.stdout == b.stdout, a.stderr


def test_unknown_sections_are_skipped(tmp):
    """Forward compatibility: a section type this reader does not know."""
    path = pt.fixed(tmp)
    data = open(path, "rb").read()
    secs = pt.sections(data)
    secs.insert(3, (99, b"future data \x00\xff" * 10))
    secs.append((1000, b""))
    newer = os.path.join(tmp, "newer.prof")
    open(newer, "wb").write(pt.assemble(data, secs))
    a = pt.hookit_raw(tmp, "report", newer)
    b = pt.hookit_raw(tmp, "report", path)
    assert a.returncode == 0 and a.stdout == b.stdout, a.stderr


def test_structural_errors_are_named(tmp):
    """Valid crc, broken structure: the message says what is wrong where."""
    data = open(pt.fixed(tmp), "rb").read()
    secs = pt.sections(data)
    path = os.path.join(tmp, "s.prof")

    def check(new_secs, pattern):
        open(path, "wb").write(pt.assemble(data, new_secs))
        report_fails(tmp, path, pattern)

    check([s for s in secs if s[0] != 2], r"corrupt at offset \d+: the file ends without its process section")
    check([secs[1]] + secs, r"corrupt at offset \d+: process section before the string table")
    check(secs[:4] + [(4, secs[4][1][:-3])], r"truncated at offset \d+: .* left")
    check(secs + [(4, secs[4][1] + b"\x00")], r"corrupt at offset \d+: 1 unexpected bytes")
    # thread 1's second node claims its parent is 2 nodes back (before node 0)
    t1 = bytearray(secs[4][1])
    # tid 4243 zigzag varint (3 bytes), index 1, name ref (1 byte), nnodes 2,
    # node 0 = func, parent 0, calls 1, incl 2000000 (3 bytes), excl 500000 (3 bytes)
    node1 = 3 + 1 + 1 + 1 + (1 + 1 + 1 + 3 + 3)
    assert t1[node1] == 6 and t1[node1 + 1] == 1, t1.hex()   # F_WEIRD, 1 back
    t1[node1 + 1] = 2
    check(secs[:4] + [(4, bytes(t1))], r"corrupt at offset \d+: node 1's parent is 2 nodes back")
    t1[node1 + 1] = 1
    t1[node1] = 100
    check(secs[:4] + [(4, bytes(t1))], r"corrupt at offset \d+: node 1's function 100 is not below the 8 functions")


def test_damage_is_named_at_its_offset(tmp):
    """The offset in a refusal is where the damage is, counted here from the
    file's own layout (header, then sections of a 12-byte head and a body):
    a node's bad function or parent, bytes left over at a section's end, a
    string table without its final NUL, a header claiming the wrong size."""
    data = open(pt.fixed(tmp), "rb").read()
    secs = pt.sections(data)
    path = os.path.join(tmp, "o.prof")

    def body_at(new_secs, k):
        """File offset of section k's body."""
        return pt.HEADER + sum(12 + len(b) for _, b in new_secs[:k]) + 12

    def offset_named(new_secs, kind):
        open(path, "wb").write(pt.assemble(data, new_secs))
        err = report_fails(tmp, path, kind + r" at offset \d+")
        return int(re.search(kind + r" at offset (\d+)", err).group(1)), err

    # thread 1 (section 4): node 1 starts after tid (3 bytes), index, name,
    # nnodes, and node 0 (func, parent, calls, incl 3 bytes, excl 3 bytes)
    node1 = 3 + 1 + 1 + 1 + (1 + 1 + 1 + 3 + 3)
    t1 = bytearray(secs[4][1])
    t1[node1] = 100
    bad = secs[:4] + [(4, bytes(t1))]
    off, err = offset_named(bad, "corrupt")
    assert off == body_at(bad, 4) + node1 and "node 1's function 100" in err, err
    t1[node1] = secs[4][1][node1]
    t1[node1 + 1] = 2
    bad = secs[:4] + [(4, bytes(t1))]
    off, err = offset_named(bad, "corrupt")
    assert off == body_at(bad, 4) + node1 + 1 and "node 1's parent" in err, err
    # three bytes more in the last thread section: the first of them
    bad = secs[:4] + [(4, secs[4][1] + b"\x00\x00\x00")]
    off, err = offset_named(bad, "corrupt")
    assert off == body_at(bad, 4) + len(secs[4][1]) and "3 unexpected bytes" in err, err
    assert f"that started at offset {body_at(bad, 4) - 12}" in err, err
    # the string table (section 0) without its last byte, the NUL
    bad = [(1, secs[0][1][:-1])] + secs[1:]
    off, err = offset_named(bad, "corrupt")
    assert off == body_at(bad, 0) + len(secs[0][1]) - 2 and "does not end with a NUL" in err, err
    # a header that says the file is 5 bytes longer than it is
    whole = bytearray(pt.assemble(data, secs))
    struct.pack_into("<Q", whole, 16, len(whole) + 5)
    open(path, "wb").write(whole)
    err = report_fails(tmp, path)
    assert f"truncated at offset {len(whole)}: the header says the file has {len(whole) + 5} bytes" in err, err


def test_long_file_name(tmp):
    """A name near NAME_MAX still works: the temporary name stays short."""
    name = "hookit." + "x" * 235 + ".1234.prof"
    assert len(name) == 252
    pt.mkprof(tmp, "write", tmp, name)
    assert os.listdir(tmp) == [name]
    assert pt.mkprof(tmp, "check", os.path.join(tmp, name)).stdout.strip() == b"identical"
