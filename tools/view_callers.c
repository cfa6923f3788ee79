/*
 * hookit report --callers FN / --callees FN: every calling context of a
 * function, aggregated by the calling (or called) function, with calls,
 * inclusive and exclusive time.
 *
 * The recursion rule (docs/reports.md): an activation of FN nested in
 * another one on its call path (recursion, direct or through other
 * functions) belongs to the outermost, whose inclusive time holds it.  So
 * for --callers the rows add up exactly to the function's line in --flat
 * (calls, self and total time), for --callees the rows and [self] to FN's
 * total, and no row's inclusive time is below its exclusive time.
 *
 * With the recursion collapsed (the default, as KCachegrind's cycles): FN
 * and every function on a call path from FN back to FN (an interpreter's
 * luaV_execute -> luaD_call -> luaD_precall -> luaV_execute) count as one.
 * --callees then lists the calls out of that cycle, and their inclusive
 * times plus the cycle's self time add up exactly to FN's inclusive time;
 * --callers lists the callers from outside, and one row "[within the
 * recursion]" carries the calls made inside it.
 */
#include "tools/cli.h"
#include "tools/find_fn.h"
#include "tools/names.h"
#include "tools/report.h"
#include "tools/tree.h"
#include "tools/units.h"
#include "profile/waittime.h"

#include <stdlib.h>
#include <string.h>

uint64_t report_thread_total(const struct prof_thread *th)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < th->nnodes; i++)
        if (th->nodes[i].parent == PROF_NONE)
            total += th->nodes[i].incl_ns;
    return total;
}

static int name_matches(const char *name, const char *module, const char *fn)
{
    size_t len = strlen(fn);
    if (!strcmp(name, fn))
        return 1;
    if (!strncmp(name, fn, len) && name[len] == '(')
        return 1;
    const char *colon = strchr(fn, ':');
    if (colon && colon[1] != ':' && module) {           /* module:name */
        size_t mlen = (size_t)(colon - fn);
        return strlen(module) == mlen && !strncmp(module, fn, mlen) && !strcmp(name, colon + 1);
    }
    return 0;
}

/* By the stored name, or by the name the views show (--demangle=simple:
 * "twice" for "int twice<int>(int)"). */
int report_name_matches(const struct prof_func *f, const char *fn)
{
    return name_matches(f->name ? f->name : "", f->module, fn) ||
           name_matches(names_display(f), f->module, fn);
}

struct row {
    uint32_t func;              /* PROF_NONE: the thread (a root's caller) */
    int recursive;              /* --callees: the other function is the function itself */
    int entered;                /* --callers: some call is an outermost activation */
    uint64_t calls, incl, excl;
    uint64_t cpu, wait; /* the exclusive time's share on the CPU and waiting */
};

struct cctx {
    const struct profile *p;
    const struct prof_thread *th;
    struct waittime w;     /* the thread's wait and CPU columns */
    const uint8_t *target; /* per function: matches FN */
    int callees;
    struct row *rows;           /* per function + 1 (index nfuncs = the thread) */
    uint64_t calls, self, incl; /* the function's own totals (outermost rule) */
    uint64_t self_cpu, self_wait; /* self's share on the CPU and waiting */
    uint32_t contexts;
    /* the collapsed recursion */
    uint8_t *member;            /* per function: on a path from FN back to FN */
    uint32_t *path;             /* per depth: the function */
    uint8_t *region;            /* per depth: the node is in the cycle */
    uint32_t tactive;           /* FN activations on the current path (any match of FN) */
    uint32_t nmembers;
    struct row inner;           /* --callers: calls of FN from within the cycle */
    uint32_t entry;             /* --callers: the row of the outermost activation's caller */
    /* apart */
    uint32_t *focus_depth; /* per depth: depth of the nearest FN at or above, or none */
    uint64_t *remaining;   /* per depth: a call out of FN's time not inside FN */
};

/* Node's exclusive time, and its shares on the CPU and waiting, onto r. */
static void add_excl(struct cctx *c, struct row *r, uint32_t node)
{
    r->excl += c->th->nodes[node].excl_ns;
    r->cpu += waittime_cpu(&c->w, c->th, node);
    r->wait += waittime_wait(&c->w, node);
}

/* Node's exclusive time onto the function's self (and its shares). */
static void add_self(struct cctx *c, uint32_t node)
{
    c->self += c->th->nodes[node].excl_ns;
    c->self_cpu += waittime_cpu(&c->w, c->th, node);
    c->self_wait += waittime_wait(&c->w, node);
}

/* Pass 1: every function between an activation of FN and the next one
 * below it on a path is in the cycle. */
