/*
 * hookit top over several processes (--job, --pids, --family, --all;
 * docs/live.md "Several processes"): the whole set live, refreshed.
 *
 *  - per process (rank): its time, the time in MPI calls and outside them,
 *    calls and calls per second; the slowest rank named (the most time
 *    outside MPI: the one the others wait for in their MPI calls);
 *  - per function (by name and module): the sum over the processes of its
 *    exclusive and inclusive time, the min and max of its inclusive time
 *    and the rank (or pid) that has each;
 *  - the hottest calling contexts of the merged tree: the sum of their
 *    exclusive time, the min and max of their inclusive time over the
 *    processes with their ranks (the merge's columns, profile/merge.h).
 * Every refresh is one snapshot of the set at the consistency asked
 * (thread by default: nobody waits), merged as `hookit merge` would.
 */
#include "tools/top_set.h"
#include "tools/cli.h"
#include "profile/merge_ranks.h"
#include "tools/names.h"
#include "tools/tree.h"
#include "tools/units.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* One process of the set as shown. */
struct member_view {
    pid_t pid;
    int32_t rank;
    uint64_t time_ns, mpi_ns, calls;
};

/* What a refresh remembers for the next one's rates. */
struct top_set_state {
    pid_t *pids;
    uint64_t *calls;
    uint32_t n;
    uint64_t mono;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Time, time in MPI (outermost MPI frames, MPI_Init's included: the job
 * profile's per-rank table leaves start-up and shut-down out, but a rank
 * that spends them in MPI is not computing) and calls of one process. */
static void measure(const struct profile *p, struct member_view *v)
{
    v->pid = p->process.pid;
    v->rank = p->process.rank;
    v->time_ns = v->mpi_ns = v->calls = 0;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        unsigned char *in_mpi = calloc(th->nnodes + 1, 1);
        for (uint32_t i = 0; i < th->nnodes; i++) {
            const struct prof_node *nd = &th->nodes[i];
            const char *name = p->funcs[nd->func].name;
            int mpi = rank_is_mpi_name(name);
            int under = nd->parent != PROF_NONE && in_mpi && in_mpi[nd->parent];
            if (in_mpi)
                in_mpi[i] = (unsigned char)(mpi || under);
            if (nd->parent == PROF_NONE)
                v->time_ns += nd->incl_ns;
            if (mpi && !under)
                v->mpi_ns += nd->incl_ns;
            v->calls += nd->calls;
        }
        free(in_mpi);
    }
}

static const char *who(char *buf, size_t size, const struct member_view *v)
{
    if (v->rank >= 0)
        snprintf(buf, size, "r%d", (int)v->rank);
    else
        snprintf(buf, size, "%d", (int)v->pid);
    return buf;
}

static double rate(const struct top_set_state *st, const struct member_view *v, uint64_t mono)
{
    for (uint32_t i = 0; i < st->n; i++)
        if (st->pids[i] == v->pid && mono > st->mono && v->calls >= st->calls[i])
            return (double)(v->calls - st->calls[i]) * 1e9 / (double)(mono - st->mono);
    return -1;
}

static void print_members(FILE *out, struct member_view *mv, uint32_t n, const struct top_set_state *st,
                          uint64_t mono)
{
    uint32_t slowest = 0;
    int ranked = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (mv[i].time_ns - mv[i].mpi_ns > mv[slowest].time_ns - mv[slowest].mpi_ns)
            slowest = i;
        ranked &= mv[i].rank >= 0;
    }
    fprintf(out, "\n  %-8s %8s %10s %10s %10s %12s %10s\n", ranked ? "RANK" : "PROCESS", "PID", "TIME",
            "OUTSIDE", "IN MPI", "CALLS", "CALLS/S");
    for (uint32_t i = 0; i < n; i++) {
        char w[32], a[UNITS_BUF], b[UNITS_BUF], c[UNITS_BUF], r[32];
        double cr = rate(st, &mv[i], mono);
        if (cr < 0)
            snprintf(r, sizeof r, "-");
        else
            snprintf(r, sizeof r, "%.0f", cr);
        fprintf(out, "  %-8s %8d %10s %10s %10s %12" PRIu64 " %10s%s\n", who(w, sizeof w, &mv[i]),
                (int)mv[i].pid, units_ns(mv[i].time_ns, a), units_ns(mv[i].time_ns - mv[i].mpi_ns, b),
                units_ns(mv[i].mpi_ns, c), mv[i].calls, r, n > 1 && i == slowest ? "  <- slowest" : "");
    }
    if (n > 1) {
        char w[32], a[UNITS_BUF], b[UNITS_BUF];
        fprintf(out, "  slowest %s %s (pid %d): %s outside MPI of %s\n", ranked ? "rank" : "process",
                who(w, sizeof w, &mv[slowest]), (int)mv[slowest].pid,
                units_ns(mv[slowest].time_ns - mv[slowest].mpi_ns, a), units_ns(mv[slowest].time_ns, b));
    }
}

