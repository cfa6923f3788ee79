/*
 * hookit io: the I/O of one or more runs, from libjprof profiles (the
 * per-file table, interval series and per-context numbers libjprof stores)
 * or libioprof event logs (complete, or still being written: counted here
 * from the events, the same way libjprof counts).  The per-file table,
 * sortable; the calling contexts (profiles) or functions (logs) with the
 * most I/O; and --plot, an SVG chart of bytes read and written per interval.
 */
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/report_io.h"
#include "tools/units.h"
#include "profile/ioplog.h"
#include "profile/iostats.h"


#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const io_usage =
    "usage: hookit io [OPTIONS] PROFILE-or-LOG...\n"
    "\n"
    "The I/O of each input: a profile written by libjprof (hookit.*.prof, I/O\n"
    "metrics are on by default) or an event log of libioprof (ioprof.*.log, or\n"
    "ioprof.*.log.part while the program still runs: what it has written so far).\n"
    "  files      one line per file (or socket): bytes, calls of each kind, time;\n"
    "             then its access pattern (sequential and consecutive accesses,\n"
    "             read/write switches, highest offsets, slowest call, first and\n"
    "             last access) and its access-size histograms\n"
    "  contexts   the calling contexts that did the most I/O (profiles), or the\n"
    "             functions (logs)\n"
    "\n"
    "Options:\n"
    "  -s, --sort KEY     bytes (default), time or calls\n"
    "  -n, --top N        at most N files and N contexts (default: all files, 10 contexts)\n"
    "  -i, --interval T   time slice for a log's series (500ms, 1s, ...; default 1s;\n"
    "                     a profile's slice is the one it was recorded with)\n"
    "  -p, --plot FILE    write an SVG chart of bytes read and written per interval\n"
    "                     (all inputs added up, each from its own start)\n"
    "  -h, --help         this help\n";

enum io_sort { BY_BYTES, BY_TIME, BY_CALLS };

/* Bytes read and written in one interval of the time series. */
struct io_point {
    size_t idx;
    uint64_t rd, wr;
};

struct io_input {
    const char *path;
    int is_log, complete;
    long pid;
    char *exe;
    struct iostats_row *files;
    size_t nfiles;
    uint64_t interval_ns;
    struct io_point *pts;       /* bytes per interval, in the order met */
    size_t npts, ptcap;
    size_t nint;                /* intervals covered: the last point's + 1 */
    uint64_t events;
    struct profile *prof;
    struct ioplog *log;
};

/* ---- series ---------------------------------------------------------------------- */
/* One point per event at most (consecutive events of one interval share
 * theirs): memory follows the log, not the time it spans, so a damaged
 * time stamp far in the future costs one point, not a table up to it. */
static int series_add(struct io_input *in, size_t idx, uint64_t r, uint64_t w)
{
    if (idx >= (1u << 24))
        idx = (1u << 24) - 1;
    if (!in->npts || in->pts[in->npts - 1].idx != idx) {
        if (in->npts == in->ptcap) {
            size_t cap = in->ptcap ? in->ptcap * 2 : 64;
            struct io_point *a = realloc(in->pts, cap * sizeof *a);
            if (!a)
                return -1;
            in->pts = a;
            in->ptcap = cap;
        }
        in->pts[in->npts++] = (struct io_point){ .idx = idx };
    }
    in->pts[in->npts - 1].rd += r;
    in->pts[in->npts - 1].wr += w;
    if (idx + 1 > in->nint)
        in->nint = idx + 1;
    return 0;
}

/* ---- profiles ---------------------------------------------------------------------- */
static int load_profile(struct io_input *in, char *err, size_t errlen)
{
    in->prof = profile_read_file(in->path, err, errlen);
    if (!in->prof)
        return -1;
    struct profile *p = in->prof;
    in->pid = p->process.pid;
    in->exe = strdup(p->process.exe ? p->process.exe : "");
    in->complete = 1;
    const char *files = profile_get_meta(p, "io_files");
    if (files && iostats_parse(files, &in->files, &in->nfiles) != 0) {
        snprintf(err, errlen, "%s: the io_files table is not readable", in->path);
        return -1;
    }
    in->interval_ns = profile_meta_u64_or(p, "io_interval_ns", 1000000000ull);
    const char *s = profile_get_meta(p, "io_series");
    while (s && *s) {
        char *end;
        unsigned long long i = strtoull(s, &end, 10), r, w;
        r = strtoull(end, &end, 10);
        w = strtoull(end, &end, 10);
        if (series_add(in, i, r, w) < 0)
            return -1;
        s = strchr(end, '\n');
        if (s)
            s++;
    }
    if (!files && !profile_get_meta(p, "io_calls")) {
        snprintf(err, errlen, "%s: no I/O numbers in this profile (was it run with JPROFOPTS=noio, "
                 "or by a profiler other than libjprof?)", in->path);
        return -1;
    }
    return 0;
}

