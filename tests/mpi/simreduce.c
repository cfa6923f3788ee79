/*
 * simreduce: the reduction of an MPI job's profiles at MPI_Finalize
 * (profiler/jprof/output/mpi_job.c), run in one process over P synthetic rank
 * profiles with the same code and the same binomial tree (profile/merge.h),
 * and its critical path by a stated model (docs/mpi.md, "Scale").
 *
 *   simreduce P [--exact] [--contexts N] [--variants V] [--bandwidth GBps] [--latency us]
 *
 * A rank's profile has N contexts (default 5,000) in a 4-ary tree of
 * functions drawn from 2,000 names: 90% of them are the same in every rank,
 * 10% depend on the rank's variant (rank mod V, V = 16: boundary ranks, I/O
 * ranks ... take other paths), so the job's tree has N + (V - 1) N / 10
 * contexts; MPI frames carry mpi_bytes.  Every message is what the plugin
 * sends: the partial serialised (profile_write_mem), read back
 * (profile_read_mem) and folded (merge_add_partial).
 *
 * Model.  Every rank has its own profile at t = 0 (building it is the
 * rank's own, measured on real runs: docs/mpi.md).  A subtree of 2^k ranks
 * is done at F(k); its root then takes in its child of 2^k ranks, done at
 * the same moment by symmetry, so
 *     F(0) = fold of the own profile
 *     F(k + 1) = F(k) + ser(k) + latency + bytes(k) / bandwidth + read(k) + fold(k)
 * and the critical path is F(ceil(log2 P)): ser, read and fold measured
 * here (CPU time: a rank has a core), level by level, bytes(k) the size of a 2^k-rank partial, bandwidth
 * and latency stated (default 10 GB/s and 2 us, an HPC interconnect).
 *
 * Level by level, without --exact: a level-k partial is made by folding two
 * level-(k-1) partials, the second one the first with its ranks renumbered
 * (above V ranks the two halves of a subtree have the same contexts and
 * differ only in rank numbers and values, which cost the same to fold).
 * With --exact every one of the P profiles is generated and every partial
 * of the tree is made (P - 1 folds), the root's result is compared with
 * the sequential merge of the same profiles byte for byte, and the same
 * levels are reported from the folds along rank 0's chain.
 *
 * Memory: the heap in use (mallinfo2) at the root of each level's fold:
 * the merged tree so far, the child's message and its partial; level by
 * level, its peak over the heap at the start against the bound "the
 * merged tree plus two inputs": the level's result merged alone, the
 * child's message and the partial read from it.
 */
#include "profile/merge.h"
#include "profile/profile.h"
#include "synthrank.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int contexts = 5000, variants = 16;
static double bandwidth_gbps = 10, latency_us = 2;
#define FUNCS 2000

static void die(const char *what)
{
    fprintf(stderr, "simreduce: %s\n", what);
    exit(1);
}

/* CPU time of this thread: what the step costs a rank on a core of its
 * own, whatever else runs on this machine. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Rank r's profile: contexts nodes, node i's parent (i - 1) / 4; the
 * common ones (90%) name function mix(i) mod FUNCS, the others a function
 * of the rank's variant. */
