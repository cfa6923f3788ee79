/*
 * hookit top: a running process's profile, refreshed (TAU's runtime view).
 * Per thread: the functions with the most exclusive time and their share,
 * the hottest call paths, the current call stack, calls per second (from
 * two snapshots), each thread's state as the kernel sees it (running,
 * sleeping) and whether it is in a blocking call hookit times, with its
 * share of a CPU.  Snapshots are thread-consistent and never stop the
 * program; names come from the process's /proc/PID/maps through A2N.
 *
 * On a terminal the view fits it: a line wider than the terminal is
 * elided in the middle (a call path keeps its root and its leaf), and the
 * view stops at the terminal's height, the header kept.  When the program
 * ends, top says when, and which profile it wrote.
 */
#include "tools/cli.h"
#include "tools/live_cli.h"
#include "tools/top_set.h"
#include "tools/live_readers.h"
#include "tools/names.h"
#include "tools/thread_state.h"
#include "tools/tree.h"
#include "tools/units.h"
#include "profile/waittime.h"
#include <hookit/a2n.h>

#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *const top_usage =
    "usage: hookit top [--interval S] [--once | --iterations N] [--rows N] PID\n"
    "       hookit top [--interval S] [--once | --iterations N] [--rows N] "
    "[--consistency=thread|process|job]\n"
    "                  --job ID | --pids P1,P2... | --family PID | --all\n"
    "       mpirun --map-by ppr:1:node hookit top --readers [--consistency=...] --job ID\n"
    "\n"
    "Show where the running process PID (profiled by libjprof) spends its\n"
    "time, refreshed every interval: for each thread, its state as the kernel\n"
    "sees it (running, sleeping; \"in a blocking call\" when hookit times one)\n"
    "and its share of a CPU since the last refresh, calls per second, the\n"
    "current call stack, the functions with the most exclusive time (their\n"
    "share of the thread's time) and the hottest call paths.  On a terminal\n"
    "the view fits it: long lines are elided in the middle, the header kept.\n"
    "When the process ends, top says when and which profile it wrote.\n"
    "\n"
    "Of several processes (an MPI job's ranks on this host, a fork family):\n"
    "per process its time outside and inside MPI and its calls/s, the slowest\n"
    "named; per function and per calling context the sum over the processes\n"
    "and the min and max with the rank (or pid) that has each.\n"
    "\n"
    "Keys: t / Tab next thread, T previous thread, a all threads, v next view\n"
    "(all, functions, paths, stack), q quit.\n"
    "\n"
    "Options:\n"
    "  -i, --interval S   seconds between refreshes (default 1; with --once, the\n"
    "                     time between the two snapshots that give calls/s)\n"
    "  -1, --once         print one view as text and exit (for scripts)\n"
    "  -N, --iterations N print N views, one every interval, and exit (batch mode)\n"
    "  -n, --rows N       rows per table (default 10)\n"
    "      --demangle=MODE  C++ names: simple (the default), full or no, as in\n"
    "                     hookit report\n"
    "  -c, --consistency=L  of several processes: thread (default: nobody waits),\n"
    "                     process (each paused on its own in turn) or job (all\n"
    "                     paused at once; docs/live.md)\n" LIVE_SET_USAGE
    "      --readers      one of several readers started by an MPI launcher, one per\n"
    "                     host, each reading the set's processes on its host; every\n"
    "                     refresh is one synchronised snapshot of them all, reduced\n"
    "                     over MPI; reader 0 draws the view (docs/live.md)\n"
    "  -h, --help         this help\n";

enum view { VIEW_ALL, VIEW_FUNCS, VIEW_PATHS, VIEW_STACK, NVIEWS };
static const char *const view_names[] = { "all", "functions", "paths", "stack" };

struct top {
    struct live *live;
    struct a2n *a2n;
    int rows;
    int thread;                 /* -1: every thread */
    enum view view;
    /* previous snapshot's calls and CPU time per thread tid, for rates */
    int32_t *prev_tid;
    uint64_t *prev_calls, *prev_cpu;
    uint32_t nprev;
    uint64_t prev_mono;
    pid_t pid;
    char outdir[PATH_MAX]; /* where the process writes its profile ("" unknown) */
};

