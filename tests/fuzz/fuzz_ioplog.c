/*
 * Fuzz target: the ioprof log reader (profile/ioplog_read.c), which
 * `hookit io` uses for every log.
 *
 * An input not starting with the log's magic line gets it prepended, so
 * mutations exercise the parser and the counting behind it, not only the
 * first-line check.  The result is then looked at whole, so a table the
 * reader got wrong (a path not terminated, a count past the end) shows up
 * under ASan here and not in a later printer.  Any crash or sanitizer
 * report is a finding.
 */
#include "profile/ioplog.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_ioplog: %s\n", what);
    abort();
}

/* Every string and row the reader handed back, read through. */
static void check(const struct ioplog *log)
{
    static volatile size_t sink;
    size_t sum = log->exe ? strlen(log->exe) : 0;
    for (size_t i = 0; i < log->nfiles; i++) {
        sum += strlen(log->files[i].path);
        if (i && log->files[i].id <= log->files[i - 1].id)
            fail("file rows not in id order");
    }
    uint64_t calls = 0;
    for (size_t i = 0; i < log->nfuncs; i++) {
        sum += strlen(log->funcs[i].name);
        calls += log->funcs[i].calls;
    }
    if (calls != log->events)
        fail("function calls do not add up to the events");
    for (size_t i = 1; i < log->npoints; i++)
        if (log->points[i].idx == log->points[i - 1].idx)
            fail("two points in a row for one time slice");
    sink = sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char magic[] = IOPLOG_MAGIC " 1\n";
    char *text = malloc(sizeof magic + size);
    if (!text)
        abort();
    size_t len = 0;
    if (size < strlen(IOPLOG_MAGIC) || memcmp(data, IOPLOG_MAGIC, strlen(IOPLOG_MAGIC)) != 0) {
        memcpy(text, magic, sizeof magic - 1);
        len = sizeof magic - 1;
    }
    if (size)
        memcpy(text + len, data, size);
    len += size;
    /* Time slices from 1 us (the shortest `hookit io -i` takes) to
     * about 18 minutes, varied with the input. */
    uint64_t interval_ns = 1000ull << (size % 31);
    char err[512];
    struct ioplog *log = ioplog_read_mem(text, len, "fuzz.log", interval_ns, err, sizeof err);
    if (log)
        check(log);
    else if (strncmp(err, "fuzz.log: ", 10) != 0)
        fail("a refused log without a message naming it");
    ioplog_free(log);
    free(text);
    return 0;
}
