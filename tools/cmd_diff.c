/*
 * hookit diff A B: what changed between two profiles (two builds of a
 * program, two inputs, before and after a fix).  Functions are matched by
 * name and module, call paths by those names from the root, never by
 * address, so profiles of different builds compare; all threads are merged
 * (matched by call path).  The main executable is one module whatever the
 * file is called in each (app and app_v2), and a library is matched by its
 * own name without the version after ".so" (libfoo.so.1 and libfoo.so.2);
 * the header says how the match was made.
 *
 * Two tables, each sorted by impact (the absolute change in time, largest
 * first; --sort cpu, wait, incl or calls by that change instead): per
 * function (calls, self time, inclusive time with the recursion rule of
 * docs/reports.md) and per call path (calls, exclusive and inclusive time).
 * Changes are B - A, absolute and relative to A ("new" when A is 0, "gone"
 * when B is 0).  When a profile has wait time (tools/waittime.h), the
 * change of the self time is also split into its change on the CPU and
 * its change waiting, so a thread that only waits longer is told from
 * one that works longer.
 */
#include "tools/cli.h"
#include "profile/aggregate.h"
#include "profile/read_file.h"
#include "profile/waittime.h"
#include "tools/find_fn.h"
#include "tools/fold.h"
#include "tools/names.h"
#include "tools/tree.h"
#include "tools/units.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *const diff_usage =
    "usage: hookit diff [--limit N] [--sort KEY] [--functions|--paths] [--function FN] [--all] A B\n"
    "\n"
    "Compare profile (or trace) A with B, per function and per call path:\n"
    "calls and time before (A) and after (B), the change B - A and the change\n"
    "relative to A, sorted by the size of the change in time.  Functions and\n"
    "paths are matched by name, so A and B may come from different builds.\n"
    "\n"
    "Options:\n"
    "  -n, --limit N     at most N lines per table (default 20, 0 = all)\n"
    "  -F, --functions   only the function table\n"
    "  -P, --paths       only the call path table\n"
    "  -a, --all         also list what did not change\n"
    "  -f, --function FN only FN: its row in the function table, the paths that\n"
    "                    end in it in the path table.  FN as in report --callers:\n"
    "                    a name, a glob ('*::Match'), or a suffix at a '::'\n"
    "                    ('ExtractUserKey' for leveldb::ExtractUserKey)\n"
    "  -s, --sort KEY    order by the change of: self (the default), incl, cpu,\n"
    "                    wait or calls (largest change first)\n"
    "CPU CHANGE and WAIT CHANGE (when a profile has wait time) split the change\n"
    "of the self time into time on the CPU and time in blocking calls.\n"
    "      --fold-frames PATTERN, --no-fold-frames  as in hookit report: wrapper\n"
    "                    frames folded into their callers (by default the standard\n"
    "                    library's thread and invoke wrappers)\n"
    "      --as-compiled inlined copies folded into the functions they were\n"
    "                    inlined into, as in hookit report\n"
    "      --demangle=MODE  C++ names: simple (the default: no return type, template\n"
    "                    arguments or parameters, unless needed to tell two\n"
    "                    functions apart), full (as demangled), or no (as stored)\n"
    "  -h, --help        this help\n";

struct row {
    uint32_t key;               /* function or node */
    uint64_t calls[2], self[2], incl[2];
    uint64_t cpu[2], wait[2]; /* self time on the CPU, waiting */
};

/* --sort: the change that orders the rows (then the others, as below). */
enum diff_sort { DIFF_SELF, DIFF_INCL, DIFF_CPU, DIFF_WAIT, DIFF_CALLS };
static enum diff_sort diff_sort;
static int diff_waits; /* a profile has wait time: the CPU and WAIT columns */
static const uint8_t *diff_only; /* --function: per function of the merged profile, or NULL */

/* The rows whose function --function keeps (func: a row's function); how many. */
static uint32_t keep_rows(struct row *rows, uint32_t n, uint32_t (*func)(uint32_t key, const void *ctx),
                          const void *ctx)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!diff_only || diff_only[func(rows[i].key, ctx)])
            rows[k++] = rows[i];
    return k;
}

static uint32_t func_itself(uint32_t f, const void *ctx)
{
    (void)ctx;
    return f;
}

static uint32_t func_of_node(uint32_t node, const void *th)
{
    return ((const struct prof_thread *)th)->nodes[node].func;
}

