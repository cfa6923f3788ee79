"""The hookit command line: help, version, exit codes, usage errors, and
`hookit run`."""
import os, shutil, stat, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import proftools as pt  # noqa: E402

COMMANDS = ["run", "report", "export"]


def hookit(tmp, *args, **kw):
    return hk.hookit(tmp, *args, check=False, **kw)


def test_help_and_version(tmp):
    p = hookit(tmp, "--version")
    assert (p.returncode, p.stdout, p.stderr) == (0, "hookit 0.1.0\n", "")
    for args in (["--help"], ["-h"], ["help"]):
        p = hookit(tmp, *args)
        assert p.returncode == 0 and p.stdout.startswith("usage: hookit ") and p.stderr == ""
        for c in COMMANDS:
            assert f"\n  {c} " in p.stdout, p.stdout
    for c in COMMANDS:
        for h in ("--help", "-h"):
            p = hookit(tmp, c, h)
            assert p.returncode == 0 and p.stdout.startswith(f"usage: hookit {c} "), (c, p)
            assert p.stderr == ""


def usage_error(tmp, args, message):
    p = hookit(tmp, *args)
    assert p.returncode == 2, (args, p)
    assert p.stdout == "", (args, p.stdout)
    assert message in p.stderr and "--help" in p.stderr, (args, p.stderr)


def test_usage_errors_exit_2(tmp):
    usage_error(tmp, [], "hookit: missing command")
    usage_error(tmp, ["frobnicate"], "hookit: unknown command 'frobnicate'\nTry 'hookit --help'.")
    usage_error(tmp, ["--frob"], "hookit: unknown option '--frob'")
    usage_error(tmp, ["report", "--bogus", "x"], "hookit: report: unknown option '--bogus'")
    usage_error(tmp, ["report", "-z", "x"], "hookit: report: unknown option '-z'")
    usage_error(tmp, ["report", "x", "--thread"], "hookit: report: option '--thread' needs an argument")
    # (a name is a thread name since issue 30; an empty one is no thread)
    usage_error(tmp, ["report", "--thread", "", "x"], "--thread needs a thread id")
    usage_error(tmp, ["export", "--format=json", "--thread", "", "x"], "--thread needs a thread id")
    usage_error(tmp, ["export", "--format=json"], "hookit: export: no profile given")
    usage_error(tmp, ["export", "-f"], "hookit: export: option '-f' needs an argument")


def test_run_usage_errors(tmp):
    usage_error(tmp, ["run"], "hookit: run: put '--' before the program")
    usage_error(tmp, ["run", "ls"], "hookit: run: put '--' before the program")
    usage_error(tmp, ["run", "-o", tmp, "ls"], "put '--' before the program")
    usage_error(tmp, ["run", "--"], "hookit: run: no program given after '--'")
    usage_error(tmp, ["run", "-o"], "hookit: run: option '-o' needs an argument")
    usage_error(tmp, ["run", "--profiler"], "option '--profiler' needs an argument")
    usage_error(tmp, ["run", "-x", "--", "ls"], "hookit: run: unknown option '-x'")


def fake_install(tmp):
    """tmp/inst/bin/hookit and an (empty) tmp/inst/lib/libhookit.so, so
    `hookit run` finds its library as in an installed tree."""
    inst = os.path.join(tmp, "inst")
    os.makedirs(os.path.join(inst, "bin"))
    os.makedirs(os.path.join(inst, "lib"))
    shutil.copy(hk.BIN, os.path.join(inst, "bin", "hookit"))
    src = os.path.join(tmp, "empty.c")
    with open(src, "w") as f:
        f.write("int hookit_fake_marker;\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", os.path.join(inst, "lib", "libhookit.so"), src],
                   check=True)
    return os.path.join(inst, "bin", "hookit"), os.path.join(inst, "lib", "libhookit.so")


