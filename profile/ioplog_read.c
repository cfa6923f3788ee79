/* The ioprof log, reading side (profile/ioplog.h): a log counted per
 * file, per function and per time slice, as libjprof counts while the
 * program runs.  Any input is possible here (a log being written, a
 * damaged one, a fuzzer's): every number is taken as untrusted. */
#include "profile/ioplog.h"
#include "profile/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file of one id while counting. */
struct log_file {
    int used;
    char *path;
    struct iostats s;
};

struct reader {
    struct ioplog *log;
    const char *name;
    uint64_t interval_ns;
    uint64_t start;             /* start_ticks */
    double tps;                 /* ticks per second */
    struct log_file *files;     /* by id */
    size_t nfiles;
    size_t points_cap;
    size_t lineno;
    char *err;
    size_t errlen;
};

/* ---- counting ---------------------------------------------------------------------- */
/* One point per event at most (consecutive events of one slice share
 * theirs): memory follows the log, not the time it spans, so a damaged
 * time stamp far in the future costs one point, not a table up to it. */
static int series_add(struct ioplog *log, size_t idx, uint64_t r, uint64_t w, size_t *cap)
{
    if (idx >= (1u << 24))
        idx = (1u << 24) - 1;
    if (!log->npoints || log->points[log->npoints - 1].idx != idx) {
        if (log->npoints == *cap) {
            size_t n = *cap ? *cap * 2 : 64;
            struct ioplog_point *a = realloc(log->points, n * sizeof *a);
            if (!a)
                return -1;
            log->points = a;
            *cap = n;
        }
        log->points[log->npoints++] = (struct ioplog_point){ .idx = idx };
    }
    log->points[log->npoints - 1].rd += r;
    log->points[log->npoints - 1].wr += w;
    return 0;
}

static struct ioplog_func *func_row(struct ioplog *log, const char *name)
{
    for (size_t i = 0; i < log->nfuncs; i++)
        if (!strcmp(log->funcs[i].name, name))
            return &log->funcs[i];
    struct ioplog_func *f = realloc(log->funcs, (log->nfuncs + 1) * sizeof *f);
    if (!f)
        return NULL;
    log->funcs = f;
    f = &f[log->nfuncs++];
    memset(f, 0, sizeof *f);
    f->name = strdup(name);
    return f->name ? f : NULL;
}

/* A double (a time scaled from ticks) as u64, saturating: a damaged log's
 * tick values or clock rate must not make the conversion undefined. */
static uint64_t sat_u64(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 18446744073709549568.0)
        return UINT64_MAX;
    return (uint64_t)x;
}

static void scale_times(struct iostats *s, double tpn)
{
    uint64_t *t[] = { &s->first, &s->last, &s->read_time, &s->write_time, &s->meta_time,
                      &s->slowest_time };
    if (s->first == UINT64_MAX)
        s->first = 0;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        *t[i] = sat_u64((double)*t[i] / tpn + 0.5);
}

/* The record of file id, made on first use.  NULL: damage (message in
 * err) or no memory. */
static struct log_file *file_of(struct reader *r, unsigned file)
{
    /* ioprof numbers files from 1 as it meets them, so an id far beyond
     * the events read so far is damage, not a reason to allocate
     * gigabytes. */
    if (file > r->log->events + 65536) {
        snprintf(r->err, r->errlen, "%s: line %zu: file id %u out of range", r->name, r->lineno, file);
        return NULL;
    }
    if (file >= r->nfiles) {
        size_t n = (size_t)file + 64;
        struct log_file *f = realloc(r->files, n * sizeof *f);
        if (!f)
            return NULL;
        memset(f + r->nfiles, 0, (n - r->nfiles) * sizeof *f);
        r->files = f;
        r->nfiles = n;
    }
    struct log_file *lf = &r->files[file];
    if (!lf->used) {
        iostats_init(&lf->s);
        lf->used = 1;
    }
    return lf;
}

/* ---- lines ------------------------------------------------------------------------- */
static void header_line(struct reader *r, const char *line)
{
    struct ioplog *log = r->log;
    if (!strncmp(line, "start_ticks ", 12)) {
        r->start = strtoull(line + 12, NULL, 10);
    } else if (!strncmp(line, "ticks_per_sec ", 14)) {
        double v = strtod(line + 14, NULL);
        if (v >= 1e3 && v <= 1e13)      /* else damaged: keep ns */
            r->tps = v;
    } else if (!strncmp(line, "pid ", 4)) {
        log->pid = strtol(line + 4, NULL, 10);
    } else if (!strncmp(line, "exe ", 4)) {
        free(log->exe);
        log->exe = strdup(line + 4);
        if (log->exe)
            ioplog_unescape(log->exe);
    }
}

static void comment_line(struct reader *r, const char *line)
{
    char how[32];
    unsigned long long end_ticks;
    double v;
    if (sscanf(line, "# end %31s %llu ticks_per_sec %lf", how, &end_ticks, &v) == 3) {
        r->log->complete = 1;
        if (v >= 1e3 && v <= 1e13)
            r->tps = v;
    }
}

