/*
 * hookit export --format=json: the stable machine interface, schema 2
 * (docs/json-schema.md).  One profile gives one document; several give an
 * array of documents in the order given.
 *
 * Each thread's tree is a flat table of nodes, each naming its parent by
 * id, so no JSON reader meets a nesting deeper than a few levels whatever
 * the depth of the recursion (jq 1.6 stops at 256 levels, Python's json
 * at about 1,000).  --nested gives the children inside their parent
 * instead.  The metadata that the profile keeps as text (the per-file I/O
 * table, the series, numbers) are written as JSON arrays, objects and
 * numbers.
 */
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/json_ranks.h"
#include "tools/json.h"
#include "tools/tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define JSON_SCHEMA 2

struct node_ctx {
    struct json *j;
    const struct tree *t;
};

/* A metric column is a key of its own, unless its name is taken by a fixed
 * key: then "metric_" + name, so a document never has duplicate keys. */
static void metric_key(struct json *j, const char *name)
{
    static const char *const fixed[] = { "id", "parent", "depth", "name", "module", "calls",
                                         "incl_ns", "excl_ns", "file", "line", "children" };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if (strcmp(name, fixed[i]) == 0) {
            char key[32];
            snprintf(key, sizeof key, "metric_%s", name);
            json_key(j, key);
            return;
        }
    }
    json_key(j, name);
}

static void node_fields(struct json *j, const struct tree *t, uint32_t node)
{
    const struct prof_thread *th = t->thread;
    const struct prof_node *n = &th->nodes[node];
    const struct prof_func *f = tree_func(t, node);
    json_key(j, "id");
    json_u64(j, node);
    json_key(j, "parent");
    if (n->parent == PROF_NONE)
        json_null(j);
    else
        json_u64(j, n->parent);
    json_key(j, "depth");
    json_u64(j, t->depth[node]);
    json_key(j, "name");
    json_string(j, f->name ? f->name : "");
    json_key(j, "module");
    json_string(j, f->module ? f->module : "");
    json_key(j, "calls");
    json_u64(j, n->calls);
    json_key(j, "incl_ns");
    json_u64(j, n->incl_ns);
    json_key(j, "excl_ns");
    json_u64(j, n->excl_ns);
    if (f->file) {
        json_key(j, "file");
        json_string(j, f->file);
        json_key(j, "line");
        json_u64(j, f->line);
    }
    for (uint32_t m = 0; m < th->nmetrics; m++) {
        metric_key(j, th->metrics[m].name ? th->metrics[m].name : "");
        json_u64(j, th->metrics[m].values[node]);
    }
}

static void nested_open(const struct tree *t, uint32_t node, void *vctx)
{
    struct json *j = ((struct node_ctx *)vctx)->j;
    json_begin_object(j);
    node_fields(j, t, node);
    json_key(j, "children");
    json_begin_array(j);
}

static void nested_close(const struct tree *t, uint32_t node, void *vctx)
{
    struct json *j = ((struct node_ctx *)vctx)->j;
    (void)t;
    (void)node;
    json_end_array(j);
    json_end_object(j);
}

static int write_thread(struct json *j, const struct profile *p, const struct prof_thread *th)
{
    struct tree t;
    if (tree_build(&t, p, th) < 0)
        return -1;
    json_begin_object(j);
    json_key(j, "tid");
    json_i64(j, th->tid);
    json_key(j, "index");
    json_u64(j, th->index);
    json_key(j, "name");
    json_string(j, th->name ? th->name : "");
    json_key(j, "metrics");
    json_begin_array(j);
    for (uint32_t m = 0; m < th->nmetrics; m++)
        json_string(j, th->metrics[m].name ? th->metrics[m].name : "");
    json_end_array(j);
    int rc = 0;
    if (export_options.json_nested) {
        json_key(j, "roots");
        json_begin_array(j);
        struct node_ctx ctx = { j, &t };
        rc = tree_walk(&t, nested_open, nested_close, &ctx);
        json_end_array(j);
    } else {
        json_key(j, "nodes");
        json_begin_array(j);
        for (uint32_t i = 0; i < th->nnodes; i++) {
            json_begin_object(j);
            node_fields(j, &t, i);
            json_end_object(j);
        }
        json_end_array(j);
    }
    json_end_object(j);
    tree_free(&t);
    return rc;
}

