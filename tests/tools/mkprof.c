/*
 * mkprof: builds a fixed, known profile with profile.h's API, for the tools
 * tests (tests/tools/test_*.py).
 *
 *   mkprof write DIR NAME       write the fixed profile to DIR/NAME (atomic write);
 *                               prints "EEXIST: msg" and exits 3 when NAME exists
 *   mkprof stdout               the fixed profile on stdout (profile_write_fd, a pipe)
 *   mkprof check FILE           read FILE back and compare every field with the
 *                               fixed profile; prints the first difference
 *   mkprof big DIR NAME N       a synthetic profile with N nodes in one thread
 *   mkprof variant DIR NAME K   the fixed profile with pid 5000+K and times * K
 *   mkprof version DIR NAME MAJOR MINOR   the fixed profile, header version patched
 *                               (crc recomputed), to test version checks
 *   mkprof invalid DIR NAME     try to write a profile whose node's parent follows it
 */
#include "profile/profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static struct profile *die_oom(void)
{
    fprintf(stderr, "mkprof: out of memory\n");
    exit(1);
}

enum { F_MAIN, F_FIB, F_UDL, F_IOREAD, F_MPI, F_WORKER, F_WEIRD, F_UNUSED, NFUNCS };

static const struct prof_func funcs[NFUNCS] = {
    [F_MAIN]   = { 0x401000, "main", "demo", "demo.c", 10 },
    [F_FIB]    = { 0x401100, "fib", "demo", "demo.c", 20 },
    [F_UDL]    = { 0x7f0000001000, "units::operator\"\" _km(unsigned long long)",
                   "libunits.so", "units.cc", 5 },
    [F_IOREAD] = { 0x7f0000002000, "io_read", "libc.so.6", NULL, 0 },
    [F_MPI]    = { 0, "MPI:MPI_Send", "", NULL, 0 },
    [F_WORKER] = { 0x401200, "worker_loop", "demo", "demo.c", 30 },
    [F_WEIRD]  = { 0x401300, "weird\\name\t\x01\xff\"end\"", "demo", NULL, 0 },
    [F_UNUSED] = { 0x401400, "unused", "demo", "demo.c", 99 },
};

/* Thread 0: main -> fib -> fib -> fib (recursion), main -> udl -> {io_read, fib},
 * main -> MPI_Send.  Times in ns. */
static const struct prof_node nodes0[] = {
    { F_MAIN,   PROF_NONE, 1, 1000000,  60000 },
    { F_FIB,    0,         1,  600000, 100000 },
    { F_FIB,    1,         2,  500000, 200000 },
    { F_FIB,    2,         4,  300000, 300000 },
    { F_UDL,    0,         3,  300000, 150000 },
    { F_IOREAD, 4,         3,   50000,  50000 },
    { F_FIB,    4,         2,  100000, 100000 },
    { F_MPI,    0,         5,   40000,  40000 },
};
static const uint64_t io0[] = { 0, 0, 0, 0, 4096, 4096, 0, 0 };

static const struct prof_node nodes1[] = {
    { F_WORKER, PROF_NONE, 1, 2000000,  500000 },
    { F_WEIRD,  0,         7, 1500000, 1500000 },
};
static const uint64_t alloc1[] = { 128, 64 };

static const char *const argv0[] = { "demo", "--n=3", "quote\"d arg" };

static struct profile *fixed_profile(int k)
{
    struct profile *p = profile_new();
    if (!p)
        return die_oom();
    p->process.pid = 4242 + (k ? 758 + k : 0);
    p->process.ppid = 1;
    p->process.exe = profile_intern(p, "/usr/local/bin/demo app");
    p->process.argc = 3;
    p->process.argv = profile_alloc(p, sizeof(char *) * 3);
    for (int i = 0; i < 3; i++)
        p->process.argv[i] = profile_intern(p, argv0[i]);
    p->process.start_ns = 1700000000123456789ull;
    p->process.duration_ns = 5000000;
    if (profile_set_meta(p, "hostname", "testhost") || profile_set_meta(p, "clock", "wrong") ||
        profile_set_meta(p, "clock", "CLOCK_MONOTONIC"))
        return die_oom();

