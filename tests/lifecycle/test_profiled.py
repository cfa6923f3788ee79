"""The lifecycle layer connected to the profiler: instrumented programs,
preloaded (dynamic) and built with `hookit link` (fully static, profiler
linked in).  A forked child writes its own profile, exec writes the old
image's profile first, death by a signal writes the profile before dying
(with the same status), and an exit from a worker thread includes every
thread's tree."""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import lcscen  # noqa: E402

CASES = {
    # name: (source, expected status, profiles, threads in the first profile)
    "fork_basic": ("fork_basic.c", 0, 2, 1),
    "exec_self": ("exec_self.c", 2, 2, 1),
    "sig_segv_fault": ("sig_segv_fault.c", -11, 1, 1),
    "sig_term_self": ("sig_term_self.c", -15, 1, 1),
    "thr_exit_from_worker": ("thr_exit_from_worker.c", 6, 1, 4),
    "deep_recursion": ("deep_recursion.c", 0, 1, 1),
}


def build(tmp, src, exe, static):
    path = os.path.join(tmp, exe)
    if static:
        cmd = [hk.BIN, "link", "--", "gcc", "-static", "-g", "-O1", "-finstrument-functions",
               "-o", path, os.path.join(lcscen.PROGS, src), "-pthread"]
    else:
        cmd = ["gcc", "-g", "-O1", "-finstrument-functions", "-o", path,
               os.path.join(lcscen.PROGS, src), "-pthread"]
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stderr}"
    return path


def run_case(tmp, name, static):
    src, status, nprof, nthreads = CASES[name]
    exe = build(tmp, src, name, static)
    env = hk.test_env(HOOKIT_OUTPUT=tmp)
    if not static:
        env["LD_PRELOAD"] = hk.LIBHOOKIT
        hk.sanitizer_env(env)   # a sanitizer runtime stays first
    p = subprocess.run([exe], cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == status, (p.returncode, p.stderr)
    profs = hk.profiles(tmp, name)
    assert len(profs) == nprof, (profs, p.stderr)
    if name == "deep_recursion":
        # 100000 levels: too deep for a JSON reader; the flat view counts them.
        flat = hk.hookit(tmp, "report", "--flat", profs[0]).stdout
        assert any(l.split()[3] == "100001" and l.endswith("depth()")
                   for l in flat.splitlines() if len(l.split()) > 5), flat
        return None
    docs = [hk.export_json(tmp, f) for f in profs]
    first = min(docs, key=lambda d: (d["process"]["pid"], len(d["process"].get("argv", []))))
    assert len(first["threads"]) == nthreads, first["threads"]
    for d in docs:
        main = hk.thread_of(d, 0)
        assert any(n["name"] == "main" for _, n in hk.walk(main["roots"])), main
    return docs


def make(name, static):
    def test(tmp):
        run_case(tmp, name, static)
    test.__name__ = f"test_{'static' if static else 'preload'}_{name}"
    return test


for _n in CASES:
    globals()[f"test_preload_{_n}"] = make(_n, False)
    globals()[f"test_static_{_n}"] = make(_n, True)


def test_preload_siglongjmp_cuts_the_tree(tmp):
    """A SIGSEGV handler leaving by siglongjmp three times: the handler and
    the abandoned frames do not stay open (every node's time is consistent
    and main ends at depth 0 with the right children)."""
    exe = build(tmp, "sig_longjmp.c", "sig_longjmp", False)
    env = hk.test_env(HOOKIT_OUTPUT=tmp, LD_PRELOAD=hk.LIBHOOKIT)
    p = subprocess.run([exe], cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "recovered 3 times\n", p
    doc = hk.export_json(tmp, hk.one_profile(tmp, "sig_longjmp"))
    main = hk.thread_of(doc, 0)
    hk.check_tree_consistent(main)
    assert [n["name"] for n in main["roots"]] == ["main"], main["roots"]
    assert hk.node(main, "main", "deep")["calls"] == 3


def test_preload_dlclose_then_same_address(tmp):
    """dlclose a library whose function ran, then open another that is
    likely mapped at the same address: both functions keep their names."""
    for src, lib, extra in (("dl_lib.c", "libdltest.so", []),
                            ("dl_dep_lib.c", "libdldep.so", ["-L" + tmp, "-ldltest", "-Wl,-rpath," + tmp])):
        r = subprocess.run(["gcc", "-g", "-O0", "-finstrument-functions", "-shared", "-fPIC", "-o",
                            os.path.join(tmp, lib), os.path.join(lcscen.PROGS, src)] + extra,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    exe = os.path.join(tmp, "dl_reopen")
    r = subprocess.run(["gcc", "-g", "-O0", "-finstrument-functions", "-o", exe,
                        os.path.join(lcscen.PROGS, "dl_reopen.c"), "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = hk.test_env(HOOKIT_OUTPUT=tmp, LD_PRELOAD=hk.LIBHOOKIT)
    p = subprocess.run([exe, os.path.join(tmp, "libdltest.so"), os.path.join(tmp, "libdldep.so")],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout == "value 1 = 3\nvalue 2 = 7\n", p
    doc = hk.export_json(tmp, hk.one_profile(tmp, "dl_reopen"))
    main = hk.thread_of(doc, 0)
    top = {(n["name"], n["module"]) for n in hk.node(main, "main")["children"]}
    assert ("dep_value", "libdldep.so") in top, top
    # The closed library's functions keep their names (named at pre_dlclose).
    assert ("lib_value", "libdltest.so") in top, top


def test_sampling_signal_kept_deliverable_when_the_program_blocks_it(tmp):
    """JPROFOPTS=timer=sample takes time from a per-thread SIGPROF timer: a
    program that blocks every signal (and waits in ppoll with a mask that
    blocks them too) still has its CPU time sampled as when it blocks
    nothing, and reads back the mask it set.  Before, its samples stayed
    pending: no time at all."""
    src = os.path.join(tmp, "blockall.c")
    with open(src, "w") as f:
        f.write("""
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
                          return t.tv_sec + t.tv_nsec / 1e9; }
__attribute__((noinline)) void spin(double s) { double end = cpu() + s; while (cpu() < end) sink++; }
int main(void) {
    sigset_t all, now;
    sigfillset(&all);
    if (atoi(getenv("BLOCK_ALL") ? getenv("BLOCK_ALL") : "0"))
        sigprocmask(SIG_SETMASK, &all, NULL);
    spin(0.3);
    struct timespec t = { 0, 50000000 };
    int r = ppoll(NULL, 0, &t, &all);
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("ppoll %d prof blocked %d\\n", r, sigismember(&now, SIGPROF));
    return 0;
}
""")
    exe = hk.cc(tmp, [src], "blockall")
    sampled = {}
    for block in ("0", "1"):
        out = os.path.join(tmp, "b" + block)
        os.mkdir(out)
        r = subprocess.run([exe], cwd=tmp, capture_output=True, text=True, timeout=60,
                           env=hk.test_env(HOOKIT_OUTPUT=out, JPROFOPTS="timer=sample", BLOCK_ALL=block))
        assert r.returncode == 0 and r.stdout == f"ppoll 0 prof blocked {block}\n", r
        doc = hk.export_json(tmp, hk.one_profile(out, "blockall"))
        spin = hk.node(hk.thread_of(doc, 0), "main", "spin")
        assert spin["calls"] == 1, spin
        sampled[block] = spin["incl_ns"]
    assert sampled["0"] > 0 and sampled["1"] >= sampled["0"] * 0.3, sampled