/* ---- logs ----------------------------------------------------------------------------- */
/* The log's numbers (profile/ioplog_read.c); the functions stay in the log. */
static int load_log(struct io_input *in, uint64_t interval_ns, char *err, size_t errlen)
{
    in->is_log = 1;
    in->interval_ns = interval_ns;
    in->log = ioplog_read_file(in->path, interval_ns, err, errlen);
    if (!in->log)
        return -1;
    struct ioplog *log = in->log;
    in->pid = log->pid;
    in->exe = log->exe;
    in->complete = log->complete;
    in->events = log->events;
    in->files = log->files;
    in->nfiles = log->nfiles;
    log->exe = NULL;
    log->files = NULL;
    log->nfiles = 0;
    for (size_t i = 0; i < log->npoints; i++)
        if (series_add(in, log->points[i].idx, log->points[i].rd, log->points[i].wr) < 0) {
            snprintf(err, errlen, "%s: out of memory", in->path);
            return -1;
        }
    return 0;
}

static void free_input(struct io_input *in)
{
    iostats_free_rows(in->files, in->nfiles);
    free(in->pts);
    free(in->exe);
    ioplog_free(in->log);
    if (in->prof)
        profile_free(in->prof);
}

/* ---- the tables ---------------------------------------------------------------------------- */
static uint64_t file_calls(const struct iostats *s)
{
    return s->opens + s->reads + s->writes + s->seeks + s->syncs + s->metas + s->errors;
}

static uint64_t file_key(const struct iostats *s, enum io_sort k)
{
    switch (k) {
    case BY_TIME: return s->read_time + s->write_time + s->meta_time;
    case BY_CALLS: return file_calls(s);
    default: return s->bytes_read + s->bytes_written;
    }
}

static int file_cmp(const void *a, const void *b, void *ctx)
{
    const struct iostats_row *x = a, *y = b;
    enum io_sort k = *(enum io_sort *)ctx;
    uint64_t ka = file_key(&x->s, k), kb = file_key(&y->s, k);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return strcmp(x->path, y->path);
}

static void print_path(FILE *out, const char *p)
{
    names_print_safe(out, p, strlen(p));
}

static void print_files(FILE *out, struct io_input *in, enum io_sort sort, size_t top)
{
    if (in->nfiles > 1)         /* files is NULL for a log without files */
        qsort_r(in->files, in->nfiles, sizeof *in->files, file_cmp, &sort);
    size_t n = top && top < in->nfiles ? top : in->nfiles;
    fprintf(out, "files (%zu, by %s):\n", in->nfiles,
            sort == BY_TIME ? "time" : sort == BY_CALLS ? "calls" : "bytes");
    fprintf(out, "%14s %14s %8s %8s %8s %6s %6s %6s %10s %10s %10s  %s\n", "READ", "WRITTEN", "CALLS",
            "READS", "WRITES", "OPENS", "SEEKS", "ERRORS", "READ_TIME", "WRITE_TIME", "META_TIME",
            "PATH");
    for (size_t i = 0; i < n; i++) {
        const struct iostats *s = &in->files[i].s;
        char a[UNITS_BUF], b[UNITS_BUF], c[UNITS_BUF];
        fprintf(out, "%14" PRIu64 " %14" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %6" PRIu64
                " %6" PRIu64 " %6" PRIu64 " %10s %10s %10s  ",
                s->bytes_read, s->bytes_written, file_calls(s), s->reads, s->writes, s->opens,
                s->seeks, s->errors, units_ns(s->read_time, a), units_ns(s->write_time, b),
                units_ns(s->meta_time, c));
        print_path(out, in->files[i].path);
        fputc('\n', out);
    }
    fprintf(out, "\naccess pattern:\n%8s %8s %8s %8s %8s %12s %12s %10s %12s %10s %10s  %s\n",
            "SEQ_RD", "CONS_RD", "SEQ_WR", "CONS_WR", "SWITCHES", "MAX_RD_BYTE", "MAX_WR_BYTE",
            "SLOWEST", "SLOW_BYTES", "FIRST", "LAST", "PATH");
    for (size_t i = 0; i < n; i++) {
        const struct iostats *s = &in->files[i].s;
        char a[UNITS_BUF], b[UNITS_BUF], c[UNITS_BUF];
        fprintf(out, "%8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %12" PRId64
                " %12" PRId64 " %10s %12" PRIu64 " %10s %10s  ",
                s->seq_reads, s->consec_reads, s->seq_writes, s->consec_writes, s->rw_switches,
                s->max_byte_read, s->max_byte_written, units_ns(s->slowest_time, a),
                s->slowest_bytes, units_ns(s->first, b), units_ns(s->last, c));
        print_path(out, in->files[i].path);
        fputc('\n', out);
    }
    fputs("\naccess sizes (reads/writes per bucket):\n", out);
    for (int b = 0; b < IOSTATS_BUCKETS; b++)
        fprintf(out, " %11s", iostats_bucket_names[b]);
    fputs("  PATH\n", out);
    for (size_t i = 0; i < n; i++) {
        const struct iostats *s = &in->files[i].s;
        for (int b = 0; b < IOSTATS_BUCKETS; b++) {
            char cell[48];
            snprintf(cell, sizeof cell, "%" PRIu64 "/%" PRIu64, s->read_hist[b], s->write_hist[b]);
            fprintf(out, " %11s", cell);
        }
        fputs("  ", out);
        print_path(out, in->files[i].path);
        fputc('\n', out);
    }
}

