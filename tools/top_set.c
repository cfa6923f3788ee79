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
 * (thread by default: nobody waits), merged as `hookit merge` would; the
 * per-process and per-function tables are top_view.c's.  A process that
 * ended since the last refresh is dropped, and the view says so.  With
 * --readers (a job on several hosts) the refreshes are live_readers.c's
 * and reader 0 draws them here (top_set_draw).
 */
#include "tools/top_set.h"
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/units.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *who(char *buf, size_t size, const struct top_member *v)
{
    if (v->rank >= 0)
        snprintf(buf, size, "r%d", (int)v->rank);
    else
        snprintf(buf, size, "%d", (int)v->pid);
    return buf;
}

static double rate(const struct top_set_state *st, const struct top_member *v, uint64_t mono)
{
    for (uint32_t i = 0; i < st->n; i++)
        if (st->pids[i] == v->pid && st->ranks[i] == v->rank && mono > st->mono && v->calls >= st->calls[i])
            return (double)(v->calls - st->calls[i]) * 1e9 / (double)(mono - st->mono);
    return -1;
}

static void print_members(FILE *out, const struct top_member *mv, uint32_t n, const struct top_set_state *st,
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

/* f as the merged profile has it (its display names: --demangle). */
static const struct prof_func *in_merged(const struct profile *merged, const struct top_fn *f)
{
    for (uint32_t i = 0; i < merged->nfuncs; i++) {
        const struct prof_func *g = &merged->funcs[i];
        if (g->name && !strcmp(g->name, f->name) && !strcmp(g->module ? g->module : "", f->module))
            return g;
    }
    return NULL;
}

static void print_functions(FILE *out, const struct profile *merged, const struct top_view *v,
                            int nrows_shown)
{
    fprintf(out,
            "\n  functions over the processes (exclusive time summed; inclusive min and max):\n"
            "  %10s %10s %10s %8s %10s %8s %12s  %s\n",
            "EXCL SUM", "INCL SUM", "MIN", "@", "MAX", "@", "CALLS", "NAME");
    for (uint32_t i = 0; i < v->nfn && i < (uint32_t)nrows_shown; i++) {
        const struct top_fn *t = &v->fn[i];
        char a[UNITS_BUF], b[UNITS_BUF], c[UNITS_BUF], d[UNITS_BUF], wmin[32] = "-", wmax[32] = "-";
        if (t->min_member < v->n)
            who(wmin, sizeof wmin, &v->mv[t->min_member]);
        if (t->max_member < v->n)
            who(wmax, sizeof wmax, &v->mv[t->max_member]);
        fprintf(out, "  %10s %10s %10s %8s %10s %8s %12" PRIu64 "  ", units_ns(t->self_ns, a),
                units_ns(t->incl_ns, b), units_ns(t->min_ns, c), wmin, units_ns(t->max_ns, d), wmax,
                t->calls);
        const struct prof_func *g = in_merged(merged, t);
        struct prof_func plain = { .name = t->name, .module = t->module };
        names_print_jprof(out, g ? g : &plain);
        fputc('\n', out);
    }
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
static void input_who(char *buf, size_t size, const struct top_member *mv, uint32_t n, const uint64_t *col,
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

static void print_contexts(FILE *out, const struct profile *merged, const struct top_member *mv, uint32_t n,
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

static void remember(struct top_set_state *st, const struct top_member *mv, uint32_t n, uint64_t mono)
{
    top_set_state_free(st);
    st->pids = calloc(n + 1, sizeof *st->pids);
    st->ranks = calloc(n + 1, sizeof *st->ranks);
    st->calls = calloc(n + 1, sizeof *st->calls);
    st->n = st->pids && st->ranks && st->calls ? n : 0;
    for (uint32_t i = 0; i < st->n; i++) {
        st->pids[i] = mv[i].pid;
        st->ranks[i] = mv[i].rank;
        st->calls[i] = mv[i].calls;
    }
    st->mono = mono;
}

void top_set_state_free(struct top_set_state *st)
{
    free(st->pids);
    free(st->ranks);
    free(st->calls);
    *st = (struct top_set_state){ 0 };
}

void top_set_draw(const struct top_set_opts *o, struct top_set_state *st, const struct top_set_frame *f,
                  int show)
{
    const struct top_view *v = f->view;
    uint64_t mono = now_ns(), calls = 0;
    for (uint32_t i = 0; i < v->n; i++)
        calls += v->mv[i].calls;
    if (show) {
        static const char *const level[] = { "thread", "process", "job" };
        char name[160], pause[UNITS_BUF], barrier[UNITS_BUF];
        live_set_name(&o->sel, name, sizeof name);
        if (o->clear)
            fputs("\033[H\033[2J", stdout);
        printf("hookit top: %s  processes %u  threads %u  calls %" PRIu64 "  consistency %s", name, v->n,
               f->threads, calls, level[o->consistency]);
        if (f->readers)
            printf("  readers %d", f->readers);
        if (o->consistency != LIVE_THREAD)
            printf("  pause %s", units_ns(f->pause_ns, pause));
        if (f->readers && o->consistency == LIVE_JOB)
            printf(" (the longest reader's; slowest barrier %s)", units_ns(f->barrier_ns, barrier));
        printf("\n");
        if (f->notes && *f->notes)
            fputs(f->notes, stdout);
        names_use_profile(f->merged);
        print_members(stdout, v->mv, v->n, st, mono);
        print_functions(stdout, f->merged, v, o->rows);
        print_contexts(stdout, f->merged, v->mv, v->n, o->rows);
        names_use_profile(NULL);
        fflush(stdout);
    }
    remember(st, v->mv, v->n, mono);
}

uint32_t top_set_drop_ended(struct live **ls, uint32_t n, FILE *notes)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (live_alive(ls[i])) {
            ls[k++] = ls[i];
            continue;
        }
        struct live_job j;
        char who[32] = "";
        if (live_job_of(ls[i], &j))
            snprintf(who, sizeof who, " (r%d)", (int)j.rank);
        fprintf(notes, "  process %d%s ended: dropped from the view\n", (int)live_pid(ls[i]), who);
        live_detach(ls[i]);
    }
    return k;
}

/* One refresh; printed when show.  EXIT_OK or EXIT_FAIL. */
static int refresh(const struct top_set_opts *o, struct live **ls, uint32_t n, struct top_set_state *st,
                   const char *notes, int show)
{
    struct live_set_pause sp;
    struct profile **each = NULL;
    struct profile *merged = live_set_profile(ls, n, o->consistency, &sp, &each);
    if (!merged)
        return EXIT_FAIL;
    struct top_view v = { 0 };
    int rc = EXIT_OK;
    for (uint32_t i = 0; i < n && rc == EXIT_OK; i++)
        rc = top_view_add(&v, each[i]) == 0 ? EXIT_OK : cli_fail("out of memory");
    if (rc == EXIT_OK) {
        top_view_finish(&v);
        struct top_set_frame f = {
            .merged = merged, .view = &v, .threads = sp.threads, .pause_ns = sp.pause_ns, .notes = notes
        };
        top_set_draw(o, st, &f, show);
    }
    top_view_free(&v);
    for (uint32_t i = 0; i < n; i++)
        profile_free(each[i]);
    free(each);
    profile_free(merged);
    return rc;
}

int top_set_wait(int tty, int ms)
{
    if (!tty) {
        struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
        return 0;
    }
    /* q (or the end of input) within ms */
    struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
    if (poll(&pfd, 1, ms) <= 0 || !(pfd.revents & POLLIN))
        return 0;
    char c;
    return read(STDIN_FILENO, &c, 1) != 1 || c == 'q' || c == 'Q';
}

int top_set_tty_raw(const struct top_set_opts *o, struct termios *saved)
{
    if (o->once || o->iterations || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, saved) != 0)
        return 0;
    struct termios raw = *saved;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    return tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

void top_set_tty_restore(int tty, const struct termios *saved)
{
    if (tty)
        tcsetattr(STDIN_FILENO, TCSANOW, saved);
}

int top_set(const struct top_set_opts *o)
{
    struct live **ls;
    uint32_t n;
    int rc = live_set_open(&o->sel, "top", 0, &ls, &n);
    if (rc != EXIT_OK)
        return rc;
    struct top_set_state st = { 0 };
    rc = refresh(o, ls, n, &st, NULL, 0);
    struct termios saved;
    int tty = top_set_tty_raw(o, &saved);
    int views = o->once ? 1 : o->iterations;
    for (int shown = 0; rc == EXIT_OK && (!views || shown < views); shown++) {
        if (top_set_wait(tty, o->interval_ms))
            break;
        char *notes = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&notes, &len);
        if (!f) {
            rc = cli_fail("out of memory");
            break;
        }
        n = top_set_drop_ended(ls, n, f);
        fclose(f);
        if (!n) {
            printf("%severy process of %s has ended\n", notes, o->sel.arg ? o->sel.arg : "the set");
            free(notes);
            break;
        }
        rc = refresh(o, ls, n, &st, notes, 1);
        free(notes);
    }
    top_set_tty_restore(tty, &saved);
    top_set_state_free(&st);
    live_set_close(ls, n);
    return rc;
}