static const char *signed_ns(int64_t d, char buf[UNITS_BUF + 1])
{
    char tmp[UNITS_BUF];
    units_ns(d < 0 ? (uint64_t)-d : (uint64_t)d, tmp);
    snprintf(buf, UNITS_BUF + 1, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "", tmp);
    return buf;
}

static const char *relative(uint64_t a, uint64_t b, char buf[16])
{
    if (a == b)
        return "0%";
    if (a == 0)
        return "new";
    if (b == 0)
        return "gone";
    double pct = 100.0 * ((double)b - (double)a) / (double)a;
    snprintf(buf, 16, "%+.1f%%", pct);
    return buf;
}

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* Impact: |change of the first time|, then of the second, then calls. */
static uint64_t sort_change(const struct row *r)
{
    switch (diff_sort) {
    case DIFF_INCL:
        return absdiff(r->incl[0], r->incl[1]);
    case DIFF_CPU:
        return absdiff(r->cpu[0], r->cpu[1]);
    case DIFF_WAIT:
        return absdiff(r->wait[0], r->wait[1]);
    case DIFF_CALLS:
        return absdiff(r->calls[0], r->calls[1]);
    default:
        return 0;
    }
}

static int by_impact(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    uint64_t da = sort_change(a), db = sort_change(b);
    if (da != db)
        return da > db ? -1 : 1;
    da = absdiff(a->self[0], a->self[1]);
    db = absdiff(b->self[0], b->self[1]);
    if (da != db)
        return da > db ? -1 : 1;
    da = absdiff(a->incl[0], a->incl[1]);
    db = absdiff(b->incl[0], b->incl[1]);
    if (da != db)
        return da > db ? -1 : 1;
    da = absdiff(a->calls[0], a->calls[1]);
    db = absdiff(b->calls[0], b->calls[1]);
    if (da != db)
        return da > db ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

static int unchanged(const struct row *r)
{
    return r->calls[0] == r->calls[1] && r->self[0] == r->self[1] && r->incl[0] == r->incl[1]
        && r->cpu[0] == r->cpu[1] && r->wait[0] == r->wait[1];
}

static void print_row(const struct row *r)
{
    char d1[UNITS_BUF + 1], d2[UNITS_BUF + 1], p1[16], p2[16], t[4][UNITS_BUF];
    long long dc = (long long)r->calls[1] - (long long)r->calls[0];
    printf("%10llu %10llu %+9lld %10s %10s %10s %7s %10s %10s %10s %7s  ",
           (unsigned long long)r->calls[0], (unsigned long long)r->calls[1], dc,
           units_ns(r->self[0], t[0]), units_ns(r->self[1], t[1]),
           signed_ns((int64_t)r->self[1] - (int64_t)r->self[0], d1),
           relative(r->self[0], r->self[1], p1),
           units_ns(r->incl[0], t[2]), units_ns(r->incl[1], t[3]),
           signed_ns((int64_t)r->incl[1] - (int64_t)r->incl[0], d2),
           relative(r->incl[0], r->incl[1], p2));
    if (diff_waits)
        printf("%10s %11s  ", signed_ns((int64_t)r->cpu[1] - (int64_t)r->cpu[0], d1),
               signed_ns((int64_t)r->wait[1] - (int64_t)r->wait[0], d2));
}

static void print_header(const char *time_name, const char *what)
{
    char a[16], b[16];
    snprintf(a, sizeof a, "%s A", time_name);
    snprintf(b, sizeof b, "%s B", time_name);
    printf("%10s %10s %9s %10s %10s %10s %7s %10s %10s %10s %7s  ", "CALLS A", "CALLS B", "CHANGE", a, b,
           "CHANGE", "%", "INCL A", "INCL B", "CHANGE", "%");
    if (diff_waits)
        printf("%10s %11s  ", "CPU CHANGE", "WAIT CHANGE");
    printf("%s\n", what);
}

struct fn_ctx {
    const struct agg *agg;
    struct row *rows;           /* per function */
    uint32_t *active;
    uint8_t *seen; /* in some context (folded frames are in none) */
};

static void fn_enter(const struct tree *t, uint32_t node, void *vctx)
{
    struct fn_ctx *c = vctx;
    uint32_t f = t->thread->nodes[node].func;
    struct row *r = &c->rows[f];
    int outermost = c->active[f]++ == 0;
    c->seen[f] = 1;
    for (uint32_t in = 0; in < 2; in++) {
        struct agg_values v = agg_value(c->agg, 0, node, in);
        r->calls[in] += v.calls;
        r->self[in] += v.excl_ns;
        r->cpu[in] += v.cpu_ns;
        r->wait[in] += v.wait_ns;
        if (outermost)
            r->incl[in] += v.incl_ns;
    }
}

static void fn_leave(const struct tree *t, uint32_t node, void *vctx)
{
    struct fn_ctx *c = vctx;
    c->active[t->thread->nodes[node].func]--;
}

static void print_path(const struct profile *p, const struct prof_thread *th, uint32_t node)
{
    uint32_t depth = 0;
    for (uint32_t n = node; n != PROF_NONE; n = th->nodes[n].parent)
        depth++;
    uint32_t *path = malloc(depth * sizeof *path);
    if (!path)
        return;
    uint32_t i = depth;
    for (uint32_t n = node; n != PROF_NONE; n = th->nodes[n].parent)
        path[--i] = n;
    const char **names = malloc(depth * sizeof *names);
    if (names) {
        for (i = 0; i < depth; i++)
            names[i] = names_display(&p->funcs[th->nodes[path[i]].func]);
        names_print_collapsed(stdout, names, depth, " > ");
    }
    free(names);
    free(path);
}

static void print_table(struct row *rows, uint32_t n, long limit, int all,
                        void (*name)(uint32_t key, void *ctx), void *ctx)
{
    qsort(rows, n, sizeof *rows, by_impact);
    uint32_t shown = 0, same = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!all && unchanged(&rows[i])) {
            same++;
            continue;
        }
        if (limit > 0 && shown >= (uint32_t)limit)
            continue;
        print_row(&rows[i]);
        name(rows[i].key, ctx);
        putchar('\n');
        shown++;
    }
    uint32_t changed = n - same;
    if (shown < changed)
        printf("... %u more %s(--limit 0 lists all)\n", changed - shown, all ? "" : "changed ");
    if (same)
        printf("... %u unchanged (--all lists them)\n", same);
}

