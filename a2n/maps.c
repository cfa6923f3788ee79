/*
 * /proc/PID/maps: one line is
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [spaces PATH]
 * with hexadecimal START, END, OFFSET, MAJOR, MINOR and decimal INODE.
 * The parser never trusts its input (it is fuzzed): every field is bounded,
 * and a line that does not fit the format is rejected as a whole.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2n/a2n_internal.h"

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* At most max_digits hex digits (at least one) into *out; advances *p. */
static int parse_hex(const char **p, int max_digits, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0, d;
    while ((d = hex_digit(**p)) >= 0) {
        if (++n > max_digits)
            return -1;
        v = v << 4 | (uint64_t)d;
        (*p)++;
    }
    if (n == 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_dec(const char **p, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    while (**p >= '0' && **p <= '9') {
        unsigned d = (unsigned)(**p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        n++;
        (*p)++;
    }
    if (n == 0)
        return -1;
    *out = v;
    return 0;
}

static int expect(const char **p, char c)
{
    if (**p != c)
        return -1;
    (*p)++;
    return 0;
}

static int parse_perms(const char **p, char perms[5])
{
    static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
    for (int i = 0; i < 4; i++) {
        char c = (*p)[i];
        if (c == '\0' || (c != allowed[i][0] && c != allowed[i][1]))
            return -1;
        perms[i] = c;
    }
    perms[4] = '\0';
    *p += 4;
    return 0;
}

/* The path is the rest of the line after the spaces that pad the inode
 * column; it may itself contain spaces.  The trailing newline is dropped;
 * a path too long for the buffer is cut (it is only ever used as a name and
 * to open the file, which then simply fails). */
static int parse_path(const char *p, char *path, size_t size)
{
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strcspn(p, "\n");
    if (p[n] == '\n' && p[n + 1] != '\0')
        return -1;              /* more than one line */
    if (n >= size)
        n = size - 1;
    memcpy(path, p, n);
    path[n] = '\0';
    return 0;
}

A2N_API int a2n_parse_maps_line(const char *line, struct a2n_map *out)
{
    struct a2n_map m;
    uint64_t dev_major, dev_minor;
    const char *p = line;

    if (!line || !out)
        return -1;
    memset(&m, 0, sizeof m);
    if (parse_hex(&p, 16, &m.start) || expect(&p, '-') || parse_hex(&p, 16, &m.end)
        || expect(&p, ' ') || parse_perms(&p, m.perms) || expect(&p, ' ')
        || parse_hex(&p, 16, &m.file_offset) || expect(&p, ' ')
        || parse_hex(&p, 8, &dev_major) || expect(&p, ':') || parse_hex(&p, 8, &dev_minor)
        || expect(&p, ' ') || parse_dec(&p, &m.inode))
        return -1;
    if (m.end <= m.start)
        return -1;
    if (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
        return -1;
    if (parse_path(p, m.path, sizeof m.path))
        return -1;
    memcpy(out, &m, sizeof m);
    return 0;
}

/* Set by a2n_open_maps while it reads a saved copy of a maps file. */
static __thread const char *maps_override;

void a2n_maps_override(const char *path)
{
    maps_override = path;
}

int a2n_read_maps(pid_t pid, int (*fn)(void *ctx, const struct a2n_map *m), void *ctx)
{
    char name[4096];
    if (maps_override)
        snprintf(name, sizeof name, "%s", maps_override);
    else if (pid)
        snprintf(name, sizeof name, "/proc/%d/maps", (int)pid);
    else
        snprintf(name, sizeof name, "/proc/self/maps");
    FILE *f = fopen(name, "re");
    if (!f)
        return -1;

    /* One struct a2n_map (4 KiB of path) reused for every line: a maps file
     * of a million lines costs no more memory than one of ten. */
    struct a2n_map *m = malloc(sizeof *m);
    char *line = NULL;
    size_t cap = 0;
    int rc = m ? 0 : -1;
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        if (a2n_parse_maps_line(line, m) == 0)
            rc = fn(ctx, m);
    }
    int saved = errno;
    free(line);
    free(m);
    fclose(f);
    errno = saved;
    return rc;
}
