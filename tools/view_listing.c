/*
 * hookit report on a .trace: the call flow as an indented, timed listing
 * (JPROF's CALLTRACE, uftrace replay), one thread after the other, or with
 * --interleave all threads merged in time order:
 *
 *       TIME(ms)   DURATION     TID  FUNCTION
 *       0.000450                4242  F:app.main() {
 *       0.000461     1.20us     4242    F:app.leaf();
 *       0.000470    12.50us     4242  } F:app.main()
 *
 * TIME is the entry (or, on a closing line, the exit) time in ms since the
 * process started.  A call that calls nothing traced is one line ending in
 * ';' with its duration; other calls open with '{' and close with '}' and
 * the duration.  --depth N hides calls nested deeper than N levels.
 */
#include "tools/cli.h"
#include "tools/find_fn.h"
#include "tools/names.h"
#include "tools/report.h"
#include "tools/units.h"
#include "profile/trace.h"

#include <stdlib.h>
#include <string.h>

#define MAX_INDENT 64

enum line_kind { LINE_OPEN, LINE_CLOSE, LINE_LEAF };

struct line {
    enum line_kind kind;
    uint64_t ns;                /* entry time (exit time for LINE_CLOSE) */
    uint64_t dur;               /* LINE_CLOSE, LINE_LEAF */
    uint32_t depth, func;
};

/* One thread's events turned into lines, with one event of lookahead. */
struct stream {
    const struct trace *tr;
    const struct trace_thread *th;
    struct trace_cursor c;
    struct trace_event ev;
    int have;
    uint64_t *start;            /* entry time per open depth */
    uint32_t cap;
    uint32_t max_depth;         /* --depth, 0 = all */
    struct line next;           /* the line to print next */
    int has_next;
};

static int grow(struct stream *s, uint32_t depth)
{
    if (depth < s->cap)
        return 0;
    uint32_t cap = s->cap ? s->cap * 2 : 256;
    while (cap <= depth)
        cap *= 2;
    uint64_t *p = realloc(s->start, (size_t)cap * sizeof *p);
    if (!p)
        return -1;
    s->start = p;
    s->cap = cap;
    return 0;
}

/* Fill s->next with the next line to show; s->has_next = 0 at the end. */
static void advance(struct stream *s)
{
    s->has_next = 0;
    while (s->have) {
        struct trace_event ev = s->ev;
        if (grow(s, ev.depth) != 0) {
            s->have = 0;
            return;
        }
        s->have = trace_next(&s->c, &s->ev);
        int shown = !s->max_depth || ev.depth < s->max_depth;
        if (ev.kind == TRACE_ENTER) {
            s->start[ev.depth] = ev.ns;
            if (s->have && s->ev.kind == TRACE_EXIT && s->ev.depth == ev.depth) {
                /* a call that calls nothing traced: one line */
                s->next = (struct line){ LINE_LEAF, ev.ns, s->ev.ns - ev.ns, ev.depth, ev.func };
                s->have = trace_next(&s->c, &s->ev);
            } else {
                s->next = (struct line){ LINE_OPEN, ev.ns, 0, ev.depth, ev.func };
            }
        } else {
            s->next = (struct line){ LINE_CLOSE, ev.ns, ev.ns - s->start[ev.depth], ev.depth,
                                     ev.func };
        }
        if (shown) {
            s->has_next = 1;
            return;
        }
    }
}

static int stream_open(struct stream *s, const struct trace *tr, const struct trace_thread *th,
                       const struct report_opts *o)
{
    memset(s, 0, sizeof *s);
    s->tr = tr;
    s->th = th;
    s->max_depth = o->depth;
    if (trace_cursor_init(&s->c, tr, th) != 0)
        return -1;
    s->have = trace_next(&s->c, &s->ev);
    advance(s);
    return 0;
}

static void stream_close(struct stream *s)
{
    trace_cursor_free(&s->c);
    free(s->start);
}

static void print_line(FILE *out, const struct stream *s, const struct report_opts *o)
{
    const struct line *l = &s->next;
    char dur[UNITS_BUF];
    fprintf(out, "%8llu.%06llu %10s %7d  ", (unsigned long long)(l->ns / 1000000),
            (unsigned long long)(l->ns % 1000000),
            l->kind == LINE_OPEN ? "" : units_ns(l->dur, dur), s->th->tid);
    uint32_t n = l->depth < MAX_INDENT ? l->depth : MAX_INDENT;
    for (uint32_t i = 0; i < n; i++)
        fputs("  ", out);
    if (l->kind == LINE_CLOSE)
        fputs("} ", out);
    names_print_jprof(out, &s->tr->meta->funcs[l->func]);
    fputs(l->kind == LINE_OPEN ? " {\n" : l->kind == LINE_LEAF ? ";\n" : "\n", out);
    (void)o;
}

