/*
 * readfuzz: hammers the profile reader with damaged copies of a valid
 * profile, in-process, so that when built with -fsanitize=address,undefined
 * any out-of-bounds access or overflow aborts.  Used by test_profile_format.
 *
 *   readfuzz FILE [ITERATIONS]
 *
 * Checks: the intact file reads; every proper prefix fails with a message
 * naming the file and an offset; every single-bit flip fails (the crc);
 * with the crc check off, every bit flip and random mutation either fails
 * with such a message or gives a profile whose invariants hold.
 */
#include "profile/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *NAME = "fuzz.prof";
static int failures;

static void bad(const char *what, size_t a, const char *msg)
{
    if (failures++ < 20)
        fprintf(stderr, "readfuzz: %s (%zu): %s\n", what, a, msg);
}

/* Touch everything a consumer would: ASan catches dangling strings. */
static void check_profile(const struct profile *p, const char *what, size_t a)
{
    size_t sink = 0;
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
            if (th->nodes[i].func >= p->nfuncs)
                bad("node function out of range", i, what);
            if (th->nodes[i].parent != PROF_NONE && th->nodes[i].parent >= i)
                bad("node parent not before node", i, what);
        }
        for (uint32_t m = 0; m < th->nmetrics; m++) {
            sink += strlen(th->metrics[m].name);
            for (uint32_t i = 0; i < th->nnodes; i++)
                sink += (size_t)th->metrics[m].values[i];
        }
    }
    if (sink == 1)
        (void)a;
}

static void try_read(const unsigned char *buf, size_t len, int flags, int must_fail,
                     const char *what, size_t a)
{
    char err[512];
    /* A copy of exactly len bytes so ASan sees any read past the end. */
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    struct profile *p = profile_read_mem_flags(copy, len, NAME, flags, err, sizeof err);
    if (p) {
        if (must_fail)
            bad(what, a, "read succeeded");
        check_profile(p, what, a);
        profile_free(p);
    } else if (strncmp(err, "fuzz.prof: ", 11) != 0 ||
               (!strstr(err, "offset") && !strstr(err, "bad magic"))) {
        bad(what, a, err);
    }
    free(copy);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: readfuzz FILE [ITERATIONS]\n");
        return 2;
    }
    long iterations = argc > 2 ? atol(argv[2]) : 20000;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return 2;
    static unsigned char buf[1 << 20], work[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);

    char err[512];
    struct profile *p = profile_read_mem(buf, n, NAME, err, sizeof err);
    if (!p) {
        fprintf(stderr, "readfuzz: the intact file does not read: %s\n", err);
        return 1;
    }
    profile_free(p);

    for (size_t len = 0; len < n; len++) {
        try_read(buf, len, 0, 1, "prefix", len);
        try_read(buf, len, PROFILE_READ_NO_CRC, 1, "prefix without crc", len);
    }
    for (size_t bit = 0; bit < n * 8; bit++) {
        memcpy(work, buf, n);
        work[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        try_read(work, n, 0, 1, "bit flip", bit);
        try_read(work, n, PROFILE_READ_NO_CRC, 0, "bit flip without crc", bit);
    }
    srand(12345);
    for (long it = 0; it < iterations; it++) {
        memcpy(work, buf, n);
        size_t len = n;
        int edits = 1 + rand() % 4;
        for (int e = 0; e < edits; e++) {
            size_t at = (size_t)rand() % n;
            switch (rand() % 3) {
            case 0: work[at] = (unsigned char)rand(); break;
            case 1: work[at] = (unsigned char)(rand() % 2 ? 0xff : 0x00); break;
            default: work[at] ^= (unsigned char)(1u << (rand() % 8)); break;
            }
        }
        if (rand() % 8 == 0)
            len = (size_t)rand() % n;
        try_read(work, len, PROFILE_READ_NO_CRC, 0, "mutation", (size_t)it);
    }
    printf("readfuzz: %zu bytes, %zu prefixes, %zu bit flips, %ld mutations, %d failures\n",
           n, n, n * 8, iterations, failures);
    return failures ? 1 : 0;
}
