/* Finding functions by name, glob or suffix (find_fn.h). */
#include "tools/find_fn.h"
#include "tools/cli.h"
#include "tools/names.h"
#include "tools/report.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* f's name in its simple C++ form (a malloc'd copy; NULL: no memory). */
static char *simple_of(const struct prof_func *f)
{
    return names_simple(f->name ? f->name : "");
}

static int is_glob(const char *fn)
{
    return strpbrk(fn, "*?[") != NULL;
}

/* name ends with "::" fn, fn not empty. */
static int suffix_of(const char *name, const char *fn)
{
    size_t n = strlen(name), k = strlen(fn);
    return k && n > k + 1 && !strcmp(name + n - k, fn) && name[n - k - 1] == ':' && name[n - k - 2] == ':';
}

static int glob_matches(const struct prof_func *f, const char *simple, const char *fn)
{
    return !fnmatch(fn, simple, 0) || !fnmatch(fn, f->name ? f->name : "", 0)
        || !fnmatch(fn, names_display(f), 0);
}

enum find_fn_how find_fn(const struct profile *p, const char *fn, uint8_t *target)
{
    memset(target, 0, p->nfuncs);
    int any = 0;
    for (uint32_t f = 0; f < p->nfuncs; f++)
        any |= target[f] = (uint8_t)report_name_matches(&p->funcs[f], fn);
    if (any)
        return FIND_EXACT;
    int glob = is_glob(fn);
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        char *s = simple_of(&p->funcs[f]);
        if (s)
            any |= target[f] =
                (uint8_t)(glob ? glob_matches(&p->funcs[f], s, fn) : !strcmp(s, fn) || suffix_of(s, fn));
        free(s);
    }
    return !any ? FIND_NONE : glob ? FIND_GLOB : FIND_SUFFIX;
}

void find_thread_parse(const char *t, long *tid, const char **name)
{
    char *end;
    long v = strtol(t, &end, 10);
    int number = *t && !*end && v >= 0 && v <= INT32_MAX;
    *tid = number ? v : -1;
    *name = number ? NULL : t;
}

int find_thread_matches(int32_t tid, const char *thread_name, long want_tid, const char *want_name)
{
    if (!want_name)
        return tid == want_tid;
    return thread_name && !fnmatch(want_name, thread_name, 0);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

uint32_t find_fn_candidates(FILE *out, const struct profile *p, const char *fn, uint32_t max)
{
    uint8_t *target = malloc(p->nfuncs + 1);
    char **names = calloc(p->nfuncs + 1, sizeof *names);
    uint32_t n = 0, distinct = 0;
    if (target && names && find_fn(p, fn, target) == FIND_SUFFIX) {
        for (uint32_t f = 0; f < p->nfuncs; f++)
            if (target[f] && (names[n] = simple_of(&p->funcs[f])))
                n++;
        qsort(names, n, sizeof *names, by_string);
        for (uint32_t i = 0; i < n; i++) {
            if (i && !strcmp(names[i], names[i - 1]))
                continue;
            if (distinct < max)
                fprintf(out, "%s%s", distinct ? ", " : "", names[i]);
            distinct++;
        }
        if (distinct > max)
            fprintf(out, " and %u more", distinct - max);
    }
    for (uint32_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(target);
    return distinct;
}

/* Levenshtein distance, two rows. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    size_t *row = malloc((m + 1) * 2 * sizeof *row);
    if (!row)
        return (size_t)-1;
    size_t *prev = row, *cur = row + m + 1;
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        size_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[m];
    free(row);
    return d;
}

struct scored {
    size_t score;
    char *name;
};

static int by_score(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    return strcmp(x->name, y->name);
}

uint32_t find_fn_closest(FILE *out, const struct profile *p, const char *fn, uint32_t max)
{
    struct scored *s = calloc(p->nfuncs + 1, sizeof *s);
    uint32_t n = 0, written = 0;
    size_t limit = strlen(fn) / 3 > 2 ? strlen(fn) / 3 : 2;
    for (uint32_t f = 0; s && f < p->nfuncs; f++) {
        char *name = simple_of(&p->funcs[f]);
        if (!name)
            continue;
        const char *last = strrchr(name, ':');
        last = last ? last + 1 : name;
        /* twice the edit distance: a name that holds fn (any case) scores
         * 3, behind a one-letter typo */
        size_t d = distance(fn, name), dl = distance(fn, last);
        size_t score = 2 * (d < dl ? d : dl);
        if (strcasestr(name, fn))
            score = score < 3 ? score : 3;
        if (score <= 2 * limit) {
            s[n].score = score;
            s[n++].name = name;
        } else {
            free(name);
        }
    }
    if (s)
        qsort(s, n, sizeof *s, by_score);
    for (uint32_t i = 0; i < n; i++)
        if (written < max && (i == 0 || strcmp(s[i].name, s[i - 1].name)))
            fprintf(out, "%s%s", written++ ? ", " : "", s[i].name);
    for (uint32_t i = 0; i < n; i++)
        free(s[i].name);
    free(s);
    return written;
}

/* FN ends the names of functions of several names in one of the
 * profiles: the candidates in one line, and 1; else 0. */
static int ambiguous(const struct profile *const *ps, size_t n, const char *fn, const char *option,
                     const char *where)
{
    for (size_t i = 0; i < n; i++) {
        char *list = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&list, &len);
        uint32_t k = mem ? find_fn_candidates(mem, ps[i], fn, 8) : 0;
        if (mem)
            fclose(mem);
        if (k > 1)
            cli_fail("%s'%s' ends %u function names in %s: %s; give more of the name "
                     "(A::%s), module:name, or a glob ('*::%s') for all of them",
                     option, fn, k, n == 1 ? where : "the profiles given", list, fn, fn);
        free(list);
        if (k > 1)
            return 1;
    }
    return 0;
}

static int anywhere(const struct profile *const *ps, size_t n, const char *fn)
{
    int any = 0;
    for (size_t i = 0; i < n && !any; i++) {
        uint8_t *target = malloc(ps[i]->nfuncs + 1);
        any = !target || find_fn(ps[i], fn, target) != FIND_NONE;
        free(target);
    }
    return any;
}

int find_fn_missing(const struct profile *const *ps, size_t n, const char *fn, const char *option,
                    const char *where)
{
    char *list = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&list, &len);
    uint32_t k = 0;
    for (size_t i = 0; mem && i < n && !k; i++)
        k = find_fn_closest(mem, ps[i], fn, 3);
    if (mem)
        fclose(mem);
    int rc = k ? cli_fail("%sno function named '%s' in %s; the closest: %s", option, fn, where, list)
               : cli_fail("%sno function named '%s' in %s", option, fn, where);
    free(list);
    return rc;
}

int find_fn_check(const struct profile *const *ps, size_t n, const char *fn, const char *option,
                  const char *where)
{
    if (ambiguous(ps, n, fn, option, where))
        return EXIT_FAIL;
    return anywhere(ps, n, fn) ? 0 : find_fn_missing(ps, n, fn, option, where);
}