static uint64_t thread_calls(const struct prof_thread *t)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < t->nnodes; i++)
        sum += t->nodes[i].calls;
    return sum;
}

static double rate_of(const struct top *tp, const struct prof_thread *t, uint64_t calls, uint64_t mono)
{
    for (uint32_t i = 0; i < tp->nprev; i++)
        if (tp->prev_tid[i] == t->tid && mono > tp->prev_mono)
            return calls >= tp->prev_calls[i] ? (double)(calls - tp->prev_calls[i]) * 1e9 / (double)(mono - tp->prev_mono) : 0;
    return -1;
}

static const char *rate_text(double r, char *buf, size_t size)
{
    if (r < 0)
        snprintf(buf, size, "-");
    else if (r >= 1e6)
        snprintf(buf, size, "%.2fM", r / 1e6);
    else if (r >= 1e3)
        snprintf(buf, size, "%.1fk", r / 1e3);
    else
        snprintf(buf, size, "%.0f", r);
    return buf;
}

static void print_func(FILE *out, const struct profile *p, uint32_t func)
{
    names_print_jprof(out, &p->funcs[func]);
}

/* The current call stack: each open frame's function, outermost first. */
static void print_stack(FILE *out, const struct profile *p, const struct prof_thread *th,
                        const struct live_thread *lt, int rows)
{
    fprintf(out, "  current call stack (%u frames%s):\n", lt->depth,
            lt->state == ARENA_THREAD_RUNNING ? "" : ", thread ended");
    if (lt->state != ARENA_THREAD_RUNNING || lt->depth == 0)
        return;
    uint32_t first = lt->depth > (uint32_t)rows * 2 ? lt->depth - (uint32_t)rows * 2 + 1 : 1;
    if (first > 1)
        fprintf(out, "    ... %u outer frames\n", first - 1);
    for (uint32_t d = first; d <= lt->depth; d++) {
        uint32_t idx = UINT32_MAX;
        for (uint32_t i = 0; i < lt->nnodes && i < th->nnodes; i++)
            if (lt->nodes[i].ref == lt->stack[d].node) {
                idx = i;
                break;
            }
        fprintf(out, "    %3u  ", d);
        if (idx == UINT32_MAX)
            fputs("?", out);
        else
            print_func(out, p, th->nodes[idx].func);
        fputc('\n', out);
    }
}

static const struct func_total *sort_totals;
static int by_self_desc(const void *a, const void *b)
{
    const struct func_total *x = &sort_totals[*(const uint32_t *)a], *y = &sort_totals[*(const uint32_t *)b];
    if (x->self_ns != y->self_ns)
        return x->self_ns > y->self_ns ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Per function, its contexts' on-CPU and waiting time (both exclusive,
 * so they sum over contexts like the exclusive time). */
static void func_cpu_wait(const struct prof_thread *th, uint64_t *cpu, uint64_t *wait)
{
    struct waittime w;
    waittime_of(th, &w);
    for (uint32_t i = 0; i < th->nnodes; i++) {
        cpu[th->nodes[i].func] += waittime_cpu(&w, th, i);
        wait[th->nodes[i].func] += waittime_wait(&w, i);
    }
}