struct ctx_row {
    uint32_t thread, node;
    uint64_t calls, rd, wr, ns;
};

static uint64_t ctx_key(const struct ctx_row *r, enum io_sort k)
{
    return k == BY_TIME ? r->ns : k == BY_CALLS ? r->calls : r->rd + r->wr;
}

static int ctx_cmp(const void *a, const void *b, void *ctx)
{
    const struct ctx_row *x = a, *y = b;
    enum io_sort k = *(enum io_sort *)ctx;
    uint64_t ka = ctx_key(x, k), kb = ctx_key(y, k);
    if (ka != kb)
        return ka > kb ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int print_contexts(FILE *out, const struct io_input *in, enum io_sort sort, size_t top)
{
    const struct profile *p = in->prof;
    size_t n = 0, cap = 0;
    struct ctx_row *rows = NULL;
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        const uint64_t *calls = rio_column(th, "io_calls"), *rd = rio_column(th, "io_bytes_read"),
                       *wr = rio_column(th, "io_bytes_written"), *ns = rio_column(th, "io_ns");
        for (uint32_t i = 0; calls && i < th->nnodes; i++) {
            if (!calls[i])
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                struct ctx_row *r = realloc(rows, cap * sizeof *r);
                if (!r) {
                    free(rows);
                    return -1;
                }
                rows = r;
            }
            rows[n++] = (struct ctx_row){ t, i, calls[i], rd ? rd[i] : 0, wr ? wr[i] : 0,
                                          ns ? ns[i] : 0 };
        }
    }
    if (n > 1)
        qsort_r(rows, n, sizeof *rows, ctx_cmp, &sort);
    size_t shown = top ? (top < n ? top : n) : (n < 10 ? n : 10);
    fprintf(out, "\ncontexts with the most I/O (%zu of %zu, by %s):\n", shown, n,
            sort == BY_TIME ? "time" : sort == BY_CALLS ? "calls" : "bytes");
    fprintf(out, "%14s %14s %8s %10s %6s  %s\n", "READ", "WRITTEN", "CALLS", "TIME", "THREAD",
            "CONTEXT");
    for (size_t i = 0; i < shown; i++) {
        char a[UNITS_BUF];
        fprintf(out, "%14" PRIu64 " %14" PRIu64 " %8" PRIu64 " %10s %6u  ", rows[i].rd, rows[i].wr,
                rows[i].calls, units_ns(rows[i].ns, a), p->threads[rows[i].thread].index);
        rio_print_path(out, p, &p->threads[rows[i].thread], rows[i].node);
        fputc('\n', out);
    }
    free(rows);
    return 0;
}

static int func_cmp(const void *a, const void *b, void *ctx)
{
    const struct ioplog_func *x = a, *y = b;
    enum io_sort k = *(enum io_sort *)ctx;
    uint64_t ka = k == BY_TIME ? x->time_ns : k == BY_CALLS ? x->calls : x->bytes;
    uint64_t kb = k == BY_TIME ? y->time_ns : k == BY_CALLS ? y->calls : y->bytes;
    if (ka != kb)
        return ka > kb ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void print_funcs(FILE *out, struct io_input *in, enum io_sort sort)
{
    struct ioplog *log = in->log;
    if (log->nfuncs > 1)
        qsort_r(log->funcs, log->nfuncs, sizeof *log->funcs, func_cmp, &sort);
    fprintf(out, "\nfunctions (%zu):\n%14s %8s %10s  %s\n", log->nfuncs, "BYTES", "CALLS", "TIME",
            "FUNCTION");
    for (size_t i = 0; i < log->nfuncs; i++) {
        char a[UNITS_BUF];
        fprintf(out, "%14" PRIu64 " %8" PRIu64 " %10s  %s\n", log->funcs[i].bytes, log->funcs[i].calls,
                units_ns(log->funcs[i].time_ns, a), log->funcs[i].name);
    }
}

/* ---- the chart ------------------------------------------------------------------------------ */
static const char *bytes_label(double v, char *buf, size_t size)
{
    static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, size, v >= 10 || i == 0 ? "%.0f %s" : "%.1f %s", v, u[i]);
    return buf;
}

