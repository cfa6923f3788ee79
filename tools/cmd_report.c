/*
 * hookit report: per-thread call trees (JPROF log-rt style), a flat profile
 * (gprof style), callers/callees of a function, and the call-flow listing
 * of a trace; from profile and trace files.
 */
#include "tools/cli.h"
#include "profile/aggregate.h"
#include "profile/cost.h"
#include "tools/find_fn.h"
#include "tools/fold.h"
#include "tools/names.h"
#include "tools/newest.h"
#include "tools/estimate.h"
#include "tools/report.h"
#include "tools/report_io.h"
#include "tools/srclines.h"
#include "tools/tree.h"
#include "tools/units.h"
#include "profile/waittime.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const report_usage =
    "usage: hookit report [OPTIONS] [PROFILE...]\n"
    "\n"
    "Print each thread of each profile (or trace).  With no PROFILE, the newest\n"
    "hookit.*.prof (or .trace) in the current directory and its fork family\n"
    "(its parent and child processes' profiles), as gprof reads gmon.out; a\n"
    "line on stderr says which.  A directory as the one PROFILE: the same there.\n"
    "  default      the call tree, one line per calling context:\n"
    "                 LV    depth (0 = a root)\n"
    "                 CALLS calls in this context\n"
    "                 BASE  exclusive time (the function's own)\n"
    "                 CUM   inclusive time (with its callees)\n"
    "                 CPU   on-CPU self time: BASE less WAIT (sampled CPU time\n"
    "                       with JPROFOPTS=cpu)\n"
    "                 WAIT  time in blocking calls made here: I/O, locks,\n"
    "                       condition variables, sleeps, poll, waitpid, join\n"
    "                       (CPU and WAIT when the profile has wait time)\n"
    "                 NAME  F:module.function(), indented by depth (up to 64)\n"
    "               children are sorted by inclusive time, largest first.\n"
    "               For a trace (.trace) the default is the call-flow listing:\n"
    "               every call in order, indented, with its duration.\n"
    "  -f, --flat   a flat profile: one line per function over all its calling\n"
    "               contexts: %time self cumulative calls self/call total/call\n"
    "               (cumulative is the running sum of self; total/call is the\n"
    "               inclusive time per call, a recursive function's time counted\n"
    "               once), and cpu wait (self time on the CPU and waiting, as\n"
    "               CPU and WAIT above), sorted by self time.\n"
    "  --callers FN every function that calls FN, with the calls, inclusive and\n"
    "               exclusive time of FN when called from it (the rows add up to\n"
    "               FN's line in --flat)\n"
    "  --callees FN every function FN calls, with their calls and times\n"
    "  --collapse-recursion, --no-collapse-recursion\n"
    "               in --callers/--callees (on by default): FN and every function\n"
    "               on a path from FN back to FN (an interpreter loop) count as\n"
    "               one, so the callees and the self time add up to FN's total\n"
    "               (apart, they do too: time in calls back into FN is FN's);\n"
    "               in the tree: a chain of direct recursion (fib -> fib -> fib)\n"
    "               folded into one node (calls and self time added up, the\n"
    "               outermost call's inclusive time: totals stay exact)\n"
    "  --tree       the call tree of a trace (instead of its listing)\n"
    "  --interleave a trace's listing with all threads merged in time order\n"
    "  --io         the call tree with each context's own I/O: calls, bytes read\n"
    "               and written, time in I/O (JPROFOPTS=io, the default)\n"
    "  --alloc      the call tree with each context's allocations and frees\n"
    "               (JPROFOPTS=alloc); --leaks: the contexts whose blocks were\n"
    "               never freed, largest first (docs/io.md)\n"
    "\n"
    "Options:\n"
    "  -t, --thread T       only the thread with kernel thread id T, or the threads\n"
    "                       named T (a glob: 'worker*')\n"
    "  -m, --merge-threads  one tree for all threads of a profile (by call path)\n"
    "  -M, --merge          several profiles as one (by call path, threads by index)\n"
    "  -p, --min-pct P      hide what is below P% of the thread's time (a summary\n"
    "                       line \"N nodes below P%\" says what was hidden)\n"
    "  -d, --depth N        at most N levels of the tree (or the listing)\n"
    "  -s, --sort KEY       calls, incl, excl, cpu, wait or name (tree: incl;\n"
    "                       flat: excl); cpu and wait order the tree by a subtree's\n"
    "                       time on the CPU or waiting, --flat and --callers by a\n"
    "                       function's own\n"
    "  -u, --units U        ns, us, ms, s, or auto (the default)\n"
    "      --color          colour even when not writing to a terminal\n"
    "      --no-color       no colour (also: NO_COLOR set and not empty)\n"
    "      --demangle=MODE  C++ names: simple (the default: no return type, template\n"
    "                       arguments or parameters, unless needed to tell two\n"
    "                       functions apart), full (as demangled), or no (as\n"
    "                       stored in the profile, nothing added)\n"
    "      --fold-frames PATTERN  fold the frames of functions whose name (simple\n"
    "                       form) matches the glob into their callers, besides\n"
    "                       the default list: std::thread's and std::__invoke's\n"
    "                       wrappers, std::function's handler (repeatable)\n"
    "      --no-fold-frames none folded, not even the default list\n"
    "      --as-compiled    the program as compiled: each inlined copy of a function\n"
    "                       (GCC and Clang call the hooks around them too) folded\n"
    "                       into the function it was inlined into, as perf and a\n"
    "                       debugger see the optimized binary; by default the view\n"
    "                       is the source's, every function a call\n"
    "      --lines          each function's source file and line, \"(file:line)\"\n"
    "                       after its name, read from the program's binary when\n"
    "                       it is still the one that ran (or from a profile made\n"
    "                       with JPROFOPTS=lines)\n"
    "      --no-pager       do not page (on a terminal hookit pages with $HOOKIT_PAGER,\n"
    "                       $PAGER or less -FRX)\n"
    "  -h, --help           this help\n";

