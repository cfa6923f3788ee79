/*
 * Fuzz target: the trace reader (profile/trace_read.c).
 *
 * Reads the input with the checksum of the embedded profile off.  An
 * accepted trace is then used as `hookit` uses it: every thread's events
 * iterated with a cursor (depths must stay consistent: an exit has its
 * enter's depth), and the whole trace turned into a profile whose trees
 * hold the profile invariants.
 */
#include "profile/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "fuzz.trace"

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_trace: %s: %s\n", what, detail ? detail : "");
    abort();
}

static void walk_thread(const struct trace *tr, const struct trace_thread *th)
{
    struct trace_cursor c;
    struct trace_event ev;
    if (trace_cursor_init(&c, tr, th) != 0)
        return;                     /* out of memory */
    uint32_t depth = 0;
    uint64_t n = 0;
    while (trace_next(&c, &ev)) {
        if (ev.func >= tr->meta->nfuncs)
            fail("event function out of range", NULL);
        if (ev.kind == TRACE_ENTER) {
            if (ev.depth != depth)
                fail("enter depth is not the current depth", NULL);
            depth++;
        } else {
            if (depth == 0 || ev.depth != depth - 1)
                fail("exit depth does not match an open call", NULL);
            depth--;
        }
        if (++n > 4 * th->nrecords + 16)
            fail("more events than records can give", NULL);
    }
    if (depth != 0)
        fail("calls left open at the end of a thread", NULL);
    trace_cursor_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    err[0] = 0;
    struct trace *tr = trace_read_mem(data, size, NAME, PROFILE_READ_NO_CRC, err, sizeof err);
    if (!tr) {
        if (strncmp(err, NAME, strlen(NAME)) != 0)
            fail("error message does not name the file", err);
        return 0;
    }
    for (uint32_t t = 0; t < tr->nthreads; t++)
        walk_thread(tr, &tr->threads[t]);
    struct profile *p = trace_to_profile(tr, err, sizeof err);
    if (p) {
        for (uint32_t t = 0; t < p->nthreads; t++) {
            const struct prof_thread *th = &p->threads[t];
            for (uint32_t i = 0; i < th->nnodes; i++) {
                if (th->nodes[i].func >= p->nfuncs)
                    fail("node function out of range", NULL);
                if (th->nodes[i].parent != PROF_NONE && th->nodes[i].parent >= i)
                    fail("node parent not before node", NULL);
                if (th->nodes[i].excl_ns > th->nodes[i].incl_ns)
                    fail("exclusive time above inclusive", NULL);
            }
        }
        profile_free(p);
    }
    trace_free(tr);
    return 0;
}