static void print_funcs(FILE *out, const struct profile *p, const struct prof_thread *th, int rows)
{
    struct tree t;
    struct func_total *tot = calloc(p->nfuncs + 1, sizeof *tot);
    uint32_t *order = malloc((p->nfuncs + 1) * sizeof *order);
    uint64_t *cpu = calloc(p->nfuncs + 1, sizeof *cpu), *wait = calloc(p->nfuncs + 1, sizeof *wait);
    if (!tot || !order || !cpu || !wait || tree_build(&t, p, th) < 0) {
        free(tot);
        free(order);
        free(cpu);
        free(wait);
        return;
    }
    tree_func_totals(&t, tot);
    tree_free(&t);
    func_cpu_wait(th, cpu, wait);
    uint32_t n = 0;
    uint64_t total = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if (tot[f].nodes) {
            order[n++] = f;
            total += tot[f].self_ns;
        }
    sort_totals = tot;
    qsort(order, n, sizeof *order, by_self_desc);
    /* CPU and WAIT split EXCL (docs/io.md, "Wait time"), when the process records waits */
    struct waittime has;
    int split = waittime_of(th, &has);
    fprintf(out, "  top functions by exclusive time:\n    %6s %10s ", "SHARE", "EXCL");
    if (split)
        fprintf(out, "%10s %10s ", "CPU", "WAIT");
    fprintf(out, "%10s %12s  %s\n", "INCL", "CALLS", "NAME");
    for (uint32_t i = 0; i < n && i < (uint32_t)rows; i++) {
        const struct func_total *ft = &tot[order[i]];
        char a[UNITS_BUF], b[UNITS_BUF];
        fprintf(out, "    %5.1f%% %10s ", total ? 100.0 * (double)ft->self_ns / (double)total : 0.0,
                units_ns(ft->self_ns, a));
        if (split)
            fprintf(out, "%10s %10s ", units_ns(cpu[order[i]], a), units_ns(wait[order[i]], b));
        fprintf(out, "%10s %12llu  ", units_ns(ft->incl_ns, b), (unsigned long long)ft->calls);
        print_func(out, p, order[i]);
        fputc('\n', out);
    }
    free(tot);
    free(order);
    free(cpu);
    free(wait);
}

