/*
 * mkfixed: the fixed profiles of the report tests, built with profile.h.
 *
 *   mkfixed a FILE    the "before" profile: two threads, recursion, a
 *                     function called from two places
 *   mkfixed b FILE    the "after" profile: fib twice as slow, lex called
 *                     more, tiny gone, cache new, pid 2000
 *
 * Times are in ns and consistent (inclusive = exclusive + children's).
 */
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spec { int depth; const char *name; uint64_t calls, incl, excl; };

static const struct spec main_a[] = {
    { 0, "main", 1, 1000000, 100000 },
    { 1, "parse", 2, 200000, 150000 },
    { 2, "lex", 40, 50000, 50000 },
    { 1, "compute", 1, 600000, 100000 },
    { 2, "fib", 1, 500000, 200000 },
    { 3, "fib", 2, 300000, 200000 },
    { 4, "fib", 4, 100000, 100000 },
    { 1, "report", 1, 100000, 80000 },
    { 2, "lex", 5, 10000, 10000 },
    { 2, "tiny", 3, 3000, 3000 },
    { 2, "fmt", 1, 7000, 7000 },
    { -1, NULL, 0, 0, 0 },
};

static const struct spec worker_a[] = {
    { 0, "worker", 1, 400000, 50000 },
    { 1, "compute", 2, 350000, 50000 },
    { 2, "fib", 2, 300000, 300000 },
    { -1, NULL, 0, 0, 0 },
};

static const struct spec main_b[] = {
    { 0, "main", 1, 1750000, 100000 },
    { 1, "parse", 2, 260000, 150000 },
    { 2, "lex", 60, 80000, 80000 },
    { 2, "cache", 10, 30000, 30000 },
    { 1, "compute", 1, 1100000, 100000 },
    { 2, "fib", 1, 1000000, 400000 },
    { 3, "fib", 2, 600000, 400000 },
    { 4, "fib", 4, 200000, 200000 },
    { 1, "report", 1, 390000, 373000 },
    { 2, "lex", 5, 10000, 10000 },
    { 2, "fmt", 1, 7000, 7000 },
    { -1, NULL, 0, 0, 0 },
};

static const struct spec worker_b[] = {
    { 0, "worker", 1, 700000, 50000 },
    { 1, "compute", 2, 650000, 50000 },
    { 2, "fib", 2, 600000, 600000 },
    { -1, NULL, 0, 0, 0 },
};

static const char *const names[] = { "main", "parse", "lex", "compute", "fib", "report",
                                     "tiny", "fmt", "worker", "cache" };
#define NNAMES (sizeof names / sizeof names[0])

static void die(const char *what)
{
    fprintf(stderr, "mkfixed: %s\n", what);
    exit(1);
}

static uint32_t func_index(const char *name)
{
    for (uint32_t i = 0; i < NNAMES; i++)
        if (!strcmp(names[i], name))
            return i;
    die("unknown function");
    return 0;
}

static void add_thread(struct profile *p, struct prof_thread *th, int32_t tid, uint32_t index,
                       const char *name, const struct spec *s)
{
    uint32_t n = 0, path[16];
    while (s[n].name)
        n++;
    th->tid = tid;
    th->index = index;
    th->name = profile_intern(p, name);
    th->nnodes = n;
    th->nodes = profile_alloc(p, n * sizeof *th->nodes);
    if (!th->nodes || !th->name)
        die("out of memory");
    for (uint32_t i = 0; i < n; i++) {
        path[s[i].depth] = i;
        th->nodes[i] = (struct prof_node){
            .func = func_index(s[i].name),
            .parent = s[i].depth ? path[s[i].depth - 1] : PROF_NONE,
            .calls = s[i].calls, .incl_ns = s[i].incl, .excl_ns = s[i].excl,
        };
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "a") && strcmp(argv[1], "b")))
        die("usage: mkfixed a|b FILE");
    int b = !strcmp(argv[1], "b");
    struct profile *p = profile_new();
    if (!p)
        die("out of memory");
    p->process.pid = b ? 2000 : 1000;
    p->process.ppid = 1;
    p->process.exe = profile_intern(p, "/opt/demo/app");
    p->process.argv = profile_alloc(p, 2 * sizeof *p->process.argv);
    p->process.argv[0] = profile_intern(p, "app");
    p->process.argv[1] = profile_intern(p, "--fixed");
    p->process.argc = 2;
    p->process.start_ns = 1700000000000000000ull;
    p->process.duration_ns = 2000000;
    p->funcs = profile_alloc(p, NNAMES * sizeof *p->funcs);
    for (uint32_t i = 0; i < NNAMES; i++) {
        p->funcs[i].addr = (b ? 0x501000 : 0x401000) + 0x100 * i;   /* another build */
        p->funcs[i].name = profile_intern(p, names[i]);
        p->funcs[i].module = profile_intern(p, "app");
        p->funcs[i].file = profile_intern(p, "app.c");
        p->funcs[i].line = 10 * (i + 1);
    }
    p->nfuncs = NNAMES;
    p->threads = profile_alloc(p, 2 * sizeof *p->threads);
    add_thread(p, &p->threads[0], b ? 2000 : 1000, 0, "main", b ? main_b : main_a);
    add_thread(p, &p->threads[1], b ? 2001 : 1001, 1, "worker", b ? worker_b : worker_a);
    p->nthreads = 2;
    char err[512];
    const char *slash = strrchr(argv[2], '/');
    char dir[4096] = ".";
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - argv[2]), argv[2]);
    if (profile_write_file(p, dir, slash ? slash + 1 : argv[2], err, sizeof err) != 0)
        die(err);
    profile_free(p);
    return 0;
}
