/*
 * hookit export --format=chrome: the Chrome trace event format (JSON
 * object form) for Perfetto (ui.perfetto.dev) and chrome://tracing, from
 * call-flow traces (.trace files written by libhktrace.so).
 *
 * Every call is one complete event ("ph":"X") with its start and duration
 * in microseconds (fractional: ns precision); process_name and thread_name
 * metadata events ("ph":"M") name the rows.  Several traces (a fork family)
 * share one timeline: each is placed by its process start time.
 *
 * A timeline grows with every call (a 0.5 s run can make 600 MB, and
 * chrome://tracing stops near 256 MB), so: --min-time, --depth, --thread
 * and --from/--to leave calls out as they are read; the size is estimated
 * first (the number of calls times the mean length of an event) with a
 * warning above 200 MB; and an export that takes over a second shows its
 * progress on a terminal.
 */
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/find_fn.h"
#include "tools/json.h"
#include "tools/names.h"
#include "profile/trace.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WARN_BYTES (200ull << 20)

struct chrome {
    FILE *out;
    int first;            /* no event written yet */
    uint64_t done, total; /* records read, of all */
    struct timespec t0;
    int progress; /* progress shown on stderr */
    int tty;
};

static double elapsed_s(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void show_progress(struct chrome *c)
{
    if (!c->tty || elapsed_s(&c->t0) < 1.0)
        return;
    fprintf(stderr, "\rhookit: export: %3.0f%% of %llu calls",
            c->total ? 100.0 * (double)c->done / (double)c->total : 100.0,
            (unsigned long long)(c->total / 2));
    c->progress = 1;
}

/* Whether the call [start, end] of the given depth passes the filters. */
static int keep_call(uint64_t start, uint64_t end, uint32_t depth)
{
    const struct export_options *o = &export_options;
    if (end - start < o->min_time_ns)
        return 0;
    if (o->max_depth && depth >= o->max_depth)
        return 0;
    if (end < o->from_ns || (o->to_ns && start > o->to_ns))
        return 0;
    return 1;
}

static void sep(struct chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->out);
    c->first = 0;
}

static void put_str(FILE *out, const char *s)
{
    s = s ? s : "";
    json_write_string(out, s, strlen(s));
}