static void thread_header(FILE *out, const struct profile *p, const struct prof_thread *t,
                          const struct report_opts *o)
{
    fprintf(out, "%s== pid %d  tid %d  thread %u", style_bold(o), p->process.pid, t->tid,
            t->index);
    if (t->name && *t->name) {
        fputs(" (", out);
        names_print_safe(out, t->name, strlen(t->name));
        fputc(')', out);
    }
    fputs("  exe ", out);
    if (p->process.exe)
        names_print_safe(out, p->process.exe, strlen(p->process.exe));
    fprintf(out, "%s\n", style_reset(o));
}

/* ---- the tree ------------------------------------------------------------------ */

/* Indentation stops growing here: a 20000-deep recursion would otherwise
 * print hundreds of megabytes of spaces.  LV still gives the depth. */
#define MAX_INDENT 64

static int cmp_name(const struct tree *t, uint32_t a, uint32_t b)
{
    const char *sa = tree_func(t, a)->name, *sb = tree_func(t, b)->name;
    int c = strcmp(sa ? sa : "", sb ? sb : "");
    return c ? c : tree_cmp_incl_desc(t, a, b);
}

static int cmp_calls(const struct tree *t, uint32_t a, uint32_t b)
{
    uint64_t ca = t->thread->nodes[a].calls, cb = t->thread->nodes[b].calls;
    return ca != cb ? (ca > cb ? -1 : 1) : tree_cmp_incl_desc(t, a, b);
}

static int cmp_excl(const struct tree *t, uint32_t a, uint32_t b)
{
    uint64_t ea = t->thread->nodes[a].excl_ns, eb = t->thread->nodes[b].excl_ns;
    return ea != eb ? (ea > eb ? -1 : 1) : tree_cmp_incl_desc(t, a, b);
}

static tree_cmp_fn tree_order(const struct report_opts *o)
{
    switch (o->sort) {
    case SORT_CALLS: return cmp_calls;
    case SORT_EXCL: return cmp_excl;
    case SORT_NAME: return cmp_name;
    case SORT_CPU:
    case SORT_WAIT:
        return tree_cmp_key_desc;
    default: return tree_cmp_incl_desc;
    }
}

/* w: the CPU and WAIT columns, or NULL for none. */
static void print_tree_line(FILE *out, const struct tree *t, uint32_t node, uint64_t total,
                            const struct waittime *w, const struct estimate *e, const struct report_opts *o)
{
    const struct prof_node *n = &t->thread->nodes[node];
    char base[UNITS_BUF], cum[UNITS_BUF], cpu[UNITS_BUF], wait[UNITS_BUF];
    int indent = t->depth[node] < MAX_INDENT ? (int)t->depth[node] : MAX_INDENT;
    double pct = total ? 100.0 * (double)n->incl_ns / (double)total : 0;
    fprintf(out, "%6u %10llu %10s %s%10s%s", t->depth[node], (unsigned long long)n->calls,
            estimate_ns(e, node, 0, n->excl_ns, base), style_heat(o, pct),
            estimate_ns(e, node, 1, n->incl_ns, cum), style_reset(o));
    if (w)
        fprintf(out, " %10s %10s", units_ns(waittime_cpu(w, t->thread, node), cpu),
                units_ns(waittime_wait(w, node), wait));
    fprintf(out, "  %*s", indent, "");
    names_print_jprof(out, tree_func(t, node));
    fputc('\n', out);
}

static void print_hidden(FILE *out, uint32_t depth, uint32_t nodes, uint64_t ns, int wait_cols,
                         const struct report_opts *o)
{
    char cum[UNITS_BUF];
    int indent = depth < MAX_INDENT ? (int)depth : MAX_INDENT;
    fprintf(out, "%s%6s %10s %10s %10s%s  %*s[%u node%s below %g%%]%s\n", style_dim(o), "", "", "",
            units_ns(ns, cum), wait_cols ? "                      " : "", indent, "", nodes,
            nodes == 1 ? "" : "s", o->min_pct, style_reset(o));
}

/* Preorder with an explicit stack (deep recursions make deep trees); a node
 * below --min-pct is left out with its subtree, counted in its parent's
 * summary line; --depth stops the descent. */
static int print_tree(FILE *out, const struct tree *t, const struct waittime *w,
                      const struct report_opts *o)
{
    const struct prof_thread *th = t->thread;
    uint64_t total = report_thread_total(th);
    uint32_t *size = calloc((size_t)t->n + 1, sizeof *size);
    struct frame { uint32_t node, next, hidden; uint64_t hidden_ns; } *stack =
        malloc(((size_t)t->n + 2) * sizeof *stack);
    struct estimate e;
    if (!size || !stack || estimate_of(t->prof, th, &e) < 0) {
        free(size);
        free(stack);
        return -1;
    }
    for (uint32_t i = t->n; i-- > 0;) {         /* subtree sizes: parents precede children */
        size[i] += 1;
        if (th->nodes[i].parent != PROF_NONE)
            size[th->nodes[i].parent] += size[i];
    }
    double limit = o->min_pct > 0 ? (double)total * o->min_pct / 100.0 : 0;
    size_t sp = 0;
    stack[sp++] = (struct frame){ t->n, 0, 0, 0 };
    while (sp > 0) {
        struct frame *f = &stack[sp - 1];
        uint32_t depth = f->node == t->n ? 0 : t->depth[f->node] + 1;
        int descend = !o->depth || depth < o->depth;
        if (descend && f->next < tree_nchildren(t, f->node)) {
            uint32_t c = tree_children(t, f->node)[f->next++];
            if ((double)th->nodes[c].incl_ns < limit) {
                f->hidden += size[c];
                f->hidden_ns += th->nodes[c].incl_ns;
                continue;
            }
            print_tree_line(out, t, c, total, w, &e, o);
            stack[sp++] = (struct frame){ c, 0, 0, 0 };
            continue;
        }
        if (f->hidden)
            print_hidden(out, depth, f->hidden, f->hidden_ns, w != NULL, o);
        sp--;
    }
    free(size);
    free(stack);
    estimate_free(&e);
    return 0;
}