static const struct prof_thread *sort_thread;
static int by_excl_desc(const void *a, const void *b)
{
    const struct prof_node *x = &sort_thread->nodes[*(const uint32_t *)a], *y = &sort_thread->nodes[*(const uint32_t *)b];
    if (x->excl_ns != y->excl_ns)
        return x->excl_ns > y->excl_ns ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* The call paths (calling contexts) with the most exclusive time, each
 * written from the root down. */
static void print_paths(FILE *out, const struct profile *p, const struct prof_thread *th, int rows)
{
    uint32_t *order = malloc((th->nnodes + 1) * sizeof *order);
    if (!order)
        return;
    uint64_t total = 0;
    for (uint32_t i = 0; i < th->nnodes; i++) {
        order[i] = i;
        total += th->nodes[i].excl_ns;
    }
    sort_thread = th;
    qsort(order, th->nnodes, sizeof *order, by_excl_desc);
    /* CPU and WAIT split EXCL, as in the functions' table */
    struct waittime w;
    int split = waittime_of(th, &w);
    fprintf(out, "  hottest call paths (exclusive time in that context):\n    %6s %10s ", "SHARE", "EXCL");
    if (split)
        fprintf(out, "%10s %10s ", "CPU", "WAIT");
    fprintf(out, "%12s  %s\n", "CALLS", "PATH");
    uint32_t path[64];
    for (uint32_t i = 0; i < th->nnodes && i < (uint32_t)rows; i++) {
        const struct prof_node *nd = &th->nodes[order[i]];
        char a[UNITS_BUF], b[UNITS_BUF];
        fprintf(out, "    %5.1f%% %10s ", total ? 100.0 * (double)nd->excl_ns / (double)total : 0.0,
                units_ns(nd->excl_ns, a));
        if (split)
            fprintf(out, "%10s %10s ", units_ns(waittime_cpu(&w, th, order[i]), a),
                    units_ns(waittime_wait(&w, order[i]), b));
        fprintf(out, "%12llu  ", (unsigned long long)nd->calls);
        /* The innermost 64 steps, a run of one function (recursion) one
         * step written once with its count: "down ×1000". */
        uint32_t len = 0, skipped = 0, run[64] = { 0 };
        for (uint32_t k = order[i]; k != PROF_NONE; k = th->nodes[k].parent) {
            uint32_t f = th->nodes[k].func;
            if (skipped || (len == 64 && th->nodes[path[63]].func != f)) {
                skipped++;
            } else if (len && th->nodes[path[len - 1]].func == f) {
                run[len - 1]++;
            } else {
                path[len] = k;
                run[len++] = 1;
            }
        }
        if (skipped)
            fprintf(out, "... %u > ", skipped);
        while (len-- > 0) {
            print_func(out, p, th->nodes[path[len]].func);
            if (run[len] > 1)
                fprintf(out, " \u00d7%u", run[len]);
            if (len)
                fputs(" > ", out);
        }
        fputc('\n', out);
    }
    free(order);
}

/* The thread's share of a CPU since the previous snapshot, -1 unknown. */
static double cpu_share(const struct top *tp, int32_t tid, uint64_t cpu_ns, uint64_t mono)
{
    for (uint32_t i = 0; i < tp->nprev; i++)
        if (tp->prev_tid[i] == tid && mono > tp->prev_mono && cpu_ns >= tp->prev_cpu[i])
            return 100.0 * (double)(cpu_ns - tp->prev_cpu[i]) / (double)(mono - tp->prev_mono);
    return -1;
}

/* "R running, cpu 98%", "S sleeping, in a blocking call, cpu 0%", "ended":
 * the kernel's state and the wait hookit sees (ARENA_REQ_WAIT). */
static void print_state(FILE *out, const struct top *tp, const struct live_thread *lt, uint64_t mono)
{
    struct thread_state ks;
    if (lt->state != ARENA_THREAD_RUNNING || thread_state_read(tp->pid, lt->tid, &ks) != 0) {
        fputs("ended", out);
        return;
    }
    fprintf(out, "%c %s", ks.kernel, thread_state_name(ks.kernel));
    if (lt->waiting)
        fputs(", in a blocking call", out);
    double share = cpu_share(tp, lt->tid, ks.cpu_ns, mono);
    if (share >= 0)
        fprintf(out, ", cpu %.0f%%", share);
}

static void print_view(FILE *out, struct top *tp, const struct profile *p, const struct live_snapshot *s)
{
    uint64_t total_calls = 0;
    double total_rate = 0;
    int have_rate = 1;
    for (uint32_t i = 0; i < p->nthreads; i++) {
        uint64_t c = thread_calls(&p->threads[i]);
        double r = rate_of(tp, &p->threads[i], c, s->mono_ns);
        total_calls += c;
        if (r < 0)
            have_rate = 0;
        else
            total_rate += r;
    }
    char rb[32], db[UNITS_BUF];
    fprintf(out, "hookit top: pid %d  ", (int)p->process.pid);
    names_print_safe(out, p->process.exe, strlen(p->process.exe));
    fprintf(out, "  up %s  threads %u  calls %llu  calls/s %s  view %s\n",
            units_ns(p->process.duration_ns, db), p->nthreads, (unsigned long long)total_calls,
            rate_text(have_rate ? total_rate : -1, rb, sizeof rb), view_names[tp->view]);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        if (tp->thread >= 0 && (uint32_t)tp->thread != i)
            continue;
        const struct prof_thread *th = &p->threads[i];
        const struct live_thread *lt = &s->threads[i];
        uint64_t calls = thread_calls(th);
        uint64_t incl = 0;
        for (uint32_t k = 0; k < th->nnodes; k++)
            if (th->nodes[k].parent == PROF_NONE)
                incl += th->nodes[k].incl_ns;
        fprintf(out, "\n== thread %u (", th->index);
        names_print_safe(out, th->name, strlen(th->name));
        fprintf(out, ") tid %d  ", th->tid);
        print_state(out, tp, lt, s->mono_ns);
        fprintf(out, "  calls %llu  calls/s %s  time %s  contexts %u\n", (unsigned long long)calls,
                rate_text(rate_of(tp, th, calls, s->mono_ns), rb, sizeof rb), units_ns(incl, db), th->nnodes);
        if (tp->view == VIEW_ALL || tp->view == VIEW_STACK)
            print_stack(out, p, th, lt, tp->rows);
        if (tp->view == VIEW_ALL || tp->view == VIEW_FUNCS)
            print_funcs(out, p, th, tp->rows);
        if (tp->view == VIEW_ALL || tp->view == VIEW_PATHS)
            print_paths(out, p, th, tp->rows);
    }
}