struct names_ctx { const struct profile *p; };

static void name_fn(uint32_t f, void *ctx)
{
    const struct profile *p = ((struct names_ctx *)ctx)->p;
    const char *mod = p->funcs[f].module;
    printf("%s%s%s", mod && *mod ? mod : "", mod && *mod ? ":" : "", names_display(&p->funcs[f]));
}

static void name_path(uint32_t node, void *ctx)
{
    const struct profile *p = ((struct names_ctx *)ctx)->p;
    print_path(p, &p->threads[0], node);
}

/* The base name of p's executable, "" if unknown. */
static const char *exe_module(const struct profile *p)
{
    const char *exe = p->process.exe ? p->process.exe : "";
    const char *slash = strrchr(exe, '/');
    return slash ? slash + 1 : exe;
}

/* Length of a library's own name: up to and including ".so" when a
 * version follows ("libfoo.so.1.2" -> "libfoo.so"), else all of it. */
static size_t library_stem(const char *module)
{
    const char *so = strstr(module, ".so.");
    return so ? (size_t)(so - module) + 3 : strlen(module);
}

struct match_note {
    char exe[2][256];           /* the main executables' module names */
    int libs_versioned;         /* a library matched across versions */
};

/* Rename p's modules to the names they are matched by: the executable's
 * to main_name, a versioned library to the name it has in ref (when ref
 * has one with the same stem) or to its stem. */
static int match_modules(struct profile *p, const char *main_name, const struct profile *ref,
                         struct match_note *note)
{
    const char *exe = exe_module(p);
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        struct prof_func *fn = &p->funcs[f];
        const char *m = fn->module ? fn->module : "";
        const char *to = NULL;
        if (*exe && strcmp(m, exe) == 0) {
            to = main_name;
        } else if (*m && library_stem(m) != strlen(m)) {
            size_t stem = library_stem(m);
            for (uint32_t g = 0; ref && g < ref->nfuncs && !to; g++) {
                const char *rm = ref->funcs[g].module ? ref->funcs[g].module : "";
                if (rm != m && strcmp(rm, m) != 0 && library_stem(rm) == stem
                    && strncmp(rm, m, stem) == 0) {
                    to = rm;
                    note->libs_versioned = 1;
                }
            }
        }
        if (to && strcmp(to, m) != 0) {
            fn->module = profile_intern(p, to);
            if (!fn->module)
                return -1;
        }
    }
    return 0;
}

