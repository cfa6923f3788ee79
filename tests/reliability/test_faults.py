"""Faults around the profile's output: a missing, read-only or full
directory, a file size limit, the name already taken by a file or a planted
symlink, the process killed while it writes.  Every time: the program's
stdout and exit status are its own (tests/reliability/progs/fault_app.c
exits 3), no file that was there is changed, no symlink is followed, one
clear hookit[PID] line says what happened, and no half-written profile is
ever left where it could pass for a complete one.
"""
import glob, os, random, resource, signal, subprocess, time

import hk

PROG = os.path.join(hk.ROOT, "tests", "reliability", "progs", "fault_app.c")
EXPECT = "fault_app 285\n"      # fault_app with the default depth 10


def app(tmp, profiler=None):
    return hk.cc(tmp, [PROG], "fault_app", libs=["-lpthread"])


def run_app(tmp, out_dir, args=(), env=None, preexec=None):
    e = hk.test_env(HOOKIT_OUTPUT=out_dir, **(env or {}))
    p = subprocess.run([os.path.join(tmp, "fault_app")] + [str(a) for a in args], cwd=tmp,
                       env=e, capture_output=True, text=True, timeout=120, preexec_fn=preexec)
    return p


def one_hookit_line(stderr, *words):
    lines = hk.hookit_lines(stderr)
    assert len(lines) == 1, f"expected one hookit line, got:\n{stderr}"
    for w in words:
        assert w in lines[0], f"{w!r} not in {lines[0]!r}"
    return lines[0]


def no_profile_files(d):
    return [f for f in os.listdir(d) if "hookit" in f]


def mount_tmpfs(tmp, name, opts):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "hookit-test", d],
                       capture_output=True, text=True)
    if p.returncode != 0:
        hk.skip(f"cannot mount a tmpfs here ({p.stderr.strip()})")
    return d


def umount(d):
    subprocess.run(["umount", "-l", d], capture_output=True)


def fallback_lines(stderr, bad_dir, reason, fallback):
    """The two lines of an unusable output directory: one at start naming
    it, why, and the fallback; one at the end naming the profile written.
    Returns the profile's path."""
    lines = hk.hookit_lines(stderr)
    assert len(lines) == 2, f"expected two hookit lines, got:\n{stderr}"
    assert bad_dir in lines[0] and reason in lines[0] and f"profiles go to {fallback}" in lines[0], lines
    prefix = f"jprof: wrote {fallback}/hookit.fault_app."
    assert prefix in lines[1] and lines[1].endswith(".prof"), lines
    path = lines[1].split("jprof: wrote ", 1)[1]
    assert os.path.isfile(path), path
    return path


def test_output_dir_missing_is_created_with_parents(tmp):
    """uftrace -d and perf -o make what is missing; so does hookit, with
    the umask honoured, and says nothing."""
    app(tmp)
    missing = os.path.join(tmp, "no", "such", "dir")
    p = run_app(tmp, missing, preexec=lambda: os.umask(0o027))
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stdout, p.stderr)
    assert hk.hookit_lines(p.stderr) == [], p.stderr
    for d in ("no", "no/such", "no/such/dir"):
        mode = os.stat(os.path.join(tmp, d)).st_mode & 0o777
        assert mode == 0o750, (d, oct(mode))
    prof = hk.one_profile(missing, "fault_app")
    assert "fault_app" in hk.hookit(tmp, "report", "--flat", prof).stdout


def test_run_output_dir_missing_is_created(tmp):
    """hookit run -o a/b/c (relative) makes a/b/c."""
    app(tmp)
    p = hk.hookit(tmp, "run", "-o", "a/b/c", "--", os.path.join(tmp, "fault_app"), check=False)
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stdout, p.stderr)
    assert hk.hookit_lines(p.stderr) == [], p.stderr
    hk.one_profile(os.path.join(tmp, "a", "b", "c"), "fault_app")