/* A round step for about n ticks up to max. */
static double nice_step(double max, int n)
{
    double raw = max / n, p = pow(10, floor(log10(raw)));
    double f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

struct plot_data {
    struct io_point *pts;       /* sorted by interval, one per interval */
    size_t npts;
    size_t n;                   /* intervals on the time axis */
    uint64_t interval_ns;
    const char *title;
};

static int write_svg(FILE *out, void *ctx)
{
    const struct plot_data *d = ctx;
    const double W = 900, H = 420, L = 90, R = 20, T = 50, B = 60;
    double pw = W - L - R, ph = H - T - B;
    uint64_t max = 1;
    for (size_t i = 0; i < d->npts; i++) {
        if (d->pts[i].rd > max)
            max = d->pts[i].rd;
        if (d->pts[i].wr > max)
            max = d->pts[i].wr;
    }
    size_t n = d->n ? d->n : 1;
    double ystep = nice_step((double)max, 5);
    double ymax = ceil((double)max / ystep) * ystep;
    double secs = (double)d->interval_ns / 1e9;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    fprintf(out, "<title>hookit io: bytes read and written per %g s</title>\n", secs);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(out, "<text id=\"title\" x=\"%.0f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">"
                 "Bytes read and written per %g s interval</text>\n", W / 2, secs);
    /* Axes, grid and labels. */
    char lab[32];
    for (double y = 0; y <= ymax + ystep / 2; y += ystep) {
        double py = T + ph - y / ymax * ph;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, py,
                L + pw, py);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", L - 6, py + 4,
                bytes_label(y, lab, sizeof lab));
    }
    double xstep = nice_step((double)n * secs, 8);
    for (double x = 0; x <= (double)n * secs + 1e-9; x += xstep) {
        double px = L + x / ((double)n * secs) * pw;
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", px,
                T + ph + 18, x);
    }
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T + ph,
            L + pw, T + ph);
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T, L,
            T + ph);
    fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time since start (s)</text>\n",
            L + pw / 2, H - 14);
    /* Bars: read and written side by side in each interval. */
    double slot = pw / (double)n, bw = slot * 0.4;
    fputs("<g id=\"read\" fill=\"#1f77b4\">\n", out);
    for (size_t k = 0; k < d->npts; k++) {
        size_t i = d->pts[k].idx;
        if (!d->pts[k].rd)
            continue;
        double h = (double)d->pts[k].rd / ymax * ph;
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>%g s: %" PRIu64
                " bytes read</title></rect>\n", L + slot * (double)i + slot * 0.1, T + ph - h, bw, h,
                (double)i * secs, d->pts[k].rd);
    }
    fputs("</g>\n<g id=\"written\" fill=\"#ff7f0e\">\n", out);
    for (size_t k = 0; k < d->npts; k++) {
        size_t i = d->pts[k].idx;
        if (!d->pts[k].wr)
            continue;
        double h = (double)d->pts[k].wr / ymax * ph;
        fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>%g s: %" PRIu64
                " bytes written</title></rect>\n", L + slot * (double)i + slot * 0.5, T + ph - h, bw,
                h, (double)i * secs, d->pts[k].wr);
    }
    fputs("</g>\n", out);
    fprintf(out, "<g id=\"legend\"><rect x=\"%.0f\" y=\"34\" width=\"12\" height=\"12\" fill=\"#1f77b4\"/>"
                 "<text x=\"%.0f\" y=\"45\">read</text>"
                 "<rect x=\"%.0f\" y=\"34\" width=\"12\" height=\"12\" fill=\"#ff7f0e\"/>"
                 "<text x=\"%.0f\" y=\"45\">written</text></g>\n",
            W - R - 150, W - R - 134, W - R - 80, W - R - 64);
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}

static int point_order(const void *a, const void *b)
{
    size_t x = ((const struct io_point *)a)->idx, y = ((const struct io_point *)b)->idx;
    return x < y ? -1 : x > y;
}

