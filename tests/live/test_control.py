"""Control of a process whose threads are all blocked (issue 18): every
`hookit ctl` command and `hookit snapshot` is carried out by the process's
control thread (profiler/jprof/live/agent.c) at once, without waking a thread of
the program, changing a mask or giving an EINTR.  The program checks its own
side (tests/live/blocked.c): how often each wait returned, and its view of
its mask and of SIGUSR1's flags (no SA_RESTART, so an EINTR would show)."""
import os, re, signal, statistics, subprocess, time

import hk

BLOCKED = os.path.join(hk.ROOT, "tests", "live", "blocked.c")
COMMANDS = ("stop", "start", "zerobase", "reset", "flush")


def start(tmp, mode, env=None):
    exe = hk.cc(tmp, [BLOCKED], "blocked", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    e = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt, **(env or {}))
    p = subprocess.Popen([exe, mode], cwd=tmp, env=e, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    assert line[:1] == ["ready"], (line, p.stderr.read() if p.poll() is not None else "")
    time.sleep(0.2)             # the waits begin
    return p, rt, [int(x) for x in line[1:]]


def tasks(pid):
    """{tid: (comm, SigBlk)} of every thread of pid."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            comm = f.read().strip()
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            blk = [l.split()[1] for l in f if l.startswith("SigBlk")][0]
        out[tid] = (comm, blk)
    return out


def program_tasks(pid):
    return {t: v for t, v in tasks(pid).items() if v[0] != "hookit-control"}


def ctl(tmp, rt, pid, cmd, **kw):
    t0 = time.monotonic()
    r = hk.hookit(tmp, "ctl", *kw.get("opts", ()), str(pid), cmd, check=False,
                  env={"HOOKIT_RUNTIME_DIR": rt})
    return r, time.monotonic() - t0


def control_everything(tmp, rt, pid):
    """Every command and both snapshots on pid; returns the latencies (s)."""
    took = []
    for cmd in COMMANDS:
        r, dt = ctl(tmp, rt, pid, cmd)
        # (a flush names the file it wrote, issue 30)
        wrote = rf": wrote {re.escape(tmp)}/hookit\.blocked\.{pid}(\.\d+)?\.prof" if cmd == "flush" else ""
        assert r.returncode == 0 and re.fullmatch(rf"process {pid}: {cmd} done{wrote}", r.stdout.strip()), \
            (cmd, r)
        took.append(dt)
    for i, opts in enumerate(((), ("--consistency=process",))):
        out = os.path.join(tmp, f"snap{pid}.{i}.prof")
        t0 = time.monotonic()
        r = hk.hookit(tmp, "snapshot", *opts, "-o", out, str(pid), env={"HOOKIT_RUNTIME_DIR": rt})
        took.append(time.monotonic() - t0)
        assert f"wrote {out}" in r.stdout, r.stdout
    return took


def check_latency(took):
    # Each figure is a whole `hookit` command (exec, attach, names for the
    # snapshots) on a shared 2-core machine; without the control thread a
    # command waits for its 5 s timeout.
    assert max(took) < 2.0, took
    assert statistics.median(took) < 0.1, took


def release(p, mode, pids):
    if mode == "read":
        p.stdin.write("hello\n")
        p.stdin.flush()
    else:
        os.kill(pids[-1], signal.SIGUSR1)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, (out, err)
    return out


EXPECT = {
    "sigsuspend": "sigsuspend 1 1\nview ok\n",      # each woke once: by SIGUSR1
    "join": "join 1 1\nview ok\n",
    "pause": "pause 1\nview ok\n",
    "read": "read 6 0\nview ok\n",                 # the line, no EINTR
    "fork": "fork 0 0\nview ok\n",                 # the child woke once; no EINTR in waitpid
}


def run_shape(tmp, mode, program_threads):
    # A program with threads of its own gets the control thread with its
    # first one; a single-threaded one only when asked (JPROFOPTS=control:
    # a thread of ours would turn off glibc's single-threaded paths).
    p, rt, pids = start(tmp, mode, env=None if program_threads > 1 else {"JPROFOPTS": "control"})
    try:
        before = {pid: program_tasks(pid) for pid in pids}
        want = {pid: program_threads if pid == pids[0] else 1 for pid in pids}
        for pid in pids:
            assert len(before[pid]) == want[pid], before
            assert sum(v[0] == "hookit-control" for v in tasks(pid).values()) == 1, tasks(pid)
            check_latency(control_everything(tmp, rt, pid))
        # nobody woke: the same threads, with the same masks
        assert {pid: program_tasks(pid) for pid in pids} == before
        out = release(p, mode, pids)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert out == EXPECT[mode], out
    # the control thread is in no profile (snapshots, the flush, the final
    # one): the program's threads only
    written = hk.profiles(tmp, "blocked")
    for pid in pids:
        mine = [f for f in written if f".{pid}." in os.path.basename(f)]
        assert len(mine) == 2, written         # the flush and the final profile
        for f in mine + [os.path.join(tmp, f"snap{pid}.{i}.prof") for i in (0, 1)]:
            doc = hk.export_json(tmp, f)
            assert len(doc["threads"]) == want[pid], (f, [t["name"] for t in doc["threads"]])


def test_sigsuspend(tmp):
    run_shape(tmp, "sigsuspend", 2)


def test_join_and_condition_waits(tmp):
    run_shape(tmp, "join", 4)


def test_pause(tmp):
    run_shape(tmp, "pause", 1)


def test_read_on_a_pipe(tmp):
    run_shape(tmp, "read", 1)


def test_fork_child_has_its_own_control_thread(tmp):
    run_shape(tmp, "fork", 1)


def test_flush_while_blocked_writes_the_open_path(tmp):
    """The flush the control thread writes is the program's tree: main is
    in suspend_wait, open, counted once."""
    p, rt, pids = start(tmp, "sigsuspend")
    try:
        r, _ = ctl(tmp, rt, pids[0], "flush")
        assert r.returncode == 0, r
        flushed = hk.profiles(tmp, "blocked")
        assert len(flushed) == 1, flushed
        doc = hk.export_json(tmp, flushed[0])
        assert hk.node(hk.thread_of(doc, 0), "main", "suspend_wait")["calls"] == 1
        assert hk.node(hk.thread_of(doc, 1), "suspender", "suspend_wait")["calls"] == 1
        assert doc["process"]["meta"]["end"] == "flush", doc["process"]["meta"]
        release(p, "sigsuspend", pids)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_stop_while_blocked_stops_collection(tmp):
    """`ctl stop` on a blocked process takes effect before it runs again:
    the calls made after the release are not counted."""
    p, rt, pids = start(tmp, "join")
    try:
        r, _ = ctl(tmp, rt, pids[0], "stop")
        assert r.returncode == 0, r
        release(p, "join", pids)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    doc = hk.export_json(tmp, hk.one_profile(tmp, "blocked"))
    names = {path[-1] for t in doc["threads"] for path, _ in hk.walk(t["roots"])}
    assert "view_ok" not in names and "cond_wait" in names, names


def test_without_the_control_thread_a_blocked_process_is_not_reached(tmp):
    """JPROFOPTS=nocontrol: no control thread (the program stays
    single-threaded); commands then wait for a hook and time out."""
    p, rt, pids = start(tmp, "pause", env={"JPROFOPTS": "nocontrol"})
    try:
        assert len(tasks(pids[0])) == 1, tasks(pids[0])
        r, dt = ctl(tmp, rt, pids[0], "flush", opts=("--timeout", "0.3"))
        assert r.returncode == 1 and "no thread ran an instrumented function" in r.stderr, r
        release(p, "pause", pids)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_main_pthread_exit_ends_with_the_last_thread(tmp):
    """main calls pthread_exit: the process ends when its last thread
    returns, as without hookit (the control thread is ended first)."""
    src = os.path.join(tmp, "last.c")
    with open(src, "w") as f:
        f.write("""
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *work(void *a) { (void)a; usleep(200000); puts("worker done"); fflush(stdout); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, work, 0); puts("main leaves"); fflush(stdout);
                 pthread_exit(0); }
