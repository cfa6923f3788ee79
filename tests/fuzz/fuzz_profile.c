/*
 * Fuzz target: the profile reader (profile/read.c).
 *
 * Reads the input with the checksum off, so mutations reach the section
 * parsers.  A profile the reader accepts must hold its invariants (every
 * node's function in the table, parents before children, strings present),
 * and must survive a round trip: written again with profile_write_fd, it
 * reads back (crc on) with the same shape.
 */
#include "profile/profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NAME "fuzz.prof"

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_profile: %s: %s\n", what, detail ? detail : "");
    abort();
}

/* Touch every string and array a consumer would: ASan flags dangling ones. */
static size_t check(const struct profile *p)
{
    size_t sink = 0;
    if (!p->process.exe)
        fail("no exe", NULL);
    sink += strlen(p->process.exe);
    for (uint32_t i = 0; i < p->process.argc; i++)
        sink += strlen(p->process.argv[i]);
    for (uint32_t i = 0; i < p->process.nmeta; i++)
        sink += strlen(p->process.meta[i].key) + strlen(p->process.meta[i].value);
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        sink += strlen(p->funcs[i].name) + strlen(p->funcs[i].module);
        if (p->funcs[i].file)
            sink += strlen(p->funcs[i].file);
    }
    for (uint32_t t = 0; t < p->nthreads; t++) {
        const struct prof_thread *th = &p->threads[t];
        sink += strlen(th->name);
        for (uint32_t i = 0; i < th->nnodes; i++) {
            const struct prof_node *n = &th->nodes[i];
            if (n->func >= p->nfuncs)
                fail("node function out of range", NULL);
            if (n->parent != PROF_NONE && n->parent >= i)
                fail("node parent not before node", NULL);
            sink += n->calls;
        }
        for (uint32_t m = 0; m < th->nmetrics; m++) {
            sink += strlen(th->metrics[m].name);
            for (uint32_t i = 0; i < th->nnodes; i++)
                sink += th->metrics[m].values[i];
        }
    }
    return sink;
}

static void round_trip(const struct profile *p)
{
    static int fd = -1;
    char err[512];
    if (fd < 0 && (fd = memfd_create("fuzz-profile", 0)) < 0)
        return;
    if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) != 0)
        return;
    if (profile_write_fd(p, fd) != 0)
        fail("an accepted profile could not be written again", NULL);
    off_t len = lseek(fd, 0, SEEK_END);
    unsigned char *buf = malloc(len ? (size_t)len : 1);
    if (!buf || pread(fd, buf, (size_t)len, 0) != len)
        fail("pread", NULL);
    struct profile *q = profile_read_mem(buf, (size_t)len, "roundtrip.prof", err, sizeof err);
    if (!q)
        fail("a rewritten profile does not read back", err);
    if (q->nfuncs != p->nfuncs || q->nthreads != p->nthreads || q->process.argc != p->process.argc)
        fail("round trip changed the profile's shape", NULL);
    for (uint32_t t = 0; t < p->nthreads; t++)
        if (q->threads[t].nnodes != p->threads[t].nnodes)
            fail("round trip changed a thread's node count", NULL);
    profile_free(q);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    err[0] = 0;
    struct profile *p = profile_read_mem_flags(data, size, NAME, PROFILE_READ_NO_CRC,
                                               err, sizeof err);
    if (!p) {
        /* A refusal must say which file. */
        if (strncmp(err, NAME, strlen(NAME)) != 0)
            fail("error message does not name the file", err);
        return 0;
    }
    volatile size_t sink = check(p);
    (void)sink;
    round_trip(p);
    profile_free(p);
    return 0;
}