static void mark_enter(const struct tree *t, uint32_t node, void *vctx)
{
    struct cctx *c = vctx;
    uint32_t d = t->depth[node], f = t->thread->nodes[node].func;
    c->path[d] = f;
    if (!c->target[f])
        return;
    if (c->tactive)
        for (uint32_t k = d; k-- > 0 && !c->target[c->path[k]];)
            if (!c->member[c->path[k]]) {
                c->member[c->path[k]] = 1;
                c->nmembers++;
            }
    c->tactive++;
}

static void mark_leave(const struct tree *t, uint32_t node, void *vctx)
{
    struct cctx *c = vctx;
    if (c->target[t->thread->nodes[node].func])
        c->tactive--;
}

/* Pass 2: a node is in the cycle when it is FN, or a member called from
 * inside the cycle.  The cycle's roots carry its inclusive time; its
 * nodes its self time; the nodes it calls outside it are the callees. */
static void cycle_enter(const struct tree *t, uint32_t node, void *vctx)
{
    struct cctx *c = vctx;
    const struct prof_node *n = &t->thread->nodes[node];
    uint32_t d = t->depth[node];
    int parent_in = d > 0 && c->region[d - 1];
    int in = c->target[n->func] || (parent_in && c->member[n->func]);
    c->region[d] = (uint8_t)in;
    if (in) {
        /* --callees: the cycle's own time; --callers: FN's, as in --flat */
        if (c->callees || c->target[n->func])
            add_self(c, node);
        if (c->target[n->func])
            c->calls += n->calls;
        if (!parent_in) {
            c->incl += n->incl_ns;
            c->contexts++;
            if (!c->callees) {
                uint32_t caller = n->parent == PROF_NONE ? c->p->nfuncs
                                                         : t->thread->nodes[n->parent].func;
                struct row *r = &c->rows[caller];
                r->calls += n->calls;
                add_excl(c, r, node);
                r->incl += n->incl_ns;
                r->entered = 1;
                c->entry = caller;
            }
        } else if (!c->callees && c->target[n->func]) {
            /* the calls within the cycle on a row of their own; their
             * time is inside the entry's inclusive time, so on its row */
            c->inner.calls += n->calls;
            add_excl(c, &c->rows[c->entry], node);
        }
    } else if (parent_in && c->callees) {
        struct row *r = &c->rows[n->func];
        r->calls += n->calls;
        add_excl(c, r, node);
        r->incl += n->incl_ns;
    }
}

/* Apart (--no-collapse-recursion), by the gprof convention for time spent
 * in calls back into FN: an activation of FN nested inside another (on its
 * call path, directly or through other functions) belongs to the
 * outermost one.  --callers: the nested activation's call counts on the
 * row of its own caller, its exclusive time on the row of the caller that
 * entered the outermost activation (whose inclusive time already holds
 * it).  --callees: a call out of FN carries its inclusive time less that
 * of the activations of FN below it, which are FN's own time, spread over
 * its [self] and its other rows; FN calling itself carries calls only. */
static void callers_enter(struct cctx *c, const struct tree *t, uint32_t node)
{
    const struct prof_node *n = &t->thread->nodes[node];
    uint32_t caller = n->parent == PROF_NONE ? c->p->nfuncs : t->thread->nodes[n->parent].func;
    struct row *r = &c->rows[caller];
    r->calls += n->calls;
    if (c->tactive == 0) {
        c->entry = caller;
        r->entered = 1;
        r->incl += n->incl_ns;
        add_excl(c, r, node);
    } else {
        add_excl(c, &c->rows[c->entry], node);
    }
    c->contexts++;
}

static int is_callee_node(const struct cctx *c, const struct tree *t, const struct prof_node *n)
{
    return n->parent != PROF_NONE && c->target[t->thread->nodes[n->parent].func];
}

static void callees_enter(struct cctx *c, const struct tree *t, uint32_t node)
{
    const struct prof_node *n = &t->thread->nodes[node];
    uint32_t d = t->depth[node];
    if (is_callee_node(c, t, n)) {
        struct row *r = &c->rows[n->func];
        r->calls += n->calls;
        if (!c->target[n->func])
            add_excl(c, r, node);
        r->recursive = c->target[n->func];
        c->remaining[d] = n->incl_ns; /* added on leave, less FN's nested time */
    }
    if (c->target[n->func]) {
        c->contexts++;
        uint32_t above = d > 0 ? c->focus_depth[d - 1] : UINT32_MAX;
        if (above != UINT32_MAX) { /* the call out of FN this activation is in */
            uint64_t *rem = &c->remaining[above + 1];
            *rem = *rem > n->incl_ns ? *rem - n->incl_ns : 0;
        }
    }
}

