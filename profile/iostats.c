/* Per-file I/O counters and their text form (profile/iostats.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "profile/iostats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const iostats_bucket_names[IOSTATS_BUCKETS] = {
    "0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M",
    "1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+",
};

static const uint64_t bucket_max[IOSTATS_BUCKETS - 1] = {
    100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824,
};

void iostats_init(struct iostats *s)
{
    memset(s, 0, sizeof *s);
    s->max_byte_read = s->max_byte_written = -1;
    s->first = UINT64_MAX;
    s->read_end = s->write_end = -1;
}

int iostats_bucket(uint64_t n)
{
    int b = 0;
    while (b < IOSTATS_BUCKETS - 1 && n > bucket_max[b])
        b++;
    return b;
}

/* A successful transfer: sizes, offsets, access pattern. */
static void transfer(struct iostats *s, int write, uint64_t bytes, int64_t offset)
{
    uint64_t *hist = write ? s->write_hist : s->read_hist;
    hist[iostats_bucket(bytes)]++;
    if (write) {
        s->writes++;
        s->bytes_written += bytes;
    } else {
        s->reads++;
        s->bytes_read += bytes;
    }
    if (bytes == 0 || offset < 0)
        return;
    int64_t *end = write ? &s->write_end : &s->read_end;
    int64_t *max = write ? &s->max_byte_written : &s->max_byte_read;
    if (*end >= 0 && offset >= *end) {
        (*(write ? &s->seq_writes : &s->seq_reads))++;
        if (offset == *end)
            (*(write ? &s->consec_writes : &s->consec_reads))++;
    }
    /* saturated: a log may claim any offset and size (fuzzed input) */
    *end = bytes > (uint64_t)(INT64_MAX - offset) ? INT64_MAX : offset + (int64_t)bytes;
    if (*end - 1 > *max)
        *max = *end - 1;
    uint32_t dir = write ? 2 : 1;
    if (s->last_dir && s->last_dir != dir)
        s->rw_switches++;
    s->last_dir = dir;
}

void iostats_account(struct iostats *s, uint32_t op, int failed, uint64_t bytes, int64_t offset,
                     uint64_t t0, uint64_t t1)
{
    iostats_account_net(s, op, failed, bytes, offset, t0, t1, t1 > t0 ? t1 - t0 : 0);
}

void iostats_account_net(struct iostats *s, uint32_t op, int failed, uint64_t bytes, int64_t offset,
                         uint64_t t0, uint64_t t1, uint64_t dt)
{
    if (t0 < s->first)
        s->first = t0;
    if (t1 > s->last)
        s->last = t1;
    if (dt > s->slowest_time) {
        s->slowest_time = dt;
        s->slowest_bytes = bytes;
    }
    switch (op) {
    case HOOKIT_IO_READ:
        s->read_time += dt;
        break;
    case HOOKIT_IO_WRITE:
    case HOOKIT_IO_SYNC:
        s->write_time += dt;
        break;
    default:
        s->meta_time += dt;
        break;
    }
    if (failed) {
        s->errors++;
        return;
    }
    switch (op) {
    case HOOKIT_IO_OPEN: s->opens++; break;
    case HOOKIT_IO_READ: transfer(s, 0, bytes, offset); break;
    case HOOKIT_IO_WRITE: transfer(s, 1, bytes, offset); break;
    case HOOKIT_IO_SEEK: s->seeks++; break;
    case HOOKIT_IO_SYNC: s->syncs++; break;
    default: s->metas++; break;
    }
}

/* ---- text form ------------------------------------------------------------------- */
/* The columns, in order, with where each lives in struct iostats. */
enum col_kind { C_U64, C_I64, C_TIME, C_HIST };
struct column {
    const char *name;
    enum col_kind kind;
    size_t off;
};
#define U(f) { #f, C_U64, offsetof(struct iostats, f) }
#define I(f) { #f, C_I64, offsetof(struct iostats, f) }
#define T(name, f) { name, C_TIME, offsetof(struct iostats, f) }
static const struct column columns[] = {
    U(opens), U(reads), U(writes), U(seeks), U(syncs), U(metas), U(errors),
    U(bytes_read), U(bytes_written), I(max_byte_read), I(max_byte_written),
    U(seq_reads), U(seq_writes), U(consec_reads), U(consec_writes), U(rw_switches),
    T("first_ns", first), T("last_ns", last), T("read_ns", read_time), T("write_ns", write_time),
    T("meta_ns", meta_time), T("slowest_ns", slowest_time), U(slowest_bytes),
    { "read_hist", C_HIST, offsetof(struct iostats, read_hist) },
    { "write_hist", C_HIST, offsetof(struct iostats, write_hist) },
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])