static int report_tree(FILE *out, const struct profile *p, const struct prof_thread *th,
                       const struct report_opts *o)
{
    struct tree t;
    if (tree_build(&t, p, th) < 0)
        return cli_fail("thread %u: %s", th->index,
                        errno == EINVAL ? "invalid call tree" : "out of memory");
    /* --sort cpu|wait: siblings by their subtree's CPU or wait time, so
     * the path that works (or waits) most comes first */
    uint64_t *key = NULL;
    if (o->sort == SORT_CPU || o->sort == SORT_WAIT) {
        key = waittime_subtree(th, o->sort == SORT_CPU ? WEIGHT_CPU : WEIGHT_WAIT);
        if (!key) {
            tree_free(&t);
            return cli_fail("out of memory");
        }
        t.sort_key = key;
    }
    tree_sort(&t, tree_order(o));
    free(key);
    t.sort_key = NULL;
    struct waittime w;
    int waits = waittime_of(th, &w);
    fprintf(out, "%6s %10s %10s %10s", "LV", "CALLS", "BASE", "CUM");
    if (waits)
        fprintf(out, " %10s %10s", "CPU", "WAIT");
    fprintf(out, "  %s\n", "NAME");
    int rc = print_tree(out, &t, waits ? &w : NULL, o);
    tree_free(&t);
    return rc < 0 ? cli_fail("out of memory") : 0;
}

/* ---- the flat profile ------------------------------------------------------------ */

struct flat_ctx {
    const struct profile *p;
    const struct func_total *tot;
    const uint64_t *fcpu, *fwait; /* per function: self time on the CPU, waiting */
    enum report_sort sort;
};

/* The --sort key (self time by default) descending, then self, calls,
 * name, index: a total order. */
static int flat_cmp(const void *va, const void *vb, void *vc)
{
    const struct flat_ctx *c = vc;
    uint32_t a = *(const uint32_t *)va, b = *(const uint32_t *)vb;
    const struct func_total *ta = &c->tot[a], *tb = &c->tot[b];
    const char *na = c->p->funcs[a].name, *nb = c->p->funcs[b].name;
    if (c->sort == SORT_NAME) {
        int s = strcmp(na ? na : "", nb ? nb : "");
        if (s)
            return s;
    } else if (c->sort == SORT_CALLS && ta->calls != tb->calls) {
        return ta->calls > tb->calls ? -1 : 1;
    } else if (c->sort == SORT_INCL && ta->incl_ns != tb->incl_ns) {
        return ta->incl_ns > tb->incl_ns ? -1 : 1;
    } else if (c->sort == SORT_CPU && c->fcpu[a] != c->fcpu[b]) {
        return c->fcpu[a] > c->fcpu[b] ? -1 : 1;
    } else if (c->sort == SORT_WAIT && c->fwait[a] != c->fwait[b]) {
        return c->fwait[a] > c->fwait[b] ? -1 : 1;
    }
    if (ta->self_ns != tb->self_ns)
        return ta->self_ns > tb->self_ns ? -1 : 1;
    if (ta->calls != tb->calls)
        return ta->calls > tb->calls ? -1 : 1;
    int s = strcmp(na ? na : "", nb ? nb : "");
    return s ? s : (a < b ? -1 : a > b);
}

