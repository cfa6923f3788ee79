/*
 * Per-file I/O counters (the Darshan set) and their text form in a profile.
 *
 * Shared by libjprof (counts while the program runs, stores the table in
 * the profile's metadata) and the `hookit` command (reads that table back,
 * or counts the same way from an ioprof event log).  Times are in the
 * caller's clock units while counting; the text form is in nanoseconds.
 *
 * Definitions (docs/io.md):
 *  - opens, reads, writes, seeks: successful calls of each kind (stdio and
 *    descriptor calls alike); errors: failed calls of any kind;
 *  - bytes read/written; highest byte read/written: the largest offset of
 *    a byte read/written (-1: none);
 *  - size histograms: one count per successful read/write in the bucket of
 *    its size, buckets 0-100, 100-1K, 1K-10K, 10K-100K, 100K-1M, 1M-4M,
 *    4M-10M, 10M-100M, 100M-1G, 1G+ (upper bounds included, K = 1024);
 *  - sequential read: starts at or after the end of the previous read of
 *    the file (consecutive: exactly at it); the same for writes; the first
 *    read (write) is neither; accesses of 0 bytes or at an unknown offset
 *    take no part;
 *  - read/write switches: a read after a write or a write after a read;
 *  - first/last: start of the first call, end of the last, since the
 *    process started; read/write/meta time: time in read calls, in write
 *    and sync calls, in everything else; slowest: the longest call and the
 *    bytes it moved.
 */
#ifndef HOOKIT_IOSTATS_H
#define HOOKIT_IOSTATS_H

#include <hookit/profiler.h>     /* enum hookit_io_op: the kinds of call */

#include <stddef.h>
#include <stdint.h>

#define IOSTATS_BUCKETS 10

struct iostats {
    uint64_t opens, reads, writes, seeks, syncs, metas, errors;
    uint64_t bytes_read, bytes_written;
    int64_t max_byte_read, max_byte_written;
    uint64_t seq_reads, seq_writes, consec_reads, consec_writes, rw_switches;
    uint64_t read_hist[IOSTATS_BUCKETS], write_hist[IOSTATS_BUCKETS];
    uint64_t first, last;               /* UINT64_MAX / 0 when none */
    uint64_t read_time, write_time, meta_time;
    uint64_t slowest_time, slowest_bytes;
    /* counting state */
    int64_t read_end, write_end;        /* end of the previous access, -1 none */
    uint32_t last_dir;                  /* 0 none, 1 read, 2 write */
};

/* The text form's row. */
struct iostats_row {
    uint32_t id;
    const char *path;
    struct iostats s;                   /* times in ns */
};

void iostats_init(struct iostats *s);
/* The bucket of an access of n bytes. */
int iostats_bucket(uint64_t n);
extern const char *const iostats_bucket_names[IOSTATS_BUCKETS];
/* One call: op is a HOOKIT_IO_* value; t0/t1
 * in the caller's units, relative to the process start. */
void iostats_account(struct iostats *s, uint32_t op, int failed, uint64_t bytes, int64_t offset,
                     uint64_t t0, uint64_t t1);
/* The same with the call's time dt given: t1 - t0 less what ran in the
 * thread during the call that is not the call's (a signal handler). */
void iostats_account_net(struct iostats *s, uint32_t op, int failed, uint64_t bytes, int64_t offset,
                         uint64_t t0, uint64_t t1, uint64_t dt);

/* The table as text: a header line of column names, then one line per row,
 * tab-separated; paths escaped (\t \n \\); times converted from the
 * counting units with ticks_per_ns.  Returns a malloc'ed string or NULL. */
char *iostats_format(const struct iostats_row *rows, size_t n, double ticks_per_ns);
/* Parse iostats_format's text.  *rows is malloc'ed (paths inside it too,
 * freed with iostats_free_rows).  0, or -1 (not that format / no memory). */
int iostats_parse(const char *text, struct iostats_row **rows, size_t *n);
void iostats_free_rows(struct iostats_row *rows, size_t n);

#endif