""")
    exe = hk.cc(tmp, [src], "last", libs=["-lpthread"])
    e = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=os.path.join(tmp, "rt"))
    r = subprocess.run([exe], cwd=tmp, env=e, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == "main leaves\nworker done\n", r
    doc = hk.export_json(tmp, hk.one_profile(tmp, "last"))
    assert len(doc["threads"]) == 2, doc["threads"]


def test_flush_by_the_control_thread_in_a_program_with_its_own_malloc(tmp):
    """The control thread's flush allocates through the program's own
    instrumented malloc (libc and libbfd call it): none of those calls is
    the program's.  The calls of malloc counted before and after the flush
    are the same, and the process still has one thread of its own."""
    src = os.path.join(tmp, "ownmalloc.c")
    with open(src, "w") as f:
        f.write("""
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static char heap[64 << 20];
static size_t used;
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static void *bump(size_t n) {
    pthread_mutex_lock(&heap_lock);
    size_t at = (used + 15) & ~(size_t)15;
    if (at + n + 16 > sizeof heap) { pthread_mutex_unlock(&heap_lock); errno = ENOMEM; return NULL; }
    used = at + n + 16;
    pthread_mutex_unlock(&heap_lock);
    *(size_t *)(heap + at) = n;
    return heap + at + 16;
}
void *malloc(size_t n) { return bump(n); }
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { void *p = bump(a * b); if (p) memset(p, 0, a * b); return p; }
void *realloc(void *p, size_t n) {
    void *q = bump(n);
    if (q && p) { size_t old = *(size_t *)((char *)p - 16); memcpy(q, p, old < n ? old : n); }
    return q;
}
static volatile sig_atomic_t done;
static void on_usr1(int s) { (void)s; done = 1; }
__attribute__((noinline)) void wait_here(void) { while (!done) pause(); }
int main(void) {
    signal(SIGUSR1, on_usr1);
    printf("ready %d\\n", (int)getpid());
    fflush(stdout);
    wait_here();
    return 0;
}
""")
    exe = hk.cc(tmp, [src], "ownmalloc", libs=["-lpthread"])
    rt = os.path.join(tmp, "rt")
    p = subprocess.Popen([exe], cwd=tmp, env=hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=rt,
                                                         JPROFOPTS="control"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = int(p.stdout.readline().split()[1])
        time.sleep(0.2)

        def mallocs(path):
            doc = hk.export_json(tmp, path)
            assert len(doc["threads"]) == 1, [t["name"] for t in doc["threads"]]
            return sum(n["calls"] for path_, n in hk.walk(doc["threads"][0]["roots"])
                       if path_[-1] in ("malloc", "calloc", "realloc", "free"))

        before = os.path.join(tmp, "before.prof")
        hk.hookit(tmp, "snapshot", "-o", before, str(pid), env={"HOOKIT_RUNTIME_DIR": rt})
        for _ in range(3):
            r, _ = ctl(tmp, rt, pid, "flush")
            assert r.returncode == 0, r
        after = os.path.join(tmp, "after.prof")
        hk.hookit(tmp, "snapshot", "-o", after, str(pid), env={"HOOKIT_RUNTIME_DIR": rt})
        assert mallocs(after) == mallocs(before), (mallocs(before), mallocs(after))
        for f in hk.profiles(tmp, "ownmalloc"):
            mallocs(f)          # one thread in each flushed profile too
        assert len(program_tasks(pid)) == 1, tasks(pid)
        p.send_signal(signal.SIGUSR1)
        p.communicate(timeout=30)
        assert p.returncode == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


SINGLE = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <unistd.h>
#include <dirent.h>
static void *nothing(void *a) { return a; }
static int tasks(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}
__attribute__((noinline)) void work(void) { free(malloc(100)); }
int main(int argc, char **argv) {
    work();
    printf("single %d tasks %d\n", (int)__libc_single_threaded, tasks());
    if (argc > 1) {
        pthread_t t;
        pthread_create(&t, 0, nothing, 0);
        pthread_join(t, 0);
        usleep(100000);         /* the control thread is being made */
        printf("single %d tasks %d\n", (int)__libc_single_threaded, tasks());
    }
    return 0;
}
"""