/* Every input's points, sorted by interval and summed per interval. */
static int plot(const char *path, struct io_input *ins, size_t n)
{
    struct plot_data d = { .interval_ns = ins[0].interval_ns ? ins[0].interval_ns : 1000000000ull };
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ins[i].nint > d.n)
            d.n = ins[i].nint;
        total += ins[i].npts;
    }
    d.pts = malloc((total ? total : 1) * sizeof *d.pts);
    if (!d.pts)
        return cli_fail("out of memory");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < ins[i].npts; k++)
            d.pts[d.npts++] = ins[i].pts[k];
    if (d.npts)
        qsort(d.pts, d.npts, sizeof *d.pts, point_order);
    size_t m = 0;
    for (size_t k = 0; k < d.npts; k++) {
        if (m && d.pts[m - 1].idx == d.pts[k].idx) {
            d.pts[m - 1].rd += d.pts[k].rd;
            d.pts[m - 1].wr += d.pts[k].wr;
        } else {
            d.pts[m++] = d.pts[k];
        }
    }
    d.npts = m;
    int rc = cli_write_output(path, write_svg, &d);
    free(d.pts);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------------ */
static int parse_interval(const char *v, uint64_t *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || !(x > 0))
        return -1;
    double scale = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6 :
                   (!strcmp(end, "s") || !*end) ? 1e9 : -1;
    if (scale < 0 || x * scale < 1000)
        return -1;
    *out = (uint64_t)(x * scale + 0.5);
    return 0;
}

int cmd_io(int argc, char **argv)
{
    static const struct option opts[] = {
        { "sort", required_argument, NULL, 's' },
        { "top", required_argument, NULL, 'n' },
        { "interval", required_argument, NULL, 'i' },
        { "plot", required_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { 0, 0, 0, 0 },
    };
    enum io_sort sort = BY_BYTES;
    size_t top = 0;
    uint64_t interval = 1000000000ull;
    const char *plot_path = NULL;
    int c;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":s:n:i:p:h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 's':
            if (!strcmp(optarg, "bytes"))
                sort = BY_BYTES;
            else if (!strcmp(optarg, "time"))
                sort = BY_TIME;
            else if (!strcmp(optarg, "calls"))
                sort = BY_CALLS;
            else
                return cli_usage_error("io", "--sort is bytes, time or calls, not '%s'", optarg);
            break;
        case 'n': {
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1)
                return cli_usage_error("io", "--top needs a number (1 or more), not '%s'", optarg);
            top = (size_t)v;
            break;
        }
        case 'i':
            if (parse_interval(optarg, &interval) != 0)
                return cli_usage_error("io", "--interval needs a duration such as 500ms or 2s "
                                       "(at least 1us), not '%s'", optarg);
            break;
        case 'p':
            plot_path = optarg;
            break;
        case 'h':
            fputs(io_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("io", c, argv);
        }
    }
    if (optind >= argc)
        return cli_usage_error("io", "no profile or log given");
    size_t n = (size_t)(argc - optind);
    struct io_input *ins = calloc(n, sizeof *ins);
    if (!ins)
        return cli_fail("out of memory");
    int rc = EXIT_OK;
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        char err[512] = "";
        ins[i].path = argv[optind + i];
        int r = ioplog_is_log(ins[i].path) ? load_log(&ins[i], interval, err, sizeof err)
                                    : load_profile(&ins[i], err, sizeof err);
        if (r != 0)
            rc = cli_fail("%s", err[0] ? err : "out of memory");
    }
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        struct io_input *in = &ins[i];
        if (i)
            fputc('\n', stdout);
        printf("== %s  pid %ld  exe ", in->path, in->pid);
        print_path(stdout, in->exe ? in->exe : "");
        if (in->is_log)
            printf("  (%s, %" PRIu64 " events)", in->complete ? "complete log" : "still being written",
                   in->events);
        fputc('\n', stdout);
        print_files(stdout, in, sort, top);
        if (in->prof && print_contexts(stdout, in, sort, top) < 0)
            rc = cli_fail("out of memory");
        if (in->is_log)
            print_funcs(stdout, in, sort);
    }
    if (rc == EXIT_OK && plot_path)
        rc = plot(plot_path, ins, n);
    for (size_t i = 0; i < n; i++)
        free_input(&ins[i]);
    free(ins);
    if (rc == EXIT_OK && (fflush(stdout) != 0 || ferror(stdout)))
        rc = cli_fail("error writing standard output: %s", strerror(errno));
    return rc;
}
