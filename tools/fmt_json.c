/*
 * hookit export --format=json: the stable machine interface
 * (docs/json-schema.md).  One profile gives one document; several give an
 * array of documents in the order given.
 */
#include "tools/cli.h"
#include "tools/json_ranks.h"
#include "tools/json.h"
#include "tools/tree.h"

#include <errno.h>
#include <string.h>

struct node_ctx {
    struct json *j;
};

/* A metric column is a key of its own, unless its name is taken by a fixed
 * key: then "metric_" + name, so a document never has duplicate keys. */
static void metric_key(struct json *j, const char *name)
{
    static const char *const fixed[] = { "name", "module", "calls", "incl_ns", "excl_ns",
                                         "file", "line", "children" };
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

static void node_open(const struct tree *t, uint32_t node, void *vctx)
{
    struct json *j = ((struct node_ctx *)vctx)->j;
    const struct prof_thread *th = t->thread;
    const struct prof_node *n = &th->nodes[node];
    const struct prof_func *f = tree_func(t, node);
    json_begin_object(j);
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
    json_key(j, "children");
    json_begin_array(j);
}

static void node_close(const struct tree *t, uint32_t node, void *vctx)
{
    struct json *j = ((struct node_ctx *)vctx)->j;
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
    json_key(j, "roots");
    json_begin_array(j);
    struct node_ctx ctx = { j };
    int rc = tree_walk(&t, node_open, node_close, &ctx);
    json_end_array(j);
    json_end_object(j);
    tree_free(&t);
    return rc;
}

static int write_document(struct json *j, const struct profile *p)
{
    const struct prof_process *pr = &p->process;
    json_begin_object(j);
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
    json_key(j, "meta");
    json_begin_object(j);
    for (uint32_t i = 0; i < pr->nmeta; i++) {
        json_key(j, pr->meta[i].key ? pr->meta[i].key : "");
        json_string(j, pr->meta[i].value ? pr->meta[i].value : "");
    }
    json_end_object(j);
    json_end_object(j);
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