def single_threaded_run(tmp, args=(), opts=None):
    src = os.path.join(tmp, "single.c")
    with open(src, "w") as f:
        f.write(SINGLE)
    exe = hk.cc(tmp, [src], "single", libs=["-lpthread"])
    env = hk.test_env(HOOKIT_OUTPUT=tmp, HOOKIT_RUNTIME_DIR=os.path.join(tmp, "rt"),
                      **({"JPROFOPTS": opts} if opts else {}))
    r = subprocess.run([exe, *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r
    return r.stdout


def test_a_single_threaded_program_stays_single_threaded_for_glibc(tmp):
    """No control thread in a program without threads of its own: glibc
    keeps its single-threaded malloc and stdio (a thread of ours would turn
    them off for good, and the program's time in them would grow)."""
    assert single_threaded_run(tmp) == "single 1 tasks 1\n"


def test_the_control_thread_comes_with_the_programs_first_thread(tmp):
    """Once the program makes a thread, glibc is multi-threaded anyway:
    the control thread starts then (and stays after the program's ends)."""
    assert single_threaded_run(tmp, ["thread"]) == "single 1 tasks 1\nsingle 0 tasks 2\n"


def test_jprofopts_control_starts_it_at_once(tmp):
    assert single_threaded_run(tmp, opts="control") == "single 0 tasks 2\n"