#define BUILD_ID_KEY "build_id:"

/* Metadata kept as text in the profile that the document has in a form of
 * its own (tables and series), so not under "meta". */
static int structured_meta(const char *key)
{
    static const char *const keys[] = { "io_files", "io_series", "alloc_series", "ranks",
                                        "functions" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return strncmp(key, BUILD_ID_KEY, strlen(BUILD_ID_KEY)) == 0;
}

/* "build_ids": {MODULE: HEX}, from the metadata "build_id:MODULE" (profile
 * format 1.1; none in an older profile). */
static void build_ids(struct json *j, const struct prof_process *pr)
{
    json_key(j, "build_ids");
    json_begin_object(j);
    size_t n = strlen(BUILD_ID_KEY);
    for (uint32_t i = 0; i < pr->nmeta; i++)
        if (pr->meta[i].key && !strncmp(pr->meta[i].key, BUILD_ID_KEY, n)) {
            json_key(j, pr->meta[i].key + n);
            json_string(j, pr->meta[i].value ? pr->meta[i].value : "");
        }
    json_end_object(j);
}

/* Values that are text even when they look like a number. */
static int text_meta(const char *key)
{
    static const char *const keys[] = { "hostname", "hookit_version", "host", "exe", "name" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

/* A field of the I/O file table: the path unescaped (\t \n \\), a list of
 * counts as an array, a number as a number. */
static void io_field(struct json *j, const char *name, char *v)
{
    if (strcmp(name, "path") == 0) {
        char *w = v;
        for (const char *r = v; *r; r++) {
            if (*r == '\\' && r[1]) {
                r++;
                *w++ = *r == 't' ? '\t' : *r == 'n' ? '\n' : *r;
            } else {
                *w++ = *r;
            }
        }
        *w = '\0';
        json_string(j, v);
    } else if (strchr(v, ',')) {
        json_begin_array(j);
        char *save = NULL;
        for (char *c = strtok_r(v, ",", &save); c; c = strtok_r(NULL, ",", &save))
            json_number_text(j, c);
        json_end_array(j);
    } else {
        json_number_text(j, v);
    }
}

#define IO_MAX_COLUMNS 64

/* "io_files": one object per file, keys from the table's header line. */
static void io_files(struct json *j, const char *text)
{
    char *copy = strdup(text);
    if (!copy) {
        j->failed = 1;
        return;
    }
    char *head[IO_MAX_COLUMNS];
    int ncols = 0;
    json_key(j, "io_files");
    json_begin_array(j);
    char *line = copy;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *f[IO_MAX_COLUMNS];
        int n = 0;
        for (char *c = line; c && n < IO_MAX_COLUMNS; ) {
            f[n++] = c;
            c = strchr(c, '\t');
            if (c)
                *c++ = '\0';
        }
        if (!ncols) {
            memcpy(head, f, sizeof f[0] * (size_t)n);
            ncols = n;
        } else {
            json_begin_object(j);
            for (int c = 0; c < n && c < ncols; c++) {
                json_key(j, head[c]);
                io_field(j, head[c], f[c]);
            }
            json_end_object(j);
        }
        line = nl ? nl + 1 : NULL;
    }
    json_end_array(j);
    free(copy);
}

/* A series of lines of space-separated numbers: one object per line with
 * the given keys; "start_ns" added from the slice index when the interval
 * is known. */
static void series(struct json *j, const char *key, const char *text, const char *const *cols,
                   int ncols, uint64_t interval_ns)
{
    json_key(j, key);
    json_begin_array(j);
    for (const char *line = text; line && *line; ) {
        const char *nl = strchr(line, '\n');
        unsigned long long v[8] = { 0 };
        const char *p = line;
        int n = 0;
        while (n < ncols && p < (nl ? nl : p + strlen(p))) {
            char *end;
            v[n] = strtoull(p, &end, 10);
            if (end == p)
                break;
            n++;
            p = end;
        }
        if (n == ncols) {
            json_begin_object(j);
            for (int c = 0; c < ncols; c++) {
                json_key(j, cols[c]);
                json_u64(j, v[c]);
                if (c == 0 && interval_ns) {
                    json_key(j, "start_ns");
                    json_u64(j, v[0] * interval_ns);
                }
            }
            json_end_object(j);
        }
        line = nl ? nl + 1 : NULL;
    }
    json_end_array(j);
}

static int write_document(struct json *j, const struct profile *p)
{
    const struct prof_process *pr = &p->process;
    json_begin_object(j);
    json_key(j, "schema");
    json_u64(j, JSON_SCHEMA);
    json_key(j, "process");
    json_begin_object(j);
    json_key(j, "pid");
    json_i64(j, pr->pid);
    json_key(j, "ppid");
    json_i64(j, pr->ppid);
    json_key(j, "exe");
    json_string(j, pr->exe ? pr->exe : "");
    json_key(j, "argv");
    json_begin_array(j);
    for (uint32_t i = 0; i < pr->argc; i++)
        json_string(j, pr->argv[i] ? pr->argv[i] : "");
    json_end_array(j);
    if (pr->rank >= 0) {
        json_key(j, "rank");
        json_i64(j, pr->rank);
        json_key(j, "size");
        json_i64(j, pr->size);
    }
    json_key(j, "start_ns");
    json_u64(j, pr->start_ns);
    json_key(j, "duration_ns");
    json_u64(j, pr->duration_ns);
    build_ids(j, pr);
    json_key(j, "meta");
    json_begin_object(j);
    for (uint32_t i = 0; i < pr->nmeta; i++) {
        const char *k = pr->meta[i].key ? pr->meta[i].key : "";
        const char *v = pr->meta[i].value ? pr->meta[i].value : "";
        if (structured_meta(k))
            continue;
        json_key(j, k);
        if (text_meta(k))
            json_string(j, v);
        else
            json_number_text(j, v);
    }
    json_end_object(j);
    json_end_object(j);

    const char *files = profile_get_meta(p, "io_files");
    const char *ios = profile_get_meta(p, "io_series");
    const char *allocs = profile_get_meta(p, "alloc_series");
    uint64_t interval = profile_meta_u64_or(p, "io_interval_ns", 0);
    if (files)
        io_files(j, files);
    if (ios) {
        static const char *const cols[] = { "slice", "bytes_read", "bytes_written" };
        series(j, "io_series", ios, cols, 3, interval);
    }
    if (allocs) {
        static const char *const cols[] = { "slice", "live_max_bytes" };
        series(j, "alloc_series", allocs, cols, 2, interval);
    }

    json_key(j, "threads");
    json_begin_array(j);
    for (uint32_t i = 0; i < p->nthreads; i++)
        if (write_thread(j, p, &p->threads[i]) < 0)
            return -1;
    json_end_array(j);
    json_rank_tables(j, p);
    json_end_object(j);
    return 0;
}

int export_json(FILE *out, struct loaded_profile *profiles, size_t n)
{
    struct json j;
    json_init(&j, out);
    int rc = 0;
    if (n != 1)
        json_begin_array(&j);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = write_document(&j, profiles[i].prof);
    if (n != 1)
        json_end_array(&j);
    fputc('\n', out);
    if (json_finish(&j) < 0)
        rc = -1;
    if (rc < 0)
        cli_fail("%s", errno == EINVAL ? "invalid call tree in a profile" : "out of memory");
    return rc;
}