static void remember(struct top *tp, const struct profile *p, uint64_t mono)
{
    free(tp->prev_tid);
    free(tp->prev_calls);
    free(tp->prev_cpu);
    tp->prev_tid = calloc(p->nthreads + 1, sizeof *tp->prev_tid);
    tp->prev_calls = calloc(p->nthreads + 1, sizeof *tp->prev_calls);
    tp->prev_cpu = calloc(p->nthreads + 1, sizeof *tp->prev_cpu);
    tp->nprev = tp->prev_tid && tp->prev_calls && tp->prev_cpu ? p->nthreads : 0;
    for (uint32_t i = 0; i < tp->nprev; i++) {
        struct thread_state ks;
        tp->prev_tid[i] = p->threads[i].tid;
        tp->prev_calls[i] = thread_calls(&p->threads[i]);
        thread_state_read(tp->pid, p->threads[i].tid, &ks);
        tp->prev_cpu[i] = ks.cpu_ns;
    }
    tp->prev_mono = mono;
}

/* The terminal's columns and lines (0: not a terminal, no limit);
 * $COLUMNS and $LINES stand in when the size cannot be read. */
static void terminal_size(int *cols, int *lines)
{
    struct winsize ws;
    *cols = *lines = 0;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col) {
        *cols = ws.ws_col;
        *lines = ws.ws_row;
        return;
    }
    const char *c = getenv("COLUMNS"), *l = getenv("LINES");
    *cols = c ? atoi(c) : 0;
    *lines = l ? atoi(l) : 0;
}

/* Columns a UTF-8 string takes: one per character (no wide characters in
 * the view but what names hold). */
static size_t columns_of(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

/* The byte offset after the first `cols` characters of s[0 .. n). */
static size_t bytes_for(const char *s, size_t n, size_t cols)
{
    size_t i = 0, c = 0;
    for (; i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && c++ == cols)
            break;
    }
    return i;
}

/* One line, elided in the middle to cols characters ("..." in the
 * middle): a call path keeps its root and its innermost functions. */
static void put_fitted_line(FILE *out, const char *s, size_t n, int cols)
{
    size_t width = columns_of(s, n);
    if (cols <= 8 || width <= (size_t)cols) {
        fwrite(s, 1, n, out);
        return;
    }
    size_t keep = (size_t)cols - 3, head = keep / 2, tail = keep - head;
    size_t head_bytes = bytes_for(s, n, head);
    size_t tail_start = bytes_for(s, n, width - tail);
    fwrite(s, 1, head_bytes, out);
    fputs("...", out);
    fwrite(s + tail_start, 1, n - tail_start, out);
}

/* The view, each line fitted to cols, at most max_lines lines (0: all);
 * the header (the first line) is always there, and a last line says what
 * did not fit. */
static void print_fitted(FILE *out, const char *text, int cols, int max_lines)
{
    int shown = 0, left = 0;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (max_lines && shown >= max_lines - 1) {
            left++;
        } else {
            put_fitted_line(out, s, n, cols);
            fputc('\n', out);
            shown++;
        }
        s += n + (nl != NULL);
    }
    if (left)
        fprintf(out, "... %d more line%s (a smaller --rows, or v for one view, t for one thread)\n", left,
                left == 1 ? "" : "s");
}

/* One snapshot; with show, printed.  EXIT_OK or EXIT_FAIL. */
static int refresh(struct top *tp, int show, int clear)
{
    struct live_snapshot s;
    struct profile *p = live_cli_profile(tp->live, LIVE_THREAD, "snapshot", tp->a2n, &s);
    if (!p)
        return EXIT_FAIL;
    if (tp->thread >= (int)p->nthreads)
        tp->thread = p->nthreads ? 0 : -1;      /* t past the last thread wraps */
    if (show) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (!mem) {
            live_snapshot_free(&s);
            profile_free(p);
            return cli_fail("out of memory");
        }
        names_use_profile(p);
        print_view(mem, tp, p, &s);
        names_use_profile(NULL);
        fclose(mem);
        if (clear)
            fputs("\033[H\033[2J", stdout);
        int cols = 0, lines = 0;
        terminal_size(&cols, &lines);
        /* the key line below, and one line to spare */
        print_fitted(stdout, text, cols, clear && lines > 4 ? lines - 3 : 0);
        free(text);
        if (clear)
            printf("\n[t/T] thread  [a] all threads  [v] view  [q] quit\n");
        fflush(stdout);
    }
    remember(tp, p, s.mono_ns);
    live_snapshot_free(&s);
    profile_free(p);
    return EXIT_OK;
}