static int report_flat(FILE *out, const struct profile *p, const struct prof_thread *th,
                       const struct report_opts *o)
{
    struct tree t;
    struct func_total *tot = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *tot);
    uint32_t *order = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof *order);
    if (!tot || !order || tree_build(&t, p, th) < 0) {
        int invalid = tot && order && errno == EINVAL;
        free(tot);
        free(order);
        return cli_fail("thread %u: %s", th->index,
                        invalid ? "invalid call tree" : "out of memory");
    }
    int rc = tree_func_totals(&t, tot);
    tree_free(&t);
    if (rc < 0) {
        free(tot);
        free(order);
        return cli_fail("out of memory");
    }
    uint32_t n = 0;
    uint64_t total_self = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        if (tot[f].nodes) {
            order[n++] = f;
            total_self += tot[f].self_ns;
        }
    }
    /* Self time on the CPU and waiting, per function: added up over its
     * contexts like self time (shown when the profile has wait time). */
    struct waittime w;
    int waits = waittime_of(th, &w);
    uint64_t *fwait = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *fwait);
    uint64_t *fcpu = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *fcpu);
    if (!fwait || !fcpu) {
        free(fwait);
        free(fcpu);
        free(tot);
        free(order);
        return cli_fail("out of memory");
    }
    for (uint32_t i = 0; i < th->nnodes; i++) {
        fwait[th->nodes[i].func] += waittime_wait(&w, i);
        fcpu[th->nodes[i].func] += waittime_cpu(&w, th, i);
    }
    struct flat_ctx ctx = { p, tot, fcpu, fwait, o->sort };
    qsort_r(order, n, sizeof *order, flat_cmp, &ctx);

    fprintf(out, "%7s %10s %11s %10s %10s %11s", "%time", "self", "cumulative",
            "calls", "self/call", "total/call");
    if (waits)
        fprintf(out, " %10s %10s", "cpu", "wait");
    fprintf(out, "  %s\n", "name");
    uint64_t cumulative = 0, hidden_ns = 0;
    uint32_t hidden = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct func_total *ft = &tot[order[i]];
        char self[UNITS_BUF], cum[UNITS_BUF], spc[UNITS_BUF], tpc[UNITS_BUF];
        cumulative += ft->self_ns;
        double pct = total_self ? 100.0 * (double)ft->self_ns / (double)total_self : 0.0;
        double ipct = total_self ? 100.0 * (double)ft->incl_ns / (double)total_self : 0.0;
        if (o->min_pct > 0 && pct < o->min_pct && ipct < o->min_pct) {
            hidden++;
            hidden_ns += ft->self_ns;
            continue;
        }
        double calls = ft->calls ? (double)ft->calls : 1.0;
        fprintf(out, "%s%7.2f%s %10s %11s %10llu %10s %11s", style_heat(o, pct), pct,
                style_reset(o), units_ns(ft->self_ns, self), units_ns(cumulative, cum),
                (unsigned long long)ft->calls, units_ns_f((double)ft->self_ns / calls, spc),
                units_ns_f((double)ft->incl_ns / calls, tpc));
        if (waits) {
            char c[UNITS_BUF], wt[UNITS_BUF];
            fprintf(out, " %10s %10s", units_ns(fcpu[order[i]], c), units_ns(fwait[order[i]], wt));
        }
        fputs("  ", out);
        names_print_jprof(out, &p->funcs[order[i]]);
        fputc('\n', out);
    }
    if (hidden) {
        char h[UNITS_BUF];
        fprintf(out, "%s[%u function%s below %g%%: %s self]%s\n", style_dim(o), hidden,
                hidden == 1 ? "" : "s", o->min_pct, units_ns(hidden_ns, h), style_reset(o));
    }
    free(fwait);
    free(fcpu);
    free(tot);
    free(order);
    return 0;
}

/* ---- one profile ------------------------------------------------------------------ */

static void unexact_contexts(FILE *out, const struct profile *p, const char *column,
                             const struct report_opts *o);

/* A tree with events hookit could not place is not exact: one line says
 * so, above the trees, with the counts and what they mean; the contexts
 * concerned follow, one a line. */
static void lost_events_line(FILE *out, const struct profile *p, const struct report_opts *o)
{
    uint64_t dropped = profile_meta_u64_or(p, "dropped_events", 0),
             unmatched = profile_meta_u64_or(p, "unmatched_exits", 0);
    if (!dropped && !unmatched)
        return;
    fprintf(out, "%s!! not exact: pid %d: %llu dropped event%s (calls or returns in a signal handler "
            "that interrupted the profiler, missing from the tree), %llu unmatched exit%s (returns "
            "that did not pair: from frames hookit never saw open, as when collection started "
            "inside them, or past frames whose own exit never came, control flow it was not "
            "told of)%s\n", style_bold(o), p->process.pid, (unsigned long long)dropped,
            dropped == 1 ? "" : "s", (unsigned long long)unmatched, unmatched == 1 ? "" : "s",
            style_reset(o));
    if (unmatched)
        unexact_contexts(out, p, "unmatched_exits", o);
}

/* A C++ landing pad ran in a frame with inlined callees and hookit could
 * not tell whose it was: the frame it kept open then closed otherwise
 * than at its exit, so the landing pad's calls may sit one level too deep
 * (docs/exactness.md, common/inlined_pad.h). */
static void undecided_pads_line(FILE *out, const struct profile *p, const struct report_opts *o)
{
    uint64_t n = profile_meta_u64_or(p, "undecided_landing_pads", 0);
    if (!n)
        return;
    fprintf(out,
            "%s!! not exact: pid %d: %llu C++ landing pad%s whose owner hookit could not decide (a cleanup "
            "or catch clause that ran in a frame holding inlined callees; the callee kept open never "
            "returned, so the calls the landing pad made may be one level too deep, under it)%s\n",
            style_bold(o), p->process.pid, (unsigned long long)n, n == 1 ? "" : "s", style_reset(o));
    unexact_contexts(out, p, "undecided_landing_pads", o);
}

/* Frames a `ctl stop` left open that returned while collection was off,
 * and exits of calls that began then (libjprof's unexact.c): the stop's
 * doing, counted apart from the unmatched exits, and said so. */
static void stopped_line(FILE *out, const struct profile *p, const struct report_opts *o)
{
    uint64_t n = profile_meta_u64_or(p, "unmatched_after_start", 0);
    if (!n)
        return;
    fprintf(out,
            "%s# collection was off, then started (hookit ctl stop, start; JPROFOPTS=nostart): %llu frame%s "
            "returned or began while it was off (closed as of the stop, or an exit that paired with "
            "nothing); not unmatched exits: the tree lacks only what ran while collection was off%s\n",
            style_dim(o), (unsigned long long)n, n == 1 ? "" : "s", style_reset(o));
}

/* The contexts where the tree may be wrong, from a per-node column
 * ("unmatched_exits": those the fallback repaired; "undecided_landing_pads":
 * the frames such a landing pad kept open; profiler/jprof/metrics/unexact.c):
 * each with its count and path, the first few in preorder.  None for a
 * trace (it names no context). */
#define UNMATCHED_SHOWN 8
#define UNMATCHED_PATH 48 /* innermost frames of a path shown */