def test_run_output_unusable_is_named_as_typed(tmp):
    """hookit run -o DIR that cannot be used: the line names the option and
    DIR as typed (the user set no HOOKIT_OUTPUT), then where DIR is; with
    --output=DIR, that spelling.  A HOOKIT_OUTPUT the program sets itself
    is still named as the variable."""
    app(tmp)
    open(os.path.join(tmp, "afile"), "w").close()
    fb = os.path.join(tmp, "fallback")
    os.makedirs(fb)
    exe = os.path.join(tmp, "fault_app")
    for opts, said in ((["-o", "afile"], "hookit run -o 'afile'"),
                       (["--output=afile"], "hookit run --output 'afile'"),
                       (["-o", os.path.join(tmp, "afile")], f"hookit run -o '{tmp}/afile'")):
        p = hk.hookit(tmp, "run", *opts, "--", exe, check=False, env={"TMPDIR": fb})
        assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stdout, p.stderr)
        line = fallback_lines(p.stderr, os.path.join(tmp, "afile"), "Not a directory", fb)
        start = hk.hookit_lines(p.stderr)[0]
        assert f"]: {said} " in start and "HOOKIT_OUTPUT" not in start, (opts, start)
        os.unlink(line)
    bad = os.path.join(tmp, "afile", "sub")
    p = hk.hookit(tmp, "run", "-o", "out", "--", "env", "HOOKIT_OUTPUT=" + bad, exe, check=False,
                  env={"TMPDIR": fb})
    lines = hk.hookit_lines(p.stderr)
    assert any(f"HOOKIT_OUTPUT='{bad}' cannot be used" in l for l in lines), p.stderr
    assert not any("hookit run -o" in l for l in lines), p.stderr


def test_output_dir_not_a_directory_falls_back_to_tmpdir(tmp):
    app(tmp)
    bad = os.path.join(tmp, "afile")
    open(bad, "w").close()
    fb = os.path.join(tmp, "fallback")
    os.makedirs(fb)
    p = run_app(tmp, bad, env={"TMPDIR": fb})
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stdout, p.stderr)
    path = fallback_lines(p.stderr, bad, "Not a directory", fb)
    assert os.path.dirname(path) == fb and os.path.getsize(bad) == 0


def test_output_dir_read_only_mount(tmp):
    """Reported at start; the profile goes to the current directory (no
    TMPDIR) and the last line names it."""
    app(tmp)
    d = mount_tmpfs(tmp, "ro", "ro,size=64k")
    try:
        p = run_app(tmp, d, env={"TMPDIR": None})
        assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stdout, p.stderr)
        path = fallback_lines(p.stderr, d, "Read-only file system", tmp)
        assert os.path.dirname(path) == tmp
    finally:
        umount(d)


def test_output_dir_not_writable_for_the_user(tmp):
    """A directory the (non-root) user may not write: run as nobody, with
    a TMPDIR nobody can write."""
    if not hk.have("setpriv") or os.getuid() != 0:
        hk.skip("needs root and setpriv to run as another user")
    app(tmp)
    os.chmod(tmp, 0o755)
    d = os.path.join(tmp, "rootonly")
    os.makedirs(d, mode=0o755)
    fb = os.path.join(tmp, "nobodys")
    os.makedirs(fb)
    os.chown(fb, 65534, 65534)
    e = hk.test_env(HOOKIT_OUTPUT=d, TMPDIR=fb)
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        os.path.join(tmp, "fault_app")], cwd=d, env=e, capture_output=True,
                       text=True, timeout=60)
    assert (p.returncode, p.stdout) == (3, EXPECT), (p.returncode, p.stdout, p.stderr)
    fallback_lines(p.stderr, d, "Permission denied", fb)
    assert os.listdir(d) == []


def test_disk_full_tmpfs(tmp):
    """A 64 KiB tmpfs and a profile of about 200 KiB: the write fails, the
    temporary file goes, the filesystem is left empty, and the profile goes
    to the fallback (the current directory), named in the one line."""
    app(tmp)
    d = mount_tmpfs(tmp, "full", "size=64k")
    try:
        p = run_app(tmp, d, [20000], env={"TMPDIR": None})
        assert p.returncode == 3 and p.stdout == "fault_app 1000070000\n", (p.returncode, p.stderr)
        line = one_hookit_line(p.stderr, d, "No space left on device", "instead")
        path = line.split("; wrote ", 1)[1].rsplit(" instead", 1)[0]
        assert os.path.dirname(path) == tmp and os.path.isfile(path), line
        assert os.listdir(d) == [], os.listdir(d)
    finally:
        umount(d)


def test_file_size_limit(tmp):
    """RLIMIT_FSIZE below the profile's size: the write gets EFBIG instead of
    SIGXFSZ killing the program; no partial file stays."""
    app(tmp)
    out = os.path.join(tmp, "out")
    os.makedirs(out)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

    p = run_app(tmp, out, [20000], preexec=limit)
    assert p.returncode == 3, f"exit status {p.returncode} (SIGXFSZ is 25): {p.stderr}"
    one_hookit_line(p.stderr, "File too large")
    assert os.listdir(out) == [], os.listdir(out)