/* The program ended: when, and what it wrote (its profile is renamed
 * into place before it exits; a moment is allowed for a slow disk). */
static void say_ended(const struct top *tp)
{
    char when[32], name[NAME_MAX + 1] = "";
    time_t now = time(NULL);
    strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
    int found = 0;
    for (int i = 0; i < 20 && !(found = live_cli_written(tp->outdir, tp->pid, name, sizeof name)); i++)
        usleep(50000);
    printf("process %d ended at %s", (int)tp->pid, when);
    if (found)
        printf("; it wrote %s/%s (hookit report %s/%s)\n", tp->outdir, name, tp->outdir, name);
    else if (tp->outdir[0])
        printf("; no profile of it in %s (killed, or HOOKIT_OUTPUT unusable?)\n", tp->outdir);
    else
        printf("\n");
}

/* The process ended: gone, or a zombie its parent has not reaped yet
 * (its registry entry still matches then). */
static int ended(const struct top *tp)
{
    struct thread_state ks;
    if (!live_alive(tp->live))
        return 1;
    return thread_state_read(tp->pid, tp->pid, &ks) != 0 || ks.kernel == 'Z' || ks.kernel == 'X';
}

static struct termios saved_tty;
static int tty_raw;

static void restore_tty(void)
{
    if (tty_raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    tty_raw = 0;
}

static void on_signal(int sig)
{
    restore_tty();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void raw_tty(void)
{
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty) != 0)
        return;
    struct termios t = saved_tty;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0) {
        tty_raw = 1;
        atexit(restore_tty);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
    }
}