static void unmatched_path(FILE *out, const struct profile *p, const struct prof_thread *th, uint32_t i)
{
    uint32_t path[UNMATCHED_PATH], n = 0;
    for (uint32_t k = i; k != PROF_NONE && k < th->nnodes; k = th->nodes[k].parent) {
        if (n == UNMATCHED_PATH) {
            fputs("... > ", out);
            break;
        }
        path[n++] = k;
    }
    while (n--)
        fprintf(out, "%s%s", names_display(&p->funcs[th->nodes[path[n]].func]), n ? " > " : "");
}

static void unexact_contexts(FILE *out, const struct profile *p, const char *column,
                             const struct report_opts *o)
{
    uint32_t shown = 0, more = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        const uint64_t *v = NULL;
        for (uint32_t m = 0; m < th->nmetrics; m++)
            if (strcmp(th->metrics[m].name, column) == 0)
                v = th->metrics[m].values;
        for (uint32_t i = 0; v && i < th->nnodes; i++) {
            if (!v[i])
                continue;
            if (shown++ == UNMATCHED_SHOWN) {
                shown--;
                more++;
                continue;
            }
            fprintf(out, "%s!!   %llu at thread %u: ", style_bold(o), (unsigned long long)v[i], th->index);
            unmatched_path(out, p, th, i);
            fprintf(out, "%s\n", style_reset(o));
        }
    }
    if (more)
        fprintf(out, "%s!!   and %u more context%s%s\n", style_bold(o), more, more == 1 ? "" : "s",
                style_reset(o));
}

/* When the hooks cost a large share of the run, one line says so and
 * points to `hookit advise` (profile/cost.h). */
static void overhead_line(FILE *out, const struct profile *p, const char *path, const struct report_opts *o)
{
    char line[512];
    if (cost_overhead_line(p, path, line, sizeof line))
        fprintf(out, "%s# %s%s\n", style_bold(o), line, style_reset(o));
}

/* What run-time filters and throttling left out of the profile
 * (docs/filters.md): one line, when anything was.  The throttled contexts
 * named are those with the most calls counted. */
#define INCOMPLETE_NAMED 3

static uint32_t incomplete_top(const struct profile *p, const struct prof_node **top)
{
    uint32_t count = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        const struct prof_metric *m = profile_find_metric(th, "count_incomplete");
        for (uint32_t i = 0; m && i < th->nnodes; i++) {
            if (!m->values[i])
                continue;
            count++;
            /* insert into the top INCOMPLETE_NAMED, most calls first */
            const struct prof_node *nd = &th->nodes[i];
            for (uint32_t k = 0; k < INCOMPLETE_NAMED; k++) {
                if (top[k] && top[k]->calls >= nd->calls)
                    continue;
                memmove(&top[k + 1], &top[k], (INCOMPLETE_NAMED - 1 - k) * sizeof *top);
                top[k] = nd;
                break;
            }
        }
    }
    return count;
}

static void not_shown_line(FILE *out, const struct profile *p)
{
    const char *filters = profile_get_meta(p, "filters");
    uint64_t maxdepth = profile_meta_u64_or(p, "maxdepth", 0);
    const struct prof_node *top[INCOMPLETE_NAMED + 1] = { NULL };
    uint32_t incomplete = incomplete_top(p, top);
    if (!filters && !maxdepth && !incomplete)
        return;
    fputs("# not shown:", out);
    if (filters)
        fprintf(out, " functions skipped by the filters %s%s", filters, maxdepth ? "," : "");
    if (maxdepth)
        fprintf(out, " frames deeper than %llu", (unsigned long long)maxdepth);
    if (filters || maxdepth)
        fprintf(out, " (their time and callees are their callers')%s", incomplete ? ";" : "");
    if (incomplete) {
        fprintf(out, " calls after throttling in %u context%s, whose counts stop there (count_incomplete):",
                incomplete, incomplete == 1 ? "" : "s");
        for (uint32_t k = 0; k < INCOMPLETE_NAMED && top[k]; k++)
            fprintf(out, "%s %s (%llu calls)", k ? "," : "", names_display(&p->funcs[top[k]->func]),
                    (unsigned long long)top[k]->calls);
        if (incomplete > INCOMPLETE_NAMED)
            fputs(", ...", out);
    }
    fputc('\n', out);
}

static int report_profile(FILE *out, const struct profile *p, const char *path, const struct report_opts *o,
                          int *printed, int *fn_found)
{
    names_use_profile(p);
    lost_events_line(out, p, o);
    undecided_pads_line(out, p, o);
    stopped_line(out, p, o);
    not_shown_line(out, p);
    estimate_line(out, p);
    overhead_line(out, p, path, o);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const struct prof_thread *th = &p->threads[i];
        if (o->has_tid && !find_thread_matches(th->tid, th->name, o->tid, o->thread_name)
            && !o->merge_threads)
            continue;
        if (o->callers || o->callees) {
            /* one section per thread that has the function */
            for (int callees = 0; callees < 2; callees++) {
                if (!(callees ? o->callees : o->callers))
                    continue;
                if (*printed)
                    fputc('\n', out);
                thread_header(out, p, th, o);
                int rc = view_callers(out, p, th, o, callees);
                if (rc < 0)
                    return EXIT_FAIL;
                if (rc == 0)
                    (*fn_found)++;
                else
                    fprintf(out, "%s(%s is not called in this thread)%s\n", style_dim(o),
                            callees ? o->callees : o->callers, style_reset(o));
                (*printed)++;
            }
            continue;
        }
        if ((*printed)++)
            fputc('\n', out);
        thread_header(out, p, th, o);
        int rc = o->io_view ? report_io_view(out, p, th, o) :
                 o->flat ? report_flat(out, p, th, o) :
                 report_ranks_is(p) ? report_ranks_tree(out, p, th, o) : report_tree(out, p, th, o);
        if (rc)
            return rc;
    }
    return 0;
}