/* ---- functions over the processes --------------------------------------------- */

struct fn_row {
    const char *name, *module;
    const struct prof_func *func; /* for printing */
    uint32_t member;
    uint64_t self_ns, incl_ns, calls;
};

static int by_name(const void *a, const void *b)
{
    const struct fn_row *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

struct fn_total {
    const struct prof_func *func;
    uint64_t self_ns, incl_ns, calls, min_ns, max_ns;
    uint32_t min_member, max_member, members;
};

static int by_self_desc(const void *a, const void *b)
{
    const struct fn_total *x = a, *y = b;
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    return strcmp(x->func->name, y->func->name);
}

/* Each process's per-function totals (all its threads), as rows. */
static uint32_t function_rows(struct profile **each, uint32_t n, struct fn_row **rows_out)
{
    struct fn_row *rows = NULL;
    uint32_t nrows = 0, cap = 0;
    for (uint32_t m = 0; m < n; m++) {
        const struct profile *p = each[m];
        struct func_total *tot = calloc(p->nfuncs + 1, sizeof *tot);
        for (uint32_t t = 0; tot && t < p->nthreads; t++) {
            struct tree tr;
            if (tree_build(&tr, p, &p->threads[t]) == 0) {
                tree_func_totals(&tr, tot); /* adds up over the threads */
                tree_free(&tr);
            }
        }
        for (uint32_t f = 0; tot && f < p->nfuncs; f++) {
            if (!tot[f].nodes)
                continue;
            if (nrows == cap) {
                cap = cap ? cap * 2 : 256;
                struct fn_row *r = realloc(rows, cap * sizeof *r);
                if (!r)
                    break;
                rows = r;
            }
            rows[nrows++] = (struct fn_row){ p->funcs[f].name ? p->funcs[f].name : "?",
                                             p->funcs[f].module ? p->funcs[f].module : "",
                                             &p->funcs[f],
                                             m,
                                             tot[f].self_ns,
                                             tot[f].incl_ns,
                                             tot[f].calls };
        }
        free(tot);
    }
    *rows_out = rows;
    return nrows;
}

/* f as the merged profile has it (its display names: --demangle), else f. */
static const struct prof_func *in_merged(const struct profile *merged, const struct prof_func *f)
{
    for (uint32_t i = 0; i < merged->nfuncs; i++) {
        const struct prof_func *g = &merged->funcs[i];
        if (g->name && f->name && !strcmp(g->name, f->name)
            && !strcmp(g->module ? g->module : "", f->module ? f->module : ""))
            return g;
    }
    return f;
}

static void print_functions(FILE *out, const struct profile *merged, struct profile **each,
                            const struct member_view *mv, uint32_t n, int nrows_shown)
{
    struct fn_row *rows;
    uint32_t nrows = function_rows(each, n, &rows);
    struct fn_total *tot = calloc(nrows + 1, sizeof *tot);
    uint32_t nt = 0;
    if (!tot) {
        free(rows);
        return;
    }
    qsort(rows, nrows, sizeof *rows, by_name);
    for (uint32_t i = 0; i < nrows; i++) {
        struct fn_total *t = nt && !by_name(&rows[i], &rows[i - 1]) ? &tot[nt - 1] : NULL;
        if (!t) {
            t = &tot[nt++];
            *t = (struct fn_total){ .func = rows[i].func, .min_ns = UINT64_MAX };
        }
        t->self_ns += rows[i].self_ns;
        t->incl_ns += rows[i].incl_ns;
        t->calls += rows[i].calls;
        t->members++;
        if (rows[i].incl_ns < t->min_ns) {
            t->min_ns = rows[i].incl_ns;
            t->min_member = rows[i].member;
        }
        if (rows[i].incl_ns >= t->max_ns) {
            t->max_ns = rows[i].incl_ns;
            t->max_member = rows[i].member;
        }
    }
    /* a process without the function has 0 of it */
    for (uint32_t i = 0; i < nt; i++)
        if (tot[i].members < n)
            tot[i].min_ns = 0, tot[i].min_member = UINT32_MAX;
    qsort(tot, nt, sizeof *tot, by_self_desc);
    fprintf(out,
            "\n  functions over the processes (exclusive time summed; inclusive min and max):\n"
            "  %10s %10s %10s %8s %10s %8s %12s  %s\n",
            "EXCL SUM", "INCL SUM", "MIN", "@", "MAX", "@", "CALLS", "NAME");
    for (uint32_t i = 0; i < nt && i < (uint32_t)nrows_shown; i++) {
        char a[UNITS_BUF], b[UNITS_BUF], c[UNITS_BUF], d[UNITS_BUF], wmin[32] = "-", wmax[32];
        if (tot[i].min_member != UINT32_MAX)
            who(wmin, sizeof wmin, &mv[tot[i].min_member]);
        who(wmax, sizeof wmax, &mv[tot[i].max_member]);
        fprintf(out, "  %10s %10s %10s %8s %10s %8s %12" PRIu64 "  ", units_ns(tot[i].self_ns, a),
                units_ns(tot[i].incl_ns, b), units_ns(tot[i].min_ns, c), wmin, units_ns(tot[i].max_ns, d),
                wmax, tot[i].calls);
        names_print_jprof(out, in_merged(merged, tot[i].func));
        fputc('\n', out);
    }
    free(tot);
    free(rows);
}

/* ---- contexts of the merged tree ------------------------------------------------ */

static const struct prof_thread *sort_th;
static int by_excl_desc(const void *a, const void *b)
{
    const struct prof_node *x = &sort_th->nodes[*(const uint32_t *)a],
                           *y = &sort_th->nodes[*(const uint32_t *)b];
    if (x->excl_ns != y->excl_ns)
        return x->excl_ns > y->excl_ns ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static const uint64_t *column(const struct prof_thread *th, const char *name)
{
    const struct prof_metric *m = profile_find_metric(th, name);
    return m ? m->values : NULL;
}

/* Input number k of the merge is process k of the set (live_set.c folds
 * them in order): its rank, else its pid. */
static void input_who(char *buf, size_t size, const struct member_view *mv, uint32_t n, const uint64_t *col,
                      uint32_t node)
{
    if (!col)
        snprintf(buf, size, "-");
    else if (col[node] < n)
        who(buf, size, &mv[col[node]]);
    else
        snprintf(buf, size, "?");
}

static void print_path(FILE *out, const struct profile *p, const struct prof_thread *th, uint32_t node)
{
    uint32_t path[16], len = 0, more = 0;
    for (uint32_t k = node; k != PROF_NONE; k = th->nodes[k].parent)
        if (len < 16)
            path[len++] = k;
        else
            more++;
    if (more)
        fprintf(out, "... %u > ", more);
    while (len-- > 0) {
        names_print_jprof(out, &p->funcs[th->nodes[path[len]].func]);
        if (len)
            fputs(" > ", out);
    }
}

static void print_contexts(FILE *out, const struct profile *merged, const struct member_view *mv, uint32_t n,
                           int rows)
{
    fprintf(out,
            "\n  hottest calling contexts (exclusive time summed; inclusive min and max):\n"
            "  %6s %10s %10s %8s %10s %8s  %s\n",
            "THREAD", "EXCL SUM", "MIN", "@", "MAX", "@", "PATH");
    /* every thread's nodes, by exclusive time */
    for (int shown = 0, t = 0; t < (int)merged->nthreads; t++) {
        const struct prof_thread *th = &merged->threads[t];
        const uint64_t *mn = column(th, "min_incl_ns"), *mx = column(th, "max_incl_ns");
        const uint64_t *mnw = column(th, "min_incl_input"), *mxw = column(th, "max_incl_input");
        uint32_t *order = malloc(((size_t)th->nnodes + 1) * sizeof *order);
        if (!order)
            return;
        for (uint32_t i = 0; i < th->nnodes; i++)
            order[i] = i;
        sort_th = th;
        qsort(order, th->nnodes, sizeof *order, by_excl_desc);
        for (uint32_t i = 0; i < th->nnodes && i < (uint32_t)rows && shown < rows * 2; i++, shown++) {
            uint32_t k = order[i];
            char a[UNITS_BUF], b[UNITS_BUF], c[UNITS_BUF], w1[32], w2[32];
            input_who(w1, sizeof w1, mv, n, mnw, k);
            input_who(w2, sizeof w2, mv, n, mxw, k);
            fprintf(out, "  %6u %10s %10s %8s %10s %8s  ", th->index, units_ns(th->nodes[k].excl_ns, a),
                    mn ? units_ns(mn[k], b) : "-", w1, mx ? units_ns(mx[k], c) : "-", w2);
            print_path(out, merged, th, k);
            fputc('\n', out);
        }
        free(order);
    }
}

static void remember(struct top_set_state *st, const struct member_view *mv, uint32_t n, uint64_t mono)
{
    free(st->pids);
    free(st->calls);
    st->pids = calloc(n + 1, sizeof *st->pids);
    st->calls = calloc(n + 1, sizeof *st->calls);
    st->n = st->pids && st->calls ? n : 0;
    for (uint32_t i = 0; i < st->n; i++) {
        st->pids[i] = mv[i].pid;
        st->calls[i] = mv[i].calls;
    }
    st->mono = mono;
}

/* One refresh; printed when show.  EXIT_OK or EXIT_FAIL. */
static int refresh(const struct top_set_opts *o, struct live **ls, uint32_t n, struct top_set_state *st,
                   int show)
{
    struct live_set_pause sp;
    struct profile **each = NULL;
    struct profile *merged = live_set_profile(ls, n, o->consistency, &sp, &each);
    if (!merged)
        return EXIT_FAIL;
    uint64_t mono = now_ns();
    struct member_view *mv = calloc(n + 1, sizeof *mv);
    uint64_t calls = 0;
    for (uint32_t i = 0; mv && i < n; i++) {
        measure(each[i], &mv[i]);
        calls += mv[i].calls;
    }
    if (show && mv) {
        static const char *const level[] = { "thread", "process", "job" };
        char name[160], pause[UNITS_BUF];
        live_set_name(&o->sel, name, sizeof name);
        if (o->clear)
            fputs("\033[H\033[2J", stdout);
        printf("hookit top: %s  processes %u  threads %u  calls %" PRIu64 "  consistency %s", name, n,
               sp.threads, calls, level[o->consistency]);
        if (o->consistency != LIVE_THREAD)
            printf("  pause %s", units_ns(sp.pause_ns, pause));
        printf("\n");
        names_use_profile(merged);
        print_members(stdout, mv, n, st, mono);
        print_functions(stdout, merged, each, mv, n, o->rows);
        print_contexts(stdout, merged, mv, n, o->rows);
        names_use_profile(NULL);
        fflush(stdout);
    }
    if (mv)
        remember(st, mv, n, mono);
    free(mv);
    for (uint32_t i = 0; i < n; i++)
        profile_free(each[i]);
    free(each);
    profile_free(merged);
    return EXIT_OK;
}

/* q (or the end of input) read within ms: 1. */
static int quit_key(int ms)
{
    struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
    if (poll(&pfd, 1, ms) <= 0 || !(pfd.revents & POLLIN))
        return 0;
    char c;
    return read(STDIN_FILENO, &c, 1) != 1 || c == 'q' || c == 'Q';
}

int top_set(const struct top_set_opts *o)
{
    struct live **ls;
    uint32_t n;
    int rc = live_set_open(&o->sel, "top", 0, &ls, &n);
    if (rc != EXIT_OK)
        return rc;
    struct top_set_state st = { 0 };
    rc = refresh(o, ls, n, &st, 0);
    struct termios saved, raw;
    int tty = !o->once && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    if (tty) {
        raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        tty = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    for (int round = 0; rc == EXIT_OK; round++) {
        if (tty ? quit_key(o->interval_ms) : (usleep((useconds_t)o->interval_ms * 1000), 0))
            break;
        uint32_t alive = 0;
        for (uint32_t i = 0; i < n; i++)
            alive += live_alive(ls[i]) != 0;
        if (!alive) {
            printf("every process of %s has ended\n", o->sel.arg ? o->sel.arg : "the set");
            break;
        }
        rc = refresh(o, ls, n, &st, 1);
        if (o->once)
            break;
    }
    if (tty)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    free(st.pids);
    free(st.calls);
    live_set_close(ls, n);
    return rc;
}