static void enter(const struct tree *t, uint32_t node, void *vctx)
{
    struct cctx *c = vctx;
    const struct prof_node *n = &t->thread->nodes[node];
    uint32_t d = t->depth[node];
    int focus = c->target[n->func];
    c->focus_depth[d] = focus ? d : d > 0 ? c->focus_depth[d - 1] : UINT32_MAX;
    if (!c->callees) {
        if (focus)
            callers_enter(c, t, node);
    } else {
        callees_enter(c, t, node);
    }
    if (focus) {
        c->calls += n->calls;
        add_self(c, node);
        if (c->tactive++ == 0)
            c->incl += n->incl_ns;
    }
}

static void leave(const struct tree *t, uint32_t node, void *vctx)
{
    struct cctx *c = vctx;
    const struct prof_node *n = &t->thread->nodes[node];
    if (c->callees && is_callee_node(c, t, n))
        c->rows[n->func].incl += c->remaining[t->depth[node]];
    if (c->target[n->func])
        c->tactive--;
}

/* The --sort key of a row (inclusive time by default). */
static uint64_t row_key(const struct row *r, enum report_sort sort)
{
    switch (sort) {
    case SORT_CALLS:
        return r->calls;
    case SORT_EXCL:
        return r->excl;
    case SORT_CPU:
        return r->cpu;
    case SORT_WAIT:
        return r->wait;
    default:
        return r->incl;
    }
}

static int cmp_rows(const void *va, const void *vb, void *vo)
{
    const struct report_opts *o = vo;
    const struct row *a = va, *b = vb;
    uint64_t ka = row_key(a, o->sort), kb = row_key(b, o->sort);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    if (o->sort == SORT_DEFAULT || o->sort == SORT_INCL)
        if (a->excl != b->excl)
            return a->excl > b->excl ? -1 : 1;
    return (a->func > b->func) - (a->func < b->func);
}

static int cmp_rows_name(const void *va, const void *vb, void *vp)
{
    const struct profile *p = vp;
    const struct row *a = va, *b = vb;
    const char *na = a->func < p->nfuncs ? p->funcs[a->func].name : "";
    const char *nb = b->func < p->nfuncs ? p->funcs[b->func].name : "";
    int c = strcmp(na ? na : "", nb ? nb : "");
    return c ? c : (a->func > b->func) - (a->func < b->func);
}

/* waits: the CPU and WAIT columns (the thread has wait time). */
static void print_row(FILE *out, const struct report_opts *o, const struct profile *p, const struct row *r,
                      uint64_t total, int waits)
{
    char incl[UNITS_BUF], excl[UNITS_BUF], cpu[UNITS_BUF], wait[UNITS_BUF];
    double pct = total ? 100.0 * (double)r->incl / (double)total : 0;
    fprintf(out, "%10llu %s%10s%s %10s", (unsigned long long)r->calls, style_heat(o, pct),
            units_ns(r->incl, incl), style_reset(o), units_ns(r->excl, excl));
    if (waits)
        fprintf(out, " %10s %10s", units_ns(r->cpu, cpu), units_ns(r->wait, wait));
    fputs("  ", out);
    if (r->func == UINT32_MAX)
        fputs("[within the recursion]", out);
    else if (r->func >= p->nfuncs)
        fputs("[thread start]", out);
    else
        names_print_jprof(out, &p->funcs[r->func]);
    if (r->recursive)
        fputs(" (recursive)", out);
    fputc('\n', out);
}