static int compare(const struct profile *m, const struct agg *agg, const char *a, const char *b,
                   long limit, int which, int all, const struct match_note *note)
{
    uint64_t total[2] = { 0, 0 };
    const struct prof_thread *th = m->nthreads ? &m->threads[0] : NULL;
    for (uint32_t i = 0; th && i < th->nnodes; i++)
        if (th->nodes[i].parent == PROF_NONE)
            for (uint32_t in = 0; in < 2; in++)
                total[in] += agg_value(agg, 0, i, in).incl_ns;
    char ta[UNITS_BUF], tb[UNITS_BUF], d[UNITS_BUF + 1], pct[16];
    printf("A: %s\nB: %s\ntotal time: %s -> %s (%s, %s), all threads\n", a, b,
           units_ns(total[0], ta), units_ns(total[1], tb),
           signed_ns((int64_t)total[1] - (int64_t)total[0], d), relative(total[0], total[1], pct));
    if (strcmp(note->exe[0], note->exe[1]) != 0)
        printf("matched: functions by name; the main executables %s (A) and %s (B) as one "
               "module, shown as %s; libraries by their own name%s\n", note->exe[0], note->exe[1],
               note->exe[0], note->libs_versioned ? ", whatever their version after .so" : "");
    else
        printf("matched: functions by name and module (main executable %s); libraries by their "
               "own name%s\n", *note->exe[0] ? note->exe[0] : "?",
               note->libs_versioned ? ", whatever their version after .so" : "");
    if (!th)
        return 0;
    struct names_ctx nc = { m };
    int rc = 0;
    if (which & 1) {
        struct fn_ctx c = { agg, calloc(m->nfuncs + 1, sizeof *c.rows),
                            calloc(m->nfuncs + 1, sizeof *c.active), calloc(m->nfuncs + 1, 1) };
        struct tree t;
        if (!c.rows || !c.active || !c.seen || tree_build(&t, m, th) != 0) {
            rc = -1;
        } else {
            rc = tree_walk(&t, fn_enter, fn_leave, &c);
            tree_free(&t);
            uint32_t n = 0;
            for (uint32_t f = 0; f < m->nfuncs; f++)
                if (c.seen[f]) { /* not a function folded away (--fold-frames, --as-compiled) */
                    c.rows[n] = c.rows[f];
                    c.rows[n++].key = f;
                }
            printf("\n== functions (self = exclusive time, summed over calling contexts)\n");
            print_header("SELF", "FUNCTION");
            print_table(c.rows, keep_rows(c.rows, n, func_itself, NULL), limit, all, name_fn, &nc);
        }
        free(c.rows);
        free(c.active);
        free(c.seen);
    }
    if (rc == 0 && (which & 2)) {
        struct row *rows = calloc(th->nnodes + 1, sizeof *rows);
        if (!rows)
            return -1;
        for (uint32_t i = 0; i < th->nnodes; i++) {
            rows[i].key = i;
            for (uint32_t in = 0; in < 2; in++) {
                struct agg_values v = agg_value(agg, 0, i, in);
                rows[i].calls[in] = v.calls;
                rows[i].self[in] = v.excl_ns;
                rows[i].incl[in] = v.incl_ns;
                rows[i].cpu[in] = v.cpu_ns;
                rows[i].wait[in] = v.wait_ns;
            }
        }
        printf("\n== call paths (exclusive and inclusive time of each calling context)\n");
        print_header("EXCL", "CALL PATH");
        print_table(rows, keep_rows(rows, th->nnodes, func_of_node, th), limit, all, name_path, &nc);
        free(rows);
    }
    return rc;
}

