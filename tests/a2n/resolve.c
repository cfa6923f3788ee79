/*
 * Test driver: resolve addresses with liba2n and print one line each.
 *
 *   resolve [-l] [-p PID] [-R] [-n] ADDR...
 *     -l      ask for file:line
 *     -p PID  resolve in another process (default: this one)
 *     -q      print nothing per address; print one summary line instead:
 *             "N lookups, S with a symbol, T ms (C ms CPU)" (from a2n_open on)
 *     ADDR    hex address, or "-" to read addresses from stdin
 *
 * Output, tab separated:
 *   ADDR rc flags module module_path function file line module_offset symbol_addr
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hookit/a2n.h"

static int quiet;
static unsigned long lookups, found;

static double now_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void resolve(struct a2n *a, unsigned long long addr, int lines)
{
    struct a2n_result r;
    int rc = a2n_lookup(a, addr, lines, &r);
    lookups++;
    found += rc == 0;
    if (quiet)
        return;
    printf("0x%llx\t%d\t%d\t%s\t%s\t%s\t%s\t%u\t0x%llx\t0x%llx\n", addr, rc, r.flags,
           r.module, r.module_path, r.function, r.file ? r.file : "-", r.line,
           (unsigned long long)r.module_offset, (unsigned long long)r.symbol_addr);
}

int main(int argc, char **argv)
{
    int lines = 0, opt;
    pid_t pid = 0;
    while ((opt = getopt(argc, argv, "lp:q")) != -1) {
        if (opt == 'l')
            lines = 1;
        else if (opt == 'q')
            quiet = 1;
        else if (opt == 'p')
            pid = (pid_t)atoi(optarg);
        else
            return 2;
    }
    /* Addresses from stdin are read first so the timing is A2N's alone. */
    unsigned long long *in = NULL;
    size_t nin = 0, cap = 0;
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "-") != 0)
            continue;
        char buf[128];
        while (fgets(buf, sizeof buf, stdin)) {
            if (nin == cap && !(in = realloc(in, (cap = cap ? cap * 2 : 1024) * sizeof *in)))
                return 1;
            in[nin++] = strtoull(buf, NULL, 16);
        }
    }
    double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    struct a2n *a = a2n_open(pid);
    if (!a) {
        printf("open failed: %s\n", strerror(errno));
        return 1;
    }
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "-") == 0) {
            for (size_t k = 0; k < nin; k++)
                resolve(a, in[k], lines);
        } else {
            resolve(a, strtoull(argv[i], NULL, 16), lines);
        }
    }
    double t1 = now_ms(CLOCK_MONOTONIC), c1 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    a2n_close(a);
    if (quiet)
        printf("%lu lookups, %lu with a symbol, %.2f ms (%.2f ms CPU)\n", lookups, found,
               t1 - t0, c1 - c0);
    free(in);
    return 0;
}