/* The profiles of ps, for find_fn_check (a new array: free it), or NULL. */
static const struct profile **profiles_of(const struct loaded_profile *ps, size_t n)
{
    const struct profile **out = malloc((n + 1) * sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        out[i] = ps[i].prof;
    return out;
}

static int is_trace(const struct profile *p)
{
    const char *src = profile_get_meta(p, "source");
    return src && !strcmp(src, "trace");
}

/* Why a profile has nothing to report, if it has not: its program ran
 * none of its instrumented code; its counts were reset (or zeroed) and no
 * call completed since; or it is a fork child that completed no call, its
 * tree only the frames open in its parent at the fork (context, not
 * calls). */
enum empty_kind { EMPTY_NOT, EMPTY_NEVER_RAN, EMPTY_RESET, EMPTY_INHERITED };

static uint64_t node_count(const struct profile *p)
{
    uint64_t n = 0;
    for (uint32_t t = 0; t < p->nthreads; t++)
        n += p->threads[t].nnodes;
    return n;
}

static enum empty_kind empty_kind(const struct profile *p)
{
    if (is_trace(p) || profile_ran_code(p))
        return EMPTY_NOT;
    if (profile_get_meta(p, "reset_command"))
        return EMPTY_RESET;
    return node_count(p) ? EMPTY_INHERITED : EMPTY_NEVER_RAN;
}

/* The one line for a profile with nothing to report, alone.  A reset or
 * zerobase (its metadata, docs/profile-format.md) is named with its moment:
 * the functions did run, their counts were discarded or zeroed. */
static void say_empty(const char *path, const struct profile *p)
{
    if (empty_kind(p) == EMPTY_RESET) {
        const char *cmd = profile_get_meta(p, "reset_command");
        const char *at = profile_get_meta(p, "reset_at_ns");
        const char *count = profile_get_meta(p, "reset_count");
        double secs = at ? strtod(at, NULL) / 1e9 : 0;
        unsigned long long times = count ? strtoull(count, NULL, 10) : 1;
        int zero = !strcmp(cmd, "zerobase");
        fprintf(stderr,
                "hookit: report: %s: no call completed since the %s %.3f s after the start "
                "(`hookit ctl %s`): the calls before it were %s",
                path, cmd, secs, cmd, zero ? "zeroed, their contexts kept" : "discarded");
        if (times > 1)
            fprintf(stderr, "; %llu resets and zerobases in all", times);
        fputc('\n', stderr);
        return;
    }
    if (empty_kind(p) == EMPTY_INHERITED) {
        uint64_t frames = node_count(p);
        fprintf(stderr,
                "hookit: report: %s: no call completed in process %d: its tree holds only the "
                "%llu frame%s open in its parent when it forked\n",
                path, (int)p->process.pid, (unsigned long long)frames, frames == 1 ? "" : "s");
        return;
    }
    const char *exe = p->process.exe ? p->process.exe : "";
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    fprintf(stderr,
            "hookit: report: %s: no instrumented function ran: was %s built with "
            "-finstrument-functions?\n",
            path, *base ? base : "the program");
}

/* "left out, WHY: PATH..." for the profiles of one kind among others. */
static void left_out(const struct loaded_profile *ps, size_t n, enum empty_kind kind, const char *why)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        if (empty_kind(ps[i].prof) != kind)
            continue;
        if (!any++)
            fprintf(stderr, "hookit: report: left out, %s:", why);
        fprintf(stderr, " %s", ps[i].path);
    }
    if (any)
        fputc('\n', stderr);
}

/* --merge: every profile into one; --merge-threads: each profile's threads
 * into one.  Replaces ps[i].prof (the originals are freed). */
static int combine(struct loaded_profile *ps, size_t *n, const struct report_opts *o)
{
    if (o->merge) {
        struct agg *a = agg_new(o->merge_threads ? AGG_MERGE_THREADS : 0, (uint32_t)*n);
        int rc = a ? 0 : -1;
        for (size_t i = 0; i < *n && rc == 0; i++)
            rc = agg_add(a, ps[i].prof, ps[i].path);
        struct profile *m = rc == 0 ? agg_finish(a) : NULL;
        agg_free(a);
        if (!m)
            return -1;
        for (size_t i = 0; i < *n; i++)
            profile_free(ps[i].prof);
        ps[0].prof = m;
        ps[0].path = "(merged)";
        *n = 1;
        return 0;
    }
    for (size_t i = 0; i < *n && o->merge_threads; i++) {
        struct profile *m = agg_merge_threads(ps[i].prof);
        if (!m)
            return -1;
        profile_free(ps[i].prof);
        ps[i].prof = m;
    }
    return 0;
}

static int parse_sort(const char *s, enum report_sort *out)
{
    static const struct {
        const char *name;
        enum report_sort v;
    } keys[] = {
        { "calls", SORT_CALLS }, { "incl", SORT_INCL }, { "excl", SORT_EXCL },
        { "name", SORT_NAME },   { "cpu", SORT_CPU },   { "wait", SORT_WAIT },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(s, keys[i].name)) {
            *out = keys[i].v;
            return 0;
        }
    return -1;
}