    p->nfuncs = NFUNCS;
    p->funcs = profile_alloc(p, sizeof funcs);
    for (int i = 0; i < NFUNCS; i++) {
        p->funcs[i] = funcs[i];
        p->funcs[i].name = profile_intern(p, funcs[i].name);
        p->funcs[i].module = profile_intern(p, funcs[i].module);
        p->funcs[i].file = profile_intern(p, funcs[i].file);
    }

    uint64_t mul = k ? (uint64_t)k : 1;
    p->nthreads = 2;
    p->threads = profile_alloc(p, 2 * sizeof *p->threads);
    struct prof_thread *t = &p->threads[0];
    t->tid = p->process.pid;
    t->index = 0;
    t->name = profile_intern(p, "main");
    t->nnodes = 8;
    t->nodes = profile_alloc(p, sizeof nodes0);
    memcpy(t->nodes, nodes0, sizeof nodes0);
    t->nmetrics = 1;
    t->metrics = profile_alloc(p, sizeof *t->metrics);
    t->metrics[0].name = profile_intern(p, "io_bytes_read");
    t->metrics[0].values = profile_alloc(p, sizeof io0);
    memcpy(t->metrics[0].values, io0, sizeof io0);

    t = &p->threads[1];
    t->tid = p->process.pid + 1;
    t->index = 1;
    t->name = profile_intern(p, "worker \"w1\"");
    t->nnodes = 2;
    t->nodes = profile_alloc(p, sizeof nodes1);
    memcpy(t->nodes, nodes1, sizeof nodes1);
    t->nmetrics = 1;
    t->metrics = profile_alloc(p, sizeof *t->metrics);
    t->metrics[0].name = profile_intern(p, "alloc_bytes");
    t->metrics[0].values = profile_alloc(p, sizeof alloc1);
    memcpy(t->metrics[0].values, alloc1, sizeof alloc1);

    for (uint32_t ti = 0; ti < p->nthreads; ti++)
        for (uint32_t i = 0; i < p->threads[ti].nnodes; i++) {
            p->threads[ti].nodes[i].incl_ns *= mul;
            p->threads[ti].nodes[i].excl_ns *= mul;
        }
    return p;
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Write p, checking the writer's promises: errno kept, no fd left open. */
static int write_checked(struct profile *p, const char *dir, const char *name)
{
    char err[512];
    int before = open_fds();
    errno = 12345;
    int rc = profile_write_file(p, dir, name, err, sizeof err);
    int e = errno;
    if (open_fds() != before) {
        fprintf(stderr, "mkprof: descriptor leak: %d -> %d\n", before, open_fds());
        return 1;
    }
    if (rc == 0) {
        if (e != 12345) {
            fprintf(stderr, "mkprof: errno changed to %d on success\n", e);
            return 1;
        }
        return 0;
    }
    printf("%s: %s\n", e == EEXIST ? "EEXIST" : e == EINVAL ? "EINVAL" : "ERROR", err);
    return e == EEXIST ? 3 : e == EINVAL ? 4 : 1;
}

/* ---- check: compare a read profile with the fixed one -------------------- */

static int diffs;

static void same_str(const char *what, const char *a, const char *b)
{
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0)) {
        printf("%s: wrote \"%s\", read \"%s\"\n", what, a ? a : "(null)", b ? b : "(null)");
        diffs++;
    }
}

static void same_u64(const char *what, uint64_t a, uint64_t b)
{
    if (a != b) {
        printf("%s: wrote %llu, read %llu\n", what, (unsigned long long)a, (unsigned long long)b);
        diffs++;
    }
}

