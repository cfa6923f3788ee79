/*
 * hookit export --format=pprof: profile.proto, gzipped, as `go tool pprof`,
 * speedscope, Grafana Pyroscope and Polar Signals read it.
 *
 * One sample per calling context, its stack the path from the context to
 * its root (leaf first), with three values:
 *   calls/count          the context's calls;
 *   time/nanoseconds     its inclusive time;
 *   self_time/nanoseconds its exclusive time (the default sample type);
 *   wait/nanoseconds     its time in blocking calls (wait_ns, tools/waittime.h;
 *                        0 when the profile has no wait time);
 *   cpu/nanoseconds      its on-CPU self time (self_time less wait, or the
 *                        sampled cpu_ns of JPROFOPTS=cpu).
 * wait and cpu add up like self_time: -sample_index=wait -top lists where
 * threads block, -sample_index=cpu where they work.
 * pprof adds a sample's values to every function on its stack once, so on
 * self_time its "flat" is each function's self time and its "cum" the
 * inclusive time with recursion counted once, both equal to `hookit report
 * --flat`; on calls its "flat" is each function's exact call count.
 * "time" is meant for -traces and per-context views (summed up a stack it
 * counts nested time more than once).
 *
 * One function and one location per profiled function (module as the
 * mapping, file and line when the profile has them); every sample carries
 * its thread's kernel id, the numeric label "tid", and a comment per
 * thread names it ("thread 2: worker, tid 4243"): a string label would be
 * drawn as a tag box on every node of pprof's graph (and pprof drops a
 * numeric label of 0, so the index cannot be one).  Written with the small
 * encoder in tools/protobuf.c and zlib's gzip stream.
 */
#include "tools/cli.h"
#include "tools/export_opts.h"
#include "tools/protobuf.h"
#include "tools/tree.h"
#include "profile/waittime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* profile.proto field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
    MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILENAME = 5,
    MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
    FUNCTION_START_LINE = 5,
};
enum { MAPPING_BUILD_ID = 6 }; /* Mapping.build_id: a string index */

/* The string table: index 0 is "", equal strings share an index. */
struct strtab {
    const char **strs;
    uint32_t n, cap;
    uint32_t *slots;            /* open addressing: index + 1, 0 = empty */
    uint32_t nslots;
    int failed;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int strtab_grow(struct strtab *t)
{
    uint32_t ns = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < t->n; i++) {
        uint64_t h = hash_str(t->strs[i]);
        uint32_t k = (uint32_t)(h & (ns - 1));
        while (slots[k])
            k = (k + 1) & (ns - 1);
        slots[k] = i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return 0;
}

static int64_t str_index(struct strtab *t, const char *s)
{
    if (!s)
        s = "";
    if (t->failed)
        return 0;
    if ((t->n + 1) * 2 > t->nslots && strtab_grow(t) < 0)
        goto fail;
    uint32_t k = (uint32_t)(hash_str(s) & (t->nslots - 1));
    while (t->slots[k]) {
        if (strcmp(t->strs[t->slots[k] - 1], s) == 0)
            return t->slots[k] - 1;
        k = (k + 1) & (t->nslots - 1);
    }
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        const char **strs = realloc(t->strs, cap * sizeof *strs);
        if (!strs)
            goto fail;
        t->strs = strs;
        t->cap = cap;
    }
    t->strs[t->n] = s;
    t->slots[k] = t->n + 1;
    return t->n++;
fail:
    t->failed = 1;
    return 0;
}

static void value_type(struct pb *out, uint32_t field, struct strtab *st, const char *type,
                       const char *unit)
{
    struct pb m;
    pb_init(&m);
    pb_int(&m, VALUETYPE_TYPE, str_index(st, type));
    pb_int(&m, VALUETYPE_UNIT, str_index(st, unit));
    pb_message(out, field, &m);
    pb_free(&m);
}

static void label(struct pb *sample, struct pb *tmp, struct strtab *st, const char *key,
                  const char *str, int64_t num)
{
    pb_reset(tmp);
    pb_int(tmp, LABEL_KEY, str_index(st, key));
    if (str)
        pb_int(tmp, LABEL_STR, str_index(st, str));
    else
        pb_int(tmp, LABEL_NUM, num);
    pb_message(sample, SAMPLE_LABEL, tmp);
}

struct module_info {
    const char *name;
    uint64_t lo, hi;
    int has_files;
};

/* --weight: the sample type go tool pprof and speedscope show first. */
static const char *const default_type[] = {
    [WEIGHT_TIME] = "self_time",
    [WEIGHT_CALLS] = "calls",
    [WEIGHT_CPU] = "cpu",
    [WEIGHT_WAIT] = "wait",
};

