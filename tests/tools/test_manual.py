"""The manual is complete and the help agrees with itself: `hookit help
CMD` is `hookit CMD --help`; the man page names every command, every long
option of every command's --help and of the code's getopt tables, and
every environment variable of the README's table and of the code's getenv
calls; bash completion completes commands, options and profiles."""
import os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

MAN = os.path.join(hk.ROOT, "docs", "hookit.1")
COMPLETION = os.path.join(hk.ROOT, "tools", "hookit-completion.bash")


def commands(tmp):
    out = hk.hookit(tmp, "--help").stdout
    cmds = re.findall(r"^  ([a-z]+) ", out.split("Commands:", 1)[1], re.M)
    assert len(cmds) >= 10, out
    return cmds


def man_text():
    # roff escapes: "\-" is "-"
    return open(MAN).read().replace("\\-", "-")


def test_help_cmd_equals_cmd_help(tmp):
    # every command: the list in --help is the command table's
    table = re.findall(r"^HOOKIT_COMMAND\((\w+),", open(os.path.join(hk.ROOT, "tools", "commands.h")).read(),
                       re.M)
    assert commands(tmp) == table, (commands(tmp), table)
    for c in table:
        a, b = hk.hookit(tmp, "help", c), hk.hookit(tmp, c, "--help")
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), c
        assert a.returncode == 0 and a.stdout.startswith("usage: hookit " + c), (c, a.stdout[:80])
    top = hk.hookit(tmp, "--help")
    for args in (["help"], ["help", "help"], ["help", "--help"]):
        p = hk.hookit(tmp, *args)
        assert (p.returncode, p.stdout, p.stderr) == (0, top.stdout, ""), args
    p = hk.hookit(tmp, "help", "nosuch", check=False)
    assert p.returncode == 2 and "unknown command 'nosuch'" in p.stderr


def test_man_page_names_every_command_and_option(tmp):
    man = man_text()
    missing = []
    for c in commands(tmp):
        if not re.search(r"^\.B(?:I)? " + c + r"\b", man, re.M):
            missing.append(f"command {c}")
        for opt in sorted(set(re.findall(r"--[a-z][a-z-]+", hk.hookit(tmp, c, "--help").stdout))):
            if opt == "--help":
                continue
            if opt not in man:
                missing.append(f"{c} {opt}")
    assert not missing, "not in docs/hookit.1: " + ", ".join(missing)


def test_man_page_names_every_environment_variable(tmp):
    readme = open(os.path.join(hk.ROOT, "README.md")).read()
    env = re.findall(r"^\| `([A-Z][A-Z_]+)` \|", readme, re.M)
    assert "HOOKIT_FOLLOW" in env and "HOOKIT_OUTPUT" in env, env
    man = man_text()
    section = man.split(".SH ENVIRONMENT", 1)[1].split(".SH ", 1)[0]
    missing = [v for v in env if v not in section]
    assert not missing, f"ENVIRONMENT of docs/hookit.1 lacks {missing}"


def sources(*dirs):
    """The text of every C file under DIRS (the code, not the docs, is the
    reference: an option or variable the code reads must be in the man page
    even when no --help or README table names it)."""
    text = []
    for d in dirs:
        for root, _, files in os.walk(os.path.join(hk.ROOT, d)):
            text += [open(os.path.join(root, f), errors="replace").read()
                     for f in sorted(files) if f.endswith(".c")]
    return "\n".join(text)


def test_man_page_names_every_getopt_option(tmp):
    man = man_text()
    opts = set()
    for table in re.findall(r"struct option \w+\[\] = \{(.*?)\};", sources("tools"), re.S):
        opts |= set(re.findall(r'\{\s*"([a-z][a-z0-9-]*)"', table))
    assert len(opts) > 30, opts  # the tables were found
    missing = sorted(o for o in opts if "--" + o not in man)
    assert not missing, f"getopt options not in docs/hookit.1: {missing}"


# Read by hookit but not hookit's to document: the loader's and the shell's.
NOT_OURS = {"LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "TMPDIR"}


def test_man_page_environment_has_every_getenv(tmp):
    code = sources("tools", "hookit", "profiler", "profile", "common", "lifecycle")
    env = set(re.findall(r'getenv\("([A-Z][A-Z0-9_]*)"\)', code)) - NOT_OURS
    assert {"HOOKIT_ALL_PROCESSES", "JPROFOPTS", "NO_COLOR"} <= env, env
    man = man_text()
    section = man.split(".SH ENVIRONMENT", 1)[1].split(".SH ", 1)[0]
    missing = sorted(v for v in env if not re.search(r"^\.TP\n\.BR? [^\n]*\b" + v + r"\b", section, re.M))
    assert not missing, f"ENVIRONMENT of docs/hookit.1 has no entry for {missing}"


def complete(tmp, *words):
    """COMPREPLY for the command line `hookit WORDS...` (the last word is
    the one being completed)."""
    if not hk.have("bash"):
        hk.skip("bash not installed")
    words = [hk.BIN] + list(words)
    script = (f"source {COMPLETION}\n"
              f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              "shopt -s extglob\n_hookit\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp)
    assert p.returncode == 0, p.stderr
    return sorted(filter(None, p.stdout.split("\n")))


def test_bash_completion(tmp):
    assert "report" in complete(tmp, "re") and "recover" in complete(tmp, "re")
    assert complete(tmp, "exp") == ["export"]
    opts = complete(tmp, "report", "--")
    assert "--flat" in opts and "--demangle" in opts and "--callers" in opts, opts
    assert "pprof" in complete(tmp, "export", "--format", "pp")
    for name in ("hookit.app.1.prof", "hookit.app.2.trace", "notes.txt"):
        open(os.path.join(tmp, name), "w").close()
    files = complete(tmp, "report", "hook")
    assert files == ["hookit.app.1.prof", "hookit.app.2.trace"], files


def test_bash_completion_values_after_equals_and_ctl_commands(tmp):
    """--format=<TAB> and --demangle=<TAB> (bash splits the word at '='),
    the new sort and weight keys, and `ctl PID <TAB>`: the commands, not
    more PIDs (issue 30)."""
    assert complete(tmp, "export", "--format", "=", "pp") == ["pprof"]
    assert "json" in complete(tmp, "export", "--format", "=")
    assert complete(tmp, "report", "--demangle", "=", "s") == ["simple"]
    assert complete(tmp, "report", "--demangle=f") == ["full"]
    assert {"cpu", "wait"} <= set(complete(tmp, "report", "--sort", ""))
    assert complete(tmp, "export", "--weight", "c") == ["calls", "cpu"]
    assert complete(tmp, "diff", "--sort", "s") == ["self"]
    assert complete(tmp, "ctl", "1234", "") == ["flush", "reset", "start", "stop", "zerobase"]
    assert complete(tmp, "ctl", "--all", "f") == ["flush"]
    assert complete(tmp, "run", "-p", "hk") == ["hktrace"]


def test_man_page_synopsis_lists_every_command(tmp):
    """The SYNOPSIS names every command `hookit --help` lists (it named 3)."""
    cmds = re.findall(r"^  ([a-z]+)\s", hk.hookit(tmp, "--help").stdout.split("Commands:")[1], re.M)
    assert len(cmds) >= 10, cmds
    synopsis = man_text().split(".SH SYNOPSIS", 1)[1].split(".SH ", 1)[0]
    missing = [c for c in cmds if not re.search(r"^\.B hookit " + c + r"$", synopsis, re.M)]
    assert not missing, f"SYNOPSIS of docs/hookit.1 lacks {missing}"
