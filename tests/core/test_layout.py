"""libjprof's layout (docs/design.md, "Inside libjprof"): one folder per
concern over one base header, jprof.h.  A part includes the base header and
the headers of the folders below its own, and uses only what those define;
jprof.c and options.c, on top, see every folder.  One door runs up:
live/attend.h, the requests a thread carries out itself at its next hook or
event, which tree/ and metrics/ call.  These tests hold the sources, and the
objects they build, to it."""
import collections
import os
import re
import subprocess

import hk

JPROF = os.path.join(hk.ROOT, "profiler", "jprof")
# Bottom to top; "" is the top (jprof.c, options.c); jprof.h is the base.
FOLDERS = ["base", "metrics", "tree", "frames", "output", "live", ""]
UP_DOOR = "live/attend.h"
# What the door declares: the only names a folder may use from above it.
UP_NAMES = {"jp_attend", "jp_pending_apply", "jp_pending_settle"}


def rank(rel):
    """A file's place in FOLDERS by its path under profiler/jprof; the base
    header counts as base."""
    if rel == "jprof.h":
        return 0
    folder = os.path.dirname(rel)
    assert folder in FOLDERS, f"{rel}: a folder docs/design.md does not list ({folder})"
    return FOLDERS.index(folder)


def sources():
    for d, _, files in os.walk(JPROF):
        for f in files:
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), JPROF)


def includes(rel):
    """The files under profiler/jprof that rel includes."""
    with open(os.path.join(JPROF, rel)) as f:
        text = f.read()
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        if name.startswith("profiler/jprof/"):
            yield name[len("profiler/jprof/"):]
        elif os.path.exists(os.path.join(JPROF, os.path.dirname(rel), name)):
            yield os.path.normpath(os.path.join(os.path.dirname(rel), name))


def upward(user, used):
    """Whether user, by its place, may not reach used (a file path)."""
    return rank(used) > rank(user) and used != UP_DOOR


def test_includes_run_downwards(tmp):
    bad = [f"{rel} includes {inc}" for rel in sorted(sources()) for inc in includes(rel) if upward(rel, inc)]
    assert not bad, "includes that run up across folders (docs/design.md):\n" + "\n".join(bad)


def test_layout_check_sees_an_include_that_runs_up(tmp):
    """The check above, on a made-up include: a metrics file that includes
    the output folder's header is refused; the door is not."""
    assert upward("metrics/wait.c", "output/output.h")
    assert upward("jprof.h", "tree/tree.h")
    assert not upward("tree/tree.c", UP_DOOR)
    assert not upward("output/build.c", "tree/tree.h")


def objects():
    obj = os.path.join(hk.BUILD, "obj", "profiler", "jprof")
    if not os.path.isdir(obj):
        hk.skip(f"no objects in {obj} (make)")
    for d, _, files in os.walk(obj):
        for f in files:
            if f.endswith(".o"):
                path = os.path.join(d, f)
                yield os.path.relpath(path, obj)[:-2] + ".c", path


def symbols(path):
    """(defined, undefined) global names of an object."""
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCV":
            defined.add(parts[2])
    return defined, undefined


def test_names_used_run_downwards(tmp):
    """What a part uses is defined in its folder or below (or is the door's):
    a declaration in the wrong header cannot hide a use that runs up."""
    owner, uses = {}, collections.defaultdict(set)
    for src, path in objects():
        if not os.path.exists(os.path.join(JPROF, src)):
            continue            # an object left from a file since moved
        defined, undefined = symbols(path)
        for name in defined:
            owner[name] = src
        uses[src] = undefined
    assert owner.get("jp_enter_tsc") == "tree/tree.c", owner.get("jp_enter_tsc")
    bad = [f"{src} uses {name} ({owner[name]})" for src in sorted(uses) for name in sorted(uses[src])
           if name in owner and name not in UP_NAMES and rank(owner[name]) > rank(src)]
    assert not bad, "names used from a folder above (docs/design.md):\n" + "\n".join(bad)
