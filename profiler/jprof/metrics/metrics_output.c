/* The metrics in a profile (build.c): per-node columns of each thread,
 * and the process's totals, per-file table, series and leaks as metadata
 * (docs/io.md, "Profile metadata"). */
#include "metrics_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum { COL_IO_CALLS, COL_IO_READ, COL_IO_WRITTEN, COL_IO_NS, COL_IO_END };
enum { COL_ALLOCS, COL_ALLOC_BYTES, COL_FREES, COL_FREE_BYTES, COL_LEAKS, COL_LEAK_BYTES, COL_ALLOC_END };
static const char *const io_cols[] = { "io_calls", "io_bytes_read", "io_bytes_written", "io_ns" };
static const char *const alloc_cols[] = { "alloc_calls", "alloc_bytes", "free_calls",
                                          "free_bytes",  "leak_count",  "leak_bytes" };

/* A new zeroed column of n values appended to th's; NULL when out of memory. */
JP_NOINSTR uint64_t *jp_new_column(struct profile *p, struct prof_thread *th, const char *name, uint32_t n)
{
    return profile_new_column(p, th, name, n);
}

JP_NOINSTR static struct prof_metric *add_column(struct profile *p, struct prof_thread *th, const char *name,
                                                 uint32_t n)
{
    struct prof_metric *m = &th->metrics[th->nmetrics];
    m->name = profile_intern(p, name);
    m->values = profile_alloc(p, (size_t)n * sizeof *m->values + 1);
    if (!m->name || !m->values)
        return NULL;
    th->nmetrics++;
    return m;
}

/* th's metric array with room for want more columns. */
JP_NOINSTR static int make_room(struct profile *p, struct prof_thread *th, uint32_t want)
{
    struct prof_metric *old = th->metrics;
    th->metrics = profile_alloc(p, (th->nmetrics + want) * sizeof *th->metrics);
    if (!th->metrics)
        return -1;
    if (old)
        memcpy(th->metrics, old, th->nmetrics * sizeof *old);
    return 0;
}

/* ncols columns named names[], their value arrays in cols[]. */
JP_NOINSTR static int add_columns(struct profile *p, struct prof_thread *th, const char *const *names,
                                  int ncols, uint32_t n, uint64_t **cols)
{
    for (int c = 0; c < ncols; c++) {
        struct prof_metric *m = add_column(p, th, names[c], n);
        if (!m)
            return -1;
        cols[c] = m->values;
    }
    return 0;
}

JP_NOINSTR static void fill_io(uint64_t **io, uint32_t i, const struct node_ext *x, double rate)
{
    io[COL_IO_CALLS][i] = x->io_calls;
    io[COL_IO_READ][i] = x->io_bytes_read;
    io[COL_IO_WRITTEN][i] = x->io_bytes_written;
    io[COL_IO_NS][i] = (uint64_t)((double)x->io_ticks / rate + 0.5);
}

JP_NOINSTR static void fill_alloc(uint64_t **al, uint32_t i, const struct node_ext *x)
{
    al[COL_ALLOCS][i] = x->allocs;
    al[COL_ALLOC_BYTES][i] = x->alloc_bytes;
    al[COL_FREES][i] = x->frees;
    al[COL_FREE_BYTES][i] = x->free_bytes;
}

JP_NOINSTR int jp_metrics_thread(struct profile *p, struct prof_thread *th,
                                 const struct arena_copy_node *nodes, uint32_t n)
{
    if (!metrics_active())
        return 0;
    int io_on = metrics_cfg.io, alloc_on = metrics_cfg.alloc;
    double r = metrics_cfg.rate > 0 ? metrics_cfg.rate : 1.0;
    if (alloc_on && metrics_leaks_build() != 0)
        return -1;
    uint64_t *io[COL_IO_END] = { 0 }, *al[COL_ALLOC_END] = { 0 };
    if (make_room(p, th, (io_on ? COL_IO_END : 0) + (alloc_on ? COL_ALLOC_END : 0)) != 0
        || (io_on && add_columns(p, th, io_cols, COL_IO_END, n, io) != 0)
        || (alloc_on && add_columns(p, th, alloc_cols, COL_ALLOC_END, n, al) != 0))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        const struct arena_node *node = jp_node(nodes[i].ref);
        arena_ref e = __atomic_load_n(&node->ext, __ATOMIC_ACQUIRE);
        if (e && io_on)
            fill_io(io, i, jp_at(e), r);
        if (e && alloc_on)
            fill_alloc(al, i, jp_at(e));
        if (alloc_on)
            metrics_leaks_of(nodes[i].ref, &al[COL_LEAKS][i], &al[COL_LEAK_BYTES][i]);
    }
    return 0;
}

JP_NOINSTR static int set_u64(struct profile *p, const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return profile_set_meta(p, key, buf);
}

JP_NOINSTR static int io_meta(struct profile *p, const struct metrics_counts *sum, double r)
{
    int rc = set_u64(p, "io_calls", sum->io_calls);
    rc |= set_u64(p, "io_bytes_read", sum->bytes_read);
    rc |= set_u64(p, "io_bytes_written", sum->bytes_written);
    rc |= set_u64(p, "io_ns", (uint64_t)((double)sum->io_ticks / r + 0.5));
    rc |= metrics_files_meta(p, r);
    rc |= metrics_series_meta(p, 0);
    return rc;
}

/* The peak is at least what is live now: a batch not yet added may hold
 * a high no thread has compared. */
JP_NOINSTR static int alloc_meta(struct profile *p, const struct metrics_counts *sum)
{
    if (metrics_leaks_build() != 0)
        return -1;
    uint64_t leak_count, leak_bytes, no_context;
    metrics_leaks_totals(&leak_count, &leak_bytes, &no_context);
    int rc = set_u64(p, "alloc_calls", sum->allocs);
    rc |= set_u64(p, "alloc_bytes", sum->alloc_bytes);
    rc |= set_u64(p, "free_calls", sum->frees);
    rc |= set_u64(p, "free_bytes", sum->free_bytes);
    rc |= set_u64(p, "free_untracked", sum->untracked_frees);
    int64_t live = metrics_live_now();
    uint64_t peak = metrics_live_peak();
    rc |= set_u64(p, "alloc_peak_bytes", live > 0 && (uint64_t)live > peak ? (uint64_t)live : peak);
    rc |= set_u64(p, "alloc_live_bytes", live > 0 ? (uint64_t)live : 0);
    rc |= set_u64(p, "leak_count", leak_count);
    rc |= set_u64(p, "leak_bytes", leak_bytes);
    rc |= set_u64(p, "leak_bytes_no_context", no_context);
    rc |= metrics_series_meta(p, 1);
    metrics_leaks_drop();
    return rc;
}

JP_NOINSTR int jp_metrics_process(struct profile *p)
{
    if (!metrics_active())
        return 0;
    double r = metrics_cfg.host->io_ticks_per_ns();
    metrics_ensure_rate();
    struct metrics_counts sum = metrics_counts_sum();
    int rc = set_u64(p, "io_interval_ns", metrics_cfg.interval_ns);
    if (metrics_cfg.io)
        rc |= io_meta(p, &sum, r);
    if (metrics_cfg.alloc)
        rc |= alloc_meta(p, &sum);
    return rc ? -1 : 0;
}