static struct profile *rank_profile(int rank, int size)
{
    struct profile *p =
        synth_rank(rank, size, 100000 + rank, 1000000000ull + (uint64_t)rank * 1000, "MPI_Finalize");
    int common = contexts - contexts / 10, variant = rank % variants;
    uint32_t nfuncs = FUNCS + (uint32_t)(contexts / 10) + 2;
    p->funcs = profile_alloc(p, nfuncs * sizeof *p->funcs);
    p->nfuncs = nfuncs;
    for (uint32_t f = 0; f < nfuncs; f++) {
        char name[64];
        if (f < FUNCS)
            snprintf(name, sizeof name, "solver::kernel_%u(double*, int)", f);
        else if (f < nfuncs - 2)
            snprintf(name, sizeof name, "variant_%d::path_%u()", variant, f - FUNCS);
        else
            snprintf(name, sizeof name, "MPI:MPI_%s", f == nfuncs - 2 ? "Allreduce" : "Sendrecv");
        p->funcs[f] =
            (struct prof_func){ 0x400000 + f * 16ull, profile_intern(p, name),
                                profile_intern(p, f >= nfuncs - 2 ? "libmpi.so.40" : "app"), NULL, 0 };
    }
    uint32_t n = (uint32_t)contexts;
    struct prof_thread *th = synth_thread(p, p->process.pid, n);
    /* Preorder is what a writer gives; a BFS-numbered 4-ary tree is not,
     * so nodes are laid out by a DFS over it. */
    uint32_t *stack = malloc(n * sizeof *stack), *pos = malloc(n * sizeof *pos), sp = 0, k = 0;
    if (!stack || !pos)
        die("out of memory");
    stack[sp++] = 0;
    while (sp) {
        uint32_t i = stack[--sp];
        pos[i] = k;
        uint32_t func = i == 0     ? 0
            : i < (uint32_t)common ? (uint32_t)(mix(i) % FUNCS)
                                   : FUNCS + (i - (uint32_t)common) % (uint32_t)(contexts / 10);
        if (i % 97 == 5)
            func = nfuncs - 2 + (i % 2);
        uint64_t calls = 1 + (mix(i * 31 + (uint64_t)rank) % 50);
        uint64_t excl = calls * (100 + mix(i + (uint64_t)rank * 7) % 10000);
        th->nodes[k] = (struct prof_node){ func, i ? pos[(i - 1) / 4] : PROF_NONE, calls, excl, excl };
        th->metrics[0].values[k] = func >= nfuncs - 2 ? calls * 8 * (uint64_t)(rank % 7 + 1) : 0;
        k++;
        for (uint32_t c = 4; c >= 1; c--)
            if (4 * i + c < n)
                stack[sp++] = 4 * i + c;
    }
    /* inclusive = exclusive + children's inclusive, children after parents */
    for (uint32_t j = n; j-- > 1;)
        th->nodes[th->nodes[j].parent].incl_ns += th->nodes[j].incl_ns;
    free(stack);
    free(pos);
    return p;
}

struct level {
    uint64_t ser_ns, read_ns, fold_ns, bytes, heap_peak, heap_tree;
    /* the memory bound (level by level): the peak over the heap at the
     * start, the level's merged tree alone (a fresh merge of its result)
     * and the child's partial once read */
    uint64_t peak_over_start, tree_alone, heap_input;
    uint32_t nodes;
};

static struct level levels[32];
static uint64_t own_fold_ns;