/* ns as microseconds with three decimals, exactly (no floating point). */
static void put_us(FILE *out, uint64_t ns)
{
    fprintf(out, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static void meta_event(struct chrome *c, const char *what, int pid, int tid, const char *name)
{
    sep(c);
    fprintf(c->out, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", what, pid,
            tid);
    put_str(c->out, name);
    fputs("}}", c->out);
}

static void write_event(FILE *out, const struct prof_func *f, uint64_t ts_ns, uint64_t dur_ns, int pid,
                        int tid)
{
    fputs("{\"name\":", out);
    put_str(out, f->name);
    fputs(",\"cat\":\"function\",\"ph\":\"X\",\"ts\":", out);
    put_us(out, ts_ns);
    fputs(",\"dur\":", out);
    put_us(out, dur_ns);
    fprintf(out, ",\"pid\":%d,\"tid\":%d,\"args\":{\"module\":", pid, tid);
    put_str(out, f->module);
    if (f->file) {
        fputs(",\"file\":", out);
        put_str(out, f->file);
        fprintf(out, ",\"line\":%u", f->line);
    }
    fputs("}}", out);
}

/* ---- the size to expect ----------------------------------------------------
 * Each call is one event written by write_event: its mean length over the
 * trace's functions (their name, module and file), at the middle of the
 * run and 1 us long, times the calls.  Measured by writing those events to
 * a stream that only counts, so the estimate follows the format. */
static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
    (void)buf;
    *(uint64_t *)cookie += size;
    return (ssize_t)size;
}

static uint64_t mean_event_bytes(const struct trace *tr, int tid)
{
    uint64_t bytes = 0;
    FILE *counter = fopencookie(&bytes, "w", (cookie_io_functions_t){ .write = count_write });
    if (!counter)
        return 150;
    const struct prof_process *pr = &tr->meta->process;
    for (uint32_t f = 0; f < tr->meta->nfuncs; f++) {
        write_event(counter, &tr->meta->funcs[f], pr->duration_ns / 2, 1000, pr->pid, tid);
        fputs(",\n", counter);
    }
    fclose(counter);
    return tr->meta->nfuncs ? bytes / tr->meta->nfuncs : 150;
}

static int write_thread(struct chrome *c, const struct trace *tr, const struct trace_thread *th, int pid,
                        uint64_t offset_ns)
{
    struct trace_cursor cur;
    uint64_t *start = NULL;
    uint32_t cap = 0;
    if (trace_cursor_init(&cur, tr, th) != 0)
        return -1;
    char tname[64];
    snprintf(tname, sizeof tname, "%s (%u)", th->name && *th->name ? th->name : "thread", th->index);
    meta_event(c, "thread_name", pid, th->tid, tname);
    sep(c);
    fprintf(c->out,
            "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
            "\"args\":{\"sort_index\":%u}}",
            pid, th->tid, th->index);
    struct trace_event ev;
    int rc = 0;
    while (trace_next(&cur, &ev)) {
        if ((++c->done & 0xffff) == 0)
            show_progress(c);
        if (ev.depth >= cap) {
            cap = cap ? cap * 2 : 256;
            uint64_t *s = realloc(start, (size_t)cap * sizeof *s);
            if (!s) {
                rc = -1;
                break;
            }
            start = s;
        }
        if (ev.kind == TRACE_ENTER) {
            start[ev.depth] = ev.ns;
            continue;
        }
        if (!keep_call(start[ev.depth], ev.ns, ev.depth))
            continue;
        sep(c);
        write_event(c->out, &tr->meta->funcs[ev.func], offset_ns + start[ev.depth], ev.ns - start[ev.depth],
                    pid, th->tid);
    }
    trace_cursor_free(&cur);
    free(start);
    return rc;
}

int export_chrome(FILE *out, struct loaded_profile *profiles, size_t n)
{
    struct trace **trs = calloc(n ? n : 1, sizeof *trs);
    if (!trs)
        return cli_fail("out of memory"), -1;
    int rc = 0;
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *src = profile_get_meta(profiles[i].prof, "source");
        if (!src || strcmp(src, "trace") != 0) {
            cli_fail("%s: the chrome format needs a call-flow trace (.trace, recorded with "
                     "HOOKIT_PROFILER=libhktrace.so); this is a profile without a timeline",
                     profiles[i].path);
            rc = -1;
            break;
        }
        char err[1024];
        if (!(trs[i] = trace_read_file(profiles[i].path, err, sizeof err))) {
            cli_fail("%s", err);
            rc = -1;
            break;
        }
        /* read anew, so named as the other formats name them */
        if (names_read_static_initializers(trs[i]->meta) < 0) {
            cli_fail("out of memory");
            rc = -1;
            break;
        }
        if (trs[i]->meta->process.start_ns < t0)
            t0 = trs[i]->meta->process.start_ns;
    }
    struct chrome c = { out, 1, 0, 0, { 0, 0 }, 0, isatty(2) };
    clock_gettime(CLOCK_MONOTONIC, &c.t0);
    uint64_t est = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct trace *tr = trs[i];
        uint64_t per_call = mean_event_bytes(tr, tr->meta->process.pid);
        for (uint32_t k = 0; k < tr->nthreads; k++)
            if (!export_options.has_tid
                || find_thread_matches(tr->threads[k].tid, tr->threads[k].name, export_options.tid,
                                       export_options.thread_name)) {
                c.total += tr->threads[k].nrecords;
                est += tr->threads[k].nrecords / 2 * per_call;
            }
    }
    int filtered = export_options.min_time_ns || export_options.max_depth || export_options.from_ns
        || export_options.to_ns;
    if (rc == 0 && est > WARN_BYTES)
        fprintf(stderr,
                "hookit: export: warning: the timeline will be about %llu MB (%llu calls%s);"
                " chrome://tracing stops near 256 MB: narrow it with --min-time, --depth, "
                "--thread or --from/--to\n",
                (unsigned long long)(est >> 20), (unsigned long long)(c.total / 2),
                filtered ? ", before the filters" : "");
    if (rc == 0) {
        fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"creator\":\"hookit " HOOKIT_VERSION
              "\"},\"traceEvents\":[",
              out);
        for (size_t i = 0; i < n && rc == 0; i++) {
            const struct trace *tr = trs[i];
            const struct prof_process *pr = &tr->meta->process;
            const char *exe = pr->exe ? strrchr(pr->exe, '/') : NULL;
            char pname[300];
            snprintf(pname, sizeof pname, "%s (pid %d)", exe ? exe + 1 : (pr->exe ? pr->exe : "?"), pr->pid);
            meta_event(&c, "process_name", pr->pid, pr->pid, pname);
            for (uint32_t k = 0; k < tr->nthreads && rc == 0; k++)
                if (!export_options.has_tid
                    || find_thread_matches(tr->threads[k].tid, tr->threads[k].name, export_options.tid,
                                           export_options.thread_name))
                    rc = write_thread(&c, tr, &tr->threads[k], pr->pid, pr->start_ns - t0);
        }
        fputs("\n]}\n", out);
        if (c.progress)
            fprintf(stderr, "\rhookit: export: 100%% of %llu calls in %.1f s\n",
                    (unsigned long long)(c.total / 2), elapsed_s(&c.t0));
        if (rc)
            cli_fail("out of memory");
    }
    for (size_t i = 0; i < n; i++)
        trace_free(trs[i]);
    free(trs);
    return rc;
}
