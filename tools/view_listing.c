/*
 * hookit report on a .trace: the call flow as an indented, timed listing
 * (JPROF's CALLTRACE, uftrace replay), one thread after the other:
 *
 *       TIME   DURATION  FUNCTION
 *   0.000450             F:app.main() {
 *   0.000461    1.20us     F:app.leaf();
 *   0.000470             } F:app.main()  12.50us
 *
 * TIME is the entry (or exit) time in ms since the process started.  A call
 * that calls nothing traced is one line ending in ';' with its duration;
 * other calls open with '{' and close with '}' and the duration.  --depth N
 * hides calls nested deeper than N levels.
 */
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/report.h"
#include "tools/units.h"
#include "profile/trace.h"

#include <stdlib.h>
#include <string.h>

#define MAX_INDENT 64

static void time_col(FILE *out, uint64_t ns)
{
    fprintf(out, "%8llu.%06llu", (unsigned long long)(ns / 1000000),
            (unsigned long long)(ns % 1000000));
}

static void indent(FILE *out, uint32_t depth)
{
    uint32_t n = depth < MAX_INDENT ? depth : MAX_INDENT;
    for (uint32_t i = 0; i < n; i++)
        fputs("  ", out);
}

static int list_thread(FILE *out, const struct trace *tr, const struct trace_thread *th,
                       const struct report_opts *o)
{
    struct trace_cursor c;
    if (trace_cursor_init(&c, tr, th) != 0)
        return cli_fail("out of memory");
    const struct prof_process *pr = &tr->meta->process;
    fprintf(out, "%s== pid %d  tid %d  thread %u", style_bold(o), pr->pid, th->tid, th->index);
    if (th->name && *th->name) {
        fputs(" (", out);
        names_print_safe(out, th->name, strlen(th->name));
        fputc(')', out);
    }
    fprintf(out, "  call flow%s\n", style_reset(o));
    fprintf(out, "%15s %10s  %s\n", "TIME(ms)", "DURATION", "FUNCTION");
    struct trace_event ev, next;
    int have = trace_next(&c, &ev);
    uint64_t *start = NULL;
    uint32_t cap = 0;
    while (have) {
        if (ev.depth >= cap) {
            uint32_t ncap = cap ? cap * 2 : 256;
            uint64_t *s = realloc(start, (size_t)ncap * sizeof *s);
            if (!s)
                break;
            start = s;
            cap = ncap;
        }
        if (ev.kind == TRACE_ENTER)
            start[ev.depth] = ev.ns;
        int have_next = trace_next(&c, &next);
        int shown = !o->depth || ev.depth < o->depth;
        char dur[UNITS_BUF];
        const struct prof_func *f = &tr->meta->funcs[ev.func];
        if (ev.kind == TRACE_ENTER && have_next && next.kind == TRACE_EXIT &&
            next.depth == ev.depth) {
            /* a call that calls nothing traced: one line */
            if (shown) {
                time_col(out, ev.ns);
                fprintf(out, " %10s  ", units_ns(next.ns - ev.ns, dur));
                indent(out, ev.depth);
                names_print_jprof(out, f);
                fputs(";\n", out);
            }
            have = trace_next(&c, &ev);
            continue;
        }
        if (shown && ev.kind == TRACE_ENTER) {
            time_col(out, ev.ns);
            fprintf(out, " %10s  ", "");
            indent(out, ev.depth);
            names_print_jprof(out, f);
            fputs(" {\n", out);
        } else if (shown) {
            time_col(out, ev.ns);
            fprintf(out, " %10s  ", units_ns(ev.ns - start[ev.depth], dur));
            indent(out, ev.depth);
            fputs("} ", out);
            names_print_jprof(out, f);
            fputc('\n', out);
        }
        ev = next;
        have = have_next;
    }
    trace_cursor_free(&c);
    free(start);
    if (th->short_dropped || th->lost || (th->flags & TR_FLAG_SIZE_CAP))
        fprintf(out, "%s(%llu calls below the threshold not recorded, %llu events lost%s)%s\n",
                style_dim(o), (unsigned long long)th->short_dropped,
                (unsigned long long)th->lost,
                (th->flags & TR_FLAG_SIZE_CAP) ? ", size cap reached" : "", style_reset(o));
    return 0;
}

int view_listing(FILE *out, const char *path, const struct report_opts *o, int *threads_shown)
{
    char err[1024];
    struct trace *tr = trace_read_file(path, err, sizeof err);
    if (!tr)
        return cli_fail("%s", err);
    int rc = 0;
    for (uint32_t k = 0; k < tr->nthreads && rc == 0; k++) {
        const struct trace_thread *th = &tr->threads[k];
        if (o->has_tid && th->tid != o->tid)
            continue;
        if ((*threads_shown)++)
            fputc('\n', out);
        rc = list_thread(out, tr, th, o);
    }
    trace_free(tr);
    return rc;
}