static void columns(FILE *out)
{
    fprintf(out, "%15s %10s %7s  %s\n", "TIME(ms)", "DURATION", "TID", "FUNCTION");
}

static void losses(FILE *out, const struct trace_thread *th, const struct report_opts *o)
{
    if (th->short_dropped || th->lost || (th->flags & TR_FLAG_SIZE_CAP))
        fprintf(out, "%s(tid %d: %llu calls below the threshold not recorded, %llu events "
                "lost%s)%s\n", style_dim(o), th->tid, (unsigned long long)th->short_dropped,
                (unsigned long long)th->lost,
                (th->flags & TR_FLAG_SIZE_CAP) ? ", size cap reached" : "", style_reset(o));
}

static int list_thread(FILE *out, const struct trace *tr, const struct trace_thread *th,
                       const struct report_opts *o)
{
    struct stream s;
    if (stream_open(&s, tr, th, o) != 0)
        return cli_fail("out of memory");
    const struct prof_process *pr = &tr->meta->process;
    fprintf(out, "%s== pid %d  tid %d  thread %u", style_bold(o), pr->pid, th->tid, th->index);
    if (th->name && *th->name) {
        fputs(" (", out);
        names_print_safe(out, th->name, strlen(th->name));
        fputc(')', out);
    }
    fprintf(out, "  call flow%s\n", style_reset(o));
    columns(out);
    for (; s.has_next; advance(&s))
        print_line(out, &s, o);
    stream_close(&s);
    losses(out, th, o);
    return 0;
}

/* --interleave: every thread's lines merged by time (ties: thread order). */
static int list_interleaved(FILE *out, const struct trace *tr, const struct report_opts *o,
                            int *threads_shown)
{
    struct stream *s = calloc(tr->nthreads + 1, sizeof *s);
    uint32_t n = 0;
    int rc = s ? 0 : -1;
    for (uint32_t k = 0; rc == 0 && k < tr->nthreads; k++) {
        if (o->has_tid
            && !find_thread_matches(tr->threads[k].tid, tr->threads[k].name, o->tid, o->thread_name))
            continue;
        rc = stream_open(&s[n], tr, &tr->threads[k], o);
        if (rc == 0)
            n++;
    }
    if (rc == 0 && n > 0) {
        const struct prof_process *pr = &tr->meta->process;
        if ((*threads_shown)++)
            fputc('\n', out);
        fprintf(out, "%s== pid %d  %u thread%s  call flow in time order%s\n", style_bold(o),
                pr->pid, n, n == 1 ? "" : "s", style_reset(o));
        columns(out);
        for (;;) {
            struct stream *best = NULL;
            for (uint32_t i = 0; i < n; i++)
                if (s[i].has_next && (!best || s[i].next.ns < best->next.ns))
                    best = &s[i];
            if (!best)
                break;
            print_line(out, best, o);
            advance(best);
        }
        for (uint32_t i = 0; i < n; i++)
            losses(out, s[i].th, o);
    }
    for (uint32_t i = 0; i < n; i++)
        stream_close(&s[i]);
    free(s);
    return rc ? cli_fail("out of memory") : 0;
}

int view_listing(FILE *out, const char *path, const struct report_opts *o, int *threads_shown)
{
    char err[1024];
    struct trace *tr = trace_read_file(path, err, sizeof err);
    if (!tr)
        return cli_fail("%s", err);
    names_use_profile(tr->meta); /* --demangle, as the other views */
    int rc = 0;
    if (o->interleave) {
        rc = list_interleaved(out, tr, o, threads_shown);
    } else {
        for (uint32_t k = 0; k < tr->nthreads && rc == 0; k++) {
            const struct trace_thread *th = &tr->threads[k];
            if (o->has_tid && !find_thread_matches(th->tid, th->name, o->tid, o->thread_name))
                continue;
            if ((*threads_shown)++)
                fputc('\n', out);
            rc = list_thread(out, tr, th, o);
        }
    }
    names_use_profile(NULL);
    trace_free(tr);
    return rc;
}