/* 0, or -1 (message in err unless out of memory). */
static int event_line(struct reader *r, const char *line)
{
    struct ioplog *log = r->log;
    char op[16], func[64], path[8192];
    long tid, fd;
    unsigned long long t0, t1, bytes;
    long long result, offset;
    unsigned file;
    int e;
    if (sscanf(line, "%15s %63s %ld %llu %llu %lld %ld %u %llu %lld %d %8191s", op, func, &tid,
               &t0, &t1, &result, &fd, &file, &bytes, &offset, &e, path) != 12) {
        snprintf(r->err, r->errlen, "%s: line %zu is not an ioprof event", r->name, r->lineno);
        return -1;
    }
    ioplog_unescape(path);
    log->events++;
    uint32_t o = ioplog_op_of(op);
    int failed = e != 0 || result < 0;
    int moved = !failed && (o == HOOKIT_IO_READ || o == HOOKIT_IO_WRITE);
    double tpn = r->tps / 1e9;
    struct ioplog_func *fr = func_row(log, func);
    if (!fr)
        return -1;
    fr->calls++;
    fr->bytes += moved ? bytes : 0;
    fr->time_ns += sat_u64((double)(t1 - t0) / tpn + 0.5);
    int rc = 0;
    if (moved && bytes) {
        uint64_t iv = sat_u64((double)r->interval_ns * tpn);
        size_t idx = t1 > r->start && iv ? (size_t)((t1 - r->start) / iv) : 0;
        rc = series_add(log, idx, o == HOOKIT_IO_READ ? bytes : 0, o == HOOKIT_IO_WRITE ? bytes : 0,
                        &r->points_cap);
    }
    if (!file)
        return rc;
    struct log_file *lf = file_of(r, file);
    if (!lf)
        return -1;
    if (!lf->path && path[0])
        lf->path = strdup(path);
    iostats_account(&lf->s, o, failed, bytes, offset, t0 > r->start ? t0 - r->start : 0,
                    t1 > r->start ? t1 - r->start : 0);
    return rc;
}

/* ---- the log ----------------------------------------------------------------------- */
/* The per-file table, times in ns. */
static int take_files(struct reader *r)
{
    struct ioplog *log = r->log;
    for (size_t i = 0; i < r->nfiles; i++) {
        if (!r->files[i].used)
            continue;
        struct iostats_row *row = realloc(log->files, (log->nfiles + 1) * sizeof *row);
        if (!row)
            return -1;
        log->files = row;
        row = &row[log->nfiles++];
        row->id = (uint32_t)i;
        row->path = r->files[i].path ? r->files[i].path : strdup("?");
        r->files[i].path = NULL;
        row->s = r->files[i].s;
        scale_times(&row->s, r->tps / 1e9);
    }
    return 0;
}

/* text: NUL-terminated, taken apart in place. */
static int read_text(struct reader *r, char *text)
{
    int in_header = 1;
    /* A log still being written may end in the middle of a line: ignored. */
    char *last_nl = strrchr(text, '\n');
    if (last_nl)
        last_nl[1] = 0;
    else
        text[0] = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        r->lineno++;
        if (r->lineno == 1 && strncmp(line, IOPLOG_MAGIC, strlen(IOPLOG_MAGIC)) != 0) {
            snprintf(r->err, r->errlen, "%s: not an ioprof log (line 1)", r->name);
            return -1;
        }
        if (in_header) {
            if (!strncmp(line, "columns ", 8))
                in_header = 0;
            else
                header_line(r, line);
        } else if (line[0] == '#') {
            comment_line(r, line);
        } else if (event_line(r, line) != 0) {
            return -1;
        }
    }
    return take_files(r);
}

void ioplog_free(struct ioplog *log)
{
    if (!log)
        return;
    iostats_free_rows(log->files, log->nfiles);
    for (size_t i = 0; i < log->nfuncs; i++)
        free(log->funcs[i].name);
    free(log->funcs);
    free(log->points);
    free(log->exe);
    free(log);
}

/* text as ioplog_read_mem, but NUL-terminated and writable. */
static struct ioplog *read_owned(char *text, const char *name, uint64_t interval_ns, char *err,
                                 size_t errlen)
{
    struct reader r = { .name = name, .interval_ns = interval_ns, .tps = 1e9, .err = err,
                        .errlen = errlen };
    err[0] = 0;
    r.log = calloc(1, sizeof *r.log);
    int rc = r.log ? read_text(&r, text) : -1;
    for (size_t i = 0; i < r.nfiles; i++)
        free(r.files[i].path);
    free(r.files);
    if (rc == 0)
        return r.log;
    ioplog_free(r.log);
    if (!*err)
        snprintf(err, errlen, "%s: out of memory", name);
    return NULL;
}

struct ioplog *ioplog_read_mem(const char *buf, size_t len, const char *name,
                               uint64_t interval_ns, char *err, size_t errlen)
{
    char *text = malloc(len + 1);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    memcpy(text, buf, len);
    text[len] = 0;
    struct ioplog *log = read_owned(text, name, interval_ns, err, errlen);
    free(text);
    return log;
}

static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len;
    char *text = (char *)profile_read_fd(fd, &len);
    int e = errno;
    close(fd);
    errno = e;
    return text;
}

struct ioplog *ioplog_read_file(const char *path, uint64_t interval_ns, char *err, size_t errlen)
{
    char *text = slurp(path);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct ioplog *log = read_owned(text, path, interval_ns, err, errlen);
    free(text);
    return log;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int ioplog_is_log(const char *path)
{
    if (ends_with(path, ".log") || ends_with(path, ".log.part"))
        return 1;
    FILE *f = fopen(path, "rb");
    char head[16] = "";
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = 0;
    return !strncmp(head, IOPLOG_MAGIC, strlen(IOPLOG_MAGIC));
}