static int check(const char *path)
{
    char err[512], w[128];
    struct profile *r = profile_read_file(path, err, sizeof err);
    if (!r) {
        printf("read failed: %s\n", err);
        return 1;
    }
    struct profile *e = fixed_profile(0);
    const struct prof_process *ep = &e->process, *rp = &r->process;
    same_u64("pid", (uint64_t)ep->pid, (uint64_t)rp->pid);
    same_u64("ppid", (uint64_t)ep->ppid, (uint64_t)rp->ppid);
    same_u64("rank", (uint64_t)ep->rank, (uint64_t)rp->rank);
    same_u64("size", (uint64_t)ep->size, (uint64_t)rp->size);
    same_str("exe", ep->exe, rp->exe);
    same_u64("start_ns", ep->start_ns, rp->start_ns);
    same_u64("duration_ns", ep->duration_ns, rp->duration_ns);
    same_u64("argc", ep->argc, rp->argc);
    for (uint32_t i = 0; i < ep->argc && i < rp->argc; i++)
        same_str("argv", ep->argv[i], rp->argv[i]);
    same_u64("nmeta", ep->nmeta, rp->nmeta);
    for (uint32_t i = 0; i < ep->nmeta && i < rp->nmeta; i++) {
        same_str("meta key", ep->meta[i].key, rp->meta[i].key);
        same_str("meta value", ep->meta[i].value, rp->meta[i].value);
    }
    same_str("get_meta clock", "CLOCK_MONOTONIC", profile_get_meta(r, "clock"));
    same_str("get_meta missing", NULL, profile_get_meta(r, "nope"));
    same_u64("nfuncs", e->nfuncs, r->nfuncs);
    for (uint32_t i = 0; i < e->nfuncs && i < r->nfuncs; i++) {
        snprintf(w, sizeof w, "func %u", i);
        same_u64(w, e->funcs[i].addr, r->funcs[i].addr);
        same_str(w, e->funcs[i].name, r->funcs[i].name);
        same_str(w, e->funcs[i].module, r->funcs[i].module);
        same_str(w, e->funcs[i].file, r->funcs[i].file);
        same_u64(w, e->funcs[i].line, r->funcs[i].line);
    }
    same_u64("nthreads", e->nthreads, r->nthreads);
    for (uint32_t ti = 0; ti < e->nthreads && ti < r->nthreads; ti++) {
        const struct prof_thread *et = &e->threads[ti], *rt = &r->threads[ti];
        snprintf(w, sizeof w, "thread %u", ti);
        same_u64(w, (uint64_t)et->tid, (uint64_t)rt->tid);
        same_u64(w, et->index, rt->index);
        same_str(w, et->name, rt->name);
        same_u64(w, et->nnodes, rt->nnodes);
        for (uint32_t i = 0; i < et->nnodes && i < rt->nnodes; i++) {
            snprintf(w, sizeof w, "thread %u node %u", ti, i);
            same_u64(w, et->nodes[i].func, rt->nodes[i].func);
            same_u64(w, et->nodes[i].parent, rt->nodes[i].parent);
            same_u64(w, et->nodes[i].calls, rt->nodes[i].calls);
            same_u64(w, et->nodes[i].incl_ns, rt->nodes[i].incl_ns);
            same_u64(w, et->nodes[i].excl_ns, rt->nodes[i].excl_ns);
        }
        same_u64(w, et->nmetrics, rt->nmetrics);
        for (uint32_t m = 0; m < et->nmetrics && m < rt->nmetrics; m++) {
            same_str(w, et->metrics[m].name, rt->metrics[m].name);
            const struct prof_metric *found = profile_find_metric(rt, et->metrics[m].name);
            if (found != &rt->metrics[m]) {
                printf("%s: profile_find_metric(%s) failed\n", w, et->metrics[m].name);
                diffs++;
            }
            for (uint32_t i = 0; i < et->nnodes && i < rt->nnodes; i++)
                same_u64(w, et->metrics[m].values[i], rt->metrics[m].values[i]);
        }
    }
    profile_free(e);
    profile_free(r);
    if (diffs == 0)
        printf("identical\n");
    return diffs ? 1 : 0;
}

