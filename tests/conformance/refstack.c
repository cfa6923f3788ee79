/*
 * refstack: the conformance corpus's reference hook library (docs/conformance.md).
 *
 * Built without -finstrument-functions and preloaded (LD_PRELOAD) into a
 * program compiled with -finstrument-functions, in place of hookit.  It keeps
 * the plainest possible model of the calls: a per-thread shadow stack (push on
 * enter, pop on exit) and a per-thread calling-context tree with call counts.
 * Where entries and exits pair, that tree is exact by construction.  Two
 * additions keep it exact where they do not pair and where it is cheap to know
 * what happened instead of guessing:
 *   - setjmp/longjmp: _setjmp, setjmp and __sigsetjmp are interposed by an
 *     assembly trampoline that notes (jmp_buf address -> stack depth) and
 *     tail-jumps to libc's; longjmp, _longjmp, siglongjmp and __longjmp_chk
 *     restore the noted depth before jumping (uftrace does the same);
 *   - the exit hook checks that the function leaving is the one on top, and
 *     counts the mismatches (a reference that saw any is not exact and the
 *     runner says so instead of comparing).
 * C++ exceptions without exit hooks (clang), swapcontext with frames left
 * behind and the like are not modelled: those cases compare with a tree
 * written in the test.
 *
 * No malloc, no locks, no stdio in the hooks (signal handlers and programs
 * that bring their own instrumented malloc run through them): per-thread
 * pools are mmap'ed, nodes are linked with atomics.
 *
 * fork: the child keeps the forking thread's stack and tree with every count
 * zeroed (inherited frames are context, not calls) and forgets the other
 * threads.  Output: at exit (destructor, also exit from _exit/_Exit) one file
 * $REFSTACK_OUT/ref.<pid>.txt per process, with every thread's tree as raw
 * addresses plus the loaded modules (dl_iterate_phdr) to resolve them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NI __attribute__((no_instrument_function))
#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

#define MAX_NODES   (8u << 20)       /* per thread, reserved (MAP_NORESERVE) */
#define MAX_DEPTH   (1u << 20)
#define MAX_JMPBUFS 1024

struct node {
    void *fn;
    uint64_t calls;
    uint32_t parent, child, sibling, pad;
};

struct jmpnote { void *env; uint32_t depth; };

struct thr {
    struct thr *next;
    long tid;
    uint32_t nnodes, depth;
    uint64_t events, unmatched, mismatched, overflow, lost_longjmps;
    uint32_t njmp;
    struct jmpnote jmp[MAX_JMPBUFS];
    uint32_t *stack;
    struct node *nodes;
    int closed;                         /* its start routine returned: see thread_run */
};

static __thread struct thr *me __attribute__((tls_model("initial-exec")));
static struct thr *threads;            /* every thread of this process */
static int out_written_pid;          /* the process that wrote (a vfork child shares it) */

NI static long sys_gettid(void) { return syscall(SYS_gettid); }

