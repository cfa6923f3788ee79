/*
 * Fuzz target: the /proc/PID/maps line parser (a2n_parse_maps_line).  A
 * line it accepts gives a non-empty range, valid permissions and a
 * NUL-terminated path that fits its buffer.
 */
#include <hookit/a2n.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = 0;
    struct a2n_map m;
    memset(&m, 0xa5, sizeof m);
    if (a2n_parse_maps_line(line, &m) == 0) {
        if (m.end <= m.start)
            abort();
        if (memchr(m.path, 0, sizeof m.path) == NULL)
            abort();
        if (strlen(m.perms) != 4 || !strchr("r-", m.perms[0]) || !strchr("w-", m.perms[1])
            || !strchr("x-", m.perms[2]) || !strchr("ps", m.perms[3]))
            abort();
        if (strchr(m.path, '\n'))
            abort();
    }
    free(line);
    return 0;
}
