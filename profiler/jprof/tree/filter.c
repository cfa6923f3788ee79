/* Run-time filters (docs/filters.md): JPROFOPTS's exclude= and include=,
 * lists of glob patterns separated by '@' (a character no C++ name and no
 * shell word trips on; ',' separates JPROFOPTS's options, and C++ names
 * hold commas, spaces, colons and '*').  A pattern matches:
 *   NAME          a function, as `hookit report` shows it ("ns::Class::f",
 *                 no parameters, template arguments or return type) or as
 *                 demangled in full ("int ns::Class::f(int) const");
 *   module:GLOB   the object file it is in, by base name ("libz.so*");
 *   file:GLOB     its source file, by path or base name ("*.h"); needs
 *                 debug info, read the first time such a pattern is asked.
 * A function is skipped when an exclude pattern matches it, or when include
 * patterns were given and none matches it.  Globs know '*' and '?'.
 *
 * Asked once per function (skip.c keeps the answer), through an A2N view
 * of the process of the filters' own, under a lock of its own. */
#include "skip.h"
#include <hookit/a2n.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum pattern_kind { PAT_NAME, PAT_MODULE, PAT_FILE };
struct pattern {
    enum pattern_kind kind;
    const char *glob;
};
#define MAX_PATTERNS 256
static struct pattern exclude[MAX_PATTERNS], include[MAX_PATTERNS];
static unsigned nexclude, ninclude;
static int want_lines;
static struct a2n *names;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static int names_stale; /* a library was unloaded: reload before the next look-up */

/* text split at '@' into list; patterns kept in one copy of text. */
JP_NOINSTR static int parse_list(const char *text, struct pattern *list, unsigned *n,
                                 void (*log)(const char *, ...))
{
    if (!text || !*text)
        return 0;
    char *copy = strdup(text);
    if (!copy)
        return -1;
    for (char *item = copy, *next; item; item = next) {
        next = strchr(item, '@');
        if (next)
            *next++ = 0;
        if (!*item)
            continue;
        if (*n == MAX_PATTERNS) {
            log("jprof: more than %d filter patterns; the rest ignored", MAX_PATTERNS);
            break;
        }
        struct pattern *p = &list[(*n)++];
        p->kind = PAT_NAME;
        p->glob = item;
        if (!strncmp(item, "module:", 7) && item[7] != ':') {
            p->kind = PAT_MODULE;
            p->glob = item + 7;
        } else if (!strncmp(item, "file:", 5) && item[5] != ':') {
            p->kind = PAT_FILE;
            p->glob = item + 5;
            want_lines = 1;
        }
    }
    return 0;
}

JP_NOINSTR int jp_filter_parse(const char *excl, const char *incl, void (*log)(const char *, ...))
{
    if (parse_list(excl, exclude, &nexclude, log) != 0 || parse_list(incl, include, &ninclude, log) != 0) {
        log("jprof: out of memory for the filters; every function recorded");
        nexclude = ninclude = 0;
    }
    return jp_filter_active();
}

JP_NOINSTR int jp_filter_active(void)
{
    return nexclude + ninclude > 0;
}

/* '*' any run of characters, '?' any one; iterative, with one point to
 * come back to (the last '*'). */
JP_NOINSTR static int glob_match(const char *g, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*g == '*') {
            star = g++;
            resume = s;
        } else if (*g == '?' || *g == *s) {
            g++;
            s++;
        } else if (star) {
            g = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*g == '*')
        g++;
    return !*g;
}

/* The name as `hookit report` shows C++ names by default: no return type,
 * template arguments or parameters ("std::vector<int>::push_back(int&&)"
 * gives "std::vector::push_back").  A name with nothing to drop is copied. */
JP_NOINSTR static void simple_name(const char *name, char *out, size_t size)
{
    size_t n = 0;
    int angle = 0, paren = 0;
    for (const char *p = name; *p && n + 1 < size; p++) {
        if (!strncmp(p, "operator", 8) && !angle && !paren) { /* "operator<", "operator()" */
            size_t len = strcspn(p + 8, "(") + 8;
            if (p[len] == '(' && p[len + 1] == ')' && len == 8)
                len += 2;
            for (size_t i = 0; i < len && n + 1 < size; i++)
                out[n++] = p[i];
            p += len - 1;
            continue;
        }
        if (!strncmp(p, "(anonymous namespace)", 21) && !angle && !paren) {
            for (size_t i = 0; i < 21 && n + 1 < size; i++)
                out[n++] = p[i];
            p += 20;
            continue;
        }
        if (*p == '<') {
            angle++;
        } else if (*p == '>' && angle) {
            angle--;
        } else if (*p == '(' && !angle) {
            if (paren++ == 0 && n)
                break; /* the parameters: the rest is theirs and the qualifiers */
        } else if (*p == ')' && paren) {
            paren--;
        } else if (*p == ' ' && !angle && !paren) {
            n = 0; /* what came before was the return type */
        } else if (!angle && !paren) {
            out[n++] = *p;
        }
    }
    out[n] = 0;
}

JP_NOINSTR static int matches(const struct pattern *p, const struct a2n_result *r, const char *simple)
{
    switch (p->kind) {
    case PAT_MODULE:
        return r->module && glob_match(p->glob, r->module);
    case PAT_FILE: {
        if (!r->file)
            return 0;
        const char *base = strrchr(r->file, '/');
        return glob_match(p->glob, r->file) || (base && glob_match(p->glob, base + 1));
    }
    default:
        return (r->flags & A2N_FOUND_SYMBOL)
            && (glob_match(p->glob, r->function) || glob_match(p->glob, simple));
    }
}

JP_NOINSTR static int any_match(const struct pattern *list, unsigned n, const struct a2n_result *r,
                                const char *simple)
{
    for (unsigned i = 0; i < n; i++)
        if (matches(&list[i], r, simple))
            return 1;
    return 0;
}

JP_NOINSTR int jp_filter_excludes(uint64_t fn)
{
    char simple[512];
    struct a2n_result r;
    pthread_mutex_lock(&names_lock);
    if (!names)
        names = a2n_open(0);
    else if (__atomic_exchange_n(&names_stale, 0, __ATOMIC_ACQ_REL))
        a2n_reload(names);
    int out = 0;
    if (names) {
        a2n_lookup(names, fn, want_lines, &r);
        simple_name(r.function ? r.function : "", simple, sizeof simple);
        out = any_match(exclude, nexclude, &r, simple)
            || (ninclude && !any_match(include, ninclude, &r, simple));
    }
    pthread_mutex_unlock(&names_lock);
    return out;
}

JP_NOINSTR void jp_filter_forget(void)
{
    __atomic_store_n(&names_stale, 1, __ATOMIC_RELEASE);
}

/* A lookup another thread had under way when the process forked may have
 * left the view half changed: the child starts a new one. */
JP_NOINSTR void jp_filter_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    names_lock = fresh;
    names = NULL;
}

/* For the profile's metadata: the lists as given. */
JP_NOINSTR int jp_filter_describe(char *out, size_t size)
{
    size_t n = 0;
    out[0] = 0;
    if (jp_opt.exclude && *jp_opt.exclude)
        n += (size_t)snprintf(out + n, size - n, "exclude=%s", jp_opt.exclude);
    if (n < size && jp_opt.include && *jp_opt.include)
        n += (size_t)snprintf(out + n, size - n, "%sinclude=%s", n ? " " : "", jp_opt.include);
    return n > 0;
}