NI static struct thr *new_thread(void)
{
    size_t sz = sizeof(struct thr) + (size_t)MAX_DEPTH * sizeof(uint32_t)
                + (size_t)MAX_NODES * sizeof(struct node);
    void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    struct thr *t = m;
    t->tid = sys_gettid();
    t->stack = (uint32_t *)(t + 1);
    t->nodes = (struct node *)(t->stack + MAX_DEPTH);
    t->nnodes = 1;                     /* node 0: the thread's root */
    t->stack[0] = 0;
    t->depth = 1;
    struct thr *head = __atomic_load_n(&threads, __ATOMIC_ACQUIRE);
    do
        t->next = head;
    while (!__atomic_compare_exchange_n(&threads, &head, t, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
    me = t;
    return t;
}

NI static uint32_t child_of(struct thr *t, uint32_t parent, void *fn)
{
    struct node *nodes = t->nodes;
    uint32_t first = __atomic_load_n(&nodes[parent].child, __ATOMIC_ACQUIRE);
    for (uint32_t c = first; c; c = nodes[c].sibling)
        if (nodes[c].fn == fn)
            return c;
    uint32_t idx = __atomic_fetch_add(&t->nnodes, 1, __ATOMIC_RELAXED);
    if (idx >= MAX_NODES) {
        t->overflow++;
        return 0;
    }
    nodes[idx].fn = fn;
    nodes[idx].parent = parent;
    /* A signal handler may add a child to the same parent meanwhile. */
    do {
        for (uint32_t c = first; c; c = nodes[c].sibling)   /* added by a handler? */
            if (nodes[c].fn == fn && c != idx)
                return c;                                    /* (idx stays unused) */
        nodes[idx].sibling = first;
    } while (!__atomic_compare_exchange_n(&nodes[parent].child, &first, idx, 0,
                                          __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
    return idx;
}

HIDDEN NI void refstack_enter(void *fn, void *site)
{
    struct thr *t = me ? me : new_thread();
    if (!t || t->closed)
        return;
    t->events++;
    uint32_t d = t->depth;
    if (d >= MAX_DEPTH) {
        t->overflow++;
        return;
    }
    uint32_t n = child_of(t, t->stack[d - 1], fn);
    if (!n)
        return;
    __atomic_fetch_add(&t->nodes[n].calls, 1, __ATOMIC_RELAXED);
    t->stack[d] = n;
    __atomic_store_n(&t->depth, d + 1, __ATOMIC_RELEASE);
}

HIDDEN NI void refstack_exit(void *fn, void *site)
{
    struct thr *t = me;
    if (!t || t->closed)
        return;
    t->events++;
    uint32_t d = t->depth;
    if (d <= 1) {
        t->unmatched++;
        return;
    }
    if (t->nodes[t->stack[d - 1]].fn != fn)
        t->mismatched++;
    __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
}

/* The exported hooks record, then, with REFSTACK_CHAIN=1, tail-jump to the
 * next library's hooks (hookit's, preloaded after this one): both see the
 * same run, with the instrumented function's frame as if it called them
 * directly.  For programs whose tree differs from run to run (zstd -T2). */
HIDDEN void *next_refstack_enter, *next_refstack_exit;
#define HOOK(name, body)                                                    \
    __asm__(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n" \
            "  push %rdi\n  push %rsi\n  sub $8, %rsp\n"                      \
            "  call " #body "\n"                                             \
            "  add $8, %rsp\n  pop %rsi\n  pop %rdi\n"                       \
            "  mov next_" #body "(%rip), %rax\n"                              \
            "  test %rax, %rax\n  jz 1f\n  jmp *%rax\n1:  ret\n"              \
            ".size " #name ", .-" #name "\n");
HOOK(__cyg_profile_func_enter, refstack_enter)
HOOK(__cyg_profile_func_exit, refstack_exit)

/* ---- the end of a thread ------------------------------------------------------
 * A thread's life ends where hookit's lifecycle layer ends it (and libmonitor
 * too): when its start routine returns or it calls pthread_exit.  glibc then
 * still frees the thread's own blocks (__glibc_tls_internal_free) through the
 * program's free, after any hook a program or a profiler can register, so no
 * profiler in the process can follow (docs/exactness.md).  The reference
 * closes its threads at the same point. */
struct thread_start {
    void *(*fn)(void *);
    void *arg;
};

NI static void thread_closed(void *unused)
{
    (void)unused;
    if (me)
        me->closed = 1;
}

NI static void *thread_run(void *p)
{
    struct thread_start s = *(struct thread_start *)p;
    munmap(p, sizeof s);
    void *ret;
    pthread_cleanup_push(thread_closed, NULL);
    ret = s.fn(s.arg);
    pthread_cleanup_pop(1);
    return ret;
}

EXPORT NI int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real)
        real = dlsym(RTLD_NEXT, "pthread_create");
    struct thread_start *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return real(thread, attr, fn, arg);
    *s = (struct thread_start){ fn, arg };
    int rc = real(thread, attr, thread_run, s);
    if (rc != 0)
        munmap(s, sizeof *s);
    return rc;
}

/* ---- setjmp / longjmp ------------------------------------------------------ */

HIDDEN void *real__setjmp, *real_setjmp, *real___sigsetjmp;
static void (*real_longjmp)(void *, int), (*real__longjmp)(void *, int),
            (*real_siglongjmp)(void *, int), (*real___longjmp_chk)(void *, int);

HIDDEN NI void refstack_note_setjmp(void *env)
{
    struct thr *t = me;
    if (!t)
        return;
    /* A note taken deeper than here belongs to a frame that has returned:
     * its buffer is dead, and goes (Lua keeps ~200 protected calls live
     * at once, at ever new addresses). */
    for (uint32_t k = 0; k < t->njmp;)
        if (t->jmp[k].depth > t->depth)
            t->jmp[k] = t->jmp[--t->njmp];
        else
            k++;
    uint32_t i;
    for (i = 0; i < t->njmp; i++)
        if (t->jmp[i].env == env)
            break;
    if (i == t->njmp) {
        if (t->njmp < MAX_JMPBUFS)
            t->njmp++;
        else
            i = (uint32_t)((uintptr_t)env >> 4) % MAX_JMPBUFS;   /* forget one */
    }
    t->jmp[i].env = env;
    t->jmp[i].depth = t->depth;
}

NI static void note_longjmp(void *env)
{
    struct thr *t = me;
    if (!t)
        return;
    for (uint32_t i = 0; i < t->njmp; i++)
        if (t->jmp[i].env == env) {
            if (t->jmp[i].depth <= t->depth)
                __atomic_store_n(&t->depth, t->jmp[i].depth, __ATOMIC_RELEASE);
            else
                t->lost_longjmps++;
            return;
        }
    t->lost_longjmps++;
}

/* The trampolines keep the caller's stack and return address intact so that
 * libc's setjmp saves the caller's context: save the arguments, note, restore,
 * tail-jump. */
#define TRAMPOLINE(name)                                                    \
    __asm__(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n" \
            "  push %rdi\n  push %rsi\n  sub $8, %rsp\n"                      \
            "  call refstack_note_setjmp\n"                                  \
            "  add $8, %rsp\n  pop %rsi\n  pop %rdi\n"                       \
            "  jmp *real_" #name "(%rip)\n"                                  \
            ".size " #name ", .-" #name "\n");
TRAMPOLINE(_setjmp)
TRAMPOLINE(setjmp)
TRAMPOLINE(__sigsetjmp)

#define LONGJMP(name)                                                       \
    EXPORT NI __attribute__((noreturn)) void name(void *env, int val)       \
    {                                                                       \
        note_longjmp(env);                                                  \
        real_##name(env, val);                                              \
        __builtin_unreachable();                                            \
    }
LONGJMP(longjmp)
LONGJMP(_longjmp)
LONGJMP(siglongjmp)
LONGJMP(__longjmp_chk)

/* ---- output ---------------------------------------------------------------- */

struct out { int fd; size_t n; char buf[1 << 16]; };
static struct out outbuf;
static char exe_path[4096];            /* /proc/self/exe, read at start (unreadable once main exits) */

NI static void flush(struct out *o)
{
    size_t off = 0;
    while (off < o->n) {
        ssize_t w = write(o->fd, o->buf + off, o->n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    o->n = 0;
}

NI __attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
    if (o->n > sizeof o->buf - 4200)
        flush(o);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->n += (size_t)k < sizeof o->buf - o->n ? (size_t)k : sizeof o->buf - o->n - 1;
}

NI static int put_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct out *o = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        const char *path = info->dlpi_name;
        if (!path || !*path)                      /* the main program */
            path = exe_path;
        put(o, "segment %lx %lx %lx %s\n", (unsigned long)info->dlpi_addr,
            (unsigned long)(info->dlpi_addr + ph->p_vaddr),
            (unsigned long)(info->dlpi_addr + ph->p_vaddr + ph->p_memsz), path);
    }
    return 0;
}

NI static void write_profile(void)
{
    int pid = (int)getpid();
    if (__atomic_exchange_n(&out_written_pid, pid, __ATOMIC_ACQ_REL) == pid)
        return;
    const char *dir = getenv("REFSTACK_OUT");
    if (!dir)
        return;
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/ref.%d.txt", dir, (int)getpid());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    struct out *o = &outbuf;
    o->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0)
        return;
    o->n = 0;
    put(o, "refstack 1\npid %d ppid %d\n", (int)getpid(), (int)getppid());
    dl_iterate_phdr(put_module, o);
    for (struct thr *t = __atomic_load_n(&threads, __ATOMIC_ACQUIRE); t; t = t->next) {
        uint32_t n = __atomic_load_n(&t->nnodes, __ATOMIC_ACQUIRE);
        if (n > MAX_NODES)
            n = MAX_NODES;
        put(o, "thread %ld events %lu unmatched %lu mismatched %lu overflow %lu lost_longjmps %lu nodes %u\n",
            t->tid, (unsigned long)t->events, (unsigned long)t->unmatched,
            (unsigned long)t->mismatched, (unsigned long)t->overflow,
            (unsigned long)t->lost_longjmps, n);
        for (uint32_t i = 1; i < n; i++)
            if (t->nodes[i].fn)
                put(o, "n %u %u %lx %lu\n", i, t->nodes[i].parent,
                    (unsigned long)(uintptr_t)t->nodes[i].fn, (unsigned long)t->nodes[i].calls);
    }
    put(o, "end\n");
    flush(o);
    close(o->fd);
    rename(tmp, path);
}

NI static void at_fork_child(void)
{
    struct thr *t = me;
    threads = NULL;
    if (!t)
        return;
    t->next = NULL;
    t->tid = sys_gettid();
    threads = t;
    t->events = t->unmatched = t->mismatched = t->overflow = t->lost_longjmps = 0;
    for (uint32_t i = 0; i < t->nnodes && i < MAX_NODES; i++)
        t->nodes[i].calls = 0;
}

__attribute__((constructor(101))) NI static void refstack_init(void)
{
    real__setjmp = dlsym(RTLD_NEXT, "_setjmp");
    real_setjmp = dlsym(RTLD_NEXT, "setjmp");
    real___sigsetjmp = dlsym(RTLD_NEXT, "__sigsetjmp");
    real_longjmp = (void (*)(void *, int))dlsym(RTLD_NEXT, "longjmp");
    real__longjmp = (void (*)(void *, int))dlsym(RTLD_NEXT, "_longjmp");
    real_siglongjmp = (void (*)(void *, int))dlsym(RTLD_NEXT, "siglongjmp");
    real___longjmp_chk = (void (*)(void *, int))dlsym(RTLD_NEXT, "__longjmp_chk");
    pthread_atfork(NULL, NULL, at_fork_child);
    const char *chain = getenv("REFSTACK_CHAIN");
    if (chain && *chain == '1') {
        next_refstack_enter = dlsym(RTLD_NEXT, "__cyg_profile_func_enter");
        next_refstack_exit = dlsym(RTLD_NEXT, "__cyg_profile_func_exit");
    }
    ssize_t k = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[k > 0 ? k : 0] = 0;
}

__attribute__((destructor(101))) NI static void refstack_fini(void)
{
    write_profile();
}

EXPORT NI __attribute__((noreturn)) void _exit(int status)
{
    write_profile();
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

EXPORT NI __attribute__((noreturn)) void _Exit(int status)
{
    _exit(status);
}
