"""Every view that prints call paths writes a recursion once with its count
(`down ×300`), with the names --demangle shows: hookit top's hottest paths
of a running process, and report --leaks' allocation paths."""
import os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

DEEP = """\
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void *leak(void) { return malloc(100); }
__attribute__((noinline)) int down(int n)
{
    if (!n) {
        leak();
        printf("bottom\\n");
        fflush(stdout);
        return getchar() == EOF ? 0 : 1;        /* until the test closes stdin */
    }
    return down(n - 1);
}
int main(void) { return down(299); }
"""


def build(tmp):
    src = os.path.join(tmp, "deep.c")
    with open(src, "w") as f:
        f.write(DEEP)
    return hk.cc(tmp, [src], "deep", flags=["-O0"])


def test_top_paths_collapse_recursion(tmp):
    exe = build(tmp)
    rt = os.path.join(tmp, "rt")
    # Every call timed: the open frames blocked in getchar (stdio's own
    # read, which no wrapper sees) then gather time and top ranks the path.
    p = subprocess.Popen([exe], cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt,
                                         JPROFOPTS="timer=exact"))
    try:
        assert p.stdout.readline() == "bottom\n"
        time.sleep(0.2)                 # the blocked frame gathers exclusive time
        top = hk.hookit(tmp, "top", "--once", "--interval", "0.1", str(p.pid),
                        env={"HOOKIT_RUNTIME_DIR": rt}).stdout
    finally:
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    paths = top.split("hottest call paths", 1)[1]
    # main > down x300 (the open frames: blocked at the bottom), one step
    assert re.search(r"F:deep\.main\(\) > F:deep\.down\(\) \u00d7300$", paths, re.M), top
    assert "down() > F:deep.down()" not in top, top
    assert re.search(r"F:deep\.main\(\) > F:deep\.down\(\) \u00d7300 > F:deep\.leak\(\)$", paths,
                     re.M), top


@hk.not_under("address", "thread", why="the sanitizer owns malloc")
def test_leaks_paths_collapse_recursion(tmp):
    exe = build(tmp)
    p = hk.run(tmp, [exe], env={"JPROFOPTS": "alloc"}, input="")
    assert p.stdout == "bottom\n"
    out = hk.hookit(tmp, "report", "--leaks", hk.one_profile(tmp, "deep")).stdout
    assert re.search(r"^\s+100\s+1\s+main -> down \u00d7300 -> leak$", out, re.M), out
    assert "down -> down" not in out, out
