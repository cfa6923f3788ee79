/* The tables of a profile merged across ranks (profile/merge_ranks.h) as JSON
 * arrays of objects, one key per column: "ranks" and "functions" at the top
 * of the document (docs/mpi.md, docs/json-schema.md).  A field of digits is
 * a number, anything else a string. */
#include "tools/json_ranks.h"
#include "tools/json.h"
#include "profile/merge_ranks.h"

#include <stdlib.h>
#include <string.h>

#define MAX_COLUMNS 32

static void value(struct json *j, const char *s)
{
    const char *d = *s == '-' ? s + 1 : s;
    size_t len = strlen(d);
    if (len == 0 || len > 18 || strspn(d, "0123456789") != len)
        json_string(j, s);
    else if (*s == '-')
        json_i64(j, strtoll(s, NULL, 10));
    else
        json_u64(j, strtoull(s, NULL, 10));
}

static void table(struct json *j, const char *key, const char *text)
{
    char *copy = strdup(text), *save = NULL;
    if (!copy)
        return;
    char *head[MAX_COLUMNS], *f[MAX_COLUMNS];
    int ncols = 0;
    json_key(j, key);
    json_begin_array(j);
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!ncols) {
            ncols = rank_table_split(line, head, MAX_COLUMNS);
            continue;
        }
        int n = rank_table_split(line, f, MAX_COLUMNS);
        json_begin_object(j);
        for (int c = 0; c < n && c < ncols; c++) {
            json_key(j, head[c]);
            value(j, f[c]);
        }
        json_end_object(j);
    }
    json_end_array(j);
    free(copy);
}

void json_rank_tables(struct json *j, const struct profile *p)
{
    const char *ranks = profile_get_meta(p, "ranks"), *funcs = profile_get_meta(p, "functions");
    if (!ranks || !funcs)
        return;
    table(j, "ranks", ranks);
    table(j, "functions", funcs);
}