def env_of(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_run_sets_the_environment(tmp):
    binary, lib = fake_install(tmp)
    # The user's own LD_PRELOAD entries are kept, after libhookit.so.
    other = os.path.join(tmp, "empty_other.so")
    shutil.copy(lib, other)
    env = hk.test_env(LD_PRELOAD=other)
    # -p: a plugin of the plugin directory by its file or short name, set
    # as its path (an unknown one is refused: tests/tools/test_first_steps)
    plugins = os.path.join(os.path.dirname(lib), "hookit")
    os.makedirs(plugins)
    shutil.copy(lib, os.path.join(plugins, "libmine.so"))
    for name in ("libmine.so", "mine"):
        p = subprocess.run([binary, "run", "-o", "out", "-p", name, "--", "env"],
                           cwd=tmp, env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        e = env_of(p.stdout)
        assert e["LD_PRELOAD"] == f"{lib}:{other}", e["LD_PRELOAD"]
        assert e["HOOKIT_OUTPUT"] == os.path.join(tmp, "out")     # made absolute
        assert e["HOOKIT_PROFILER"] == os.path.join(plugins, "libmine.so"), e["HOOKIT_PROFILER"]
    # without options, nothing but LD_PRELOAD is set
    p = subprocess.run([binary, "run", "--", "env"], cwd=tmp, env=hk.test_env(),
                       capture_output=True, text=True)
    e = env_of(p.stdout)
    assert p.returncode == 0 and e["LD_PRELOAD"] == lib
    assert "HOOKIT_OUTPUT" not in e and "HOOKIT_PROFILER" not in e


def test_run_passes_arguments_and_exit_status(tmp):
    binary, _ = fake_install(tmp)
    p = subprocess.run([binary, "run", "--", "sh", "-c", 'echo "$1 $2"; exit 7', "sh", "-o", "x y"],
                       cwd=tmp, env=hk.test_env(), capture_output=True, text=True)
    assert p.returncode == 7 and p.stdout == "-o x y\n", p


def test_run_exec_failure_is_127(tmp):
    binary, _ = fake_install(tmp)
    p = subprocess.run([binary, "run", "--", "no-such-command-hookit"], cwd=tmp,
                       env=hk.test_env(), capture_output=True, text=True)
    assert p.returncode == 127
    assert p.stderr == "hookit: run: no-such-command-hookit: command not found\n"
    p = subprocess.run([binary, "run", "--", os.path.join(tmp, "empty.c")], cwd=tmp,
                       env=hk.test_env(), capture_output=True, text=True)
    assert p.returncode == 127 and "Permission denied" in p.stderr, p


def test_run_without_library_fails(tmp):
    inst = os.path.join(tmp, "bin")
    os.makedirs(inst)
    shutil.copy(hk.BIN, inst)
    p = subprocess.run([os.path.join(inst, "hookit"), "run", "--", "true"], cwd=tmp,
                       env=hk.test_env(), capture_output=True, text=True)
    assert p.returncode == 1 and "cannot find libhookit.so at " in p.stderr, p


def test_run_warns_about_setuid(tmp):
    binary, _ = fake_install(tmp)
    prog = os.path.join(tmp, "suid-true")
    shutil.copy("/bin/true", prog)
    os.chmod(prog, 0o4755)
    p = subprocess.run([binary, "run", "--", prog], cwd=tmp, env=hk.test_env(),
                       capture_output=True, text=True)
    assert p.returncode == 0, p
    assert "set-user-ID" in p.stderr and "ignores LD_PRELOAD" in p.stderr, p.stderr
    os.chmod(prog, 0o2755)
    p = subprocess.run([binary, "run", "--", prog], cwd=tmp, env=hk.test_env(),
                       capture_output=True, text=True)
    assert p.returncode == 0 and "set-group-ID" in p.stderr, p.stderr
    os.chmod(prog, 0o755)
    p = subprocess.run([binary, "run", "--", prog], cwd=tmp, env=hk.test_env(),
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_run_profiles_an_unlinked_program(tmp):
    """End to end with the real libhookit.so and the default profiler."""
    if not os.path.exists(hk.LIBHOOKIT) or not os.path.exists(os.path.join(hk.PLUGIN_DIR, "libjprof.so")):
        hk.skip("libhookit.so or libjprof.so not built")
    src = os.path.join(tmp, "app.c")
    with open(src, "w") as f:
        f.write("int leaf(int x) { return x * 2; }\n"
                "int mid(int x) { return leaf(x) + 1; }\n"
                "int main(void) { int s = 0; for (int i = 0; i < 10; i++) s += mid(i); return s == 100 ? 0 : 3; }\n")
    app = hk.cc(tmp, [src], "app", link_hookit=False, flags=["-O0"])
    out = os.path.join(tmp, "out")
    os.makedirs(out)
    p = hookit(tmp, "run", "-o", out, "--", app)
    assert p.returncode == 0, p
    prof = hk.one_profile(out, "app")
    doc = hk.export_json(tmp, prof)
    mid = hk.node(hk.thread_of(doc), "main", "mid")
    assert mid["calls"] == 10 and hk.child(mid, "leaf")["calls"] == 10


def test_man_page_covers_every_command(tmp):
    """docs/hookit.1 describes every command `hookit --help` lists, and
    renders without troff warnings."""
    page = open(os.path.join(hk.ROOT, "docs", "hookit.1")).read()
    listed = [line.split()[0] for line in hookit(tmp, "--help").stdout.split("Commands:\n")[1]
              .split("\n\n")[0].splitlines()]
    assert listed == COMMANDS or set(COMMANDS) <= set(listed), listed
    for c in listed:
        assert f"\n.B {c}\n" in page, f"docs/hookit.1 does not describe '{c}'"
    if hk.have("groff"):
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z",
                            os.path.join(hk.ROOT, "docs", "hookit.1")],
                           capture_output=True, text=True)
        assert p.returncode == 0 and p.stderr == "", p.stderr


def test_run_refuses_a_library_path_the_loader_would_split(tmp):
    binary, _ = fake_install(tmp)
    spaced = os.path.join(tmp, "my tools")
    os.rename(os.path.join(tmp, "inst"), spaced)
    p = subprocess.run([os.path.join(spaced, "bin", "hookit"), "run", "--", "true"], cwd=tmp,
                       env=hk.test_env(), capture_output=True, text=True)
    assert p.returncode == 1 and "space or a colon" in p.stderr, p