enum {
    OPT_CALLERS = 256,
    OPT_CALLEES,
    OPT_COLOR,
    OPT_NO_COLOR,
    OPT_NO_PAGER,
    OPT_TREE,
    OPT_IO,
    OPT_ALLOC,
    OPT_LEAKS,
    OPT_INTERLEAVE,
    OPT_DEMANGLE,
    OPT_COLLAPSE,
    OPT_NO_COLLAPSE,
    OPT_LINES,
    OPT_FOLD_FRAMES,
    OPT_NO_FOLD_FRAMES,
    OPT_AS_COMPILED
};

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "flat", no_argument, NULL, 'f' },
        { "thread", required_argument, NULL, 't' },
        { "callers", required_argument, NULL, OPT_CALLERS },
        { "callees", required_argument, NULL, OPT_CALLEES },
        { "tree", no_argument, NULL, OPT_TREE },
        { "interleave", no_argument, NULL, OPT_INTERLEAVE },
        { "io", no_argument, NULL, OPT_IO },
        { "alloc", no_argument, NULL, OPT_ALLOC },
        { "leaks", no_argument, NULL, OPT_LEAKS },
        { "merge-threads", no_argument, NULL, 'm' },
        { "merge", no_argument, NULL, 'M' },
        { "min-pct", required_argument, NULL, 'p' },
        { "depth", required_argument, NULL, 'd' },
        { "sort", required_argument, NULL, 's' },
        { "units", required_argument, NULL, 'u' },
        { "color", no_argument, NULL, OPT_COLOR },
        { "colour", no_argument, NULL, OPT_COLOR },
        { "no-color", no_argument, NULL, OPT_NO_COLOR },
        { "no-colour", no_argument, NULL, OPT_NO_COLOR },
        { "no-pager", no_argument, NULL, OPT_NO_PAGER },
        { "demangle", required_argument, NULL, OPT_DEMANGLE },
        { "collapse-recursion", no_argument, NULL, OPT_COLLAPSE },
        { "no-collapse-recursion", no_argument, NULL, OPT_NO_COLLAPSE },
        { "lines", no_argument, NULL, OPT_LINES },
        { "fold-frames", required_argument, NULL, OPT_FOLD_FRAMES },
        { "no-fold-frames", no_argument, NULL, OPT_NO_FOLD_FRAMES },
        { "as-compiled", no_argument, NULL, OPT_AS_COMPILED },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    struct report_opts o = { 0 };
    o.collapse = -1;
    int c, color = -1, pager = 1;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":ft:mMp:d:s:u:h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'f':
            o.flat = 1;
            break;
        case 't':
            if (!*optarg)
                return cli_usage_error("report", "--thread needs a thread id or a thread name");
            find_thread_parse(optarg, &o.tid, &o.thread_name);
            o.has_tid = 1;
            break;
        case OPT_CALLERS:
            o.callers = optarg;
            break;
        case OPT_CALLEES:
            o.callees = optarg;
            break;
        case OPT_TREE:
            o.tree = 1;
            break;
        case OPT_INTERLEAVE:
            o.interleave = 1;
            break;
        case OPT_IO:
            o.io_view = REPORT_IO;
            break;
        case OPT_ALLOC:
            o.io_view = REPORT_ALLOC;
            break;
        case OPT_LEAKS:
            o.io_view = REPORT_LEAKS;
            break;
        case 'm':
            o.merge_threads = 1;
            break;
        case 'M':
            o.merge = 1;
            break;
        case 'p':
            errno = 0;
            o.min_pct = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o.min_pct >= 0 && o.min_pct <= 100))
                return cli_usage_error("report", "--min-pct needs a percentage (0 to 100), not '%s'",
                                       optarg);
            break;
        case 'd': {
            errno = 0;
            long d = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || d < 1 || d > INT32_MAX)
                return cli_usage_error("report", "--depth needs a number of levels (1 or more), "
                                       "not '%s'", optarg);
            o.depth = (uint32_t)d;
            break;
        }
        case 's':
            if (parse_sort(optarg, &o.sort) != 0)
                return cli_usage_error("report",
                                       "--sort is calls, incl, excl, cpu, wait or name, "
                                       "not '%s'",
                                       optarg);
            break;
        case 'u':
            if (units_set(optarg) != 0)
                return cli_usage_error("report", "--units is ns, us, ms, s or auto, not '%s'",
                                       optarg);
            break;
        case OPT_COLOR:
            color = 1;
            break;
        case OPT_NO_COLOR:
            color = 0;
            break;
        case OPT_NO_PAGER:
            pager = 0;
            break;
        case OPT_COLLAPSE:
            o.collapse = 1;
            break;
        case OPT_NO_COLLAPSE:
            o.collapse = 0;
            break;
        case OPT_LINES:
            names_show_lines = 1;
            break;
        case OPT_FOLD_FRAMES:
            if (fold_frames_add(optarg) != 0)
                return cli_usage_error("report", "too many --fold-frames");
            break;
        case OPT_NO_FOLD_FRAMES:
            fold_frames_off();
            break;
        case OPT_AS_COMPILED:
            fold_frames_as_compiled();
            break;
        case OPT_DEMANGLE:
            if (names_parse_demangle(optarg) != 0)
                return cli_usage_error("report", "--demangle is full, simple or no, not '%s'",
                                       optarg);
            break;
        case 'h':
            fputs(report_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("report", c, argv);
        }
    }
    o.color = style_want_color(color);

    char **found = NULL, **files = argv + optind;
    size_t nfound = 0, nfiles = (size_t)(argc - optind);
    /* No file: the current directory's newest profile and its fork
     * family; a directory (`hookit run -o DIR`, then `hookit report DIR`)
     * the same there. */
    struct stat st;
    int dir = nfiles == 1 && stat(files[0], &st) == 0 && S_ISDIR(st.st_mode);
    if (nfiles == 0 || dir) {
        if (newest_profiles(dir ? files[0] : ".", &found, &nfound) < 0)
            return EXIT_FAIL;
        files = found;
        nfiles = nfound;
    }
    struct loaded_profile *ps;
    size_t n = nfiles;
    int rc0 = cli_load_profiles(files, n, &ps);
    if (rc0 < 0) {
        newest_free(found, nfound);
        return EXIT_FAIL;
    }
    for (size_t i = 0; i < n && names_show_lines; i++)
        if (srclines_fill(ps[i].prof, "report", ps[i].path) < 0) {
            cli_free_profiles(ps, n);
            newest_free(found, nfound);
            return cli_fail("out of memory");
        }
    /* A profile with no call counted has nothing to report: say why, and
     * fail when that is all there is; among others (the shell of a fork
     * family) it is left out, named in one line.  Either the program ran
     * none of its instrumented code (not built with -finstrument-functions),
     * or its counts were reset and no call completed since. */
    size_t empty = 0;
    for (size_t i = 0; i < n; i++)
        empty += empty_kind(ps[i].prof) != EMPTY_NOT;
    if (empty == n) {
        for (size_t i = 0; i < n; i++)
            say_empty(ps[i].path, ps[i].prof);
        cli_free_profiles(ps, n);
        newest_free(found, nfound);
        return EXIT_FAIL;
    }
    if (empty) {
        left_out(ps, n, EMPTY_NEVER_RAN, "no instrumented function ran in");
        left_out(ps, n, EMPTY_RESET, "no call completed since a reset or zerobase in");
        left_out(ps, n, EMPTY_INHERITED, "no call completed (only frames inherited at fork) in");
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (empty_kind(ps[i].prof) != EMPTY_NOT)
                profile_free(ps[i].prof);
            else
                ps[k++] = ps[i];
        }
        n = k;
    }
    int listing = !o.flat && !o.tree && !o.callers && !o.callees && !o.merge && !o.merge_threads;
    if (combine(ps, &n, &o) != 0) {
        cli_free_profiles(ps, n);
        return cli_fail("out of memory merging the profiles");
    }
    const struct profile **profs = profiles_of(ps, n);
    const char *where = nfiles == 1 ? files[0] : "the profiles given";
    if (!profs || fold_frames_check(profs, n, where) != 0) {
        free(profs);
        cli_free_profiles(ps, n);
        newest_free(found, nfound);
        return profs ? EXIT_FAIL : cli_fail("out of memory");
    }
    /* The standard library's wrappers (and --fold-frames) folded into their
     * callers, in every view but a trace's listing. */
    for (size_t i = 0; i < n; i++)
        if (!(listing && is_trace(ps[i].prof)) && fold_frames(ps[i].prof) != 0) {
            free(profs);
            cli_free_profiles(ps, n);
            return cli_fail("out of memory");
        }
    /* --collapse-recursion in the tree and flat views: direct recursion
     * folded into one node (--callers/--callees collapse on their own). */
    for (size_t i = 0; i < n && o.collapse == 1 && !o.callers && !o.callees; i++)
        if (fold_recursion(ps[i].prof) != 0) {
            free(profs);
            cli_free_profiles(ps, n);
            return cli_fail("out of memory");
        }
    /* A trace's listing is every call in time order: --min-pct and --sort
     * have nothing to act on there, and say so rather than be ignored. */
    for (size_t i = 0; i < n && listing && (o.min_pct > 0 || o.sort != SORT_DEFAULT); i++)
        if (is_trace(ps[i].prof)) {
            free(profs);
            cli_free_profiles(ps, n);
            newest_free(found, nfound);
            return cli_usage_error("report", "%s does not apply to a trace's listing (every call "
                                   "in time order): use it with --tree or --flat, or shorten the "
                                   "listing with --depth", o.min_pct > 0 ? "--min-pct" : "--sort");
        }
    for (int k = 0; k < 2; k++) {
        const char *fn = k ? o.callees : o.callers;
        if (fn && find_fn_check(profs, n, fn, "", where) != 0) {
            free(profs);
            cli_free_profiles(ps, n);
            newest_free(found, nfound);
            return EXIT_FAIL;
        }
    }
    pager_start(pager);
    int printed = 0, rc = 0, threads_shown = 0, fn_found = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (n > 1) {
            if (i)
                fputc('\n', stdout);
            printf("%s==> %s <==%s\n", style_bold(&o), ps[i].path, style_reset(&o));
            threads_shown += printed;
            printed = 0;
        }
        if (listing && is_trace(ps[i].prof)) {
            lost_events_line(stdout, ps[i].prof, &o);
            undecided_pads_line(stdout, ps[i].prof, &o);
            rc = view_listing(stdout, ps[i].path, &o, &printed);
        } else
            rc = report_profile(stdout, ps[i].prof, ps[i].path, &o, &printed, &fn_found);
        if (!rc && o.io_view)
            report_io_summary(stdout, ps[i].prof, o.io_view == REPORT_IO ? REPORT_IO : REPORT_ALLOC);
        else if (!rc && !o.callers && !o.callees && report_ranks_is(ps[i].prof))
            report_ranks_summary(stdout, ps[i].prof, &o);
    }
    threads_shown += printed;
    if (!rc && o.has_tid && !threads_shown && o.thread_name)
        rc = cli_fail("no thread named '%s' in %s", o.thread_name,
                      nfiles == 1 ? files[0] : "the profiles given");
    else if (!rc && o.has_tid && !threads_shown)
        rc = cli_fail("no thread with tid %ld in %s", o.tid,
                      nfiles == 1 ? files[0] : "the profiles given");
    else if (!rc && (o.callers || o.callees) && !fn_found)
        rc = find_fn_missing(profs, n, o.callers ? o.callers : o.callees, "", where);
    free(profs);
    cli_free_profiles(ps, n);
    if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
        rc = cli_fail("error writing standard output: %s", strerror(errno));
    pager_end();
    names_use_profile(NULL);
    newest_free(found, nfound);
    return rc;
}