int view_callers(FILE *out, const struct profile *p, const struct prof_thread *th,
                 const struct report_opts *o, int callees)
{
    const char *fn = callees ? o->callees : o->callers;
    struct cctx c = { .p = p, .th = th, .callees = callees };
    int waits = waittime_of(th, &c.w);
    int collapse = o->collapse != 0;
    uint8_t *target = calloc(p->nfuncs + 1, 1);
    c.rows = calloc(p->nfuncs + 1, sizeof *c.rows);
    c.target = target;
    struct tree t;
    int rc = target && c.rows ? 0 : -1;
    int any = 0;
    if (rc == 0)
        any = find_fn(p, fn, target) != FIND_NONE;
    if (rc == 0 && any) {
        if (tree_build(&t, p, th) != 0) {
            rc = -1;
        } else if (collapse) {
            c.member = calloc(p->nfuncs + 1, 1);
            c.path = malloc(((size_t)t.n + 1) * sizeof *c.path);
            c.region = malloc((size_t)t.n + 1);
            rc = c.member && c.path && c.region ? tree_walk(&t, mark_enter, mark_leave, &c) : -1;
            if (rc == 0)
                rc = tree_walk(&t, cycle_enter, NULL, &c);
            tree_free(&t);
        } else {
            c.focus_depth = malloc(((size_t)t.n + 1) * sizeof *c.focus_depth);
            c.remaining = malloc(((size_t)t.n + 1) * sizeof *c.remaining);
            rc = c.focus_depth && c.remaining ? tree_walk(&t, enter, leave, &c) : -1;
            tree_free(&t);
        }
    }
    if (rc == 0 && c.contexts == 0)
        rc = 1;                 /* not in this thread */
    if (rc == 0) {
        uint32_t n = 0;
        for (uint32_t f = 0; f <= p->nfuncs; f++)
            if (c.rows[f].calls || c.rows[f].excl || c.rows[f].incl) {
                c.rows[n] = c.rows[f];
                c.rows[n].func = f;
                if (!callees) /* every call from it re-enters FN */
                    c.rows[n].recursive = !c.rows[n].entered;
                n++;
            }
        if (o->sort == SORT_NAME)
            qsort_r(c.rows, n, sizeof *c.rows, cmp_rows_name, (void *)p);
        else
            qsort_r(c.rows, n, sizeof *c.rows, cmp_rows, (void *)o);
        if (collapse && !callees && (c.inner.calls || c.inner.excl)) {
            c.inner.func = UINT32_MAX;      /* c.rows has room: nfuncs + 1 rows */
            c.rows[n++] = c.inner;
        }
        uint64_t total = report_thread_total(th);
        char calls_s[32], self[UNITS_BUF], incl[UNITS_BUF];
        snprintf(calls_s, sizeof calls_s, "%llu", (unsigned long long)c.calls);
        fprintf(out, "%s%s of %s%s: %u calling context%s, %s calls, self %s, total %s "
                "(%.2f%% of the thread)\n", style_bold(o), callees ? "callees" : "callers", fn,
                style_reset(o), c.contexts, c.contexts == 1 ? "" : "s", calls_s,
                units_ns(c.self, self), units_ns(c.incl, incl),
                total ? 100.0 * (double)c.incl / (double)total : 0.0);
        if (collapse && c.nmembers) {
            fprintf(out, "%srecursion collapsed: %s and", style_dim(o), fn);
            uint32_t shown = 0;
            for (uint32_t f = 0; f < p->nfuncs; f++) {
                if (!c.member[f])
                    continue;
                if (shown++ < 6)
                    fprintf(out, " %s", names_display(&p->funcs[f]));
            }
            if (shown > 6)
                fprintf(out, " and %u more", shown - 6);
            fprintf(out, " as one (--no-collapse-recursion shows them apart)%s\n", style_reset(o));
        }
        fprintf(out, "%10s %10s %10s", "CALLS", "INCL", "EXCL");
        if (waits)
            fprintf(out, " %10s %10s", "CPU", "WAIT");
        fprintf(out, "  %s\n", callees ? "CALLEE (called by it)" : "CALLER (calling it)");
        uint32_t hidden = 0;
        uint64_t hidden_ns = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t biggest = c.rows[i].incl > c.rows[i].excl ? c.rows[i].incl : c.rows[i].excl;
            if (o->min_pct > 0 && total && 100.0 * (double)biggest / (double)total < o->min_pct) {
                hidden++;
                hidden_ns += c.rows[i].incl;
                continue;
            }
            print_row(out, o, p, &c.rows[i], total, waits);
        }
        if (callees) {
            char s[UNITS_BUF], cs[UNITS_BUF], ws[UNITS_BUF];
            fprintf(out, "%10s %10s %10s", "", "", units_ns(c.self, s));
            if (waits)
                fprintf(out, " %10s %10s", units_ns(c.self_cpu, cs), units_ns(c.self_wait, ws));
            fprintf(out, "  %s[self%s]%s\n", style_dim(o), collapse && c.nmembers ? " of the recursion" : "",
                    style_reset(o));
        }
        if (hidden) {
            char h[UNITS_BUF];
            fprintf(out, "%s%u %s below %g%% (%s)%s\n", style_dim(o), hidden,
                    hidden == 1 ? "row" : "rows", o->min_pct, units_ns(hidden_ns, h),
                    style_reset(o));
        }
    }
    free(target);
    free(c.rows);
    free(c.focus_depth);
    free(c.remaining);
    free(c.member);
    free(c.path);
    free(c.region);
    if (rc < 0)
        cli_fail("out of memory");
    return rc;
}
