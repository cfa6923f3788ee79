"""The suite for another architecture (make check-arm64, docs/testing.md).

With HOOKIT_TARGET=aarch64 the build under test is an arm64 one, and this
module makes the tests run it unchanged on an x86 machine:

  - the compilers the tests name (gcc, g++, cc, clang, clang++) and the ELF
    tools (nm, readelf, objdump) become the target's, through small scripts
    put first on PATH (in the build directory);
  - every program a test starts through subprocess that is an ELF file of
    the target runs under qemu-user.  The dynamic loader's variables
    (LD_PRELOAD, LD_LIBRARY_PATH...) are handed to the emulated program
    with qemu's -E and taken from qemu's own environment: the host's loader
    would try to preload the target's libhookit into qemu itself.

What cannot run under qemu-user is skipped by tests/run with its reason
(the "qemu" entries of tests/sanitizers.txt).

One qemu-user bug is worked around instead: when a thread is created in the
fork child of a process with more than one thread, qemu-user 7.2 aborts.
libjprof's control thread makes every profiled process such a parent and
starts a thread in every child, so every test that forks would fail.  If
the probe qemu_fork_thread.c (no hookit in it) shows the bug, programs run
with JPROFOPTS=nocontrol, and the run says so once."""
import os, shutil, stat, subprocess, sys

TARGETS = {
    # HOOKIT_TARGET: (ELF e_machine, qemu-user, compiler prefix, clang --target)
    "aarch64": (183, "qemu-aarch64", "aarch64-linux-gnu-", "aarch64-linux-gnu"),
}
LOADER_VARS = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_BIND_NOW", "LD_AUDIT", "LD_DEBUG",
               "LD_TRACE_LOADED_OBJECTS")
HERE = os.path.dirname(os.path.abspath(__file__))


def elf_machine(path):
    """e_machine of an ELF file, or None."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    return int.from_bytes(h[18:20], "little" if h[5] == 1 else "big")


def _tool_dir(build, prefix, clang_target):
    """Scripts named like the host's tools that run the target's."""
    d = os.path.join(build, "cross-bin")
    os.makedirs(d, exist_ok=True)
    tools = {"gcc": prefix + "gcc", "cc": prefix + "gcc", "g++": prefix + "g++",
             "c++": prefix + "g++", "nm": prefix + "nm", "readelf": prefix + "readelf",
             "objdump": prefix + "objdump", "ld": prefix + "ld", "ar": prefix + "ar"}
    scripts = {name: f'exec {real} "$@"' for name, real in tools.items()}
    for clang in ("clang", "clang++"):
        if shutil.which(clang):
            scripts[clang] = f'exec {shutil.which(clang)} --target={clang_target} "$@"'
    for name, body in scripts.items():
        path = os.path.join(d, name)
        text = "#!/bin/sh\n" + body + "\n"
        if not os.path.exists(path) or open(path).read() != text:
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.chmod(path + ".tmp", stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
            os.replace(path + ".tmp", path)
    return d


def fork_child_threads_abort(build, prefix, qemu_path):
    """Whether this qemu-user aborts when a fork child of a threaded process
    creates a thread (the probe's exit status; its source says more)."""
    exe = os.path.join(build, "cross-bin", "qemu_fork_thread")
    src = os.path.join(HERE, "qemu_fork_thread.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run([prefix + "gcc", "-O1", "-pthread", "-o", exe, src], check=True)
    try:
        probe = subprocess.run([qemu_path, exe], capture_output=True, timeout=60)
        aborts = probe.returncode != 0
    except subprocess.TimeoutExpired:
        aborts = True
    if aborts:
        print(f"{os.path.basename(qemu_path)} aborts when a fork child of a threaded process "
              "creates a thread (its bug: tests/lib/qemu_fork_thread.c, no hookit in it); "
              "programs run with JPROFOPTS=nocontrol", file=sys.stderr)
    return aborts


def install(target, build):
    """Set up the tools and wrap subprocess.Popen for target."""
    if target not in TARGETS:
        raise SystemExit(f"HOOKIT_TARGET={target}: unknown target (known: {', '.join(TARGETS)})")
    machine, qemu, prefix, clang_target = TARGETS[target]
    qemu_path = shutil.which(qemu)
    if not qemu_path:
        raise SystemExit(f"HOOKIT_TARGET={target}: {qemu} not found (Debian's qemu-user; make deps)")
    os.environ["PATH"] = _tool_dir(build, prefix, clang_target) + os.pathsep + os.environ.get("PATH", "")

    real_popen = subprocess.Popen
    no_control = fork_child_threads_abort(build, prefix, qemu_path)

    def emulated(args, kw):
        """args and kw rewritten to run under qemu when they start a target
        program; unchanged otherwise."""
        if kw.get("shell"):
            return args, kw
        argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        if not argv:
            return args, kw
        argv = [os.fsdecode(a) for a in argv]
        prog = os.fsdecode(kw["executable"]) if kw.get("executable") else argv[0]
        if os.sep not in prog:
            env_path = (kw.get("env") or os.environ).get("PATH")
            found = shutil.which(prog, path=env_path)
            if not found:
                return args, kw
            prog = found
        elif kw.get("cwd") and not os.path.isabs(prog):
            prog = os.path.join(os.fsdecode(kw["cwd"]), prog)
        if elf_machine(prog) != machine:
            return args, kw
        env = dict(kw.get("env") if kw.get("env") is not None else os.environ)
        if no_control:
            env["JPROFOPTS"] = ",".join(filter(None, ["nocontrol", env.get("JPROFOPTS")]))
        cmd = [qemu_path]
        for var in LOADER_VARS:
            if var in env:
                cmd += ["-E", f"{var}={env.pop(var)}"]
        cmd += ["-0", argv[0], prog] + argv[1:]
        kw = dict(kw, env=env)
        kw.pop("executable", None)
        return cmd, kw

    class Popen(real_popen):
        def __init__(self, args, *rest, **kw):
            args, kw = emulated(args, kw)
            super().__init__(args, *rest, **kw)

    subprocess.Popen = Popen