/* Keys read until the interval ends; 1 when q was pressed. */
static int wait_keys(struct top *tp, int ms, int *redraw)
{
    struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
    *redraw = 0;
    if (poll(&pfd, 1, ms) <= 0 || !(pfd.revents & POLLIN))
        return 0;
    char c;
    if (read(STDIN_FILENO, &c, 1) != 1)
        return 1;               /* end of input: quit */
    switch (c) {
    case 'q': case 'Q':
        return 1;
    case 't': case '\t':
        tp->thread++;
        break;
    case 'T':
        tp->thread = tp->thread < 0 ? 0 : tp->thread - 1;
        break;
    case 'a':
        tp->thread = -1;
        break;
    case 'v':
        tp->view = (tp->view + 1) % NVIEWS;
        break;
    default:
        return 0;
    }
    *redraw = 1;
    return 0;
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {
        { "interval", required_argument, NULL, 'i' },
        { "once", no_argument, NULL, '1' },
        { "rows", required_argument, NULL, 'n' },
        { "demangle", required_argument, NULL, 'D' },
        { "help", no_argument, NULL, 'h' },
        { "consistency", required_argument, NULL, 'c' },
        { "iterations", required_argument, NULL, 'N' },
        { "readers", no_argument, NULL, 'R' },
        LIVE_SET_OPTIONS,
        { 0, 0, 0, 0 },
    };
    int interval_ms = 1000, once = 0, iterations = 0, readers = 0, opt;
    struct top tp = { .rows = 10, .thread = -1, .view = VIEW_ALL };
    struct top_set_opts set = { .sel = { SET_NONE, NULL }, .consistency = LIVE_THREAD };
    cli_reset_getopt();
    while ((opt = getopt_long(argc, argv, ":i:1n:N:hc:P:F:J:AR", opts, NULL)) != -1) {
        switch (opt) {
        case 'i':
            if ((interval_ms = live_cli_ms(optarg)) < 0)
                return cli_usage_error("top", "--interval needs a number of seconds, not '%s'", optarg);
            break;
        case '1':
            once = 1;
            break;
        case 'n':
            tp.rows = atoi(optarg);
            if (tp.rows <= 0)
                return cli_usage_error("top", "--rows needs a positive number, not '%s'", optarg);
            break;
        case 'N':
            iterations = atoi(optarg);
            if (iterations <= 0)
                return cli_usage_error("top", "--iterations needs a positive number, not '%s'", optarg);
            break;
        case 'R':
            readers = 1;
            break;
        case 'D':
            if (names_parse_demangle(optarg) != 0)
                return cli_usage_error("top", "--demangle is full, simple or no, not '%s'", optarg);
            break;
        case 'h':
            fputs(top_usage, stdout);
            return EXIT_OK;
        case 'c':
            if (!strcmp(optarg, "thread"))
                set.consistency = LIVE_THREAD;
            else if (!strcmp(optarg, "process"))
                set.consistency = LIVE_PROCESS;
            else if (!strcmp(optarg, "job"))
                set.consistency = LIVE_JOB;
            else
                return cli_usage_error("top", "--consistency must be thread, process or job, not '%s'",
                                       optarg);
            break;
        default: {
            int taken = live_set_option(&set.sel, opt, optarg ? optarg : "", "top");
            if (taken < 0)
                return EXIT_USAGE;
            if (!taken)
                return cli_option_error("top", opt, argv);
        }
        }
    }
    if (set.sel.kind != SET_NONE) {
        if (optind != argc)
            return cli_usage_error("top", "a PID or a set of processes, not both");
        set.interval_ms = interval_ms;
        set.once = once;
        set.iterations = iterations;
        set.rows = tp.rows;
        set.clear = !once && !iterations && isatty(STDOUT_FILENO);
        return readers ? live_readers_top(&set) : top_set(&set);
    }
    if (readers)
        return cli_usage_error("top", "--readers reads a set: --job, --all, --pids or --family");
    if (set.consistency != LIVE_THREAD)
        return cli_usage_error("top",
                               "--consistency is for several processes (one is read thread by thread)");
    if (optind != argc - 1)
        return cli_usage_error("top", optind >= argc ? "missing PID" : "one PID only");
    pid_t pid = live_cli_pid("top", argv[optind]);
    if (pid < 0)
        return EXIT_USAGE;
    if (!(tp.live = live_cli_attach(pid, 0)))
        return EXIT_FAIL;
    tp.a2n = a2n_open(pid);
    tp.pid = pid;
    live_cli_outdir(pid, tp.outdir, sizeof tp.outdir);
    int rc = refresh(&tp, 0, 0);
    if (rc == EXIT_OK && once) {
        struct timespec ts = { interval_ms / 1000, (long)(interval_ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
        rc = refresh(&tp, 1, 0);
    } else if (rc == EXIT_OK) {
        if (!iterations)
            raw_tty();
        int interactive = tty_raw, clear = !iterations && isatty(STDOUT_FILENO);
        rc = refresh(&tp, 1, clear);
        for (int quit = 0, shown = 1; rc == EXIT_OK && !quit && (!iterations || shown < iterations);
             shown++) {
            int redraw = 0;
            if (interactive)
                quit = wait_keys(&tp, interval_ms, &redraw);
            else
                usleep((useconds_t)interval_ms * 1000);
            if (quit)
                break;
            if (ended(&tp)) {
                restore_tty();
                say_ended(&tp);
                break;
            }
            rc = refresh(&tp, 1, clear);
            if (rc != EXIT_OK && ended(&tp)) { /* it ended while being read */
                restore_tty();
                say_ended(&tp);
                rc = EXIT_OK;
            }
        }
        restore_tty();
    }
    a2n_close(tp.a2n);
    live_detach(tp.live);
    free(tp.prev_tid);
    free(tp.prev_calls);
    free(tp.prev_cpu);
    return rc;
}