def test_file_size_limit_trace_plugin(tmp):
    app(tmp)
    out = os.path.join(tmp, "out")
    os.makedirs(out)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

    p = run_app(tmp, out, [20000], env={"HOOKIT_PROFILER": "libhktrace.so"}, preexec=limit)
    assert p.returncode == 3, f"exit status {p.returncode} (SIGXFSZ is 25): {p.stderr}"
    one_hookit_line(p.stderr, "File too large")
    assert os.listdir(out) == [], os.listdir(out)


def start_held(tmp, out_dir):
    """Start fault_app through a shell that waits on a fifo before exec, so
    the test knows its pid (the profile's name) before it runs."""
    fifo = os.path.join(tmp, "go")
    pidfile = os.path.join(tmp, "pid")
    os.mkfifo(fifo)
    script = 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; read x < "$2"; exec "$3"'
    e = hk.test_env(HOOKIT_OUTPUT=out_dir)
    proc = subprocess.Popen(["sh", "-c", script, "sh", pidfile, fifo,
                             os.path.join(tmp, "fault_app")], cwd=tmp, env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(1000):
        if os.path.exists(pidfile):
            break
        time.sleep(0.01)
    pid = int(open(pidfile).read())

    def release():
        with open(fifo, "w") as f:
            f.write("go\n")
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err
    return pid, release


def test_name_taken_by_a_file(tmp):
    app(tmp)
    pid, release = start_held(tmp, tmp)
    taken = os.path.join(tmp, f"hookit.fault_app.{pid}.prof")
    with open(taken, "w") as f:
        f.write("someone else's file\n")
    rc, out, err = release()
    assert (rc, out) == (3, EXPECT), (rc, out, err)
    assert open(taken).read() == "someone else's file\n"
    line = one_hookit_line(err, taken, "already exists")
    # the profile went elsewhere, named in the message, complete
    others = [p for p in hk.profiles(tmp, "fault_app") if p != taken]
    assert len(others) == 1 and os.path.basename(others[0]) in line, (others, line)
    hk.hookit(tmp, "report", others[0])


def test_symlink_planted_at_the_name(tmp):
    app(tmp)
    pid, release = start_held(tmp, tmp)
    victim = os.path.join(tmp, "victim")
    link = os.path.join(tmp, f"hookit.fault_app.{pid}.prof")
    os.symlink(victim, link)
    rc, out, err = release()
    assert (rc, out) == (3, EXPECT), (rc, out, err)
    assert not os.path.exists(victim), "the symlink was followed"
    assert os.readlink(link) == victim
    one_hookit_line(err, link, "already exists")


def test_symlink_to_an_existing_file_is_not_followed(tmp):
    app(tmp)
    pid, release = start_held(tmp, tmp)
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    os.symlink(victim, os.path.join(tmp, f"hookit.fault_app.{pid}.prof"))
    rc, out, err = release()
    assert (rc, out) == (3, EXPECT), (rc, out, err)
    assert open(victim).read() == "precious\n"


def test_killed_while_writing(tmp):
    """SIGKILL at random moments around the profile write (a deep recursion
    makes a profile of about 1 MB): every file named like a profile that is
    left must read as complete; anything else must be refused by the
    reader, never taken for a profile."""
    app(tmp)
    out = os.path.join(tmp, "out")
    os.makedirs(out)
    rnd = random.Random(1234)
    killed = 0
    for i in range(12):
        e = hk.test_env(HOOKIT_OUTPUT=out)
        proc = subprocess.Popen([os.path.join(tmp, "fault_app"), "60000", "signal"], cwd=tmp,
                                env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stdout.readline()
        assert proc.stdout.readline() == "done\n"
        time.sleep(rnd.uniform(0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        killed += proc.returncode == -signal.SIGKILL
    for f in sorted(os.listdir(out)):
        path = os.path.join(out, f)
        r = hk.hookit(tmp, "report", path, check=False)
        if f.startswith("hookit.") and f.endswith(".prof"):
            assert r.returncode == 0, f"{f} is named like a profile but does not read: {r.stderr}"
        else:
            # A temporary file: hidden.  Half written, the reader refuses it
            # with one line naming it; a kill between its last write and
            # its rename leaves it whole, and then it reads as the complete
            # profile it is (the header's size and checksum cover every
            # byte), never as a partial one.
            assert f.startswith("."), f"unexpected file {f}"
            if r.returncode == 0:
                doc = hk.export_json(tmp, path)
                assert doc["threads"], f"{f} read, but holds no thread"
            else:
                assert f in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert killed > 0, "the process always ended before the kill"