/* Encode p as a profile.proto message into out.  0 or -1. */
static int encode(struct pb *out, const struct profile *p)
{
    struct strtab st = { 0 };
    struct pb msg, tmp;
    /* strings made here for the table (thread labels, the comment) */
    char **owned = calloc((size_t)p->nthreads + 1, sizeof *owned);
    uint32_t nowned = 0;
    pb_init(&msg);
    pb_init(&tmp);
    str_index(&st, "");
    int rc = owned ? 0 : -1;

    value_type(out, PROFILE_SAMPLE_TYPE, &st, "calls", "count");
    value_type(out, PROFILE_SAMPLE_TYPE, &st, "time", "nanoseconds");
    value_type(out, PROFILE_SAMPLE_TYPE, &st, "self_time", "nanoseconds");
    value_type(out, PROFILE_SAMPLE_TYPE, &st, "wait", "nanoseconds");
    value_type(out, PROFILE_SAMPLE_TYPE, &st, "cpu", "nanoseconds");

    /* Samples: one per calling context, stack leaf first. */
    uint32_t *used = calloc((size_t)p->nfuncs + 1, sizeof *used);
    uint64_t *stack = NULL;
    size_t stack_cap = 0;
    if (!used)
        rc = -1;
    for (uint32_t k = 0; k < p->nthreads && rc == 0; k++) {
        const struct prof_thread *th = &p->threads[k];
        char tname[200];
        snprintf(tname, sizeof tname, "thread %u: %.120s, tid %d", th->index,
                 th->name && *th->name ? th->name : "(no name)", th->tid);
        char *tlabel = strdup(tname);
        if (!tlabel) {
            rc = -1;
            break;
        }
        owned[nowned++] = tlabel;
        struct waittime w;
        waittime_of(th, &w);
        for (uint32_t i = 0; i < th->nnodes && rc == 0; i++) {
            size_t depth = 0;
            for (uint32_t n = i; n != PROF_NONE; n = th->nodes[n].parent) {
                if (n >= th->nnodes || th->nodes[n].func >= p->nfuncs || (n != i && n >= i)) {
                    rc = -1;    /* parents precede children: anything else is a broken tree */
                    break;
                }
                if (depth == stack_cap) {
                    size_t cap = stack_cap ? stack_cap * 2 : 256;
                    uint64_t *s = realloc(stack, cap * sizeof *s);
                    if (!s) {
                        rc = -1;
                        break;
                    }
                    stack = s;
                    stack_cap = cap;
                }
                stack[depth++] = (uint64_t)th->nodes[n].func + 1;
                used[th->nodes[n].func] = 1;
            }
            if (rc != 0)
                break;
            const struct prof_node *n = &th->nodes[i];
            uint64_t values[5] = { n->calls, n->incl_ns, n->excl_ns, waittime_wait(&w, i),
                                   waittime_cpu(&w, th, i) };
            pb_reset(&msg);
            pb_packed(&msg, SAMPLE_LOCATION_ID, stack, depth);
            pb_packed(&msg, SAMPLE_VALUE, values, 5);
            label(&msg, &tmp, &st, "tid", NULL, th->tid);
            pb_message(out, PROFILE_SAMPLE, &msg);
        }
    }

    /* Mappings: one per module. */
    struct module_info *mods = calloc((size_t)p->nfuncs + 1, sizeof *mods);
    uint32_t nmods = 0;
    uint32_t *func_mod = calloc((size_t)p->nfuncs + 1, sizeof *func_mod);
    if (!mods || !func_mod)
        rc = -1;
    for (uint32_t f = 0; f < p->nfuncs && rc == 0; f++) {
        if (!used[f])
            continue;
        const struct prof_func *fn = &p->funcs[f];
        const char *m = fn->module && *fn->module ? fn->module : NULL;
        if (!m)
            continue;
        uint32_t j;
        for (j = 0; j < nmods; j++)
            if (strcmp(mods[j].name, m) == 0)
                break;
        if (j == nmods) {
            mods[nmods++] = (struct module_info){ m, UINT64_MAX, 0, 0 };
        }
        if (fn->addr) {
            if (fn->addr < mods[j].lo)
                mods[j].lo = fn->addr;
            if (fn->addr + 1 > mods[j].hi)
                mods[j].hi = fn->addr + 1;
        }
        if (fn->file)
            mods[j].has_files = 1;
        func_mod[f] = j + 1;
    }
    for (uint32_t j = 0; j < nmods && rc == 0; j++) {
        pb_reset(&msg);
        pb_uint(&msg, MAPPING_ID, j + 1);
        if (mods[j].hi) {
            pb_uint(&msg, MAPPING_MEMORY_START, mods[j].lo);
            pb_uint(&msg, MAPPING_MEMORY_LIMIT, mods[j].hi);
        }
        pb_int(&msg, MAPPING_FILENAME, str_index(&st, mods[j].name));
        /* The module's GNU build-id, as the profiler recorded it. */
        char key[300];
        snprintf(key, sizeof key, "build_id:%s", mods[j].name);
        const char *build_id = profile_get_meta(p, key);
        if (build_id && *build_id)
            pb_int(&msg, MAPPING_BUILD_ID, str_index(&st, build_id));
        pb_uint(&msg, MAPPING_HAS_FUNCTIONS, 1);
        pb_uint(&msg, MAPPING_HAS_FILENAMES, (uint64_t)mods[j].has_files);
        pb_uint(&msg, MAPPING_HAS_LINE_NUMBERS, (uint64_t)mods[j].has_files);
        pb_message(out, PROFILE_MAPPING, &msg);
    }

    /* Locations and functions: one each per function on some stack. */
    for (uint32_t f = 0; f < p->nfuncs && rc == 0; f++) {
        if (!used[f])
            continue;
        const struct prof_func *fn = &p->funcs[f];
        pb_reset(&msg);
        pb_uint(&msg, LOCATION_ID, (uint64_t)f + 1);
        if (func_mod[f]) {
            pb_uint(&msg, LOCATION_MAPPING_ID, func_mod[f]);
            if (fn->addr)
                pb_uint(&msg, LOCATION_ADDRESS, fn->addr);
        }
        pb_reset(&tmp);
        pb_uint(&tmp, LINE_FUNCTION_ID, (uint64_t)f + 1);
        if (fn->file && fn->line)
            pb_int(&tmp, LINE_LINE, fn->line);
        pb_message(&msg, LOCATION_LINE, &tmp);
        pb_message(out, PROFILE_LOCATION, &msg);

        pb_reset(&msg);
        pb_uint(&msg, FUNCTION_ID, (uint64_t)f + 1);
        int64_t name = str_index(&st, fn->name && *fn->name ? fn->name : "?");
        pb_int(&msg, FUNCTION_NAME, name);
        pb_int(&msg, FUNCTION_SYSTEM_NAME, name);
        if (fn->file) {
            pb_int(&msg, FUNCTION_FILENAME, str_index(&st, fn->file));
            if (fn->line)
                pb_int(&msg, FUNCTION_START_LINE, fn->line);
        }
        pb_message(out, PROFILE_FUNCTION, &msg);
    }

    pb_int(out, PROFILE_TIME_NANOS, (int64_t)p->process.start_ns);
    pb_int(out, PROFILE_DURATION_NANOS, (int64_t)p->process.duration_ns);
    value_type(out, PROFILE_PERIOD_TYPE, &st, "time", "nanoseconds");
    pb_int(out, PROFILE_PERIOD, 1);
    char comment[512];
    snprintf(comment, sizeof comment, "hookit: exact call counts and times; exe %.400s pid %d",
             p->process.exe ? p->process.exe : "?", p->process.pid);
    char *c = rc == 0 ? strdup(comment) : NULL;
    if (c) {
        owned[nowned++] = c;
        pb_int(out, PROFILE_COMMENT, str_index(&st, c));
    }
    for (uint32_t i = 0; c && i + 1 < nowned; i++) /* the threads' names */
        pb_int(out, PROFILE_COMMENT, str_index(&st, owned[i]));
    pb_int(out, PROFILE_DEFAULT_SAMPLE_TYPE, str_index(&st, default_type[export_options.weight]));
    for (uint32_t i = 0; i < st.n; i++)
        pb_string(out, PROFILE_STRING_TABLE, st.strs[i]);
    if (st.failed || out->failed || msg.failed || tmp.failed)
        rc = -1;

    for (uint32_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    pb_free(&msg);
    pb_free(&tmp);
    free(stack);
    free(used);
    free(mods);
    free(func_mod);
    free(st.strs);
    free(st.slots);
    return rc;
}

static int gzip_to(FILE *out, const unsigned char *data, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    unsigned char buf[65536];
    z.next_in = (unsigned char *)data;
    z.avail_in = 0;
    size_t left = len;
    int zrc;
    do {
        if (z.avail_in == 0 && left) {
            uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
            z.avail_in = chunk;
            left -= chunk;
        }
        z.next_out = buf;
        z.avail_out = sizeof buf;
        zrc = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
        size_t have = sizeof buf - z.avail_out;
        /* deflate wrote the first `have` bytes of buf through z.next_out */
        // cppcheck-suppress uninitvar
        if (have && fwrite(buf, 1, have, out) != have) {
            deflateEnd(&z);
            return -1;
        }
    } while (zrc != Z_STREAM_END && zrc != Z_STREAM_ERROR);
    deflateEnd(&z);
    return zrc == Z_STREAM_END ? 0 : -1;
}

int export_pprof(FILE *out, struct loaded_profile *profiles, size_t n)
{
    int owned;
    struct profile *p = export_select(profiles, n, &owned);
    if (!p)
        return -1;
    struct pb pb;
    pb_init(&pb);
    int rc = encode(&pb, p);
    if (rc < 0)
        cli_fail("out of memory, or an invalid call tree, writing the pprof profile");
    else if (gzip_to(out, pb.buf, pb.len) < 0)
        rc = cli_fail("cannot compress the pprof profile");
    pb_free(&pb);
    if (owned)
        profile_free(p);
    return rc < 0 ? -1 : 0;
}