int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {
        { "limit", required_argument, NULL, 'n' },    { "functions", no_argument, NULL, 'F' },
        { "paths", no_argument, NULL, 'P' },          { "all", no_argument, NULL, 'a' },
        { "sort", required_argument, NULL, 's' },     { "fold-frames", required_argument, NULL, 'R' },
        { "no-fold-frames", no_argument, NULL, 'r' }, { "demangle", required_argument, NULL, 'D' },
        { "function", required_argument, NULL, 'f' }, { "as-compiled", no_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },           { 0, 0, 0, 0 },
    };
    long limit = 20;
    int which = 0, all = 0, c;
    const char *only = NULL;
    cli_reset_getopt();
    while ((c = getopt_long(argc, argv, ":n:FPaf:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            only = optarg;
            break;
        case 'C':
            fold_frames_as_compiled();
            break;
        case 'n': {
            char *end;
            errno = 0;
            limit = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || limit < 0)
                return cli_usage_error("diff", "--limit needs a number >= 0, not '%s'", optarg);
            break;
        }
        case 'F':
            which |= 1;
            break;
        case 'P':
            which |= 2;
            break;
        case 'a':
            all = 1;
            break;
        case 's': {
            static const char *const keys[] = { "self", "incl", "cpu", "wait", "calls" };
            size_t k = 0;
            while (k < sizeof keys / sizeof *keys && strcmp(optarg, keys[k]))
                k++;
            if (k == sizeof keys / sizeof *keys)
                return cli_usage_error("diff", "--sort is self, incl, cpu, wait or calls, not '%s'", optarg);
            diff_sort = (enum diff_sort)k;
            break;
        }
        case 'R':
            if (fold_frames_add(optarg) != 0)
                return cli_usage_error("diff", "too many --fold-frames");
            break;
        case 'r':
            fold_frames_off();
            break;
        case 'D':
            if (names_parse_demangle(optarg) != 0)
                return cli_usage_error("diff", "--demangle is full, simple or no, not '%s'", optarg);
            break;
        case 'h':
            fputs(diff_usage, stdout);
            return EXIT_OK;
        default:
            return cli_option_error("diff", c, argv);
        }
    }
    if (argc - optind != 2)
        return cli_usage_error("diff", "needs two profiles, A and B (%d given)", argc - optind);
    if (!which)
        which = 3;
    struct profile *in[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        char err[1024];
        in[i] = profile_or_trace_read_file(argv[optind + i], err, sizeof err);
        if (!in[i]) {
            profile_free(in[0]);
            return cli_fail("%s", err);
        }
    }
    /* (checked in both: a function may be in one of them only) */
    if (fold_frames_check((const struct profile *const *)in, 2, "A or B") != 0) {
        profile_free(in[0]);
        profile_free(in[1]);
        return EXIT_FAIL;
    }
    for (int i = 0; i < 2; i++)
        if (fold_frames(in[i]) != 0) {
            profile_free(in[0]);
            profile_free(in[1]);
            return cli_fail("out of memory");
        }
    diff_waits = waittime_in(in[0]) || waittime_in(in[1]);
    struct match_note note = { { "", "" }, 0 };
    snprintf(note.exe[0], sizeof note.exe[0], "%s", exe_module(in[0]));
    snprintf(note.exe[1], sizeof note.exe[1], "%s", exe_module(in[1]));
    struct agg *agg = agg_new(AGG_MERGE_THREADS | AGG_PER_INPUT, 2);
    int rc = agg ? 0 : -1;
    if (rc == 0)
        rc = match_modules(in[1], note.exe[0], in[0], &note);
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = agg_add(agg, in[i], argv[optind + i]);
    profile_free(in[0]);
    profile_free(in[1]);
    if (rc != 0) {
        agg_free(agg);
        return cli_fail("out of memory");
    }
    struct profile *m = agg_finish(agg);
    names_use_profile(m);
    uint8_t *target = m && only ? malloc(m->nfuncs + 1) : NULL;
    rc = m && (!only || target) ? 0 : -1;
    if (rc == 0 && only) { /* found in A and B as one, as the tables show them */
        const struct profile *const one[1] = { m };
        rc = find_fn_check(one, 1, only, "--function: ", "A or B") != 0 ? 1 : 0;
        if (rc == 0)
            find_fn(m, only, target);
        diff_only = target;
    }
    if (rc == 0)
        rc = compare(m, agg, argv[optind], argv[optind + 1], limit, which, all, &note);
    names_use_profile(NULL);
    diff_only = NULL;
    free(target);
    profile_free(m);
    agg_free(agg);
    if (rc > 0)
        return EXIT_FAIL;
    if (rc != 0)
        return cli_fail("out of memory");
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_fail("error writing standard output: %s", strerror(errno));
    return EXIT_OK;
}