static void put_path(FILE *f, const char *p)
{
    for (; p && *p; p++) {
        if (*p == '\t')
            fputs("\\t", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\\')
            fputs("\\\\", f);
        else
            fputc(*p, f);
    }
}

char *iostats_format(const struct iostats_row *rows, size_t n, double ticks_per_ns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (ticks_per_ns <= 0)
        ticks_per_ns = 1;
    fputs("id\tpath", f);
    for (size_t c = 0; c < NCOLUMNS; c++)
        fprintf(f, "\t%s", columns[c].name);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const char *s = (const char *)&rows[i].s;
        fprintf(f, "%" PRIu32 "\t", rows[i].id);
        put_path(f, rows[i].path);
        for (size_t c = 0; c < NCOLUMNS; c++) {
            const void *v = s + columns[c].off;
            switch (columns[c].kind) {
            case C_U64:
                fprintf(f, "\t%" PRIu64, *(const uint64_t *)v);
                break;
            case C_I64:
                fprintf(f, "\t%" PRId64, *(const int64_t *)v);
                break;
            case C_TIME: {
                uint64_t t = *(const uint64_t *)v;
                if (t == UINT64_MAX)
                    t = 0;
                fprintf(f, "\t%" PRIu64, (uint64_t)((double)t / ticks_per_ns + 0.5));
                break;
            }
            case C_HIST:
                for (int b = 0; b < IOSTATS_BUCKETS; b++)
                    fprintf(f, "%c%" PRIu64, b ? ',' : '\t', ((const uint64_t *)v)[b]);
                break;
            }
        }
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Unescape a path in place. */
static void unescape(char *p)
{
    char *out = p;
    for (; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            *out++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p;
        } else {
            *out++ = *p;
        }
    }
    *out = 0;
}

static int parse_row(char *line, const int *map, size_t nfields, struct iostats_row *row)
{
    char *fields[64];
    size_t nf = 0;
    for (char *p = line; nf < 64;) {
        fields[nf++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = 0;
        p = tab + 1;
    }
    if (nf != nfields)
        return -1;
    iostats_init(&row->s);
    row->s.first = 0;
    row->id = (uint32_t)strtoul(fields[0], NULL, 10);
    unescape(fields[1]);
    row->path = strdup(fields[1]);
    if (!row->path)
        return -1;
    for (size_t i = 2; i < nf; i++) {
        if (map[i] < 0)
            continue;
        const struct column *c = &columns[map[i]];
        void *v = (char *)&row->s + c->off;
        if (c->kind == C_I64) {
            *(int64_t *)v = strtoll(fields[i], NULL, 10);
        } else if (c->kind == C_HIST) {
            char *p = fields[i];
            for (int b = 0; b < IOSTATS_BUCKETS && *p; b++) {
                ((uint64_t *)v)[b] = strtoull(p, &p, 10);
                if (*p == ',')
                    p++;
            }
        } else {
            *(uint64_t *)v = strtoull(fields[i], NULL, 10);
        }
    }
    return 0;
}

int iostats_parse(const char *text, struct iostats_row **rows_out, size_t *n_out)
{
    *rows_out = NULL;
    *n_out = 0;
    if (!text || strncmp(text, "id\tpath", 7) != 0)
        return -1;
    char *copy = strdup(text);
    if (!copy)
        return -1;
    /* The header names the columns: older or newer writers may differ. */
    int map[64];
    size_t nfields = 0;
    char *save = NULL;
    char *header = strtok_r(copy, "\n", &save);
    for (char *p = header; p && nfields < 64;) {
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = 0;
        map[nfields] = -1;
        for (size_t c = 0; c < NCOLUMNS; c++)
            if (!strcmp(p, columns[c].name))
                map[nfields] = (int)c;
        nfields++;
        p = tab ? tab + 1 : NULL;
    }
    size_t cap = 16, n = 0;
    struct iostats_row *rows = malloc(cap * sizeof *rows);
    int rc = rows ? 0 : -1;
    for (char *line; rc == 0 && (line = strtok_r(NULL, "\n", &save));) {
        if (n == cap) {
            struct iostats_row *r = realloc(rows, 2 * cap * sizeof *rows);
            if (!r) {
                rc = -1;
                break;
            }
            rows = r;
            cap *= 2;
        }
        if (parse_row(line, map, nfields, &rows[n]) == 0)
            n++;
        else
            rc = -1;
    }
    free(copy);
    if (rc != 0) {
        iostats_free_rows(rows, n);
        return -1;
    }
    *rows_out = rows;
    *n_out = n;
    return 0;
}

void iostats_free_rows(struct iostats_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        free((char *)rows[i].path);
    free(rows);
}
