/*
 * The call-flow trace: libhktrace's output file (hookit.<exe>.<pid>.trace)
 * and its reader.  The format is documented in docs/trace-format.md.
 *
 * A trace holds a fixed header, one section per thread with that thread's
 * event records (8 bytes each), and at the end an embedded hookit profile
 * without threads (process metadata and the function table with resolved
 * names) plus the map from the records' function ids to that table.
 *
 * The reader validates the whole file when it is opened (every record of
 * every thread is decoded once), so iterating events afterwards cannot
 * fail; every error names the file and the byte offset.
 */
#ifndef HOOKIT_PROFILE_TRACE_H
#define HOOKIT_PROFILE_TRACE_H

#include "profile/u64map.h"
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* ---- the format ----------------------------------------------------------- */
#define TR_MAGIC        "\x89HKTRACE"   /* 8 bytes, no NUL */
#define TR_MAGIC_LEN    8
#define TR_MAJOR        1
#define TR_MINOR        0
#define TR_HEADER_SIZE  64
#define TR_SECTION_HDR  12              /* u32 type + u64 body length */
#define TR_THREAD_HDR   64              /* fixed part of a thread section body */

/* Header field offsets (little-endian). */
#define TR_OFF_MAJOR        8           /* u16 */
#define TR_OFF_MINOR        10          /* u16 */
#define TR_OFF_HDRSIZE      12          /* u32 */
#define TR_OFF_FILESIZE     16          /* u64 */
#define TR_OFF_TICKS_PER_NS 24          /* f64 (IEEE bits as u64) */
#define TR_OFF_TICK0        32          /* u64: clock at process start */
#define TR_OFF_TICK_END     40          /* u64: clock when the trace was written */
#define TR_OFF_FLAGS        48          /* u32 TR_FLAG_* */
#define TR_OFF_NTHREADS     52          /* u32 */

#define TR_FLAG_SIZE_CAP    0x1u        /* the size cap was reached: events are missing */

enum tr_section_type {
    TR_SEC_THREAD  = 1,                 /* one thread's records */
    TR_SEC_PROFILE = 2,                 /* an embedded profile: process + functions */
    TR_SEC_IDMAP   = 3,                 /* u32 count, then count u32 function ids */
};

/* Thread section body: fixed part, then nrecords u64 records. */
#define TR_TH_TID        0              /* i32 */
#define TR_TH_INDEX      4              /* u32 */
#define TR_TH_NAME       8              /* char[16], NUL padded */
#define TR_TH_NRECORDS   24             /* u64 */
#define TR_TH_SHORT      32             /* u64 calls dropped by the threshold */
#define TR_TH_LOST       40             /* u64 events lost (size cap, table full) */
#define TR_TH_UNMATCHED  48             /* u64 exits that matched no open call */
#define TR_TH_FLAGS      56             /* u32 TR_FLAG_* for this thread */

/* A record is a little-endian u64:
 *   bits 0-1   kind (TR_REC_*)
 *   ENTER/EXIT: bits 2-23 function id, bits 24-63 ticks since the previous record
 *   TIME:       bits 2-63 the clock (ticks), absolute */
enum tr_record_kind { TR_REC_ENTER = 0, TR_REC_EXIT = 1, TR_REC_TIME = 2 };
#define TR_ID_BITS      22
#define TR_MAX_ID       ((1u << TR_ID_BITS) - 1)
#define TR_DELTA_BITS   40
#define TR_MAX_DELTA    ((1ull << TR_DELTA_BITS) - 1)

static inline uint64_t tr_record(unsigned kind, uint32_t id, uint64_t delta)
{
    return (uint64_t)kind | (uint64_t)id << 2 | delta << 24;
}

static inline uint64_t tr_time_record(uint64_t ticks)
{
    return (uint64_t)TR_REC_TIME | ticks << 2;
}

/* ---- the reader ----------------------------------------------------------- */
struct trace_thread {
    int32_t tid;
    uint32_t index;
    const char *name;
    uint64_t nrecords;
    uint64_t short_dropped, lost, unmatched;
    uint32_t flags;
    const unsigned char *records;   /* nrecords * 8 bytes inside the trace's buffer */
    uint64_t records_offset;        /* file offset of the first record */
};

struct trace {
    char *path;
    unsigned char *buf;             /* the whole file */
    size_t len;
    double ticks_per_ns;
    uint64_t tick0, tick_end;
    uint32_t flags;
    uint32_t nthreads;
    struct trace_thread *threads;
    /* process metadata and the function table (no threads) */
    struct profile *meta;
    size_t meta_off, meta_len;      /* the embedded profile inside buf */
    uint32_t nids;                  /* function id -> index into meta->funcs */
    uint32_t *id_to_func;           /* PROF_NONE for unknown ids; NULL when sparse */
    struct u64map id_sparse;        /* id + 1 -> index, when the ids are too sparse
                                       for a table of nids entries (hktrace's ids
                                       are hash slots: up to TR_MAX_ID) */
};

enum trace_event_kind { TRACE_ENTER, TRACE_EXIT };

struct trace_event {
    enum trace_event_kind kind;
    uint32_t func;                  /* index into trace->meta->funcs */
    uint32_t depth;                 /* 0 for an outermost call; an exit has its enter's depth */
    uint64_t ns;                    /* since process start */
    uint64_t tick;                  /* the raw clock value */
};

/* Iterates one thread's events in order.  Exits that match no open call are
 * skipped; an exit of a call further down the stack (longjmp) first closes
 * the calls above it.  Calls still open at the end are closed at the time
 * the trace was written (synthetic exits, flagged by trace_cursor.closing). */
struct trace_cursor {
    const struct trace *tr;
    const struct trace_thread *th;
    uint64_t i;                     /* next record */
    uint64_t tick;
    uint32_t *stack;                /* function of each open call */
    uint32_t depth, cap;
    uint32_t pending_close;         /* frames still to close before the next record */
    uint32_t target_depth;
    int closing;                    /* the stream has ended: closing open calls */
};

/* 1 when buf starts with the trace magic. */
int trace_is_trace(const void *buf, size_t len);
/* 1 when the file at path starts with the trace magic. */
int trace_file_is_trace(const char *path);

/* Read and validate a trace.  NULL with one line in err naming the file and
 * the byte offset on any problem. */
struct trace *trace_read_file(const char *path, char *err, size_t errlen);
/* Same from memory (buf is copied); flags: PROFILE_READ_NO_CRC for fuzzing. */
struct trace *trace_read_mem(const void *buf, size_t len, const char *name, int flags,
                             char *err, size_t errlen);
void trace_free(struct trace *tr);

/* ns since process start of a clock value. */
uint64_t trace_ticks_to_ns(const struct trace *tr, uint64_t tick);

int trace_cursor_init(struct trace_cursor *c, const struct trace *tr, const struct trace_thread *th);
/* The next event: 1, or 0 at the end. */
int trace_next(struct trace_cursor *c, struct trace_event *ev);
void trace_cursor_free(struct trace_cursor *c);

/* The calling-context trees of the trace as a profile every view can read
 * (metadata "source" = "trace").  NULL with a message in err. */
struct profile *trace_to_profile(const struct trace *tr, char *err, size_t errlen);

#endif