/* A big synthetic profile: nodes spread over 2000 functions, a few levels. */
static struct profile *big_profile(uint32_t n)
{
    struct profile *p = profile_new();
    if (!p)
        return die_oom();
    p->process.pid = 1234;
    p->process.exe = "/usr/bin/big";
    p->nfuncs = 2000;
    p->funcs = profile_alloc(p, p->nfuncs * sizeof *p->funcs);
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        char name[96];
        snprintf(name, sizeof name, "ns%u::Class%u::method_number_%u(int, char const*)", i % 7, i % 50, i);
        p->funcs[i] = (struct prof_func){ 0x400000 + 64ull * i, profile_intern(p, name),
                                          profile_intern(p, i % 3 ? "big" : "libstdc++.so.6"),
                                          profile_intern(p, "src/big_program_file.cc"), 100 + i };
    }
    p->nthreads = 1;
    p->threads = profile_alloc(p, sizeof *p->threads);
    struct prof_thread *t = &p->threads[0];
    t->name = "main";
    t->tid = 1234;
    t->nnodes = n;
    t->nodes = profile_alloc(p, n * sizeof *t->nodes);
    /* A preorder walk of a random tree at most 40 deep, like a real CCT. */
    uint32_t path[40], depth = 0;
    uint64_t seed = 42;
    for (uint32_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t up = (uint32_t)(seed >> 60) % 4;       /* levels to climb first */
        depth = up >= depth ? (depth && (seed >> 55) % 2 ? 1 : 0) : depth - up;
        uint32_t parent = depth ? path[depth - 1] : PROF_NONE;
        uint64_t excl = (seed >> 20) % 5000000;
        t->nodes[i] = (struct prof_node){ (uint32_t)(seed >> 40) % p->nfuncs, parent,
                                          1 + (seed >> 50) % 1000, excl * 3, excl };
        if (depth < 40)
            path[depth++] = i;
    }
    return p;
}

/* Patch the header's version and recompute the crc (see docs/profile-format.md). */
static int patch_version(const char *path, unsigned major, unsigned minor)
{
    FILE *f = fopen(path, "r+b");
    if (!f)
        return 1;
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    buf[8] = (unsigned char)major;
    buf[9] = (unsigned char)(major >> 8);
    buf[10] = (unsigned char)minor;
    buf[11] = (unsigned char)(minor >> 8);
    uLong crc = crc32(0, buf, 24);
    crc = crc32(crc, buf + 28, (uInt)(n - 28));
    for (int i = 0; i < 4; i++)
        buf[24 + i] = (unsigned char)(crc >> (8 * i));
    rewind(f);
    fwrite(buf, 1, n, f);
    return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "write") == 0) {
        struct profile *p = fixed_profile(0);
        int rc = write_checked(p, argv[2], argv[3]);
        profile_free(p);
        return rc;
    }
    if (argc >= 2 && strcmp(argv[1], "stdout") == 0) {
        struct profile *p = fixed_profile(0);
        int rc = profile_write_fd(p, 1);
        profile_free(p);
        return rc ? 1 : 0;
    }
    if (argc >= 3 && strcmp(argv[1], "check") == 0)
        return check(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "big") == 0) {
        struct profile *p = big_profile((uint32_t)atoi(argv[4]));
        int rc = write_checked(p, argv[2], argv[3]);
        profile_free(p);
        return rc;
    }
    if (argc >= 5 && strcmp(argv[1], "variant") == 0) {
        struct profile *p = fixed_profile(atoi(argv[4]));
        int rc = write_checked(p, argv[2], argv[3]);
        profile_free(p);
        return rc;
    }
    if (argc >= 6 && strcmp(argv[1], "version") == 0) {
        struct profile *p = fixed_profile(0);
        int rc = write_checked(p, argv[2], argv[3]);
        profile_free(p);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[2], argv[3]);
        return rc ? rc : patch_version(path, (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]));
    }
    if (argc >= 4 && strcmp(argv[1], "invalid") == 0) {
        struct profile *p = fixed_profile(0);
        p->threads[0].nodes[1].parent = 5;
        int rc = write_checked(p, argv[2], argv[3]);
        profile_free(p);
        return rc;
    }
    fprintf(stderr, "usage: mkprof write DIR NAME | stdout | check FILE | big DIR NAME N | "
                    "variant DIR NAME K | version DIR NAME MAJOR MINOR | invalid DIR NAME\n");
    return 2;
}
