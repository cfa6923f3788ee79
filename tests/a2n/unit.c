/*
 * Test driver for the parts of A2N that need no target process.
 *
 *   unit parse          each stdin line -> "OK\tSTART\tEND\tPERMS\tOFF\tINODE\tPATH|" or "ERR"
 *   unit demangle NAME... each NAME -> its demangled form, or "(null)"
 *   unit vdso           look up this process's vdso: its first byte, then
 *                       every 4 bytes of it; prints the lines with a symbol
 *   unit self           look up functions of this process (pid 0): a static
 *                       one, main, getpid in libc, the vdso, a heap block
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "hookit/a2n.h"

static int parse(void)
{
    char *line = NULL;
    size_t cap = 0;
    struct a2n_map m;
    while (getline(&line, &cap, stdin) > 0) {
        /* Lines arrive hex-escaped (\xNN) so any byte can be tested. */
        char *w = line;
        for (char *r = line; *r; r++) {
            unsigned v;
            if (r[0] == '\\' && r[1] == 'x' && sscanf(r + 2, "%2x", &v) == 1) {
                *w++ = (char)v;
                r += 3;
            } else if (*r != '\n') {
                *w++ = *r;
            }
        }
        *w = '\0';
        if (a2n_parse_maps_line(line, &m) == 0)
            printf("OK\t%llx\t%llx\t%s\t%llx\t%llu\t%s|\n", (unsigned long long)m.start,
                   (unsigned long long)m.end, m.perms, (unsigned long long)m.file_offset,
                   (unsigned long long)m.inode, m.path);
        else
            printf("ERR\n");
    }
    free(line);
    return 0;
}

static int demangle(int n, char **names)
{
    for (int i = 0; i < n; i++) {
        char *d = a2n_demangle(names[i]);
        printf("%s\n", d ? d : "(null)");
        free(d);
    }
    return 0;
}

static void show(struct a2n *a, uint64_t addr)
{
    struct a2n_result r;
    int rc = a2n_lookup(a, addr, 0, &r);
    printf("%d\t%s\t%s\t%s\t0x%llx\n", rc, r.module, r.module_path, r.function,
           (unsigned long long)r.module_offset);
}

static int vdso(void)
{
    uint64_t base = getauxval(AT_SYSINFO_EHDR);
    if (!base) {
        printf("no vdso\n");
        return 0;
    }
    struct a2n *a = a2n_open(0);
    if (!a)
        return 1;
    show(a, base);
    const char *last = NULL;
    for (uint64_t p = base; p < base + 8192; p += 4) {
        struct a2n_result r;
        if (a2n_lookup(a, p, 0, &r) == 0 && r.function != last) {
            last = r.function;
            show(a, p);
        }
    }
    a2n_close(a);
    return 0;
}

int main(int argc, char **argv);

static int __attribute__((noinline)) static_in_unit(int x)
{
    return x * 7;
}

static int self(void)
{
    struct a2n *a = a2n_open(0);
    if (!a)
        return 1;
    void *heap = malloc(64);
    struct { const char *label; void *p; } what[] = {
        { "static_in_unit", (void *)static_in_unit },
        { "main", (void *)main },
        { "getpid", dlsym(RTLD_DEFAULT, "getpid") },
        { "vdso", (void *)getauxval(AT_SYSINFO_EHDR) },
        { "heap", heap },
    };
    for (size_t i = 0; i < sizeof what / sizeof what[0]; i++) {
        printf("%s\t", what[i].label);
        show(a, (uint64_t)(uintptr_t)what[i].p);
    }
    free(heap);
    a2n_close(a);
    return static_in_unit(0);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "self") == 0)
        return self();
    if (argc >= 2 && strcmp(argv[1], "parse") == 0)
        return parse();
    if (argc >= 2 && strcmp(argv[1], "demangle") == 0)
        return demangle(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "vdso") == 0)
        return vdso();
    return 2;
}