static uint64_t heap(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* The partial of m, serialised: what a rank sends. */
static unsigned char *serialise(struct merge *m, size_t *len, uint64_t *ns)
{
    uint64_t t0 = now_ns();
    struct profile *part = merge_partial(m);
    unsigned char *buf = NULL;
    if (!part || profile_write_mem(part, &buf, len) != 0)
        die("cannot make a partial");
    profile_free(part);
    *ns = now_ns() - t0;
    return buf;
}

/* The receiving side of one message: read and fold. */
static void take(struct merge *m, unsigned char *buf, size_t len, struct level *lv)
{
    char err[256];
    uint64_t h0 = heap();
    uint64_t t0 = now_ns();
    struct profile *part = profile_read_mem(buf, len, "partial", err, sizeof err);
    if (!part)
        die(err);
    uint64_t h = heap();
    free(buf);
    uint64_t t1 = now_ns();
    if (merge_add_partial(m, part) != 0)
        die("cannot fold a partial");
    uint64_t t2 = now_ns();
    uint64_t h2 = heap();
    profile_free(part);
    if (lv) {
        lv->read_ns = t1 - t0;
        lv->fold_ns = t2 - t1;
        lv->bytes = len;
        lv->heap_peak = h > h2 ? h : h2;
        lv->heap_input = h - h0;
    }
}

static struct merge *own(int rank, int size)
{
    struct profile *p = rank_profile(rank, size);
    struct merge *m = merge_new(0);
    uint64_t t0 = now_ns();
    if (!m || merge_add(m, p, "-") != 0)
        die("out of memory");
    own_fold_ns = now_ns() - t0;
    profile_free(p);
    return m;
}

/* --exact: the subtree [r, r + span) of the tree, as a message; rank 0's
 * chain fills in levels[]. */
static unsigned char *subtree(int r, int span, int size, size_t *len)
{
    struct merge *m = own(r, size);
    for (uint32_t step = 0; (step = merge_tree_next_child((uint32_t)r, (uint32_t)(r + span), step));) {
        size_t clen;
        unsigned char *c = subtree(
            r + (int)step, (int)merge_tree_span((uint32_t)r, (uint32_t)(r + span), step), size, &clen);
        struct level *lv = r == 0 ? &levels[__builtin_ctz(step)] : NULL;
        take(m, c, clen, lv);
    }
    uint64_t ns;
    unsigned char *buf = serialise(m, len, &ns);
    if (r > 0 && r == (r & -r)) /* rank 2^k: the level-k child of rank 0 */
        levels[__builtin_ctz((unsigned)r)].ser_ns = ns;
    merge_free(m);
    return buf;
}

/* A copy of partial message buf with every rank and pid moved by off. */
static unsigned char *renumber(const unsigned char *buf, size_t len, int off, size_t *out_len)
{
    char err[256];
    struct profile *p = profile_read_mem(buf, len, "partial", err, sizeof err);
    if (!p)
        die(err);
    p->process.rank += off;
    p->process.pid += off;
    for (uint32_t i = 0; i < p->process.nmeta; i++) {
        struct prof_meta *m = &p->process.meta[i];
        if (!strcmp(m->key, "hookit.partial.ranks")) {
            /* input rank pid ...: rank and pid moved */
            size_t cap = strlen(m->value) * 2 + 64, o = 0;
            char *t = malloc(cap);
            for (const char *line = m->value; *line;) {
                unsigned input;
                int rank, pid, used;
                if (sscanf(line, "%u\t%d\t%d%n", &input, &rank, &pid, &used) != 3)
                    die("ranks table");
                const char *nl = strchr(line, '\n');
                size_t rest = nl ? (size_t)(nl - line) - (size_t)used : strlen(line + used);
                o += (size_t)snprintf(t + o, cap - o, "%u\t%d\t%d%.*s\n", input, rank + off, pid + off,
                                      (int)rest, line + used);
                line = nl ? nl + 1 : line + strlen(line);
            }
            m->value = profile_intern(p, t);
            free(t);
        } else if (strchr(m->value, ' ') && strstr(m->value, " pid ") && strstr(m->value, " rank ")) {
            int pid, rank;
            const char *q = strstr(m->value, " pid ");
            if (sscanf(q, " pid %d rank %d", &pid, &rank) == 2) {
                char v[256];
                snprintf(v, sizeof v, "%.*s pid %d rank %d", (int)(q - m->value), m->value, pid + off,
                         rank + off);
                m->value = profile_intern(p, v);
            }
        }
    }
    unsigned char *copy;
    if (profile_write_mem(p, &copy, out_len) != 0)
        die("cannot write");
    profile_free(p);
    return copy;
}

/* Level by level: partial(k + 1) = partial(k) + partial(k) renumbered,
 * exact below V ranks. */
/* The heap a merge of the partial message buf takes alone. */
static uint64_t tree_alone(const unsigned char *buf, size_t len)
{
    char err[256];
    uint64_t h0 = heap();
    struct merge *m = merge_new(0);
    struct profile *p = profile_read_mem(buf, len, "partial", err, sizeof err);
    if (!m || !p || merge_add_partial(m, p) != 0)
        die("cannot merge a partial alone");
    profile_free(p);
    uint64_t h = heap();
    merge_free(m);
    return h - h0;
}

static void by_level(int size, int nlevels)
{
    uint64_t start = heap();
    struct merge *m = own(0, size);
    size_t len;
    uint64_t ns;
    unsigned char *cur = serialise(m, &len, &ns);
    levels[0].ser_ns = ns;
    merge_free(m);
    for (int k = 0; k < nlevels; k++) {
        int span = 1 << k;
        /* the right half: made exactly while it has other variants, else a copy */
        size_t rlen;
        unsigned char *right;
        if (span < variants) {
            struct merge *rm = merge_new(0);
            for (int r = span; r < 2 * span; r++) {
                struct profile *p = rank_profile(r, size);
                merge_add(rm, p, "-");
                profile_free(p);
            }
            uint64_t rns;
            right = serialise(rm, &rlen, &rns);
            merge_free(rm);
        } else {
            right = renumber(cur, len, span, &rlen);
        }
        char err[256];
        struct merge *left = merge_new(0);
        struct profile *lp = profile_read_mem(cur, len, "partial", err, sizeof err);
        if (!lp || merge_add_partial(left, lp) != 0)
            die("left half");
        profile_free(lp);
        free(cur);
        uint64_t before = heap();
        take(left, right, rlen, &levels[k]);
        levels[k].heap_tree = before;
        cur = serialise(left, &len, &ns);
        if (k + 1 < 32)
            levels[k + 1].ser_ns = ns;
        merge_free(left);
        levels[k].peak_over_start = levels[k].heap_peak - start;
        levels[k].tree_alone = tree_alone(cur, len);
    }
    free(cur);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        die("usage: simreduce P [--exact] [--contexts N] [--variants V] [--bandwidth GBps] [--latency us]");
    int size = atoi(argv[1]), exact = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--exact"))
            exact = 1;
        else if (!strcmp(argv[i], "--contexts") && i + 1 < argc)
            contexts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--variants") && i + 1 < argc)
            variants = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bandwidth") && i + 1 < argc)
            bandwidth_gbps = atof(argv[++i]);
        else if (!strcmp(argv[i], "--latency") && i + 1 < argc)
            latency_us = atof(argv[++i]);
        else
            die("unknown option");
    }
    if (size < 1 || contexts < 20 || variants < 1)
        die("bad P, --contexts or --variants");
    int nlevels = 0;
    while ((1 << nlevels) < size)
        nlevels++;
    uint64_t t0 = now_ns();
    if (exact) {
        size_t len;
        unsigned char *root = subtree(0, size, size, &len);
        /* the same profiles merged one after the other */
        struct merge *seq = merge_new(0);
        for (int r = 0; r < size; r++) {
            struct profile *p = rank_profile(r, size);
            merge_add(seq, p, "-");
            profile_free(p);
        }
        size_t slen;
        uint64_t ns;
        unsigned char *sbuf = serialise(seq, &slen, &ns);
        printf("exact: the tree's partial %s the sequential merge's (%zu bytes)\n",
               len == slen && !memcmp(root, sbuf, len) ? "is byte for byte" : "DIFFERS from", len);
        int same = len == slen && !memcmp(root, sbuf, len);
        merge_free(seq);
        free(root);
        free(sbuf);
        if (!same)
            return 1;
    } else {
        by_level(size, nlevels);
    }
    double run_s = (double)(now_ns() - t0) / 1e9;
    printf("P = %d ranks, %d contexts each, %d variants; model: %.1f GB/s, %.1f us per message\n", size,
           contexts, variants, bandwidth_gbps, latency_us);
    printf("level  ranks   bytes       ser ms  xfer ms  read ms  fold ms  heap MB (tree, peak)\n");
    double total = (double)own_fold_ns / 1e6;
    for (int k = 0; k < nlevels; k++) {
        struct level *lv = &levels[k];
        double xfer = latency_us / 1e3 + (double)lv->bytes / (bandwidth_gbps * 1e9) * 1e3;
        double step = (double)lv->ser_ns / 1e6 + xfer + (double)lv->read_ns / 1e6 + (double)lv->fold_ns / 1e6;
        total += step;
        printf("%5d %6d %9" PRIu64 " %10.2f %8.3f %8.2f %8.2f  %7.1f %7.1f\n", k, 1 << k, lv->bytes,
               (double)lv->ser_ns / 1e6, xfer, (double)lv->read_ns / 1e6, (double)lv->fold_ns / 1e6,
               (double)lv->heap_tree / 1e6, (double)lv->heap_peak / 1e6);
    }
    printf("critical path: %.3f s (own fold %.2f ms + %d levels); simulation took %.1f s of CPU\n",
           total / 1e3, (double)own_fold_ns / 1e6, nlevels, run_s);
    /* The bound (issue 31): a rank holds at most the merged tree and two
     * inputs (the child's message and the partial read from it); the
     * ratio is over 1 by the allocator's own slack only (about 1%). */
    for (int k = 0; k < nlevels && !exact; k++) {
        const struct level *lv = &levels[k];
        uint64_t bound = lv->tree_alone + lv->bytes + lv->heap_input;
        printf("memory at level %d: peak %.3f MB over the start, merged tree %.3f + message %.3f + input "
               "%.3f MB: %.3f of that\n",
               k, (double)lv->peak_over_start / 1e6, (double)lv->tree_alone / 1e6, (double)lv->bytes / 1e6,
               (double)lv->heap_input / 1e6, (double)lv->peak_over_start / (double)bound);
    }
    return 0;
}
