/*
 * Test driver: resolve addresses with liba2n and print one line each.
 *
 *   resolve [-l] [-p PID] [-R] [-n] ADDR...
 *     -l      ask for file:line
 *     -p PID  resolve in another process (default: this one)
 *     ADDR    hex address, or "-" to read addresses from stdin
 *
 * Output, tab separated:
 *   ADDR rc flags module module_path function file line module_offset symbol_addr
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hookit/a2n.h"

static void resolve(struct a2n *a, unsigned long long addr, int lines)
{
    struct a2n_result r;
    int rc = a2n_lookup(a, addr, lines, &r);
    printf("0x%llx\t%d\t%d\t%s\t%s\t%s\t%s\t%u\t0x%llx\t0x%llx\n", addr, rc, r.flags,
           r.module, r.module_path, r.function, r.file ? r.file : "-", r.line,
           (unsigned long long)r.module_offset, (unsigned long long)r.symbol_addr);
}

int main(int argc, char **argv)
{
    int lines = 0, opt;
    pid_t pid = 0;
    while ((opt = getopt(argc, argv, "lp:")) != -1) {
        if (opt == 'l')
            lines = 1;
        else if (opt == 'p')
            pid = (pid_t)atoi(optarg);
        else
            return 2;
    }
    struct a2n *a = a2n_open(pid);
    if (!a) {
        printf("open failed: %s\n", strerror(errno));
        return 1;
    }
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "-") == 0) {
            char buf[128];
            while (fgets(buf, sizeof buf, stdin))
                resolve(a, strtoull(buf, NULL, 16), lines);
        } else {
            resolve(a, strtoull(argv[i], NULL, 16), lines);
        }
    }
    a2n_close(a);
    return 0;
}
